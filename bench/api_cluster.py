"""``bench/api.py --nodes N``: the live API at cluster size.

It generates a dump of N nodes and ``--pods`` pods with bench/import.py's generator (in a process of its own;
``--dump PATH`` keeps it there and serves it again next time), serves it with ``podlife up --from DUMP --clock
manual`` and measures, each with the server's CPU seconds (user + system, from /proc) spent meanwhile:

- ``kubectl get pods -A`` run by the real kubectl (the one on PATH; here google-cloud-sdk's dispatcher, which runs
  the kubectl of the server's minor), ``--listings`` times one after the other, output to /dev/null: kubectl asks
  ``/api/v1/pods?limit=500`` as a Table, then ``continue`` to the end (its ``--chunk-size`` default), decodes
  and prints every page. The figure is each run's wall time, from starting kubectl to its exit (p50/p99 over
  the runs), with kubectl's own CPU beside the server's. kubectl throttles itself (client-go's default 5
  requests/s after a burst of 10: "Waited before sending request ... client-side throttling" at -v=6), so a
  listing of P pages takes at least (P - 10) / 5 s whatever the server: 58 s for 150,000 pods; that floor is
  printed beside it;
- the same requests by the bench's Python client (aiohttp, each page decoded with orjson, no throttle), as a
  Table and as JSON (``-o json``), ``--listings`` times each: the Table listing's p99 is the listing goal's
  figure without kubectl's throttle;
- a Table LIST of one namespace of 100 pods (created through the API in a namespace of their own) by ``wrk``
  (Debian's package: C, 2 threads, a few µs of CPU a request) over ``--clients`` keep-alive connections, each
  asking again as soon as its answer is read (a closed loop), for ``--seconds``: p50/p99 of every request's
  latency (wrk's histogram) and requests/s, the server's and wrk's CPU a request. Without wrk on PATH (or with
  ``--procs N``) ``--procs`` Python processes of aiohttp clients do it, and they cost about 5x the server a
  request on 2 cores: then they set the latency;
- ``--watches`` concurrent watches of all pods (``/api/v1/pods?watch=true`` from the current resourceVersion)
  during two rollouts, each in a namespace of its own: ``--rollout`` pods created by 10 clients as fast as the
  server answers (each sends its next POST when its last is answered: the latency is then mostly the queue of
  creates), then ``--paced`` pods created at ``--rate`` pods/s in an open loop (pod I's POST is due at I/rate s,
  sent whether or not the earlier ones were answered, at most 100 open at once; the default 50/s is above what
  one controller of kube-controller-manager can write with its client's defaults, 20 requests/s with bursts
  of 30: pkg/controller/apis/config/v1alpha1/defaults.go SetDefaults_KubeControllerManagerConfiguration,
  flags --kube-api-qps and --kube-api-burst). The latency of each ADDED
  event is from the POST's send (paced: its due time) to the watch reading the event, on every watch; every
  watch must see every pod. The watches are read by ``--readers`` processes (default 4; time.monotonic is one
  clock for the machine's processes; an event other than ADDED is not decoded): one process reading 1,000,000
  events fell behind the server, and its own queue was measured;
- the server's resident memory (VmRSS now, VmHWM the peak) after loading and at the end.

The last lines are a table of every figure the goals of issue 31 name, with the goal and whether it was met.
Wall-clock figures: on a shared machine they include the other processes' load.
"""

from __future__ import annotations

import asyncio
import math
import os
import subprocess
import sys
import time
from array import array
from pathlib import Path
from typing import Any

import aiohttp
import orjson

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io," \
        "application/json"   # kubectl get's Accept header


