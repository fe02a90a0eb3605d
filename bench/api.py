"""The live API server under load: GET and LIST latency with concurrent clients, watch delivery latency, and
requests/s beside a bare aiohttp hello endpoint.

    python bench/api.py [--pods 1000] [--clients 50] [--seconds 5] [--version 1.32]
    python bench/api.py --nodes 5000 --pods 150000 [--listings 5] [--watches 100] [--rollout 10000]
        [--paced 10000 --rate 50]

It starts ``podlife up --clock manual --ephemeral`` (a frozen cluster: the load measures the API, not the
kernel) on a free port, creates the pods through the API and runs one advance of 10 s so that they are
scheduled and Running, then loads it with ``--clients`` concurrent connections. The load generator is ``wrk``
(Debian's package: C, two threads) when it is on PATH, otherwise ``--procs`` Python processes of aiohttp tasks
(one Python process saturates itself before the server on two cores); the client's own CPU per request is
printed beside the server's, so a saturated client shows:

- GET: each task reads a random pod (``/api/v1/namespaces/default/pods/NAME``) in a loop for ``--seconds``;
- LIST: each task lists the pods of one label (``-l shard=K``, a twentieth of them: 50 of 1,000), and
  separately the first page of them all (``limit=500``, the page kubectl asks for);
- watch delivery: one watch on the pods; a label is patched 200 times, one at a time, and the time from
  sending the PATCH to reading the MODIFIED event is taken;
- the bare endpoint: an aiohttp application with one handler answering ``{"kind":"Status"}`` in its own process,
  hit with the same load generator for the same time.

Latencies are percentiles by nearest rank over every request. Wall-clock figures: run it on an idle machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import yaml

BARE = """
from aiohttp import web
async def hello(request):
    return web.json_response({"kind": "Status", "apiVersion": "v1", "status": "Success"})
app = web.Application()
app.router.add_get("/{tail:.*}", hello)
web.run_app(app, host="127.0.0.1", port=int(__import__("sys").argv[1]), access_log=None, print=None)
"""


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[max(0, min(len(xs) - 1, int(round(p / 100 * len(xs) + 0.5)) - 1))] if xs else float("nan")


async def load(url_of, clients: int, seconds: float) -> tuple[list[float], int, float]:
    """``clients`` tasks each requesting ``url_of()`` for ``seconds``: latencies (ms), errors, requests/s."""
    lat: list[float] = []
    errors = 0
    conn = aiohttp.TCPConnector(limit=clients)
    async with aiohttp.ClientSession(connector=conn) as s:
        stop = time.perf_counter() + seconds

        async def worker() -> None:
            nonlocal errors
            while time.perf_counter() < stop:
                t = time.perf_counter()
                async with s.get(url_of()) as r:
                    await r.read()
                    if r.status != 200:
                        errors += 1
                lat.append((time.perf_counter() - t) * 1000)
        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(clients)))
        wall = time.perf_counter() - start
    return lat, errors, len(lat) / wall


SHARDS = 20   # pod-i carries the label shard=i % SHARDS


def shard_size(pods: int) -> str:
    """How many pods one shard label selects: pods / SHARDS, or a range when it does not divide."""
    low, high = pods // SHARDS, -(-pods // SHARDS)
    return f"{low} pods" if low == high else f"{low}–{high} pods"


# what each load asks for: a path (``{n}`` a random pod, ``{k}`` a random shard)
PATHS = {
    "get": "/api/v1/namespaces/default/pods/pod-{n}",
    "shard": "/api/v1/namespaces/default/pods?labelSelector=shard%3D{k}",   # k in 0 … SHARDS-1
    "page": "/api/v1/namespaces/default/pods?limit=500",
    "version": "/version",
    "hello": "/hello",
}


@dataclass
class Load:
    requests: int
    p50: float
    p99: float
    rate: float
    errors: int
    client_cpu_ms: float   # the load generator's CPU per request
    server_cpu_ms: float = 0.0


def _python_client(args: tuple[str, str, int, int, float, int]) -> tuple[list[float], int, float, float]:
    base, what, pods, clients, seconds, seed = args
    rnd = random.Random(seed)
    cpu = time.process_time()

    def url() -> str:
        return base + PATHS[what].format(n=rnd.randrange(pods), k=rnd.randrange(SHARDS))
    lat, errors, rate = asyncio.run(load(url, clients, seconds))
    return lat, errors, rate, time.process_time() - cpu


def python_load(base: str, what: str, pods: int, clients: int, seconds: float, procs: int) -> Load:
    import multiprocessing

    per = [clients // procs + (i < clients % procs) for i in range(procs)]
    with multiprocessing.Pool(procs) as pool:
        parts = pool.map(_python_client, [(base, what, pods, c, seconds, i) for i, c in enumerate(per) if c])
    lat = [x for p in parts for x in p[0]]
    return Load(len(lat), pct(lat, 50), pct(lat, 99), sum(p[2] for p in parts), sum(p[1] for p in parts),
                sum(p[3] for p in parts) * 1000 / max(len(lat), 1))


_LUA = """
math.randomseed(0)
request = function()
  local path = string.gsub(string.gsub("%s", "{n}", tostring(math.random(0, %d))), "{k}", tostring(math.random(0, %d)))
  return wrk.format("GET", path)
