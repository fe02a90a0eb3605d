"""Pod startup latency on the process runtime: create → Running, as a watch sees it.

    python bench/startup.py [--pods 100] [--version 1.32]

It starts ``podlife up --runtime process`` (realtime clock, 3 nodes, a temporary data directory) twice: with
the kubelet's generic PLEG (the default: a relist every second) and with ``featureGates: {EventedPLEG:
true}`` (the runtime's container events reach the kubelet at once). Each time it opens a watch on the pods,
then creates ``--pods`` pods of ``sleep 3600`` one after the other through the API, as fast as the server
answers, and takes for each the time from just before its POST to the watch event in which its phase is
first Running. Percentiles by nearest rank; the CPU seconds podlife up used from the first create to the last
Running; then Ctrl-C, which stops every process.

The generic PLEG's relist grid (a container's start reaches the pod's status at the next whole second of the
kernel's clock, as upstream's 1 s relist does) bounds its latency from below: about 0.5 s on average, up to
1 s. The evented PLEG shows podlife's own overhead: API write, scheduling, kubelet sync, the supervisor's
fork and exec, the status write and the watch event.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import signal
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from api import pct  # noqa: E402  (bench/api.py: percentiles by nearest rank)

EVENTED = """\
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: evented-pleg}
spec:
  kubernetesVersion: "VERSION"
  cluster:
    nodes: [{name: node-1}, {name: node-2}, {name: node-3}]
    kubelet:
      featureGates: {EventedPLEG: true}
"""


def pod(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"bench": "startup"}},
            "spec": {"terminationGracePeriodSeconds": 1,
                     "containers": [{"name": "app", "image": "busybox", "command": ["sleep", "3600"]}]}}


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def measure(base: str, pods: int, pid: int, token: str, ca: str) -> tuple[list[float], float, float]:
    created: dict[str, float] = {}
    running: dict[str, float] = {}
    done = asyncio.Event()
    # the process runtime is served with TLS and a bearer token, loopback included
    connector = aiohttp.TCPConnector(ssl=ssl.create_default_context(cadata=ca))
    async with aiohttp.ClientSession(connector=connector, headers={"Authorization": f"Bearer {token}"}) as s:
        async with s.get(f"{base}/api/v1/namespaces/default/pods") as r:
            rv = (await r.json())["metadata"]["resourceVersion"]

        async def watch() -> None:
            url = f"{base}/api/v1/namespaces/default/pods?watch=true&resourceVersion={rv}&labelSelector=bench%3Dstartup"
            async with s.get(url, timeout=aiohttp.ClientTimeout(total=None)) as w:
                async for line in w.content:
                    ev = json.loads(line)
                    obj = ev["object"]
                    name = obj["metadata"]["name"]
                    if (obj.get("status") or {}).get("phase") == "Running" and name not in running:
                        running[name] = time.perf_counter()
                        if len(running) == pods:
                            done.set()
                            return
        watcher = asyncio.create_task(watch())
        await asyncio.sleep(0.5)   # the watch is open before the first create
        cpu0 = cpu_seconds(pid)
        start = time.perf_counter()
        for i in range(pods):
            name = f"sleeper-{i:03d}"
            created[name] = time.perf_counter()
            async with s.post(f"{base}/api/v1/namespaces/default/pods", json=pod(name)) as r:
                if r.status != 201:
                    raise SystemExit(f"create {name}: {r.status} {await r.text()}")
        await asyncio.wait_for(done.wait(), 120)
        wall = time.perf_counter() - start
        cpu = cpu_seconds(pid) - cpu0
        watcher.cancel()
    return [(running[n] - created[n]) * 1000 for n in created], wall, cpu


def run(version: str, pods: int, evented: bool) -> tuple[list[float], float, float]:
    with tempfile.TemporaryDirectory(prefix="podlife-bench-") as tmp:
        kubeconfig = os.path.join(tmp, "kubeconfig")
        args = [sys.executable, "-m", "podlife.cli", "up", "--runtime", "process", "--port", "0",
                "--kubernetes-version", version, "--kubeconfig", kubeconfig, "--data-dir", os.path.join(tmp, "data")]
        if evented:
            path = Path(tmp, "evented.yaml")
            path.write_text(EVENTED.replace("VERSION", version))
            args.insert(4, str(path))
        log = open(os.path.join(tmp, "up.log"), "w+")
        proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 60
            while not os.path.exists(kubeconfig):
                if proc.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    raise SystemExit(f"podlife up did not start:\n{log.read()}")
                time.sleep(0.05)
            doc = yaml.safe_load(Path(kubeconfig).read_text())
            cluster = doc["clusters"][0]["cluster"]
            ca = base64.b64decode(cluster["certificate-authority-data"]).decode()
            return asyncio.run(measure(cluster["server"], pods, proc.pid, doc["users"][0]["user"]["token"], ca))
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pods", type=int, default=100)
    ap.add_argument("--version", default="1.32")
    a = ap.parse_args()
    rows = []
    for label, evented in (("generic PLEG (default)", False), ("EventedPLEG", True)):
        lat, wall, cpu = run(a.version, a.pods, evented)
        rows.append((label, pct(lat, 50), pct(lat, 90), pct(lat, 99), max(lat), wall, cpu))
    print(f"{a.pods} pods of `sleep 3600`, podlife up --runtime process, Kubernetes {a.version}, 3 nodes")
    print(f"{'':24} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8} {'max ms':>8} {'wall s':>7} {'podlife CPU s':>14}")
    for label, p50, p90, p99, mx, wall, cpu in rows:
        print(f"{label:24} {p50:8.1f} {p90:8.1f} {p99:8.1f} {mx:8.1f} {wall:7.2f} {cpu:14.2f}")
    print("goal: p99 at most 100 ms create → Running (realtime clock)")


if __name__ == "__main__":
    main()
