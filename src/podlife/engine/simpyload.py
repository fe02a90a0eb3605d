"""Importing SimPy for the command line without ``importlib.metadata`` (issue 31, start-up).

``simpy/__init__`` reads its own ``__version__`` through ``importlib.metadata``, whose import (the email parser,
zipfile, csv) and scan of site-packages cost a tenth of a small run's start-up; podlife never reads that
version. While SimPy is imported, ``importlib.metadata`` is a stand-in whose ``version`` raises
PackageNotFoundError (the case SimPy's ``__init__`` handles by leaving ``__version__`` unset); the real module is
imported as usual by whoever asks for it afterwards.
"""

from __future__ import annotations

import importlib
import sys
import types

_NAME = "importlib.metadata"


def import_simpy() -> None:
    if "simpy" in sys.modules or _NAME in sys.modules:
        import simpy  # noqa: F401  (already paid for)
        return
    stand_in = types.ModuleType(_NAME)

    class PackageNotFoundError(ModuleNotFoundError):
        pass

    def version(name: str) -> str:
        raise PackageNotFoundError(name)

    stand_in.PackageNotFoundError = PackageNotFoundError  # type: ignore[attr-defined]
    stand_in.version = version  # type: ignore[attr-defined]
    sys.modules[_NAME] = stand_in
    importlib.metadata = stand_in   # what importing it sets on the package
    try:
        import simpy  # noqa: F401
    finally:
        if sys.modules.get(_NAME) is stand_in:
            del sys.modules[_NAME]
        if getattr(importlib, "metadata", None) is stand_in:
            delattr(importlib, "metadata")
