"""Every example's outputs, byte for byte: the summary, the JSON report, the klog and the HTML page of each
example under examples/, and a diff and an explain. A refactoring must leave them all as they are.

The digests are in tests/data/samebytes.json. A commit that changes behaviour on purpose re-records them
(``PODLIFE_RECORD_SAMEBYTES=1 python -m pytest tests/test_samebytes.py``) and says why in its message.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from podlife.cli import main

ROOT = Path(__file__).resolve().parent.parent
DIGESTS = ROOT / "tests" / "data" / "samebytes.json"
RECORD = os.environ.get("PODLIFE_RECORD_SAMEBYTES") == "1"
# every example, examples/import/'s dump too (run on its own, its cluster goes on from the dump's instant)
EXAMPLES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "examples").rglob("*.yaml"))
# the other commands that assemble a report, each once
COMMANDS = {
    "diff seed-001 against 1.29": ["diff", "examples/seed-001-hung-container-kubelet-restart.yaml", "--against",
                                   "1.29", "--html", "{tmp}/diff.html"],
    "explain seed-002": ["explain", "examples/seed-002-stuck-terminating-lost-exit.yaml", "--pod", "zookeeper-0"],
}


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _outputs(args: list[str], tmp: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(main, [a.replace("{tmp}", str(tmp)) for a in args], env={"COLUMNS": "120"})
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    out = {"stdout": _digest(result.stdout_bytes + f"exit {result.exit_code}\n".encode())}
    for f in sorted(tmp.iterdir()):
        out[f.name] = _digest(f.read_bytes())
    return out


def _check(key: str, got: dict[str, str]) -> None:
    recorded = json.loads(DIGESTS.read_text()) if DIGESTS.exists() else {}
    if RECORD:
        recorded[key] = got
        DIGESTS.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
        return
    assert got == recorded[key], f"{key}: outputs changed (see the module docstring to re-record on purpose)"


@pytest.mark.parametrize("example", EXAMPLES)
def test_example_outputs_unchanged(example: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    args = ["run", example, "--report", f"{tmp_path}/report.json", "--klog", f"{tmp_path}/kubelet.log",
            "--html", f"{tmp_path}/report.html"]
    _check(example, _outputs(args, tmp_path, monkeypatch))


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_command_outputs_unchanged(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _check(name, _outputs(COMMANDS[name], tmp_path, monkeypatch))