end
"""


def wrk_load(base: str, what: str, pods: int, clients: int, seconds: float, tmp: str) -> Load:
    script = os.path.join(tmp, f"{what}.lua")
    Path(script).write_text(_LUA % (PATHS[what], pods - 1, SHARDS - 1))
    proc = subprocess.Popen(["wrk", "-t2", f"-c{clients}", f"-d{seconds:g}s", "--latency", "-s", script, base],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = proc.stdout.read() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)

    def ms(label: str) -> float:
        m = re.search(rf"^\s*{label}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        if not m:
            return float("nan")
        return float(m.group(1)) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[m.group(2)]
    n = re.search(r"(\d+) requests in", out)
    rate = re.search(r"Requests/sec:\s+([\d.]+)", out)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    requests = int(n.group(1)) if n else 0
    errors = (int(non2xx.group(1)) if non2xx else 0) + (sum(int(x) for x in sock.groups()) if sock else 0)
    return Load(requests, ms("50"), ms("99"), float(rate.group(1)) if rate else 0.0, errors,
                (usage.ru_utime + usage.ru_stime) * 1000 / max(requests, 1))


async def watch_latency(base: str, n: int) -> list[float]:
    out: list[float] = []
    async with aiohttp.ClientSession() as s:
        async with s.get(f"{base}/api/v1/namespaces/default/pods?watch=true&fieldSelector=metadata.name%3Dpod-0"
                         "&resourceVersion=0", timeout=aiohttp.ClientTimeout(total=None)) as w:
            await w.content.readline()   # the initial ADDED
            for i in range(n):
                t = time.perf_counter()
                async with s.patch(f"{base}/api/v1/namespaces/default/pods/pod-0",
                                   data=json.dumps({"metadata": {"labels": {"n": str(i)}}}),
                                   headers={"Content-Type": "application/merge-patch+json"}) as r:
                    await r.read()
                while True:
                    ev = json.loads(await w.content.readline())
                    if (ev["object"]["metadata"].get("labels") or {}).get("n") == str(i):
                        break
                out.append((time.perf_counter() - t) * 1000)
    return out


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_up(url: str) -> None:
    import urllib.request

    for _ in range(300):
        try:
            urllib.request.urlopen(url + "/readyz", timeout=1).read()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"WARNING: {url} did not come up")


async def create_pods(base: str, pods: int) -> None:
    async with aiohttp.ClientSession() as s:
        for i in range(pods):
            body = {"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": f"pod-{i}", "labels": {"shard": str(i % SHARDS)}},
                    "spec": {"containers": [{"name": "app", "image": "nginx:1.27",
                                             "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]}}
            async with s.post(f"{base}/api/v1/namespaces/default/pods", json=body) as r:
                if r.status != 201:
                    print(f"WARNING: create pod-{i}: {r.status} {await r.text()}")


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (Linux /proc), to tell the server's cost from the client's."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measured(pid: int, run) -> Load:
    before = cpu_seconds(pid)
    result = run()
    result.server_cpu_ms = (cpu_seconds(pid) - before) * 1000 / max(result.requests, 1)
    return result


def row(name: str, r: Load) -> None:
    print(f"{name:<34} {r.requests:>8} {r.p50:>8.2f} {r.p99:>8.2f} {r.rate:>9.0f} {r.server_cpu_ms:>10.3f} "
          f"{r.client_cpu_ms:>10.3f} {r.errors:>6}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pods", type=int, default=1000)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--version", default="1.32")
    ap.add_argument("--nodes", type=int, default=0, help="the cluster-size mode: serve a generated dump of this "
                                                      "many nodes and --pods pods (bench/api_cluster.py)")
    ap.add_argument("--listings", type=int, default=5, help="cluster-size mode: chunked listings of every pod")
    ap.add_argument("--watches", type=int, default=100, help="cluster-size mode: concurrent watches of all pods")
    ap.add_argument("--rollout", type=int, default=10_000, help="cluster-size mode: pods created under the watches")
    ap.add_argument("--paced", type=int, default=10_000, help="cluster-size mode: pods created at --rate under the "
                                                           "watches (after the unpaced --rollout; 0: none)")
    ap.add_argument("--rate", type=float, default=50.0, help="cluster-size mode: pods/s of the paced rollout")
    ap.add_argument("--readers", type=int, default=4, help="cluster-size mode: processes reading the watches")
    ap.add_argument("--dump", default="", help="cluster-size mode: serve this dump (generated there if missing, "
                                               "kept)")
    ap.add_argument("--procs", type=int, default=0, help="Python client processes instead of wrk (0: wrk if on PATH, "
                                                      "else 2; also the cluster-size mode's Table LIST)")
    a = ap.parse_args()
    if a.nodes:
        sys.path.insert(0, os.path.dirname(__file__))
        import api_cluster

        return api_cluster.run(a, pct, free_port, wait_up)
    tmp = tempfile.mkdtemp(prefix="podlife-bench-")
    kubeconfig = os.path.join(tmp, "kubeconfig")
    nodes = max(3, a.pods // 100)
    cluster = Path(tmp, "cluster.yaml")
    cluster.write_text(yaml.safe_dump({"apiVersion": "podlife/v1alpha1", "kind": "Scenario",
                                       "metadata": {"name": "bench"},
                                       "spec": {"cluster": {"nodes": [{"namePrefix": "node-", "count": nodes}]}}}))
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "podlife.cli", "up", str(cluster), "--kubernetes-version",
                               a.version, "--port", str(port), "--clock", "manual", "--ephemeral",
                               "--kubeconfig", kubeconfig],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    bare_port = free_port()
    bare = subprocess.Popen([sys.executable, "-c", BARE, str(bare_port)])
    try:
        wait_up(base)
        t = time.perf_counter()
        asyncio.run(create_pods(base, a.pods))
        created = time.perf_counter() - t
        subprocess.run([sys.executable, "-m", "podlife.cli", "advance", "10s", "--kubeconfig", kubeconfig],
                       check=True, capture_output=True)
        wait_up(f"http://127.0.0.1:{bare_port}")
        generator = "wrk (2 threads)" if shutil.which("wrk") and not a.procs else \
            f"{a.procs or 2} Python client processes"
        print(f"podlife up {a.version}, {nodes} nodes, {a.pods} pods created in {created:.1f} s "
              f"({a.pods / created:.0f} creates/s, one client); {a.clients} concurrent connections from "
              f"{generator}, {a.seconds:g} s each")
        print(f"{'':<34} {'requests':>8} {'p50 ms':>8} {'p99 ms':>8} {'req/s':>9} {'server CPU':>10} "
              f"{'client CPU':>10} {'errors':>6}")
        print(f"{'':<34} {'':>8} {'':>8} {'':>8} {'':>9} {'ms/req':>10} {'ms/req':>10}")
        sp, bp = server.pid, bare.pid

        def run(url: str, what: str):
            if generator.startswith("wrk"):
                return lambda: wrk_load(url, what, a.pods, a.clients, a.seconds, tmp)
            return lambda: python_load(url, what, a.pods, a.clients, a.seconds, a.procs or 2)
        get = measured(sp, run(base, "get"))
        row("GET pod", get)
        shard = measured(sp, run(base, "shard"))
        row(f"LIST pods -l shard=K ({shard_size(a.pods)})", shard)
        row(f"LIST pods limit=500 (of {a.pods})", measured(sp, run(base, "page")))
        row("GET /version", measured(sp, run(base, "version")))
        hello = measured(bp, run(f"http://127.0.0.1:{bare_port}", "hello"))
        row("bare aiohttp hello (baseline)", hello)
        w = asyncio.run(watch_latency(base, 200))
        print(f"watch delivery (PATCH sent → MODIFIED read), 200 changes: p50 {pct(w, 50):.2f} ms, "
              f"p99 {pct(w, 99):.2f} ms")
        print(f"GET pod rate / bare hello rate: {get.rate / hello.rate:.2f}; GET pod p99 {get.p99:.2f} ms, "
              f"LIST ({shard_size(a.pods)}) p99 {shard.p99:.2f} ms (goals: at least 0.5, at most 20 ms)")
    finally:
        for p in (server, bare):
            p.send_signal(signal.SIGINT)
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()


if __name__ == "__main__":
    main()
