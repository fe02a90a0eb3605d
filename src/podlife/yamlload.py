"""Importing PyYAML for the command line without compiling its reader's NON_PRINTABLE pattern (issue 31, start-up).

``yaml/reader.py`` compiles ``Reader.NON_PRINTABLE`` as it is imported: a class of every printable code point,
whose ranges ``re`` expands into a table of 65,536 entries in Python (57M instructions, 6 % of a small run). Only
PyYAML's pure-Python reader uses it (a text libyaml refuses, an error's line), and the scenario reader's check
for control characters when the text is not ASCII (``scenario.yamlread``). While yaml is imported,
``re.compile`` hands back, for that one pattern, a stand-in that compiles it the first time it is used; every
other pattern is compiled as usual, and ``re.compile`` is itself again once yaml is imported.
tests/test_yamlload.py fails if PyYAML's pattern changes (the stand-in would then no longer be made).
"""

from __future__ import annotations

import re
import sys
from typing import Any

# yaml/reader.py: Reader.NON_PRINTABLE (PyYAML 6.0)
NON_PRINTABLE = "[^\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\U00010000-\U0010ffff]"


class LazyPattern:
    """A pattern compiled when first used; what is asked of it is asked of the compiled pattern."""

    __slots__ = ("_source", "_flags", "_compiled")

    def __init__(self, source: str, flags: int) -> None:
        self._source, self._flags = source, flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self._source, self._flags)
        return self._compiled

    def search(self, *args: Any) -> re.Match[str] | None:
        return self.compiled.search(*args)

    def match(self, *args: Any) -> re.Match[str] | None:
        return self.compiled.match(*args)

    def __getattr__(self, name: str) -> Any:   # anything else a Pattern has (pattern, flags, sub, ...)
        return getattr(self.compiled, name)


def import_yaml() -> None:
    """Import yaml, its reader's NON_PRINTABLE left to be compiled when used."""
    if "yaml" in sys.modules:
        return
    real = re.compile

    def compile_lazily(pattern: Any, flags: int = 0) -> Any:
        if pattern == NON_PRINTABLE and flags == 0:
            return LazyPattern(pattern, flags)
        return real(pattern, flags)

    re.compile = compile_lazily
    try:
        import yaml  # noqa: F401
    finally:
        re.compile = real
