"""``bench/api.py --nodes N``: the live API at cluster size.

It generates a dump of N nodes and ``--pods`` pods with bench/import.py's generator (in a process of its own;
``--dump PATH`` keeps it there and serves it again next time), serves it with ``podlife up --from DUMP --clock
manual`` and measures, each with the server's CPU seconds (user + system, from /proc) spent meanwhile:

- ``kubectl get pods -A``: the whole listing as kubectl asks for it (``/api/v1/pods?limit=500`` as a Table,
  then ``continue`` until there is none), ``--listings`` times, one after the other; and the same as JSON
  (``-o json``). The client decodes every page with orjson (kubectl decodes them in Go; Python's json module
  made the bench's own client the larger part of the time);
- a Table LIST of one namespace of 100 pods (created through the API in a namespace of their own) with
  ``--clients`` concurrent clients for ``--seconds``, spread over ``--procs`` processes (default 2: one Python
  process of 50 aiohttp clients is slower than the server), with the server's and the clients' CPU a request;
- 100 concurrent watches of all pods (``/api/v1/pods?watch=true`` from the current resourceVersion) while a
  rollout's 10,000 pods are created through the API (``--rollout`` pods, 10 creating clients): the latency of
  each ADDED event is from sending the pod's POST to reading its event, on every watch, and every watch must
  see every pod. The watches are read by ``--readers`` processes (default 4; time.monotonic is one clock for
  the machine's processes): one process reading all 1,000,000 events fell behind the server, and its own queue
  was measured;
- the server's resident memory (VmRSS now, VmHWM the peak) after loading and at the end.

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
                    ev = orjson.loads(line)
                    md = ev["object"]["metadata"]
                    if ev["type"] == "ADDED" and md.get("namespace") == ns:
                        recv[i][int(md["name"][prefix:])] = time.monotonic()
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


async def _create_rollout(base: str, ns: str, pods: int, creators: int) -> tuple[list[float], float]:
    sent = [math.nan] * pods
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=creators)) as s:
        t0 = time.perf_counter()
        names = iter(range(pods))

        async def creator() -> None:
            for i in names:
                sent[i] = time.monotonic()
                async with s.post(f"{base}/api/v1/namespaces/{ns}/pods", json=_pod(f"{ns}-{i}")) as r:
                    if r.status != 201:
                        raise SystemExit(f"WARNING: create {ns}-{i}: {r.status} {await r.text()}")
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


def watch_rollout(base: str, ns: str, watches: int, pods: int, readers: int = 4, creators: int = 10
                  ) -> tuple[list[float], list[int], float, float]:
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
    sent, created = asyncio.run(_create_rollout(base, ns, pods, creators))
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
    t = time.perf_counter()
    server = subprocess.Popen([sys.executable, "-m", "podlife.cli", "up", "--from", dump, "--kubernetes-version",
                               a.version, "--port", str(port), "--clock", "manual", "--kubeconfig",
                               os.path.join(tmp, "kubeconfig")], stdout=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_served(server, base, wait_up)
        print(f"podlife up --from the dump served in {time.perf_counter() - t:.0f} s; server RSS "
              "%.0f MB (peak %.0f MB)" % memory_mb(server.pid), flush=True)
        if not a.dump:
            os.remove(dump)
        cpu = server_cpu(server.pid)
        for table in (True, False):
            res, client = timed_listings(base, a.listings, table)
            secs = [r[0] * 1000 for r in res]
            print(f"get pods -A {'(Table)' if table else '-o json'}, limit=500 + continue, {a.listings} listings of "
                  f"{res[0][1]} pages / {res[0][2]:,} pods: p50 {pct(secs, 50) / 1000:.2f} s, "
                  f"p99 {pct(secs, 99) / 1000:.2f} s (goal ≤ 2 s); server CPU {cpu.since():.1f} s, client's "
                  f"{client:.1f} s (all listings)", flush=True)
        asyncio.run(create_namespace_pods(base, "bench-table", 100))
        cpu.since()
        procs = a.procs or 2
        lat, errors, client = table_loads(base, "bench-table", a.clients, a.seconds, procs)
        print(f"Table LIST of one namespace of 100 pods, {a.clients} clients in {procs} processes, {a.seconds:g} s: "
              f"{len(lat)} requests, p50 {pct(lat, 50):.2f} ms, p99 {pct(lat, 99):.2f} ms (goal ≤ 20 ms), errors "
              f"{errors}; server CPU {cpu.since() * 1000 / max(len(lat), 1):.2f} ms a request, clients' "
              f"{client * 1000 / max(len(lat), 1):.2f} ms", flush=True)
        lat, seen, created, client = watch_rollout(base, "bench-rollout", a.watches, a.rollout, a.readers)
        print(f"{a.watches} watches of all pods in {a.readers} reader processes, {a.rollout:,} pods created in "
              f"{created:.1f} s: every watch saw every pod: {min(seen) == a.rollout}; delivery p50 "
              f"{pct(lat, 50):.1f} ms, p99 {pct(lat, 99):.1f} ms (goal ≤ 100 ms); server CPU {cpu.since():.1f} s, "
              f"readers' {client:.1f} s", flush=True)
        print("server RSS at the end %.0f MB, peak %.0f MB (goal ≤ 6 GB)" % memory_mb(server.pid))
    finally:
        stop(server)
