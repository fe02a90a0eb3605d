"""Start-up: what the ``podlife`` command imports. A command loads what it uses, when it uses it; a run of a
small scenario must not pay for the API server, the sweep engine or the HTML page (bench/README.md, "The command
line, start to exit"). Checked by the modules a fresh process holds after the command, not by timing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# the sweep (dask, distributed, pyarrow, bokeh), the API server (aiohttp), the kubectl client (kubernetes)
NEVER = ("numpy", "bokeh", "dask", "distributed", "pyarrow", "aiohttp", "kubernetes", "pandas",
         "podlife.apiserver", "podlife.sweep", "podlife.report.html")
# what a run loads only where its scenario needs it: kubernetes-validate's own package (its schema files are
# read without it), RE2 (patterns), cronsim and zoneinfo (CronJobs), numpy.random (many tied nodes), the
# strategic merge patch and kubectl drain (their actions), rich (a quiet run that passes prints nothing),
# jsonschema and referencing (manifests that api.quickcheck passes), importlib.metadata (SimPy's __version__),
# socket (the runtime's pod IPs need only _socket's two address functions), hashlib (OpenSSL, for SHA-256 of seeds),
# pathlib and urllib.parse (api.schema finds its files with os.path)
NOT_FOR_A_SMALL_RUN = ("kubernetes_validate", "re2", "cronsim", "zoneinfo", "numpy.random", "podlife.api.patch",
                       "podlife.kubectl", "rich", "importlib_resources", "packaging", "jsonschema", "referencing",
                       "importlib.metadata", "socket", "selectors", "hashlib", "_hashlib", "pathlib", "urllib.parse")


def _modules_after(tmp_path: Path, *args: str) -> set[str]:
    out = tmp_path / "modules.json"
    code = ("import json, sys\n"
            "out, sys.argv = sys.argv[1], ['podlife', *sys.argv[2:]]\n"
            "from podlife.cli import entry\n"
            "try:\n    entry()\nexcept SystemExit:\n    pass\n"
            "open(out, 'w').write(json.dumps(sorted(sys.modules)))\n")
    proc = subprocess.run([sys.executable, "-c", code, str(out), *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert out.exists(), proc.stderr
    return set(json.loads(out.read_text()))


def _loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


def test_help_loads_neither_the_model_nor_rich(tmp_path: Path) -> None:
    modules = _modules_after(tmp_path, "--help")
    assert _loaded(modules, NEVER + ("simpy", "jsonschema", "yaml", "rich", "orjson", "podlife.engine.kernel",
                                     "podlife.cluster", "podlife.scenario", "importlib.metadata")) == []


def test_versions_loads_only_the_tables(tmp_path: Path) -> None:
    # written to a pipe: plain text, laid out as rich would without rich (tests/test_plaintable.py)
    modules = _modules_after(tmp_path, "versions")
    assert _loaded(modules, NEVER + ("simpy", "jsonschema", "yaml", "podlife.engine.kernel", "podlife.cluster",
                                     "podlife.scenario", "rich")) == []
    assert "podlife.report.plaintable" in modules and "podlife.versions" in modules   # it did run


@pytest.mark.parametrize("example", ["seed-000-native-sidecar.yaml", "seed-003-pod-creation-flow.yaml"])
def test_a_small_run_loads_what_it_uses(tmp_path: Path, example: str) -> None:
    modules = _modules_after(tmp_path, "run", f"examples/{example}", "--quiet")
    assert "podlife.cluster" in modules and "numpy" in modules   # it did run (the scheduler's arrays)
    assert _loaded(modules, tuple(n for n in NEVER if n != "numpy") + NOT_FOR_A_SMALL_RUN) == []


def test_numpy_starts_no_blas_threads(tmp_path: Path) -> None:
    # OpenBLAS starts a thread per core as numpy loads (CPU a run does not use: podlife calls no BLAS routine);
    # the scheduler loads it with one, and leaves the environment its children inherit as it found it
    code = ("import os, sys\n"
            "sys.argv = ['podlife', 'run', 'examples/seed-003-pod-creation-flow.yaml', '--quiet']\n"
            "from podlife.cli import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "assert 'numpy' in sys.modules\n"
            "print(len(os.listdir('/proc/self/task')), 'OPENBLAS_NUM_THREADS' in os.environ)\n")
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS",
                                                            "OMP_NUM_THREADS")}
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env=env)
    assert proc.stdout.split() == ["1", "False"], proc.stderr


def test_what_a_run_defers_is_loaded_when_needed(tmp_path: Path) -> None:
    # a scenario with a CronJob in a time zone and a schema pattern loads them then (and still runs)
    scenario = tmp_path / "cron.yaml"
    scenario.write_text("""\
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: cron}
spec:
  kubernetesVersion: "1.30"
  until: 3m
  cluster:
    nodes: [{name: node-1}]
  objects:
  - apiVersion: batch/v1
    kind: CronJob
    metadata: {name: tick}
    spec:
      schedule: "*/1 * * * *"
      timeZone: Europe/Paris
      jobTemplate:
        spec:
          template:
            spec:
              restartPolicy: Never
              containers: [{name: c, image: busybox}]
""")
    modules = _modules_after(tmp_path, "run", str(scenario), "--quiet")
    assert {"cronsim", "zoneinfo", "podlife.controlplane.controllers.cronjob"} <= modules


def test_a_manifest_with_an_error_is_checked_by_jsonschema(tmp_path: Path) -> None:
    scenario = tmp_path / "bad.yaml"
    scenario.write_text("""\
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: bad}
spec:
  kubernetesVersion: "1.30"
  until: 1m
  cluster:
    nodes: [{name: node-1}]
  objects:
  - apiVersion: v1
    kind: Pod
    metadata: {name: p}
    spec:
      containers: [{name: c, image: busybox, ports: [{containerPort: "80"}]}]
""")
    modules = _modules_after(tmp_path, "run", str(scenario), "--quiet")
    assert "jsonschema" in modules   # which names the error (exit 2)
