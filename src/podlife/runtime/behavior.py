"""How a simulated container behaves: from the ``podlife/behavior`` annotation, its command, or defaults.

Scenario format section 2.1. A command of an obvious form (``sleep N``, ``exit N``, ``true``, ``false``, also
inside ``sh -c "…"`` joined by ``;`` or ``&&``) gives its duration and exit code. Such a command runs as PID 1
of its container, and PID 1 has no default signal handlers, so it ignores SIGTERM and dies only by SIGKILL,
which is why ``sleep 3600`` pods take their whole grace period to stop.

Everything podlife assumes beyond the annotation and the command forms is decided here, in ``resolve``, which
also says what it assumed, so the summary and the report can list it (``DEFAULTS`` is the table):

- a container expected to finish (a regular init container, or any container of a pod whose restartPolicy is
  Never or OnFailure, which covers Jobs) whose command is not understood completes with exit 0 after
  ``COMPLETES_AFTER_SECONDS``;
- SIGTERM: the kernel does not deliver a default-action signal to a PID namespace's init process
  (kernel/signal.c sig_task_ignored with SIGNAL_UNKILLABLE), so a shell or any program without a handler of
  its own ignores it; programs known to handle it (``HANDLES_SIGTERM``) exit with their own status; behind an
  init wrapper (tini, dumb-init) the program is not PID 1 and, without a handler, dies of the signal (143);
- a container without a command runs its image's entrypoint, which podlife cannot see: it keeps the
  scenario format's default (exits 0.1 s after SIGTERM);
- probes are not evaluated: they succeed, unless readySeconds/failProbesAfterSeconds say otherwise.
"""

from __future__ import annotations

import shlex
from fnmatch import fnmatchcase
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import orjson
import yaml

from podlife.api.meta import Obj
from podlife.api.quantity import to_bytes
from podlife.api.speckey import name_free, nodeless_key
from podlife.api.yamlread import SafeLoader

ANNOTATION = "podlife/behavior"
_FIELDS = {"startSeconds", "exitAfterSeconds", "exitCode", "onTerm", "termSeconds", "readySeconds",
           "failProbesAfterSeconds", "memory", "cpu", "hookSeconds"}
_HOOKS = ("postStart", "preStop")


@dataclass(frozen=True)
class Behavior:
    """How a container behaves when run: start time, exit, hooks and probes (its podlife/behavior annotation)."""

    start_seconds: float = 0.1
    exit_after: float | None = None       # None: runs until stopped
    exit_code: int = 0
    on_term: str = "exit"                 # exit | ignore
    term_seconds: float = 0.1
    ready_seconds: float = 0.0
    fail_probes_after: float | None = None
    memory: int | None = None             # bytes of working set
    cpu: tuple[tuple[float, int], ...] = ()   # (seconds after start, millicores in use from then on)
    hook_seconds: dict[str, float] = field(default_factory=dict)
    hook_exit_code: dict[str, int] = field(default_factory=dict)
    term_exit_code: int | None = None     # exit status after SIGTERM when onTerm is exit; None: exit_code


class BehaviorError(ValueError):
    """A bad ``podlife/behavior`` annotation; ``path`` is relative to the annotation (``app.onTerm``)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path


@dataclass(frozen=True)
class CommandEffect:
    """What a container's command does: how long it runs and how it exits, when podlife understands it."""

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
            arg = words[1]
            unit = {"s": 1, "m": 60, "h": 3600, "d": 86400}.get(arg[-1:], 0)   # GNU sleep's suffixes
            try:
                value = float(arg[:-1] if unit else arg) * (unit or 1)
            except ValueError:
                return CommandEffect(None, 0, False)
            if value == float("inf"):
                return CommandEffect(None, 0, True)   # sleep inf / infinity: for ever
            if value != value or value < 0:
                return CommandEffect(None, 0, False)  # nan, negative: sleep refuses it; not modelled
            seconds += value
        elif head == "exit":
            # a process's exit status is its low 8 bits (wait(2) WEXITSTATUS): `exit 300` is seen as 44. 10^8 is a
            # multiple of 256, so the last eight digits decide it (however long the number)
            arg = words[1] if len(words) > 1 else ""
            code = int(arg[-8:]) & 0xFF if arg.isascii() and arg.isdigit() else 0
            return CommandEffect(seconds, code, True)
        elif head == "true" and len(words) == 1:
            code = 0
        elif head == "false" and len(words) == 1:
            return CommandEffect(seconds, 1, True)
        else:
            return CommandEffect(None, 0, False)
    return CommandEffect(seconds, code, True)


