"""``bench/api.py --nodes N``: the live API at cluster size.

It generates a dump of N nodes and ``--pods`` pods with bench/import.py's generator (in a process of its own),
serves it with ``podlife up --from DUMP --clock manual`` and measures:

- ``kubectl get pods -A``: the whole listing as kubectl asks for it (``/api/v1/pods?limit=500`` as a Table,
  then ``continue`` until there is none), ``--listings`` times, one after the other; and the same as JSON
  (``-o json``);
- a Table LIST of one namespace of 100 pods (created through the API in a namespace of their own) with
  ``--clients`` concurrent clients for ``--seconds``;
- 100 concurrent watches of all pods (``/api/v1/pods?watch=true`` from the current resourceVersion) while a
  rollout's 10,000 pods are created through the API (``--rollout`` pods, 10 creating clients): the latency of
  each ADDED event is from sending the pod's POST to reading its event, on every watch, and every watch must
  see every pod;
- the server's resident memory (VmRSS now, VmHWM the peak) after loading and at the end.

Wall-clock figures: on a shared machine they include the other processes' load.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io," \
        "application/json"   # kubectl get's Accept header


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
        doc = json.loads(body)
        pages += 1
        items += len(doc["rows"] if table else doc["items"])
        token = doc["metadata"].get("continue", "")
        if not token:
            return time.perf_counter() - t, pages, items


async def listings(base: str, n: int, table: bool) -> list[tuple[float, int, int]]:
    async with aiohttp.ClientSession() as s:
        return [await listing(s, base, table) for _ in range(n)]


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
                    if r.status != 200 or len(json.loads(body)["rows"]) != 100:
                        errors += 1
                lat.append((time.perf_counter() - t) * 1000)
        await asyncio.gather(*(worker() for _ in range(clients)))
    return lat, errors


async def watch_rollout(base: str, ns: str, watches: int, pods: int, creators: int = 10
                        ) -> tuple[list[float], list[int], float]:
    """Latencies (ms) of every watch's ADDED event of every rollout pod, the count each watch saw, and the wall
    time of the creates."""
    sent: dict[str, float] = {}
    lat: list[float] = []
    seen = [0] * watches
    timeout = aiohttp.ClientTimeout(total=None)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=watches + creators + 2)) as s:
        async with s.post(f"{base}/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace",
                                                            "metadata": {"name": ns}}) as r:
            assert r.status == 201, await r.text()
        async with s.get(f"{base}/api/v1/namespaces/{ns}/pods?limit=1") as r:
            rv = (await r.json())["metadata"]["resourceVersion"]
        ready = asyncio.Event()
        opened = 0

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
                    ev = json.loads(line)
                    md = ev["object"]["metadata"]
                    if ev["type"] == "ADDED" and md.get("namespace") == ns:
                        lat.append((time.perf_counter() - sent[md["name"]]) * 1000)
                        seen[i] += 1

        tasks = [asyncio.create_task(watch(i)) for i in range(watches)]
        await asyncio.wait_for(ready.wait(), 120)
        t0 = time.perf_counter()
        names = iter(range(pods))

        async def creator() -> None:
            for i in names:
                name = f"{ns}-{i}"
                sent[name] = time.perf_counter()
                async with s.post(f"{base}/api/v1/namespaces/{ns}/pods", json=_pod(name)) as r:
                    if r.status != 201:
                        raise SystemExit(f"WARNING: create {name}: {r.status} {await r.text()}")
        await asyncio.gather(*(creator() for _ in range(creators)))
        created = time.perf_counter() - t0
        await asyncio.wait_for(asyncio.gather(*tasks), 600)
    return lat, seen, created


def run(a: Any, pct: Any, free_port: Any, wait_up: Any) -> None:
    import signal
    import tempfile

    tmp = tempfile.mkdtemp(prefix="podlife-bench-")
    dump = os.path.join(tmp, "dump.json")
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
        for _ in range(40):
            try:
                wait_up(base)
                break
            except SystemExit:
                if server.poll() is not None:
                    raise
        print(f"podlife up --from the dump served in {time.perf_counter() - t:.0f} s; server RSS "
              "%.0f MB (peak %.0f MB)" % memory_mb(server.pid), flush=True)
        os.remove(dump)
        for table in (True, False):
            res = asyncio.run(listings(base, a.listings, table))
            secs = [r[0] * 1000 for r in res]
            print(f"get pods -A {'(Table)' if table else '-o json'}, limit=500 + continue, {a.listings} listings of "
                  f"{res[0][1]} pages / {res[0][2]:,} pods: p50 {pct(secs, 50) / 1000:.2f} s, "
                  f"p99 {pct(secs, 99) / 1000:.2f} s (goal ≤ 2 s)", flush=True)
        asyncio.run(create_namespace_pods(base, "bench-table", 100))
        lat, errors = asyncio.run(table_load(base, "bench-table", a.clients, a.seconds))
        print(f"Table LIST of one namespace of 100 pods, {a.clients} clients, {a.seconds:g} s: {len(lat)} requests, "
              f"p50 {pct(lat, 50):.2f} ms, p99 {pct(lat, 99):.2f} ms (goal ≤ 20 ms), errors {errors}", flush=True)
        lat, seen, created = asyncio.run(watch_rollout(base, "bench-rollout", a.watches, a.rollout))
        print(f"{a.watches} watches of all pods, {a.rollout:,} pods created in {created:.1f} s: every watch saw "
              f"every pod: {min(seen) == a.rollout}; delivery p50 {pct(lat, 50):.1f} ms, p99 {pct(lat, 99):.1f} ms "
              "(goal ≤ 100 ms)", flush=True)
        print("server RSS at the end %.0f MB, peak %.0f MB (goal ≤ 6 GB)" % memory_mb(server.pid))
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
