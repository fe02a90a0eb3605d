"""podlife.engine.dataclasscode: every podlife dataclass gets the same methods (code, defaults, annotations,
signature and docstring) from the kept table as from dataclasses' own ``exec``; the table is written and read
where Python's bytecode would be, and not written when bytecode is not."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"

# Imports every podlife module, then prints one line per dataclass describing what dataclasses made for it.
_DESCRIBE = r"""
import dataclasses, importlib, inspect, pkgutil, re, sys, types
if sys.argv[1] == "table":
    from podlife.engine import dataclasscode
    dataclasscode.install()
import podlife

def code(c):
    return (c.co_name, c.co_qualname, c.co_argcount, c.co_posonlyargcount, c.co_kwonlyargcount, c.co_flags,
            c.co_code, tuple(code(k) if isinstance(k, types.CodeType) else repr(k) for k in c.co_consts),
            c.co_names, c.co_varnames, c.co_freevars, c.co_cellvars, c.co_firstlineno, c.co_linetable,
            c.co_exceptiontable, c.co_filename)

for m in sorted(m.name for m in pkgutil.walk_packages(podlife.__path__, "podlife.")):
    try:
        importlib.import_module(m)
    except Exception:
        pass
seen = set()
for name, mod in sorted(sys.modules.items()):
    if not name.startswith("podlife"):
        continue
    for cls in vars(mod).values():
        if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)) or cls in seen:
            continue
        seen.add(cls)
        made = []
        for attr, f in sorted(vars(cls).items()):
            if isinstance(f, types.FunctionType) and f.__code__.co_filename == "<string>":
                made.append((attr, f.__qualname__, code(f.__code__), repr(f.__defaults__), repr(f.__kwdefaults__),
                             repr(f.__annotations__), [repr(c.cell_contents) for c in f.__closure__ or ()]))
        line = repr((cls.__module__, cls.__qualname__, cls.__doc__, str(inspect.signature(cls)),
                     getattr(cls, "__match_args__", None), cls.__hash__ is None, made))
        print(re.sub(r" at 0x[0-9a-f]+", "", line))
if sys.argv[1] == "table":
    print("table:", len(dataclasscode._table or {}), "texts, added:", dataclasscode._added)
"""


def _describe(mode: str, prefix: Path, write: bool) -> list[str]:
    env = dict(os.environ, PYTHONPATH=str(SRC), PYTHONPYCACHEPREFIX=str(prefix), PYTHONHASHSEED="0")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if not write:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    out = subprocess.run([sys.executable, "-c", _DESCRIBE, mode], env=env, capture_output=True, text=True,
                         check=True).stdout
    return out.splitlines()


def test_same_methods_from_the_table(tmp_path: Path) -> None:
    plain = _describe("plain", tmp_path / "plain", write=False)
    assert len(plain) > 100   # podlife's dataclasses, each with its methods
    assert sum("'__init__'" in line for line in plain) > 100
    first = _describe("table", tmp_path / "cache", write=True)   # compiles every text and writes the table
    assert first[-1].startswith("table: ") and first[-1].endswith("added: True")
    tables = list((tmp_path / "cache").rglob("dataclasscode.*.methods"))
    assert len(tables) == 1
    second = _describe("table", tmp_path / "cache", write=True)  # takes every text from the table
    assert second[-1].endswith("added: False")
    assert first[:-1] == plain
    assert second[:-1] == plain


def test_not_written_without_bytecode(tmp_path: Path) -> None:
    lines = _describe("table", tmp_path, write=False)
    assert lines[-1].endswith("added: True")
    assert not list(tmp_path.rglob("*.methods"))


def test_foreign_or_broken_table_is_ignored(tmp_path: Path) -> None:
    from importlib.util import MAGIC_NUMBER

    env = dict(os.environ, PYTHONPATH=str(SRC), PYTHONPYCACHEPREFIX=str(tmp_path))
    where = Path(subprocess.run([sys.executable, "-c", "from podlife.engine import dataclasscode as d; "
                                                       "print(d.table_path())"],
                                env=env, capture_output=True, text=True, check=True).stdout.strip())
    assert str(where).startswith(str(tmp_path))
    where.parent.mkdir(parents=True, exist_ok=True)
    for content in (b"not a table", MAGIC_NUMBER + b"\xff" * 100, b"\0\0\0\0" + b"x" * 10):
        where.write_bytes(content)
        lines = _describe("table", tmp_path, write=True)
        assert lines[-1].endswith("added: True")   # nothing taken from it; written again whole
        assert where.read_bytes().startswith(MAGIC_NUMBER) and where.read_bytes() != content
