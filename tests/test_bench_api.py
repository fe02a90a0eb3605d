"""bench/api.py runs against a live server and prints each row, named after the sizes it was given."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NUMBER = r"\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+(\d+)$"


def test_the_api_bench_names_the_shard_size_it_measured() -> None:
    # 50 pods in 20 shards: each shard label selects 2 or 3 of them
    p = subprocess.run([sys.executable, str(ROOT / "bench" / "api.py"), "--pods", "50", "--clients", "2",
                        "--seconds", "0.3", "--procs", "1"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    rows = {m[1].strip(): [float(x) for x in m.groups()[1:]] for m in
            (re.match(r"(.{34})" + NUMBER, line) for line in p.stdout.splitlines()) if m}
    assert list(rows) == ["GET pod", "LIST pods -l shard=K (2–3 pods)", "LIST pods limit=500 (of 50)",
                          "GET /version", "bare aiohttp hello (baseline)"], p.stdout
    for name, (requests, p50, p99, rate, _server_ms, _client_ms, errors) in rows.items():
        assert requests > 0 and rate > 0 and 0 < p50 <= p99 and errors == 0, (name, p.stdout)
    assert re.search(r"^watch delivery \(PATCH sent → MODIFIED read\), 200 changes: p50 [\d.]+ ms, p99 [\d.]+ ms$",
                     p.stdout, re.M), p.stdout
    assert re.search(r"LIST \(2–3 pods\) p99 [\d.]+ ms \(goals", p.stdout), p.stdout