class server_cpu:
    """The server's CPU seconds (user + system) since the last ``since()``."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.last = self._now()

    def _now(self) -> float:
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def since(self) -> float:
        now = self._now()
        spent, self.last = now - self.last, now
        return spent


def memory_mb(pid: int) -> tuple[float, float]:
    """VmRSS and VmHWM (the peak) of a process, in MB."""
    vals = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(("VmRSS:", "VmHWM:")):
            vals[line.split(":")[0]] = int(line.split()[1]) / 1024
    return vals["VmRSS"], vals["VmHWM"]


async def listing(s: aiohttp.ClientSession, base: str, table: bool) -> tuple[float, int, int]:
    """One chunked listing of every pod: (seconds, pages, items)."""
    t = time.perf_counter()
    token, pages, items = "", 0, 0
    headers = {"Accept": TABLE} if table else {}
    while True:
        url = f"{base}/api/v1/pods?limit=500" + (f"&continue={token}" if token else "")
        async with s.get(url, headers=headers) as r:
            body = await r.read()
            if r.status != 200:
                raise SystemExit(f"WARNING: {url}: {r.status} {body[:300]!r}")
        doc = orjson.loads(body)   # kubectl decodes every page too, in Go: the bench's client is not the measure
        pages += 1
        items += len(doc["rows"] if table else doc["items"])
        token = doc["metadata"].get("continue", "")
        if not token:
            return time.perf_counter() - t, pages, items


async def listings(base: str, n: int, table: bool) -> list[tuple[float, int, int]]:
    async with aiohttp.ClientSession() as s:
        return [await listing(s, base, table) for _ in range(n)]


def timed_listings(base: str, n: int, table: bool) -> tuple[list[tuple[float, int, int]], float]:
    """``listings`` and the client's CPU seconds."""
    cpu = time.process_time()
    res = asyncio.run(listings(base, n, table))
    return res, time.process_time() - cpu


async def create_namespace_pods(base: str, ns: str, n: int) -> None:
    async with aiohttp.ClientSession() as s:
        async with s.post(f"{base}/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace",
                                                            "metadata": {"name": ns}}) as r:
            assert r.status == 201, await r.text()
        for i in range(n):
            async with s.post(f"{base}/api/v1/namespaces/{ns}/pods", json=_pod(f"{ns}-{i}")) as r:
                assert r.status == 201, await r.text()


def _pod(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "rollout"}},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.27",
                                     "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]}}


async def table_load(base: str, ns: str, clients: int, seconds: float) -> tuple[list[float], int]:
    lat: list[float] = []
    errors = 0
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=clients)) as s:
        stop = time.perf_counter() + seconds

        async def worker() -> None:
            nonlocal errors
            while time.perf_counter() < stop:
                t = time.perf_counter()
                async with s.get(f"{base}/api/v1/namespaces/{ns}/pods?limit=500", headers={"Accept": TABLE}) as r:
                    body = await r.read()
                    if r.status != 200 or len(orjson.loads(body)["rows"]) != 100:
                        errors += 1
                lat.append((time.perf_counter() - t) * 1000)
        await asyncio.gather(*(worker() for _ in range(clients)))
    return lat, errors


def _table_client(args: tuple[str, str, int, float]) -> tuple[list[float], int, float]:
    cpu = time.process_time()
    lat, errors = asyncio.run(table_load(*args))
    return lat, errors, time.process_time() - cpu


def table_loads(base: str, ns: str, clients: int, seconds: float, procs: int) -> tuple[list[float], int, float]:
    """``table_load`` from ``procs`` processes (one Python process of 50 aiohttp clients is slower than the
    server): the latencies, the errors and the clients' CPU seconds."""
    import multiprocessing

    per = [clients // procs + (i < clients % procs) for i in range(procs)]
    with multiprocessing.get_context("spawn").Pool(procs) as pool:
        parts = pool.map(_table_client, [(base, ns, c, seconds) for c in per if c])
    return [x for p in parts for x in p[0]], sum(p[1] for p in parts), sum(p[2] for p in parts)


async def _read_watches(conn: Any, base: str, ns: str, rv: str, watches: int, pods: int
                        ) -> list[tuple[array, int]]:
    """``watches`` watches of all pods from ``rv``: when each saw the ADDED event of rollout pod ``ns-I``
    (time.monotonic, one clock for every process of the machine) and how many it saw. ``ready`` is sent
    through ``conn`` once every watch is open."""
    recv = [array("d", [math.nan]) * pods for _ in range(watches)]
    seen = [0] * watches
    prefix = len(ns) + 1
    ready = asyncio.Event()
    opened = 0
    timeout = aiohttp.ClientTimeout(total=None)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=watches)) as s:

        async def watch(i: int) -> None:
            nonlocal opened
            async with s.get(f"{base}/api/v1/pods?watch=true&resourceVersion={rv}&allowWatchBookmarks=false",
                             timeout=timeout) as w:
                opened += 1
                if opened == watches:
                    ready.set()
                while seen[i] < pods:
                    line = await w.content.readline()
                    if not line:
                        return
                    if not line.startswith(b'{"type":"ADDED"'):   # the MODIFIED events are not decoded
                        continue
                    at = time.monotonic()
                    md = orjson.loads(line)["object"]["metadata"]
                    if md.get("namespace") == ns:
                        recv[i][int(md["name"][prefix:])] = at
                        seen[i] += 1

        tasks = [asyncio.create_task(watch(i)) for i in range(watches)]
        await asyncio.wait_for(ready.wait(), 120)
        conn.send("ready")
        await asyncio.wait_for(asyncio.gather(*tasks), 3600)
    return list(zip(recv, seen))


