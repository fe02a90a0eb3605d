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


@pytest.mark.parametrize("environ", [{"FORCE_COLOR": "1"}, {"FORCE_COLOR": "1", "NO_COLOR": "1"},
                                     {"FORCE_COLOR": "1", "TERM": "dumb"}, {"TTY_COMPATIBLE": "1", "COLUMNS": "61"},
                                     {"FORCE_COLOR": "1", "COLORTERM": "truecolor", "COLUMNS": "200"}])
def test_podlife_versions_in_a_terminal_writes_rich_bytes_without_rich_tables(environ: dict[str, str]) -> None:
    # a terminal (FORCE_COLOR or TTY_COMPATIBLE makes the pipe one): rich prints the head line and gives its
    # styles; the tables are laid out here. Compared with rich's own, in the same process and environment.
    code = ("import contextlib, io, sys\nfrom podlife.cli import main\nours = io.StringIO()\n"
            "with contextlib.redirect_stdout(ours):\n    try:\n        main(['versions'])\n"
            "    except SystemExit:\n        pass\n"
            "tables = 'rich.table' in sys.modules\n"
            "sys.path.insert(0, 'tests')\nfrom test_plaintable import COLUMNS, GATE_COLUMNS, GATE_TITLE, HEAD\n"
            "from podlife import features\nfrom podlife.versions import NEWEST_MINOR, OLDEST_MINOR, describe\n"
            "from rich.console import Console\nfrom rich.table import Table\ntheirs = io.StringIO()\n"
            "with contextlib.redirect_stdout(theirs):\n    console = Console()\n    console.print(HEAD)\n"
            "    table = Table(*COLUMNS)\n    [table.add_row(*r) for r in describe()]\n    console.print(table)\n"
            "    gates = Table(*GATE_COLUMNS, title=GATE_TITLE)\n"
            "    [gates.add_row(*r) for r in features.describe(OLDEST_MINOR, NEWEST_MINOR)]\n"
            "    console.print(gates)\n"
            "print(tables, ours.getvalue() == theirs.getvalue(), '\\x1b[' in ours.getvalue(), console.width)\n")
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE", "NO_COLOR", "COLUMNS")}
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env=dict(env, **environ))
    tables, same, styled, width = proc.stdout.split()
    assert (tables, same) == ("False", "True"), proc.stderr
    assert styled == ("False" if environ.get("TERM") == "dumb" else "True")
    assert width == environ.get("COLUMNS", "80")


def terminal_console(width: int, color_system: str | None, no_color: bool) -> Console:
    return Console(file=io.StringIO(), width=width, force_terminal=True, color_system=color_system,  # type: ignore[arg-type]
                   no_color=no_color)


def rich_terminal_table(console: Console, headers: Sequence[str], rows: Sequence[Sequence[str]],
                        title: str | None = None) -> str:
    table = Table(*headers, title=title)
    for row in rows:
        table.add_row(*row)
    with console.capture() as captured:
        console.print(table)
    return captured.get()


@pytest.mark.parametrize("color_system", [None, "standard", "256", "truecolor"])
@pytest.mark.parametrize("no_color", [False, True])
def test_versions_tables_in_a_terminal_as_rich_writes_them(color_system: str | None, no_color: bool) -> None:
    gate_rows = features.describe(OLDEST_MINOR, NEWEST_MINOR)
    for width in (50, 57, 80, 118, 133, 260):
        console = terminal_console(width, color_system, no_color)
        styles = plaintable.terminal_styles(console)
        assert styles is not None
        assert plaintable.render(COLUMNS, describe(), width, styles=styles) == \
            rich_terminal_table(console, COLUMNS, describe())
        assert plaintable.render(GATE_COLUMNS, gate_rows, width, GATE_TITLE, styles) == \
            rich_terminal_table(console, GATE_COLUMNS, gate_rows, GATE_TITLE)


def test_terminal_styles_left_to_rich_where_the_layout_may_differ() -> None:
    assert plaintable.terminal_styles(terminal_console(plaintable.MIN_WIDTH - 1, "truecolor", False)) is None
    ascii_file = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    assert plaintable.terminal_styles(Console(file=ascii_file, force_terminal=True, width=80)) is None


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
            if width % 7 == seed % 7:   # and in a terminal
                console = terminal_console(width, "256", False)
                styles = plaintable.terminal_styles(console)
                assert styles is not None
                assert plaintable.render(headers, rows, width, title, styles) == \
                    rich_terminal_table(console, headers, rows, title), width
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
