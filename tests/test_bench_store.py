"""bench/store.py prints the durable store's commit rates (NORMAL and FULL) beside the in-memory store's."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_store_bench_prints_commits_per_second_for_normal_and_full(tmp_path):
    p = subprocess.run([sys.executable, str(ROOT / "bench" / "store.py"), "--writes", "50", "--dir", str(tmp_path)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    rates = {}
    for line in p.stdout.splitlines():
        m = re.match(r"(in memory \(podlife run\)|SQLite WAL synchronous=(NORMAL|FULL))\s+(\d+)\s+([\d.]+)$", line)
        if m:
            rates[m.group(1)] = int(m.group(3))
    assert set(rates) == {"in memory (podlife run)", "SQLite WAL synchronous=NORMAL", "SQLite WAL synchronous=FULL"}
    assert all(r > 0 for r in rates.values())
    # each database holds the 51 revisions written (the create and 50 updates, after the namespaces and their
    # kube-root-ca.crt ConfigMaps)
    import sqlite3

    for name in ("state-normal.db", "state-full.db"):
        n = sqlite3.connect(str(tmp_path / name)).execute(
            "SELECT count(*) FROM revisions WHERE kind = 'ConfigMap' AND name != 'kube-root-ca.crt'").fetchone()[0]
        assert n == 51
