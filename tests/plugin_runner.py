"""Running pytest the way a user of the plugin does: a separate ``python -m pytest`` with the plugin found through
its ``pytest11`` entry point. Where the installed podlife predates the entry point (an editable install made
before it was added), a dist-info holding only that entry point is put on the path, which is what installing
podlife gives."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")


def _entry_point_installed() -> bool:
    return any(ep.value == "podlife.testing.plugin" for ep in entry_points(group="pytest11"))


def _shim(where: Path) -> str:
    info = where / "podlife_pytest_plugin-0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: podlife-pytest-plugin\nVersion: 0\n")
    (info / "entry_points.txt").write_text("[pytest11]\npodlife = podlife.testing.plugin\n")
    return str(where)


def run_pytest(args: list[str], cwd: Path, scratch: Path, timeout: float = 600.0,
               env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    paths = [SRC, *os.environ.get("PYTHONPATH", "").split(os.pathsep)]
    if not _entry_point_installed():
        paths.insert(0, _shim(scratch / "site"))
    full = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p), **(env or {})}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=cwd, env=full,
                          check=False, capture_output=True, text=True, timeout=timeout)
