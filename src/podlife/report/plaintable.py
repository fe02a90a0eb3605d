"""``podlife versions`` without rich when its output is plain text: the same bytes rich (15.0) writes for a
``Table`` of str cells with the defaults (box HEAVY_HEAD, padding (0, 1), left-justified cells wrapping at words
and ending in "…" where a word does not fit, a centred title) and a ``Console`` writing to a file that is not a
terminal (no colours, no styles: only the layout).

Rich lays out the 1,750 lines of ``podlife versions`` in about 0.2 s (bench/README.md, "The command line, start
to exit"); this does it in a few milliseconds. It is used only where it is known to agree (``plain_width`` and
``_plain_cell`` give up otherwise, and rich prints as before): tests/test_plaintable.py compares its output with
rich's at every width from ``MIN_WIDTH`` to 260 and for other tables.

In a terminal (or where FORCE_COLOR / TTY_COMPATIBLE make one) rich writes the same layout with the header's
cells and the title's lines in their styles; ``terminal_styles`` takes those from a rich ``Console`` (its
theme, colour system and NO_COLOR decide them) and ``render`` wraps the same pieces rich wraps, so that rich
lays nothing out (0.3 s of a terminal's ``podlife versions``). Checked against rich in the same way."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from rich.console import Console

# below this many columns rich folds the first line and squeezes cells to nothing: left to rich
MIN_WIDTH = 50
# characters other than printable ASCII that rich counts as one cell (tests/test_plaintable.py checks each)
ONE_CELL = frozenset("…→←≤≥×—–’")
# rich.markup's tags and rich._emoji_replace's codes: a cell holding either is left to rich
_MARKUP_TAG = re.compile(r"(\\*)\[([a-z#/@][^[]*?)]")
_EMOJI_CODE = re.compile(r":(\S*?)(?:(?:\-)(emoji|text))?:")
# every character of rich's emoji names (tests/test_plaintable.py checks it): a code with another is none
_EMOJI_NAME_CHARS = frozenset("!#&()*+-.0123456789_abcdefghijklmnopqrstuvwxyzãåçéíô’")
_WORD = re.compile(r"\s*\S+\s*")            # rich._wrap.re_word
_TRAILING_SPACE = re.compile(r"\s+$")


def plain_width(stream: object, environ: Mapping[str, str] = os.environ) -> int | None:
    """The width rich's ``Console()`` would lay out at when writing to ``stream``, if it would write plain text
    (not a terminal, a UTF encoding, not Windows or Jupyter); None where rich may do anything else."""
    import builtins

    if sys.platform == "win32" or hasattr(builtins, "get_ipython") or getattr(stream, "rich_proxied_file", None):
        return None
    if environ.get("TTY_COMPATIBLE", "") == "1" or environ.get("FORCE_COLOR", "") != "":
        return None   # rich.console.Console.is_terminal: a terminal whatever the file is
    if environ.get("TTY_COMPATIBLE", "") != "0" and "FORCE_COLOR" not in environ:
        isatty = getattr(stream, "isatty", None)
        try:
            if isatty is None or isatty():
                return None
        except ValueError:
            pass
    if not (getattr(stream, "encoding", None) or "utf-8").lower().startswith("utf"):
        return None   # rich draws the box in ASCII
    width: int | None = None
    for stdio in (sys.__stdin__, sys.__stdout__, sys.__stderr__):   # Console.size: the first that answers
        try:
            width = os.get_terminal_size(stdio.fileno()).columns   # type: ignore[union-attr]
            break
        except (AttributeError, ValueError, OSError):
            continue
    columns = environ.get("COLUMNS")
    if columns is not None and columns.isdigit():
        width = int(columns)
    width = width or 80
    return width if width >= MIN_WIDTH else None


def _plain_cell(text: str) -> bool:
    """Whether rich shows ``text`` as it is, one cell a character: no markup tag, no emoji code that rich knows,
    no control character, nothing wide."""
    if not (text.isascii() and text.isprintable()) and not all(" " <= c <= "~" or c in ONE_CELL for c in text):
        return False
    if "[" in text and (_MARKUP_TAG.search(text) or "\\[" in text):
        return False
    codes = [code for m in _EMOJI_CODE.finditer(text) if _EMOJI_NAME_CHARS.issuperset(code := m.group(1).lower())]
    if codes:
        from rich._emoji_codes import EMOJI   # only for a text that has the shape of one

        return not any(code in EMOJI for code in codes)
    return True


def _with_maximum(r: tuple[int, int], width: int) -> tuple[int, int]:
    return min(r[0], width), min(r[1], width)


def _normalize(r: tuple[int, int]) -> tuple[int, int]:
    low = min(max(0, r[0]), r[1])
    return max(0, low), max(0, max(low, r[1]))


def _natural(text: str) -> tuple[int, int]:
    """rich.text.Text.__rich_measure__: the longest word, the longest line."""
    lines = text.splitlines()
    longest_line = max(map(len, lines)) if lines else 0
    words = text.split()
    return _normalize((max(map(len, words)) if words else longest_line, longest_line))


def _measure_cell(natural: tuple[int, int], width: int) -> tuple[int, int]:
    """rich.measure.Measurement.get of a cell's Padding(Text, (0, 1)) in ``width`` cells."""
    if width - 2 < 1:
        return width, width
    r = _with_maximum(natural, width)
    r = (0, 0) if r[1] < 1 else _normalize(r)
    return _with_maximum((r[0] + 2, r[1] + 2), width)


