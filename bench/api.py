"""The live API server under load: GET and LIST latency with concurrent clients, watch delivery latency, and
requests/s beside a bare aiohttp hello endpoint.

    python bench/api.py [--pods 1000] [--clients 50] [--seconds 5] [--version 1.32]

It starts ``podlife up --clock manual`` (a frozen cluster: the load measures the API, not the kernel) on a free
port, creates the pods through the API and runs one advance of 10 s so that they are scheduled and Running,
then, from one client process of ``--clients`` concurrent aiohttp sessions' tasks:

- GET: each task reads a random pod (``/api/v1/namespaces/default/pods/NAME``) in a loop for ``--seconds``;
- LIST: each task lists the pods of one label (50 pods: ``-l shard=K``), and separately the whole 1,000
  (``limit=500``, the page kubectl asks for);
- watch delivery: one watch on the pods; a label is patched 200 times, one at a time, and the time from
  sending the PATCH to reading the MODIFIED event is taken;
- the bare endpoint: an aiohttp application with one handler answering ``{"kind":"Status"}`` in its own process,
  hit with the same client for the same time.

Latencies are percentiles by nearest rank over every request. Wall-clock figures: run it on an idle machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
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
                    "metadata": {"name": f"pod-{i}", "labels": {"shard": str(i % 20)}},
                    "spec": {"containers": [{"name": "app", "image": "nginx:1.27",
                                             "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]}}
            async with s.post(f"{base}/api/v1/namespaces/default/pods", json=body) as r:
                if r.status != 201:
                    print(f"WARNING: create pod-{i}: {r.status} {await r.text()}")


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (Linux /proc), to tell the server's cost from the client's."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measured(pid: int, run) -> tuple[list[float], int, float, float]:
    before = cpu_seconds(pid)
    lat, errors, rate = run()
    return lat, errors, rate, (cpu_seconds(pid) - before) * 1000 / max(len(lat), 1)


def row(name: str, lat: list[float], errors: int, rate: float, cpu_ms: float) -> None:
    print(f"{name:<34} {len(lat):>8} {pct(lat, 50):>8.2f} {pct(lat, 99):>8.2f} {rate:>9.0f} {cpu_ms:>10.2f} "
          f"{errors:>6}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pods", type=int, default=1000)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--version", default="1.32")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="podlife-bench-")
    kubeconfig = os.path.join(tmp, "kubeconfig")
    nodes = max(3, a.pods // 100)
    cluster = Path(tmp, "cluster.yaml")
    cluster.write_text(yaml.safe_dump({"apiVersion": "podlife/v1alpha1", "kind": "Scenario",
                                       "metadata": {"name": "bench"},
                                       "spec": {"cluster": {"nodes": [{"namePrefix": "node-", "count": nodes}]}}}))
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "podlife.cli", "up", str(cluster), "--kubernetes-version",
                               a.version, "--port", str(port), "--clock", "manual", "--kubeconfig", kubeconfig],
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
        names = [f"pod-{i}" for i in range(a.pods)]
        rnd = random.Random(0)
        print(f"podlife up {a.version}, {nodes} nodes, {a.pods} pods created in {created:.1f} s "
              f"({a.pods / created:.0f} creates/s, one client); {a.clients} concurrent clients, {a.seconds:g} s each")
        print(f"{'':<34} {'requests':>8} {'p50 ms':>8} {'p99 ms':>8} {'req/s':>9} {'server CPU':>10} {'errors':>6}")
        print(f"{'':<34} {'':>8} {'':>8} {'':>8} {'':>9} {'ms/req':>10}")
        sp, bp = server.pid, bare.pid

        def run(url_of):
            return lambda: asyncio.run(load(url_of, a.clients, a.seconds))
        get = measured(sp, run(lambda: f"{base}/api/v1/namespaces/default/pods/{rnd.choice(names)}"))
        row("GET pod", *get)
        row("LIST pods -l shard=K (50 pods)", *measured(sp, run(
            lambda: f"{base}/api/v1/namespaces/default/pods?labelSelector=shard%3D{rnd.randrange(20)}")))
        row(f"LIST pods limit=500 (of {a.pods})", *measured(sp, run(
            lambda: f"{base}/api/v1/namespaces/default/pods?limit=500")))
        row("GET /version", *measured(sp, run(lambda: f"{base}/version")))
        hello = measured(bp, run(lambda: f"http://127.0.0.1:{bare_port}/hello"))
        row("bare aiohttp hello (baseline)", *hello)
        w = asyncio.run(watch_latency(base, 200))
        print(f"watch delivery (PATCH sent → MODIFIED read), 200 changes: p50 {pct(w, 50):.2f} ms, "
              f"p99 {pct(w, 99):.2f} ms")
        print(f"GET pod rate / bare hello rate: {get[2] / hello[2]:.2f}; GET pod p99 {pct(get[0], 99):.2f} ms "
              f"(goals: at least 0.5, at most 20 ms)")
    finally:
        for p in (server, bare):
            p.send_signal(signal.SIGINT)
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()


if __name__ == "__main__":
    main()
