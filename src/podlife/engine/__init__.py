from typing import Any

__all__ = ["Kernel", "Process", "few_collections"]


def __getattr__(name: str) -> Any:
    # loaded on first use: the command line imports podlife.engine.gcpolicy without SimPy
    if name in __all__:
        from podlife.engine import kernel

        return getattr(kernel, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