def _measure_column(cells: Sequence[tuple[int, int]], width: int) -> tuple[int, int]:
    if width < 1:
        return 0, 0
    ranges = [_measure_cell(c, width) for c in cells]
    return _with_maximum((max(r[0] for r in ranges), max(r[1] for r in ranges)), width)


def _ratio_reduce(total: int, ratios: list[int], maximums: list[int], values: list[int]) -> list[int]:
    """rich._ratio.ratio_reduce."""
    ratios = [ratio if most else 0 for ratio, most in zip(ratios, maximums)]
    total_ratio = sum(ratios)
    if not total_ratio:
        return values[:]
    remaining, out = total, []
    for ratio, most, value in zip(ratios, maximums, values):
        if ratio and total_ratio > 0:
            given = min(most, round(ratio * remaining / total_ratio))
            out.append(value - given)
            remaining -= given
            total_ratio -= ratio
        else:
            out.append(value)
    return out


def _collapse(widths: list[int], max_width: int) -> list[int]:
    """rich.table.Table._collapse_widths with every column wrappable: narrow the widest columns first."""
    total = sum(widths)
    excess = total - max_width
    while total and excess > 0:
        widest = max(widths)
        second = max(w if w != widest else 0 for w in widths)
        if not widest - second:
            break
        ratios = [1 if w == widest else 0 for w in widths]
        widths = _ratio_reduce(excess, ratios, [min(excess, widest - second)] * len(widths), widths)
        total = sum(widths)
        excess = total - max_width
    return widths


def _column_widths(texts: list[list[str]], max_width: int) -> list[int]:
    """rich.table.Table._calculate_column_widths (no fixed widths, no expand), padding included."""
    columns = [[_natural(t) for t in column] for column in texts]
    widths = [_measure_column(c, max_width)[1] or 1 for c in columns]
    if sum(widths) > max_width:
        widths = _collapse(widths, max_width)
        if sum(widths) > max_width:
            widths = _ratio_reduce(sum(widths) - max_width, [1] * len(widths), widths, widths)
        widths = [_measure_column(c, w)[1] or 0 for c, w in zip(columns, widths)]
    return widths


def _divide(text: str, width: int, fold: bool) -> list[str]:
    """rich._wrap.divide_line then Text.divide and rstrip_end: the text's lines at ``width`` cells, before
    justification."""
    breaks: list[int] = []
    offset = 0
    for m in _WORD.finditer(text):   # successive matches from 0, as rich's words()
        start, word = m.start(), m.group(0)
        length = len(word.rstrip())
        if width - offset >= length:
            offset += len(word)
        elif length > width:
            if fold:
                pieces = [word[i:i + width] for i in range(0, len(word), width)]
                for i, piece in enumerate(pieces):
                    if start:
                        breaks.append(start)
                    if i == len(pieces) - 1:
                        offset = len(piece)
                    else:
                        start += len(piece)
            else:
                if start:
                    breaks.append(start)
                offset = len(word)
        elif offset and start:
            breaks.append(start)
            offset = len(word)
    bounds = [0, *breaks, len(text)]
    lines = []
    for a, b in zip(bounds, bounds[1:]):
        line = text[a:b]
        if len(line) > width:   # Text.rstrip_end
            space = _TRAILING_SPACE.search(line)
            if space:
                line = line[:len(line) - min(len(space.group(0)), len(line) - width)]
        lines.append(line)
    return lines