COMPLETES_AFTER_SECONDS = 1.0
SHELLS = frozenset({"sh", "bash", "ash", "dash", "zsh"})
INIT_WRAPPERS = frozenset({"tini", "dumb-init"})   # forward signals to their child and exit with its status
SIGTERM_EXIT = 128 + 15                              # a process killed by SIGTERM, as a shell reports it

# Programs (basename of the executable) that install a SIGTERM handler, and the status they exit with.
HANDLES_SIGTERM: dict[str, tuple[int, str]] = {
    "nginx": (0, "nginx: TERM is a fast shutdown, the master exits 0"),
    "httpd": (0, "httpd: TERM stops the server, exits 0"),
    "java": (SIGTERM_EXIT, "JVM: runs its shutdown hooks, then exits 128+15 = 143"),
    "envoy": (0, "envoy: TERM shuts the server down, exits 0"),
    "redis-server": (0, "redis-server: TERM saves (if configured) and exits 0"),
    "postgres": (0, "postgres: TERM is a smart shutdown, exits 0 once clients are gone"),
    "gunicorn": (0, "gunicorn: TERM is a graceful shutdown, exits 0"),
    "uvicorn": (0, "uvicorn: TERM is a graceful shutdown, exits 0"),
    "caddy": (0, "caddy: TERM is a graceful shutdown, exits 0"),
    "haproxy": (0, "haproxy: TERM is a hard stop, exits 0"),
    "traefik": (0, "traefik: TERM is a graceful shutdown, exits 0"),
}

# The defaults, in one place (section 2.1 point 3 and the assumptions above).
DEFAULTS = {
    "startSeconds": 0.1,
    "termSeconds": 0.1,
    "completesAfterSeconds": COMPLETES_AFTER_SECONDS,
    "handlesSigterm": sorted(HANDLES_SIGTERM),
    "shells": sorted(SHELLS),
    "initWrappers": sorted(INIT_WRAPPERS),
}


def _hook_command(container: Obj, hook: str) -> list[str] | None:
    handler = ((container.get("lifecycle") or {}).get(hook)) or {}
    return (handler.get("exec") or {}).get("command")


@lru_cache(maxsize=1024)
def parse_annotation(text: str) -> dict[str, dict[str, Any]]:
    """Parse and check the annotation; raises BehaviorError. Pods of one template share the text, so the
    result is cached: callers must not modify it."""
    try:
        data = yaml.load(text, Loader=SafeLoader) if text.strip() else {}   # yaml.safe_load's
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" (line {mark.line + 1} of the annotation)" if mark is not None else ""
        raise BehaviorError("", f"not valid YAML: {getattr(e, 'problem', None) or e}{where}") from None
    if not isinstance(data, dict):
        raise BehaviorError("", "expected a mapping of container name to behavior")
    for cname, spec in data.items():
        if not isinstance(spec, dict):
            raise BehaviorError(str(cname), "expected a mapping")
        check_fields(spec, str(cname))
    return data