def _reader(conn: Any, base: str, ns: str, rv: str, watches: int, pods: int) -> None:
    cpu = time.process_time()
    got = asyncio.run(_read_watches(conn, base, ns, rv, watches, pods))
    conn.send((got, time.process_time() - cpu))


async def _create_rollout(base: str, ns: str, pods: int, creators: int, rate: float = 0.0
                          ) -> tuple[list[float], float]:
    """Create pods ``ns-0`` … through the API: when each POST was sent (time.monotonic) and the wall seconds.
    Unpaced (``rate`` 0): ``creators`` clients, each sending its next POST when its last is answered (as fast
    as the server takes them). Paced: pod I's POST is sent at I / ``rate`` s from the start, whether or not the
    earlier ones were answered (an open loop, as a controller's rate-limited client sends; ``creators`` is then
    unused): its send time is that due time."""
    sent = [math.nan] * pods
    # paced: at most 100 POSTs open at once (a server that falls behind queues the rest in the client, whose
    # latency counts from the POST's due time all the same)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=100 if rate else creators)) as s:
        t0 = time.perf_counter()

        async def create(i: int) -> None:
            sent[i] = time.monotonic()   # (paced: when it is due; the task starts at once)
            async with s.post(f"{base}/api/v1/namespaces/{ns}/pods", json=_pod(f"{ns}-{i}")) as r:
                if r.status != 201:
                    raise SystemExit(f"WARNING: create {ns}-{i}: {r.status} {await r.text()}")

        if rate:
            tasks = []
            for i in range(pods):
                delay = t0 + i / rate - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                tasks.append(asyncio.create_task(create(i)))
            await asyncio.gather(*tasks)
        else:
            names = iter(range(pods))

            async def creator() -> None:
                for i in names:
                    await create(i)
            await asyncio.gather(*(creator() for _ in range(creators)))
        return sent, time.perf_counter() - t0


async def _namespace_at(base: str, ns: str) -> str:
    """Create ``ns``; the resourceVersion the watches start from."""
    async with aiohttp.ClientSession() as s:
        async with s.post(f"{base}/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace",
                                                            "metadata": {"name": ns}}) as r:
            assert r.status == 201, await r.text()
        async with s.get(f"{base}/api/v1/namespaces/{ns}/pods?limit=1") as r:
            return str((await r.json())["metadata"]["resourceVersion"])


