"""The methods ``@dataclass`` writes, compiled once and kept, as Python keeps a module's bytecode.

Python's dataclasses writes each class's ``__init__``, ``__repr__``, ``__eq__`` (a frozen class's also ``__hash__``,
``__setattr__``, ``__delattr__``) as source text and compiles it with ``exec`` whenever the class is made: for the
74 dataclasses of a small run about 300 compilations, 186M instructions, a sixth of ``podlife run`` from start to
exit (bench/README.md, "The command line, start to exit"). The text depends only on the class's fields and options,
so the code compiled from it is the same in every process. ``install`` gives dataclasses an ``exec`` that takes the
code for a text from a table kept in ``__pycache__`` beside podlife's bytecode, compiled as ``exec`` compiles it (no
``__future__`` flags inherited: dataclasses.py has none), and runs it as before; a text not in the table is compiled
then and the table written again at exit. The table follows Python's own rules for bytecode: the interpreter's cache
tag in its name, its magic number at the start (another interpreter ignores it), not written under
PYTHONDONTWRITEBYTECODE, kept under PYTHONPYCACHEPREFIX when set; an unreadable or foreign table is ignored, one
that cannot be written is not kept. Only the ``podlife`` command installs it (podlife.cli.entry).
tests/test_dataclasscode.py checks that every podlife dataclass gets the same methods with the table as without.
"""

from __future__ import annotations

import atexit
import builtins
import dataclasses
import marshal
import os
import sys
from importlib.util import MAGIC_NUMBER, cache_from_source
from types import CodeType
from typing import Any

# past this many texts (podlife's own classes are about 450 of them) the table starts again from this process's
MAX_TEXTS = 5000

_table: dict[str, CodeType] | None = None   # read on the first class made
_used: dict[str, CodeType] = {}
_added = False


def table_path() -> str:
    """``__pycache__/dataclasscode.<tag>.methods`` beside this module (under PYTHONPYCACHEPREFIX when set)."""
    return cache_from_source(__file__).removesuffix(".pyc") + ".methods"


def install() -> None:
    """Make the methods of every dataclass created from now on from the kept table."""
    dataclasses.exec = _exec  # type: ignore[attr-defined]   # looked up as a global of dataclasses before builtins
    atexit.register(_write)


def _exec(source: Any, globals: Any = None, locals: Any = None, /) -> None:
    global _table, _added
    if type(source) is str:
        if _table is None:
            _table = _read()
        code = _table.get(source)
        if code is None:
            code = compile(source, "<string>", "exec", dont_inherit=True)
            _table[source] = code
            _added = True
        _used[source] = code
        source = code
    builtins.exec(source, globals, locals)


def _read() -> dict[str, CodeType]:
    try:
        with open(table_path(), "rb") as f:
            data = f.read()
        if data[:len(MAGIC_NUMBER)] == MAGIC_NUMBER:
            table = marshal.loads(data[len(MAGIC_NUMBER):])
            if isinstance(table, dict):
                return table
    except (OSError, EOFError, ValueError, TypeError):
        pass
    return {}


def _write() -> None:
    if not _added or sys.dont_write_bytecode or _table is None:
        return
    table = _table if len(_table) <= MAX_TEXTS else _used
    path = table_path()
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "wb") as f:
            f.write(MAGIC_NUMBER + marshal.dumps(table))
        os.replace(tmp, path)   # whole or not at all, whichever process writes last
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