def _cell_lines(text: str, width: int) -> list[str]:
    """A cell in a column ``width`` wide, padding included: left-justified, a word too long ends in "…"."""
    inner = width - 2
    out = []
    for line in _divide(text, inner, fold=False):
        line = line[:inner - 1] + "…" if len(line) > inner else line.ljust(inner)
        out.append(f" {line} ")
    return out


def _centred(text: str, width: int) -> list[str]:
    """A table's title: folded at ``width``, each line centred (Lines.justify "center", overflow "fold")."""
    out = []
    for line in _divide(text, width, fold=True):
        line = line.rstrip()[:width]
        line = " " * ((width - len(line)) // 2) + line
        out.append(line.ljust(width))
    return out


def line(text: str, width: int) -> str | None:
    """What ``Console(width=width).print(text)`` writes for a text that fits on one line; None otherwise."""
    return text + "\n" if len(text) <= width and _plain_cell(text) else None


class Styles(NamedTuple):
    """How a console writes text in the table's header style and in its title style."""

    header: Callable[[str], str]
    title: Callable[[str], str]


PLAIN = Styles(str, str)


def terminal_styles(console: Console) -> Styles | None:
    """For a rich ``Console`` that may write styles (a terminal; FORCE_COLOR): what it writes for a text in the
    header style and in the title style, taken from the console itself (its theme, colour system, NO_COLOR); None
    where a table's layout may not be the plain one (a legacy Windows console, Jupyter, an encoding other than
    UTF, fewer than MIN_WIDTH columns)."""
    from rich.text import Text

    if (console.legacy_windows or console.is_jupyter or console.width < MIN_WIDTH
            or not console.encoding.lower().startswith("utf")):
        return None
    wraps = []
    for name in ("table.header", "table.title"):
        with console.capture() as captured:
            console.print(Text("x", style=console.get_style(name)), end="")
        before, x, after = captured.get().partition("x")
        if not x or "x" in after:
            return None
        # rich writes an empty text without a style (Style.render)
        wraps.append(lambda text, before=before, after=after: before + text + after if text else text)
    return Styles(*wraps)


def render(headers: Sequence[str], rows: Sequence[Sequence[str]], width: int, title: str | None = None,
           styles: Styles = PLAIN) -> str | None:
    """What ``Console(width=width).print(table)`` writes for ``Table(*headers, title=title)`` holding ``rows``:
    written to a file that is not a terminal with the PLAIN styles, to one that is with the console's
    ``terminal_styles``; None if rich may show it otherwise (see ``_plain_cell``)."""
    if width < MIN_WIDTH or not rows or not all(map(_plain_cell, [*headers, *(c for r in rows for c in r),
                                                                 *([title] if title else [])])):
        return None
    columns = [[h, *(r[i] for r in rows)] for i, h in enumerate(headers)]
    extra = len(headers) + 1   # the edges and the dividers
    widths = _column_widths(columns, width - extra)
    if min(widths) < 3:
        return None
    table_width = sum(widths) + extra
    out: list[str] = []
    if title:
        out.extend(styles.title(line[:width]) for line in _centred(title, table_width))
    out.append("┏" + "┳".join("━" * w for w in widths) + "┓")
    for index, row in enumerate([headers, *rows]):
        cells = [_cell_lines(text, w) for text, w in zip(row, widths)]
        height = max(map(len, cells))
        for cell, w in zip(cells, widths):
            blank = [" " * w] * (height - len(cell))
            if index == 0:   # the header row aligns to the bottom; its padding and text are styled apart
                h = styles.header
                cell[:] = [h(b) for b in blank] + [h(c[0]) + h(c[1:-1]) + h(c[-1]) for c in cell]
            else:
                cell.extend(blank)
        edge = "┃" if index == 0 else "│"
        out.extend(edge + edge.join(parts) + edge for parts in zip(*cells))
        if index == 0:
            out.append("┡" + "╇".join("━" * w for w in widths) + "┩")
    out.append("└" + "┴".join("─" * w for w in widths) + "┘")
    return "".join(line + "\n" for line in out)