def watch_rollout(base: str, ns: str, watches: int, pods: int, readers: int = 4, creators: int = 10,
                  rate: float = 0.0) -> tuple[list[float], list[int], float, float]:
    """Latencies (ms) of every watch's ADDED event of every rollout pod, the count each watch saw, the wall time
    of the creates and the readers' CPU seconds. The watches are read by ``readers`` processes: one Python
    process reading 1,000,000 events falls behind the server and its queue becomes the latency measured."""
    import multiprocessing

    rv = asyncio.run(_namespace_at(base, ns))
    ctx = multiprocessing.get_context("spawn")
    per = [watches // readers + (i < watches % readers) for i in range(readers)]
    procs, conns = [], []
    for n in per:
        if not n:
            continue
        mine, theirs = ctx.Pipe()
        p = ctx.Process(target=_reader, args=(theirs, base, ns, rv, n, pods), daemon=True)
        p.start()
        procs.append(p)
        conns.append(mine)
    for c in conns:
        if not c.poll(180) or c.recv() != "ready":
            raise SystemExit("WARNING: a watch reader did not open its watches")
    sent, created = asyncio.run(_create_rollout(base, ns, pods, creators, rate))
    lat: list[float] = []
    seen: list[int] = []
    cpu = 0.0
    for c in conns:
        got, secs = c.recv()
        cpu += secs
        for recv, count in got:
            seen.append(count)
            lat.extend((r - t) * 1000 for r, t in zip(recv, sent) if not math.isnan(r))
    for p in procs:
        p.join(30)
    return lat, seen, created, cpu


# kubectl's requests go through client-go's token bucket at its defaults (staging/src/k8s.io/client-go/rest/
# config.go DefaultQPS, DefaultBurst; kubectl raises them only for its discovery client: cli-runtime
# genericclioptions/config_flags.go toDiscoveryClient): a listing of P pages waits (P - 10) / 5 s in kubectl
KUBECTL_QPS, KUBECTL_BURST = 5.0, 10


def kubectl_listings(kubeconfig: str, n: int, tmp: str) -> tuple[list[float], float]:
    """``n`` runs of the real ``kubectl get pods -A`` (its default ``--chunk-size=500``: a Table LIST with
    ``limit=500``, then ``continue`` to the end; every page decoded and printed, to /dev/null) against the
    server of ``kubeconfig``: the wall seconds of each run and kubectl's CPU seconds (user + system, all runs).
    A first ``kubectl get namespaces`` fills the discovery cache (``--cache-dir``), as a user's kubectl has it."""
    import shutil

    kubectl = shutil.which("kubectl")
    if kubectl is None:
        raise FileNotFoundError("kubectl")
    base = [kubectl, "--kubeconfig", kubeconfig, "--cache-dir", os.path.join(tmp, "kubectl-cache")]
    subprocess.run([*base, "get", "namespaces"], check=True, stdout=subprocess.DEVNULL)
    secs: list[float] = []
    cpu = 0.0
    for _ in range(n):
        t = time.perf_counter()
        proc = subprocess.Popen([*base, "get", "pods", "-A"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        secs.append(time.perf_counter() - t)
        cpu += usage.ru_utime + usage.ru_stime
        if os.waitstatus_to_exitcode(status) != 0:
            err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
            raise SystemExit(f"WARNING: kubectl get pods -A failed: {err[:300]}")
    return secs, cpu


_WRK_TABLE = """
wrk.method = "GET"
wrk.path = "%s"
wrk.headers["Accept"] = "%s"
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("podlife-bench %%d %%d %%d %%d %%d %%d\\n", summary.requests, summary.duration,
    latency:percentile(50), latency:percentile(99), e.status, e.connect + e.read + e.write + e.timeout))
end
"""


def wrk_table(base: str, path: str, clients: int, seconds: float, tmp: str
              ) -> tuple[int, float, float, float, int, float]:
    """``clients`` keep-alive connections from ``wrk`` (C, 2 threads, a few µs of CPU a request) each asking
    ``path`` as a Table (kubectl get's Accept header) again as soon as the answer is read, for ``seconds``:
    requests, p50 and p99 (ms, wrk's histogram over every request), requests/s, errors (non-2xx and socket
    errors) and wrk's CPU seconds."""
    script = os.path.join(tmp, "table.lua")
    Path(script).write_text(_WRK_TABLE % (path, TABLE))
    proc = subprocess.Popen(["wrk", "-t2", f"-c{clients}", f"-d{seconds:g}s", "-s", script, base],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = proc.stdout.read() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    line = next((ln for ln in out.splitlines() if ln.startswith("podlife-bench ")), None)
    if os.waitstatus_to_exitcode(status) != 0 or line is None:
        raise SystemExit(f"WARNING: wrk failed: {out[-500:]}")
    n, dur_us, p50, p99, status_err, sock_err = (int(x) for x in line.split()[1:])
    return n, p50 / 1000, p99 / 1000, n / (dur_us / 1e6), status_err + sock_err, usage.ru_utime + usage.ru_stime


async def table_check(base: str, path: str, rows: int) -> None:
    """One Table LIST of ``path`` has ``rows`` rows (wrk only counts status codes)."""
    async with aiohttp.ClientSession() as s:
        async with s.get(base + path, headers={"Accept": TABLE}) as r:
            doc = orjson.loads(await r.read())
            if r.status != 200 or doc.get("kind") != "Table" or len(doc["rows"]) != rows:
                raise SystemExit(f"WARNING: {path} as a Table: {r.status}, {len(doc.get('rows') or [])} rows")


def wait_served(server: subprocess.Popen[bytes], base: str, wait_up: Any) -> None:
    """Until ``base`` answers (serving a large dump takes minutes); the server's exit ends the wait."""
    for _ in range(40):
        try:
            wait_up(base)
            return
        except SystemExit:
            if server.poll() is not None:
                raise


def stop(server: subprocess.Popen[bytes]) -> None:
    import signal

    server.send_signal(signal.SIGINT)
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()


def run(a: Any, pct: Any, free_port: Any, wait_up: Any) -> None:
    import shutil
    import tempfile

    tmp = tempfile.mkdtemp(prefix="podlife-bench-")
    dump = a.dump or os.path.join(tmp, "dump.json")
    if not a.dump or not os.path.exists(dump):
        gen = os.path.join(os.path.dirname(__file__), "import.py")
        t = time.perf_counter()
        subprocess.run([sys.executable, gen, "--nodes", str(a.nodes), "--pods", str(a.pods), "--generate-to", dump],
                       check=True)
        print(f"dump of {a.nodes:,} nodes / {a.pods:,} pods generated in {time.perf_counter() - t:.0f} s "
              f"({os.path.getsize(dump) / 1e6:.0f} MB)", flush=True)
    port = free_port()
    kubeconfig = os.path.join(tmp, "kubeconfig")
    t = time.perf_counter()
    server = subprocess.Popen([sys.executable, "-m", "podlife.cli", "up", "--from", dump, "--kubernetes-version",
                               a.version, "--port", str(port), "--clock", "manual", "--kubeconfig", kubeconfig],
                              stdout=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    goals: list[tuple[str, str, str, bool | None]] = []   # (figure, measured, goal, met)
    try:
        wait_served(server, base, wait_up)
        print(f"podlife up --from the dump served in {time.perf_counter() - t:.0f} s; server RSS "
              "%.0f MB (peak %.0f MB)" % memory_mb(server.pid), flush=True)
        if not a.dump:
            os.remove(dump)
        cpu = server_cpu(server.pid)
        cpu.since()
        kubectl = None
        if shutil.which("kubectl"):
            kubectl = (*kubectl_listings(kubeconfig, a.listings, tmp), cpu.since())
        else:
            print("kubectl get pods -A: no kubectl on PATH, not measured", flush=True)
        for table in (True, False):
            res, client = timed_listings(base, a.listings, table)
            secs = [r[0] for r in res]
            p50, p99 = pct(secs, 50), pct(secs, 99)
            print(f"the bench's Python client, get pods -A {'(Table)' if table else '-o json'}, limit=500 + continue, "
                  f"{a.listings} listings of {res[0][1]} pages / {res[0][2]:,} pods: p50 {p50:.2f} s, p99 {p99:.2f} s; "
                  f"server CPU {cpu.since():.1f} s, client's {client:.1f} s (all listings)", flush=True)
            if table:
                pages = res[0][1]
                goals.append(("get pods -A as kubectl asks, unthrottled (Python client, Table), p99", f"{p99:.2f} s",
                              "≤ 2 s", p99 <= 2.0))
        if kubectl is not None:
            secs, client, spent = kubectl
            p50, p99 = pct(secs, 50), pct(secs, 99)
            floor = max(0, pages - KUBECTL_BURST) / KUBECTL_QPS
            print(f"kubectl get pods -A (the real kubectl, {a.listings} runs before the Python client's, output to "
                  f"/dev/null): p50 {p50:.2f} s, p99 {p99:.2f} s (goal ≤ 2 s), of which at least {floor:.1f} s is "
                  f"kubectl's own client-side throttle ({pages} requests at {KUBECTL_QPS:g}/s after a burst of "
                  f"{KUBECTL_BURST}); server CPU {spent:.1f} s, kubectl's {client:.1f} s (all runs)", flush=True)
            goals.append((f"kubectl get pods -A, p99 (≥ {floor:.1f} s of it kubectl's throttle)", f"{p99:.2f} s",
                          "≤ 2 s", p99 <= 2.0))
        path = "/api/v1/namespaces/bench-table/pods?limit=500"
        asyncio.run(create_namespace_pods(base, "bench-table", 100))
        asyncio.run(table_check(base, path, 100))
        cpu.since()
        if shutil.which("wrk") and not a.procs:
            n, p50, p99, rate, errors, client = wrk_table(base, path, a.clients, a.seconds, tmp)
            who = "wrk (2 threads)"
        else:
            procs = a.procs or 2
            lat, errors, client = table_loads(base, "bench-table", a.clients, a.seconds, procs)
            n, p50, p99, rate = len(lat), pct(lat, 50), pct(lat, 99), len(lat) / a.seconds
            who = f"{procs} Python processes (no wrk on PATH)" if not a.procs else f"{procs} Python processes"
        print(f"Table LIST of one namespace of 100 pods, {a.clients} keep-alive connections from {who}, each "
              f"asking again when answered, {a.seconds:g} s: {n} requests, {rate:.0f} requests/s, p50 {p50:.2f} ms, "
              f"p99 {p99:.2f} ms (goal ≤ 20 ms), errors {errors}; server CPU {cpu.since() * 1000 / max(n, 1):.3f} ms "
              f"a request, the client's {client * 1000 / max(n, 1):.3f} ms", flush=True)
        goals.append((f"Table LIST of 100 pods, {a.clients} clients, p99", f"{p99:.1f} ms", "≤ 20 ms", p99 <= 20.0))
        for label, ns, pods, rate in (("unpaced", "bench-rollout", a.rollout, 0.0),
                                      ("paced", "bench-paced", a.paced, a.rate)):
            if not pods:
                continue
            lat, seen, created, client = watch_rollout(base, ns, a.watches, pods, a.readers, 10, rate)
            all_seen = len(seen) == a.watches and min(seen) == pods
            how = f"at {rate:g} pods/s (open loop)" if rate else "by 10 clients as fast as answered"
            print(f"{a.watches} watches of all pods in {a.readers} reader processes, {pods:,} pods created {how} "
                  f"in {created:.1f} s ({pods / created:.1f}/s): every watch saw every pod: {all_seen}; "
                  f"POST sent → ADDED read p50 {pct(lat, 50):.1f} ms, p99 {pct(lat, 99):.1f} ms (goal ≤ 100 ms); "
                  f"server CPU {cpu.since():.1f} s, readers' {client:.1f} s", flush=True)
            goals.append((f"watch delivery, {label}, p99", f"{pct(lat, 99):.1f} ms", "≤ 100 ms",
                          pct(lat, 99) <= 100.0 and all_seen))
            goals.append((f"every watch saw every pod, {label}", str(all_seen), "yes", all_seen))
        rss, peak = memory_mb(server.pid)
        print(f"server RSS at the end {rss:.0f} MiB, peak {peak:.0f} MiB (goal ≤ 6 GB = 5,722 MiB)")
        goals.append(("server memory (VmHWM, the peak)", f"{peak:,.0f} MiB", "≤ 6 GB (5,722 MiB)",
                      peak * 2**20 <= 6e9))
        print("\nfigure | measured | goal | met")
        for name, got, goal, met in goals:
            print(f"{name} | {got} | {goal} | {'yes' if met else 'no'}")
    finally:
        stop(server)