def check_fields(spec: dict[str, Any], prefix: str) -> None:
    """Check the behaviour fields of one container; error paths start with ``prefix``."""
    for k, v in spec.items():
        p = f"{prefix}.{k}" if prefix else k
        if k not in _FIELDS:
            raise BehaviorError(p, f"unknown field; known fields: {', '.join(sorted(_FIELDS))}")
        if k == "onTerm" and v not in ("exit", "ignore"):
            raise BehaviorError(p, f'"{v}" is not one of exit, ignore')
        elif k == "exitCode" and (not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= 255):
            raise BehaviorError(p, f"{v!r} is not an exit code (an integer 0-255)")
        elif k == "memory":
            try:
                if isinstance(v, bool) or to_bytes(v) < 0:
                    raise ValueError(v)
            except ValueError:
                raise BehaviorError(p, f"{v!r} is not a quantity >= 0 (e.g. 200Mi)") from None
        elif k == "cpu":
            try:
                cpu_steps(v)
            except ValueError:
                raise BehaviorError(p, f"{v!r} is not a cpu quantity, or a mapping of seconds after the start to "
                                       "cpu quantities") from None
        elif k == "hookSeconds":
            if not isinstance(v, dict) or any(h not in _HOOKS for h in v):
                raise BehaviorError(p, "expected a mapping with postStart and/or preStop seconds")
            for h, sec in v.items():
                if not _is_seconds(sec):
                    raise BehaviorError(f"{p}.{h}", f"{sec!r} is not a number of seconds (0 to a week)")
        elif k in ("startSeconds", "exitAfterSeconds", "termSeconds", "readySeconds",
                   "failProbesAfterSeconds") and v is not None and not _is_seconds(v):
            raise BehaviorError(p, f"{v!r} is not a number of seconds (0 to a week)")


def cpu_steps(value: Any) -> tuple[tuple[float, int], ...]:
    """``250m`` (in use from the start) or ``{0: 100m, 5m: 900m}`` (time after the start, in seconds or as a
    duration → cpu from then on), as (seconds, millicores) in time order; ValueError when malformed."""
    from podlife.api.quantity import parse_quantity
    from podlife.scenario.durations import parse_duration

    items = value.items() if isinstance(value, dict) else [(0, value)]
    out = []
    for after, q in items:
        if isinstance(after, str):
            after = parse_duration(after)
        if isinstance(after, bool) or not isinstance(after, (int, float)) or not 0 <= after < float("inf"):
            raise ValueError(after)
        if isinstance(q, bool) or not isinstance(q, (str, int, float)):
            raise ValueError(q)
        milli = parse_quantity(str(q)) * 1000
        if milli < 0:
            raise ValueError(q)
        out.append((float(after), int(round(milli))))
    return tuple(sorted(out))


def cpu_at(behavior: Behavior, since_start: float) -> int:
    """Millicores the container uses this long after it started."""
    used = 0
    for after, milli in behavior.cpu:
        if since_start >= after:
            used = milli
    return used


@dataclass(frozen=True)
class BehaviorRule:
    """One entry of a scenario's ``spec.behaviors``: behaviour fields for the containers it matches (globs on
    the pod name, the container name and the image; an absent pattern matches everything)."""
    fields: dict[str, Any] = field(hash=False)   # hashed by its patterns, compared whole
    pod: str | None = None
    container: str | None = None
    image: str | None = None

    def matches(self, pod_name: str, container: Obj) -> bool:
        return all(pattern is None or fnmatchcase(value, pattern) for pattern, value in (
            (self.pod, pod_name), (self.container, container.get("name", "")),
            (self.image, container.get("image", ""))))


def _is_seconds(v: Any) -> bool:
    """A finite number of seconds >= 0 (no run outlasts a week, so neither does a behaviour's time)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= MAX_SECONDS


MAX_SECONDS = 7 * 24 * 3600


KNOWN_LIMIT = 4096   # behaviours kept by behavior_for; all are forgotten when it is reached
_known: dict[tuple[Any, ...], Behavior] = {}


def behavior_for(pod: Obj, container: Obj, rules: tuple[BehaviorRule, ...] = ()) -> Behavior:
    """The behaviour of one container of a pod (annotation, scenario rules, command, defaults). The replicas of
    a template ask for the same container again and again, so each answer is kept under everything ``resolve``
    reads: the container, the annotation, the name the rules' pod patterns see, whether the pod expects the
    container to complete, and the rules."""
    md = pod.get("metadata") or {}
    key = (_stored_container_key(pod, container) or name_free(orjson.dumps(container)),
           (md.get("annotations") or {}).get(ANNOTATION),
           (md.get("name") or md.get("generateName") or "") if rules else "", _expects_completion(pod, container),
           rules)
    known = _known.get(key)
    if known is None:
        if len(_known) >= KNOWN_LIMIT:
            _known.clear()
        known = _known[key] = resolve(pod, container, rules)[0]
    return known


def _stored_container_key(pod: Obj, container: Obj) -> tuple[bytes, str, int] | None:
    """The container as its place in a spec the store keyed (``speckey.nodeless_key``: the spec's JSON less
    nodeName, the token volume's name taken out, as ``name_free`` takes it out of the container's): the same
    key means the same container but for that name, without encoding it again. None when the store has no key
    at hand or ``container`` is not one of the spec's own. (A tuple never equals a ``name_free`` key, bytes.)"""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return None
    key = nodeless_key(spec)
    if key is None:
        return None
    for field_name in ("containers", "initContainers", "ephemeralContainers"):
        for i, c in enumerate(spec.get(field_name) or ()):
            if c is container:
                return key, field_name, i
    return None


