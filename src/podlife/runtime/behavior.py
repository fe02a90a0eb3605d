"""How a simulated container behaves: from the ``podlife/behavior`` annotation, its command, or defaults.

Scenario format section 2.1. A command of an obvious form (``sleep N``, ``exit N``, ``true``, ``false``, also
inside ``sh -c "…"`` joined by ``;`` or ``&&``) gives its duration and exit code. Such a command runs as PID 1
of its container, and PID 1 has no default signal handlers, so it ignores SIGTERM and dies only by SIGKILL,
which is why ``sleep 3600`` pods take their whole grace period to stop.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import yaml

from podlife.api.meta import Obj
from podlife.api.quantity import to_bytes

ANNOTATION = "podlife/behavior"
_FIELDS = {"startSeconds", "exitAfterSeconds", "exitCode", "onTerm", "termSeconds", "readySeconds",
           "failProbesAfterSeconds", "memory", "hookSeconds"}
_HOOKS = ("postStart", "preStop")


@dataclass(frozen=True)
class Behavior:
    start_seconds: float = 0.1
    exit_after: float | None = None       # None: runs until stopped
    exit_code: int = 0
    on_term: str = "exit"                 # exit | ignore
    term_seconds: float = 0.1
    ready_seconds: float = 0.0
    fail_probes_after: float | None = None
    memory: int | None = None             # bytes of working set
    hook_seconds: dict[str, float] = field(default_factory=dict)
    hook_exit_code: dict[str, int] = field(default_factory=dict)


class BehaviorError(ValueError):
    """A bad ``podlife/behavior`` annotation; ``path`` is relative to the annotation (``app.onTerm``)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path


@dataclass(frozen=True)
class CommandEffect:
    seconds: float | None    # None: runs forever (or the command is not one we understand)
    exit_code: int
    understood: bool


def command_effect(argv: list[str] | None) -> CommandEffect:
    """What an obvious shell command does: total sleep, final exit code."""
    if not argv:
        return CommandEffect(None, 0, False)
    return _command_effect(tuple(argv))


@lru_cache(maxsize=1024)
def _command_effect(argv: tuple[str, ...]) -> CommandEffect:
    if len(argv) >= 3 and argv[0] in ("sh", "/bin/sh", "bash", "/bin/bash") and argv[1] == "-c":
        script = " ".join(argv[2:])
    else:
        script = " ".join(shlex.quote(a) for a in argv)
    seconds, code = 0.0, 0
    for part in script.replace("&&", ";").split(";"):
        try:
            words = shlex.split(part)
        except ValueError:
            return CommandEffect(None, 0, False)
        if not words:
            continue
        head = words[0].rsplit("/", 1)[-1]
        if head == "sleep" and len(words) == 2:
            if words[1] == "infinity":
                return CommandEffect(None, 0, True)
            try:
                seconds += float(words[1].rstrip("s"))
            except ValueError:
                return CommandEffect(None, 0, False)
        elif head == "exit":
            return CommandEffect(seconds, int(words[1]) if len(words) > 1 and words[1].isdigit() else 0, True)
        elif head == "true" and len(words) == 1:
            code = 0
        elif head == "false" and len(words) == 1:
            return CommandEffect(seconds, 1, True)
        else:
            return CommandEffect(None, 0, False)
    return CommandEffect(seconds, code, True)


def _hook_command(container: Obj, hook: str) -> list[str] | None:
    handler = ((container.get("lifecycle") or {}).get(hook)) or {}
    return (handler.get("exec") or {}).get("command")


@lru_cache(maxsize=1024)
def parse_annotation(text: str) -> dict[str, dict[str, Any]]:
    """Parse and check the annotation; raises BehaviorError. Pods of one template share the text, so the
    result is cached: callers must not modify it."""
    try:
        data = yaml.safe_load(text) if text.strip() else {}
    except yaml.YAMLError as e:
        raise BehaviorError("", f"not valid YAML: {e}") from None
    if not isinstance(data, dict):
        raise BehaviorError("", "expected a mapping of container name to behavior")
    for cname, spec in data.items():
        if not isinstance(spec, dict):
            raise BehaviorError(str(cname), "expected a mapping")
        for k, v in spec.items():
            p = f"{cname}.{k}"
            if k not in _FIELDS:
                raise BehaviorError(p, f"unknown field; known fields: {', '.join(sorted(_FIELDS))}")
            if k == "onTerm" and v not in ("exit", "ignore"):
                raise BehaviorError(p, f'"{v}" is not one of exit, ignore')
            elif k == "exitCode" and (not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= 255):
                raise BehaviorError(p, f"{v!r} is not an exit code (an integer 0-255)")
            elif k == "memory":
                try:
                    to_bytes(v)
                except ValueError:
                    raise BehaviorError(p, f"{v!r} is not a quantity") from None
            elif k == "hookSeconds":
                if not isinstance(v, dict) or any(h not in _HOOKS for h in v):
                    raise BehaviorError(p, "expected a mapping with postStart and/or preStop seconds")
                for h, sec in v.items():
                    if not _is_seconds(sec):
                        raise BehaviorError(f"{p}.{h}", f"{sec!r} is not a number of seconds")
            elif k in ("startSeconds", "exitAfterSeconds", "termSeconds", "readySeconds",
                       "failProbesAfterSeconds") and v is not None and not _is_seconds(v):
                raise BehaviorError(p, f"{v!r} is not a number of seconds")
    return data


def _is_seconds(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0


def behavior_for(pod: Obj, container: Obj) -> Behavior:
    """The behaviour of one container of a pod (annotation, then command, then defaults)."""
    text = (pod["metadata"].get("annotations") or {}).get(ANNOTATION)
    spec = parse_annotation(text).get(container["name"], {}) if text else {}
    argv = (container.get("command") or []) + (container.get("args") or [])
    eff = command_effect(argv)
    hook_seconds: dict[str, float] = {}
    hook_codes: dict[str, int] = {}
    for hook in _HOOKS:
        h = command_effect(_hook_command(container, hook))
        if h.understood:
            hook_seconds[hook] = h.seconds if h.seconds is not None else float("inf")
            hook_codes[hook] = h.exit_code
    hook_seconds.update({k: float(v) for k, v in (spec.get("hookSeconds") or {}).items()})
    exit_after = spec.get("exitAfterSeconds", eff.seconds if eff.understood else None)
    return Behavior(
        start_seconds=float(spec.get("startSeconds", 0.1)),
        exit_after=None if exit_after is None else float(exit_after),
        exit_code=int(spec.get("exitCode", eff.exit_code if eff.understood else 0)),
        on_term=spec.get("onTerm", "ignore" if eff.understood else "exit"),
        term_seconds=float(spec.get("termSeconds", 0.1)),
        ready_seconds=float(spec.get("readySeconds", 0.0)),
        fail_probes_after=spec.get("failProbesAfterSeconds"),
        memory=to_bytes(spec["memory"]) if spec.get("memory") is not None else None,
        hook_seconds=hook_seconds,
        hook_exit_code=hook_codes,
    )
