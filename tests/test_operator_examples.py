"""The worked examples in examples/operators/ (a Kopf operator and a plain controller, each with a pytest suite on
the podlife_cluster fixture) pass when run as their users run them: ``pytest examples/operators`` in a process
of its own, the plugin found through its entry point."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.plugin_runner import run_pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_operator_examples_pass(tmp_path: Path) -> None:
    pytest.importorskip("kopf")
    done = run_pytest(["examples/operators"], ROOT, tmp_path)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    # three checks (two behaviours, and both from one snapshot) × two Kubernetes versions × two operators
    assert "12 passed" in done.stdout, done.stdout[-3000:]
