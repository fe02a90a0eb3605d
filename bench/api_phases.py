"""``bench/api_phases.py``: the phases of ``api.py --nodes`` one at a time against a tree's server, each with the
server's CPU seconds, and a py-spy profile of the phases asked for.

    .venv/bin/python bench/api_phases.py --tree /work/main --dump DUMP
        [--phases kubectl,table,json,nsmk,ns,create,watch,paced] [--spy table,ns] [--tag main]

``--tree`` serves the dump with that tree's ``src`` (two trees side by side, at once or one after the other, meet
the same load: compare their CPU seconds, not their wall-clock latencies, on a shared machine). The phases:
``table`` / ``json`` (``--listings`` chunked listings of every pod), ``nsmk`` (100 pods in a namespace of their
own) then ``ns`` (50 clients Table-listing it for ``--seconds``), ``create`` (``--rollout`` pods by 10 clients),
``watch`` (``--watches`` watches of all pods while ``--rollout`` pods are created by 10 clients), ``paced`` (the
same with the creates sent at ``--rate`` pods/s), ``kubectl`` (``--listings`` runs of the real ``kubectl get pods
-A``); ``ns`` loads with ``wrk`` when it is on PATH. ``--spy`` records the server with py-spy (``--py-spy
PATH``) during those phases, as collapsed stacks in ``--out``/spy-TAG-PHASE.txt.
The dump comes from ``bench/import.py --nodes N --pods M --generate-to DUMP``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import subprocess
import sys
import time

import aiohttp

sys.path.insert(0, os.path.dirname(__file__))
import api_cluster as ac  # noqa: E402
from api import free_port, pct, wait_up  # noqa: E402


async def _namespace(base: str, name: str) -> None:
    async with aiohttp.ClientSession() as s:
        async with s.post(f"{base}/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace",
                                                            "metadata": {"name": name}}) as r:
            assert r.status == 201, await r.text()


def phase(name: str, a: argparse.Namespace, base: str, cpu: ac.server_cpu) -> str:
    """Run one phase; what it measured, one line."""
    if name in ("table", "json"):
        res, client = ac.timed_listings(base, a.listings, name == "table")
        return (f"{name}: listings {[round(r[0], 2) for r in res]} s, {res[0][1]} pages, {res[0][2]} items; "
                f"server CPU {cpu.since():.2f} s, client's {client:.1f} s")
    if name == "nsmk":
        asyncio.run(ac.create_namespace_pods(base, "bench-table", 100))
        return f"nsmk: 100 pods created; server CPU {cpu.since():.2f} s"
    if name == "kubectl":
        secs, client = ac.kubectl_listings(a.kubeconfig, a.listings, a.out)
        return (f"kubectl: get pods -A {[round(x, 2) for x in secs]} s; server CPU {cpu.since():.2f} s, kubectl's "
                f"{client:.1f} s")
    if name == "ns":
        if shutil.which("wrk"):
            n, p50, p99, rate, errors, client = ac.wrk_table(base, "/api/v1/namespaces/bench-table/pods?limit=500", 50,
                                                             a.seconds, a.out)
        else:
            lat, errors, client = ac.table_loads(base, "bench-table", 50, a.seconds, 2)
            n, p50, p99, rate = len(lat), pct(lat, 50), pct(lat, 99), len(lat) / a.seconds
        return (f"ns: {n} requests ({rate:.0f}/s), p50 {p50:.1f} ms, p99 {p99:.1f} ms, errors {errors}; "
                f"server CPU {cpu.since() * 1000 / max(n, 1):.3f} ms a request, the client's "
                f"{client * 1000 / max(n, 1):.3f} ms")
    if name == "create":
        asyncio.run(_namespace(base, "bench-create"))
        cpu.since()
        _, created = asyncio.run(ac._create_rollout(base, "bench-create", a.rollout, 10))
        return f"create: {a.rollout} pods in {created:.1f} s; server CPU {cpu.since() * 1000 / a.rollout:.2f} ms a pod"
    if name in ("watch", "paced"):
        rate = a.rate if name == "paced" else 0.0
        lat, seen, created, client = ac.watch_rollout(base, f"bench-{name}", a.watches, a.rollout, 4, 10, rate)
        spent = cpu.since()
        return (f"{name}: {a.watches} watches, {a.rollout} pods in {created:.1f} s, every watch saw every pod: "
                f"{min(seen) == a.rollout}; p50 {pct(lat, 50):.1f} ms, p99 {pct(lat, 99):.1f} ms; server CPU "
                f"{spent:.2f} s = {spent * 1000 / a.rollout:.2f} ms a pod; readers' {client:.1f} s")
    raise SystemExit(f"unknown phase {name!r} (kubectl, table, json, nsmk, ns, create, watch, paced)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", required=True, help="the work tree whose src serves the dump")
    ap.add_argument("--dump", required=True)
    ap.add_argument("--phases", default="kubectl,table,json,nsmk,ns,create,watch")
    ap.add_argument("--spy", default="", help="phases to record with py-spy")
    ap.add_argument("--py-spy", default="py-spy")
    ap.add_argument("--out", default=".", help="where the py-spy profiles go")
    ap.add_argument("--tag", default="")
    ap.add_argument("--listings", type=int, default=3)
    ap.add_argument("--rollout", type=int, default=500)
    ap.add_argument("--watches", type=int, default=100)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--rate", type=float, default=50.0, help="pods/s of the paced phase's creates")
    a = ap.parse_args()
    tag = a.tag or os.path.basename(os.path.abspath(a.tree))
    port = free_port()
    env = dict(os.environ, PYTHONPATH=os.path.join(a.tree, "src"))
    t = time.perf_counter()
    a.kubeconfig = os.path.join(os.path.abspath(a.out), f"kubeconfig-{tag}")
    server = subprocess.Popen([sys.executable, "-m", "podlife.cli", "up", "--from", a.dump, "--port", str(port),
                               "--clock", "manual", "--kubeconfig", a.kubeconfig],
                              stdout=subprocess.DEVNULL, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        ac.wait_served(server, base, wait_up)
        print(f"[{tag}] served in {time.perf_counter() - t:.0f} s", flush=True)
        cpu = ac.server_cpu(server.pid)
        for name in a.phases.split(","):
            spy = None
            if name in a.spy.split(","):
                spy = subprocess.Popen([a.py_spy, "record", "-p", str(server.pid), "-r", "250", "-f", "raw", "-o",
                                        os.path.join(a.out, f"spy-{tag}-{name}.txt")],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                time.sleep(1.0)
            cpu.since()
            print(f"[{tag}] {phase(name, a, base, cpu)}", flush=True)
            if spy is not None:
                spy.send_signal(signal.SIGINT)
                spy.wait(60)
        print(f"[{tag}] server RSS %.0f MB, peak %.0f MB" % ac.memory_mb(server.pid))
    finally:
        ac.stop(server)


if __name__ == "__main__":
    main()