def _program(argv: list[str]) -> tuple[str, bool]:
    """The program that ends up running as the container's process, and whether it runs under an init
    wrapper (so it is not PID 1). ``sh -c "exec nginx …"`` is nginx: exec replaces the shell."""
    wrapped = False
    while argv:
        head = argv[0].rsplit("/", 1)[-1]
        if head in INIT_WRAPPERS:
            rest = argv[1:]
            while rest and rest[0].startswith("-"):   # the wrapper's own flags, then "--"
                rest = rest[1:]
            argv, wrapped = rest, True
            continue
        if head in SHELLS and len(argv) >= 3 and argv[1] == "-c":
            try:   # unquoted ; & | come out as tokens of their own
                words = list(shlex.shlex(argv[2].replace("\n", ";"), posix=True, punctuation_chars=True))
            except ValueError:
                return head, wrapped
            if len(words) > 1 and words[0] == "exec" and not any(w[:1] in (";", "&", "|") for w in words):
                argv = words[1:]
                continue
            return head, wrapped
        return head, wrapped
    return "", wrapped


def _expects_completion(pod: Obj, container: Obj) -> bool:
    """A regular init container, or a container of a pod that is not restarted after it exits."""
    spec = pod.get("spec") or {}
    name = container.get("name")
    for ic in spec.get("initContainers") or ():
        if ic.get("name") == name:
            return ic.get("restartPolicy") != "Always"   # a restartable init container is a sidecar
    return spec.get("restartPolicy", "Always") in ("Never", "OnFailure")


def _argv(container: Obj, assumed: list[str]) -> list[str]:
    """What the container runs, as far as the manifest says. Without a command the image's ENTRYPOINT runs
    with the args, and podlife cannot see it; args that start with a shell or a program it knows are taken
    to be the command (an image without an ENTRYPOINT, such as busybox, runs its args), and it says so."""
    command, args = container.get("command") or [], container.get("args") or []
    if command:
        return list(command) + list(args)
    if not args:
        return []
    head = str(args[0]).rsplit("/", 1)[-1]
    if head in SHELLS or head in HANDLES_SIGTERM or head in INIT_WRAPPERS or command_effect(args).understood:
        assumed.append(f"no command: assumed the image has no ENTRYPOINT, so its args ({head} …) are the "
                       "command")
        return list(args)
    return []


def _hook_assumptions(container: Obj, hook_seconds: dict[str, float]) -> list[str]:
    """Hooks whose time podlife does not know: an exec command it does not recognise, an HTTP call."""
    out = []
    for hook in _HOOKS:
        handler = ((container.get("lifecycle") or {}).get(hook)) or {}
        if hook in hook_seconds or not isinstance(handler, dict):
            continue
        if handler.get("exec") is not None:
            cmd = " ".join(str(a) for a in (handler["exec"].get("command") or ()))[:40]
            out.append(f"{hook} exec ({cmd}): not recognised; assumed: succeeds at once")
        elif handler.get("httpGet") is not None:
            out.append(f"{hook} httpGet: not evaluated; assumed: succeeds at once")
    return out


def _probe_assumptions(container: Obj, spec: dict[str, Any]) -> list[str]:
    if "readySeconds" in spec or "failProbesAfterSeconds" in spec:
        return []
    out = []
    for kind in ("startupProbe", "livenessProbe", "readinessProbe"):
        probe = container.get(kind)
        if not probe:
            continue
        handler = next((h for h in ("exec", "httpGet", "tcpSocket", "grpc") if h in probe), "handler")
        out.append(f"{kind.removesuffix('Probe')} probe {handler}: not evaluated, assumed to succeed")
    return out


