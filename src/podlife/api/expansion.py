"""$(VAR) references in a container's command, args, env values and subPathExpr
(third_party/forked/golang/expansion), shared by the kubelet and the process runtime."""

from __future__ import annotations

import re

_REF = re.compile(r"\$\$|\$\(([^)]*)\)")


def expand(value: str, env: dict[str, str]) -> str:
    """$(VAR) becomes the value of a variable declared before it, $$ a single $; a reference to an unknown
    variable stays as written."""
    def sub(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        name = m.group(1)
        return env[name] if name in env else m.group(0)
    return _REF.sub(sub, value)
