"""What the GitHub Action (action.yml at the repository's root) runs: ``start`` a ``podlife up`` in the background
and export its kubeconfig; ``stop`` it at the end of the job, keeping its trace and HTML report for the
artifact. Its inputs come as environment variables (the action's step sets them), so a test runs it exactly as
the action does.

    PODLIFE_KUBERNETES_VERSION  e.g. 1.33 (default: the newest modelled)
    PODLIFE_CLUSTER_FILE        a cluster file (optional)
    PODLIFE_CLOCK               realtime (default) or manual
    PODLIFE_SPEED               realtime clock speed (default 1)
    PODLIFE_OUT_DIR             where the kubeconfig, log, trace and report go
    GITHUB_ENV, GITHUB_OUTPUT   the runner's files: KUBECONFIG and the kubeconfig output are added to them

    python -m podlife.testing.ci start|stop
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

TRACE_FILE = "podlife-trace.json"
HTML_FILE = "podlife-report.html"
LOG_FILE = "podlife.log"


def _out_dir() -> Path:
    out = Path(os.environ.get("PODLIFE_OUT_DIR") or "podlife-artifacts").resolve()
    out.mkdir(parents=True, exist_ok=True)
    return out


def _append(var: str, line: str) -> None:
    path = os.environ.get(var)
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(line + "\n")


def start() -> int:
    out = _out_dir()
    kubeconfig = out / "kubeconfig"
    args = [sys.executable, "-m", "podlife.cli", "up"]
    if os.environ.get("PODLIFE_CLUSTER_FILE"):
        args.append(os.environ["PODLIFE_CLUSTER_FILE"])
    if os.environ.get("PODLIFE_KUBERNETES_VERSION"):
        args += ["--kubernetes-version", os.environ["PODLIFE_KUBERNETES_VERSION"]]
    args += ["--clock", os.environ.get("PODLIFE_CLOCK") or "realtime",
             "--speed", os.environ.get("PODLIFE_SPEED") or "1",
             "--port", "0", "--ephemeral", "--kubeconfig", str(kubeconfig), "--detach"]
    # --detach returns once the API is served; the server's output goes to podlife.log beside the kubeconfig
    done = subprocess.run(args, check=False, text=True, capture_output=True)
    sys.stdout.write(done.stdout)
    sys.stderr.write(done.stderr)
    if done.returncode != 0:
        return done.returncode
    _append("GITHUB_ENV", f"KUBECONFIG={kubeconfig}")
    _append("GITHUB_OUTPUT", f"kubeconfig={kubeconfig}")
    print(f"podlife: KUBECONFIG={kubeconfig} exported for the next steps")
    return 0


def stop() -> int:
    """Keep the trace and the HTML report, then stop the cluster. A cluster that is not running (it did not
    start, or was stopped) is reported, not an error: the job's own steps decide its outcome."""
    from podlife.apiserver.client import ClientError, Endpoint

    out = _out_dir()
    kubeconfig = out / "kubeconfig"
    if not kubeconfig.exists():
        print(f"podlife: no cluster was started (no {kubeconfig}); nothing to keep")
        return 0
    ep = Endpoint.from_kubeconfig(str(kubeconfig))
    try:
        with ep.open("GET", "/podlife/report", timeout=120) as resp:
            (out / TRACE_FILE).write_bytes(resp.read())
    except ClientError as e:
        print(f"podlife: the cluster does not answer ({e}); its log is {out / LOG_FILE}")
        return 0
    report = subprocess.run([sys.executable, "-m", "podlife.cli", "report", str(out / TRACE_FILE), "--html",
                             str(out / HTML_FILE)], check=False, text=True, capture_output=True)
    sys.stderr.write(report.stderr)
    try:
        ep.call("POST", "/podlife/stop")
    except ClientError:
        pass
    for _ in range(200):   # until it no longer answers
        try:
            ep.call("GET", "/podlife/clock")
        except ClientError:
            break
        time.sleep(0.05)
    kubeconfig.unlink()   # the cluster is gone; what stays is for the artifact
    print(f"podlife: stopped; trace {out / TRACE_FILE}, report {out / HTML_FILE}, log {out / LOG_FILE}")
    return 0


def main(argv: list[str]) -> int:
    if argv[1:] == ["start"]:
        return start()
    if argv[1:] == ["stop"]:
        return stop()
    print("usage: python -m podlife.testing.ci start|stop", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