def resolve(pod: Obj, container: Obj, rules: tuple[BehaviorRule, ...] = ()) -> tuple[Behavior, list[str]]:
    """The behaviour of one container of a pod, and what was assumed to get it (empty when the annotation
    and the command decide everything). Field by field, the annotation wins over the first matching rule."""
    md = pod.get("metadata") or {}
    text = (md.get("annotations") or {}).get(ANNOTATION)
    rule = next((r.fields for r in rules if r.matches(md.get("name") or md.get("generateName") or "", container)),
                {})
    spec = {**rule, **(parse_annotation(text).get(container["name"], {}) if text else {})}
    assumed: list[str] = []
    argv = _argv(container, assumed)
    eff = command_effect(argv)
    hook_seconds: dict[str, float] = {}
    hook_codes: dict[str, int] = {}
    for hook in _HOOKS:
        h = command_effect(_hook_command(container, hook))
        if h.understood:
            hook_seconds[hook] = h.seconds if h.seconds is not None else float("inf")
            hook_codes[hook] = h.exit_code
    hook_seconds.update({k: float(v) for k, v in (spec.get("hookSeconds") or {}).items()})
    assumed.extend(_hook_assumptions(container, hook_seconds))

    # how long it runs
    exit_after: float | None = eff.seconds if eff.understood else None
    exit_code = eff.exit_code if eff.understood else 0
    if not eff.understood and "exitAfterSeconds" not in spec:
        what = "command not recognised" if argv else (
            "no command (image entrypoint unknown)" if not container.get("args") else
            "no command (image entrypoint unknown, with args)")
        if _expects_completion(pod, container):
            exit_after = COMPLETES_AFTER_SECONDS
            code = f"exit {spec['exitCode']}" if "exitCode" in spec else "exit 0"
            assumed.append(f"{what}; assumed: completes with {code} after {COMPLETES_AFTER_SECONDS:g} s")
        else:
            assumed.append(f"{what}; assumed: runs until stopped")
    exit_after = spec.get("exitAfterSeconds", exit_after)

    # what SIGTERM does
    on_term, term_code = "exit", None
    term_seconds = float(spec.get("termSeconds", 0.1))
    if eff.understood:
        on_term = "ignore"
    elif argv:
        program, wrapped = _program(argv)
        known = HANDLES_SIGTERM.get(program)
        if known is not None:
            term_code = known[0]
            note = f"{known[1]}, in {term_seconds:g} s"
        elif wrapped:
            term_code = SIGTERM_EXIT
            note = (f"{program or 'the program'} runs under an init wrapper without a SIGTERM handler: "
                    f"killed by it, exit 143, in {term_seconds:g} s")
        else:
            on_term = "ignore"
            kind = "a shell" if program in SHELLS else f"{program}, with no known SIGTERM handler,"
            note = f"{kind} runs as PID 1 and ignores SIGTERM (stops at SIGKILL)"
        if "onTerm" not in spec and "exitCode" not in spec:
            assumed.append(f"SIGTERM: {note}")
    elif "onTerm" not in spec:
        assumed.append(f"SIGTERM: assumed handled, exits in {term_seconds:g} s")
    if "exitCode" in spec:
        term_code = None
    assumed.extend(_probe_assumptions(container, spec))
    return Behavior(
        start_seconds=float(spec.get("startSeconds", 0.1)),
        exit_after=None if exit_after is None else float(exit_after),
        exit_code=int(spec.get("exitCode", exit_code)),
        on_term=spec.get("onTerm", on_term),
        term_seconds=term_seconds,
        ready_seconds=float(spec.get("readySeconds", 0.0)),
        fail_probes_after=spec.get("failProbesAfterSeconds"),
        memory=to_bytes(spec["memory"]) if spec.get("memory") is not None else None,
        cpu=cpu_steps(spec["cpu"]) if spec.get("cpu") is not None else (),
        hook_seconds=hook_seconds,
        hook_exit_code=hook_codes,
        term_exit_code=term_code,
    ), assumed
