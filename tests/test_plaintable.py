"""podlife.report.plaintable writes the bytes rich writes for ``podlife versions`` (and tables like it) to a file
that is not a terminal, or gives up and leaves it to rich. Checked against rich itself."""

from __future__ import annotations

import io
import os
import random
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from rich._emoji_codes import EMOJI
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table

from podlife import features
from podlife.report import plaintable
from podlife.versions import MODELLED_VERSIONS, NEWEST_MINOR, OLDEST_MINOR, describe

ROOT = Path(__file__).resolve().parent.parent
HEAD = f"Modelled Kubernetes versions: {MODELLED_VERSIONS[0]} … {MODELLED_VERSIONS[-1]}"
COLUMNS = ("rule", "versions", "behaviour", "feature gate", "upstream")
GATE_COLUMNS = ("feature gate", "versions", "stage, default", "upstream")
GATE_TITLE = "Feature gates a scenario may set (spec.cluster.featureGates, kubelet.featureGates)"


def rich_table(headers: Sequence[str], rows: Sequence[Sequence[str]], width: int, title: str | None = None) -> str:
    out = io.StringIO()
    table = Table(*headers, title=title)
    for row in rows:
        table.add_row(*row)
    Console(file=out, width=width).print(table)
    return out.getvalue()


def rich_versions(width: int) -> str:
    out = io.StringIO()
    Console(file=out, width=width).print(HEAD)
    return (out.getvalue() + rich_table(COLUMNS, describe(), width)
            + rich_table(GATE_COLUMNS, features.describe(OLDEST_MINOR, NEWEST_MINOR), width, GATE_TITLE))


def plain_versions(width: int) -> str | None:
    parts = (plaintable.line(HEAD, width), plaintable.render(COLUMNS, describe(), width),
             plaintable.render(GATE_COLUMNS, features.describe(OLDEST_MINOR, NEWEST_MINOR), width, GATE_TITLE))
    return None if None in parts else "".join(p for p in parts if p is not None)


@pytest.mark.parametrize("width", [50, 51, 57, 64, 73, 80, 99, 100, 118, 133, 160, 200, 260, 1000])
def test_versions_tables_as_rich_lays_them_out(width: int) -> None:
    assert plain_versions(width) == rich_versions(width)


def test_podlife_versions_writes_rich_bytes_without_rich() -> None:
    code = ("import sys\nsys.argv = ['podlife', 'versions']\nfrom podlife.cli import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print('rich' in sys.modules, file=sys.stderr)\n")
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env=dict(env, COLUMNS="97"))
    assert proc.stderr.strip() == "False" and proc.stdout == rich_versions(97)
    # a terminal is rich's (colours, styles): FORCE_COLOR makes the pipe one
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env=dict(env, COLUMNS="97", FORCE_COLOR="1"))
    assert proc.stderr.strip() == "True" and "\x1b[" in proc.stdout


WORDS = ["a", "pod", "kubelet", "x" * 9, "terminationGracePeriodSeconds", "endpoints[].nodeName", "1.31",
         "http://NAME:", "…", "→", "≤", "PR #115835:", "y" * 40, "(turned", "on:", "true;"]


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.choice([0, 1, 1, 2, 3, 5, 8, 14])))


@pytest.mark.parametrize("seed", range(12))
def test_other_tables_at_every_width(seed: int) -> None:
    # cells wrapping, words longer than their column ("…"), empty cells, headers wrapping (aligned to the
    # bottom), a title folded and centred, at every width from MIN_WIDTH
    rng = random.Random(seed)
    headers = tuple(_text(rng) or "h" for _ in range(rng.randint(1, 6)))
    rows = [tuple(_text(rng) for _ in headers) for _ in range(rng.randint(1, 6))]
    title = _text(rng) if seed % 2 else None
    for width in range(plaintable.MIN_WIDTH, 261):
        got = plaintable.render(headers, rows, width, title)
        if got is not None:   # it gives up only for columns squeezed under 3 cells
            assert got == rich_table(headers, rows, width, title), width
        else:
            assert width < 10 * len(headers)


@pytest.mark.parametrize("cell", ["[bold]x[/bold]", "a \\[b]", ":smile:", "tab\there", "line\nbreak", "日本"])
def test_what_rich_would_show_otherwise_is_left_to_rich(cell: str) -> None:
    assert plaintable.render(("h",), [(cell,)], 80) is None


def test_its_character_tables_are_rich_s() -> None:
    assert all(cell_len(c) == 1 for c in plaintable.ONE_CELL)
    assert set("".join(EMOJI)) <= plaintable._EMOJI_NAME_CHARS


@pytest.mark.parametrize("environ", [{}, {"COLUMNS": "133"}, {"COLUMNS": "30"}, {"FORCE_COLOR": "1"},
                                     {"FORCE_COLOR": ""}, {"TTY_COMPATIBLE": "1"}, {"TTY_COMPATIBLE": "0"},
                                     {"TTY_COMPATIBLE": "0", "COLUMNS": "90"}])
def test_plain_width_is_rich_s_width_when_rich_writes_plain_text(environ: dict[str, str]) -> None:
    stream = io.StringIO()
    console = Console(file=stream, _environ=environ)
    width = plaintable.plain_width(stream, environ)
    if console.is_terminal or console.width < plaintable.MIN_WIDTH:
        assert width is None
    else:
        assert width == console.width
