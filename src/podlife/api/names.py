"""Name and label syntax checks with upstream error wording.

Follows k8s.io/apimachinery/pkg/util/validation/validation.go (IsDNS1123Label,
IsDNS1123Subdomain, IsDNS1035Label, IsQualifiedName, IsValidLabelValue, ...)
and k8s.io/apimachinery/pkg/api/validation/generic.go (NameIsDNSSubdomain and
friends).  The ``*_errors`` functions return the upstream message list (empty
when valid); the ``is_*`` functions return a bool.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from functools import wraps
from typing import Any

NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand: no vowels, no 0/1/3


def _choice_draws(rng: random.Random, n: int) -> str:
    """``n`` characters as ``rng.choice(NAME_CHARS)`` draws them (Random._randbelow_with_getrandbits: 5 random bits
    again until below 27), without two Python calls per character (two names a pod: its own, its token volume)."""
    bits = rng.getrandbits
    out = []
    for _ in range(n):
        r = bits(5)
        while r >= 27:
            r = bits(5)
        out.append(NAME_CHARS[r])
    return "".join(out)


def _same_draws() -> bool:
    """Whether this interpreter's ``Random.choice`` draws as _choice_draws does (checked once, on a fixed seed)."""
    a, b = random.Random(20261206), random.Random(20261206)
    return all(_choice_draws(a, 5) == "".join(b.choice(NAME_CHARS) for _ in range(5)) for _ in range(64))


_FAST_DRAWS = len(NAME_CHARS) == 27 and _same_draws()


def random_suffix(rng: Any, n: int = 5) -> str:
    """utilrand.String(n), drawn from ``rng`` (a seeded generator): the tail of names.SimpleNameGenerator."""
    if _FAST_DRAWS and type(rng) is random.Random:
        return _choice_draws(rng, n)
    return "".join(rng.choice(NAME_CHARS) for _ in range(n))


# --- message builders (util/validation: MaxLenError, RegexError, ...) -------


def max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    out = msg + " (e.g. "
    for i, ex in enumerate(examples):
        if i > 0:
            out += " or "
        out += f"'{ex}', "
    return out + f"regex used for validation is '{fmt}')"


def empty_error() -> str:
    return "must be non-empty"


def inclusive_range_error(lo: int, hi: int) -> str:
    return f"must be between {lo} and {hi}, inclusive"


# --- DNS-1123 / DNS-1035 ------------------------------------------------------

DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_LABEL_ERR_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
DNS1123_LABEL_MAX_LENGTH = 63
DNS1123_SUBDOMAIN_FMT = DNS1123_LABEL_FMT + "(\\." + DNS1123_LABEL_FMT + ")*"
DNS1123_SUBDOMAIN_ERR_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
DNS1123_SUBDOMAIN_MAX_LENGTH = 253
DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
DNS1035_LABEL_ERR_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
    "start with an alphabetic character, and end with an alphanumeric character"
)
DNS1035_LABEL_MAX_LENGTH = 63

_DNS1123_LABEL_RE = re.compile(DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN_RE = re.compile(DNS1123_SUBDOMAIN_FMT)
_DNS1035_LABEL_RE = re.compile(DNS1035_LABEL_FMT)

# Full-string message upstream uses for an invalid label, e.g. in container names.
DNS1123_LABEL_ERROR = regex_error(DNS1123_LABEL_ERR_MSG, DNS1123_LABEL_FMT, "my-name", "123-abc")
DNS1123_SUBDOMAIN_ERROR = regex_error(DNS1123_SUBDOMAIN_ERR_MSG, DNS1123_SUBDOMAIN_FMT, "example.com")
DNS1035_LABEL_ERROR = regex_error(DNS1035_LABEL_ERR_MSG, DNS1035_LABEL_FMT, "my-name", "abc-123")


def _full(rx: re.Pattern[str], value: str) -> bool:
    return rx.fullmatch(value) is not None


NOT_A_STRING = "must be a string"  # upstream rejects this while decoding JSON


def _strings_only(fn: Callable[..., list[str]]) -> Callable[..., list[str]]:
    """A non-string value yields [NOT_A_STRING] instead of a TypeError."""

    @wraps(fn)
    def wrapper(value: object, *args: object) -> list[str]:
        return fn(value, *args) if isinstance(value, str) else [NOT_A_STRING]

    return wrapper


@_strings_only
def dns1123_label_errors(value: str) -> list[str]:
    """IsDNS1123Label."""
    errs: list[str] = []
    if len(value) > DNS1123_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not _full(_DNS1123_LABEL_RE, value):
        if _full(_DNS1123_SUBDOMAIN_RE, value):
            errs.append("must not contain dots")
        else:
            errs.append(DNS1123_LABEL_ERROR)
    return errs


@_strings_only
def dns1123_subdomain_errors(value: str) -> list[str]:
    """IsDNS1123Subdomain."""
    errs: list[str] = []
    if len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _full(_DNS1123_SUBDOMAIN_RE, value):
        errs.append(DNS1123_SUBDOMAIN_ERROR)
    return errs


@_strings_only
def dns1035_label_errors(value: str) -> list[str]:
    """IsDNS1035Label."""
    errs: list[str] = []
    if len(value) > DNS1035_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1035_LABEL_MAX_LENGTH))
    if not _full(_DNS1035_LABEL_RE, value):
        errs.append(DNS1035_LABEL_ERROR)
    return errs


def is_dns1123_label(value: str) -> bool:
    return isinstance(value, str) and not dns1123_label_errors(value)


def is_dns1123_subdomain(value: str) -> bool:
    return isinstance(value, str) and not dns1123_subdomain_errors(value)


def is_dns1035_label(value: str) -> bool:
    return isinstance(value, str) and not dns1035_label_errors(value)


# --- qualified names (label keys) and label values ----------------------------

QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
QUALIFIED_NAME_ERR_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
QUALIFIED_NAME_MAX_LENGTH = 63
LABEL_VALUE_FMT = "(" + QUALIFIED_NAME_FMT + ")?"
LABEL_VALUE_ERR_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
LABEL_VALUE_MAX_LENGTH = 63

_QUALIFIED_NAME_RE = re.compile(QUALIFIED_NAME_FMT)
_LABEL_VALUE_RE = re.compile(LABEL_VALUE_FMT)


@_strings_only
def qualified_name_errors(value: str) -> list[str]:
    """IsQualifiedName: optional DNS-subdomain prefix + '/' + name of at most 63 chars."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part " + empty_error())
        else:
            errs.extend("prefix part " + m for m in dns1123_subdomain_errors(prefix))
    else:
        return [
            "a qualified name "
            + regex_error(QUALIFIED_NAME_ERR_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part " + empty_error())
    elif len(name) > QUALIFIED_NAME_MAX_LENGTH:
        errs.append("name part " + max_len_error(QUALIFIED_NAME_MAX_LENGTH))
    if not _full(_QUALIFIED_NAME_RE, name):
        errs.append(
            "name part " + regex_error(QUALIFIED_NAME_ERR_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
        )
    return errs


@_strings_only
def label_value_errors(value: str) -> list[str]:
    """IsValidLabelValue."""
    errs: list[str] = []
    if len(value) > LABEL_VALUE_MAX_LENGTH:
        errs.append(max_len_error(LABEL_VALUE_MAX_LENGTH))
    if not _full(_LABEL_VALUE_RE, value):
        errs.append(regex_error(LABEL_VALUE_ERR_MSG, LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def is_qualified_name(value: str) -> bool:
    return isinstance(value, str) and not qualified_name_errors(value)


def is_valid_label_value(value: str) -> bool:
    return isinstance(value, str) and not label_value_errors(value)


# --- object names (api/validation/generic.go) ---------------------------------


def mask_trailing_dash(name: str) -> str:
    """maskTrailingDash: a generateName may end in '-'; upstream swaps the last two chars for 'a'."""
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


# names found valid, per check: each object's namespace and each workload's generateName are checked on every
# create (pods: every replica); a valid name stays valid. Bounded: unique names (a pod's own) go by once.
_VALID_NAMES: dict[tuple[str, str, bool], None] = {}
_VALID_NAMES_KEPT = 4096


def _checked(check: str, name: str, prefix: bool, errors: Callable[[str], list[str]]) -> list[str]:
    key = (check, name, prefix)
    if key in _VALID_NAMES:
        return []
    errs = errors(mask_trailing_dash(name) if prefix else name)
    if not errs:
        if len(_VALID_NAMES) >= _VALID_NAMES_KEPT:
            _VALID_NAMES.clear()
        _VALID_NAMES[key] = None
    return errs


@_strings_only
def name_is_dns_subdomain(name: str, prefix: bool = False) -> list[str]:
    return _checked("subdomain", name, prefix, dns1123_subdomain_errors)


@_strings_only
def name_is_dns_label(name: str, prefix: bool = False) -> list[str]:
    return _checked("label", name, prefix, dns1123_label_errors)


@_strings_only
def name_is_dns1035_label(name: str, prefix: bool = False) -> list[str]:
    return dns1035_label_errors(mask_trailing_dash(name) if prefix else name)


# --- ports, percents, env vars ------------------------------------------------

_PORT_NAME_CHARSET_RE = re.compile("[-a-z0-9]+")
_PORT_NAME_ONE_LETTER_RE = re.compile("[a-z]")


def port_num_errors(port: int) -> list[str]:
    """IsValidPortNum."""
    ok = isinstance(port, int) and not isinstance(port, bool) and 1 <= port <= 65535
    return [] if ok else [inclusive_range_error(1, 65535)]


@_strings_only
def port_name_errors(port: str) -> list[str]:
    """IsValidPortName (IANA_SVC_NAME)."""
    errs: list[str] = []
    if len(port) > 15:
        errs.append(max_len_error(15))
    if not _full(_PORT_NAME_CHARSET_RE, port):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not _PORT_NAME_ONE_LETTER_RE.search(port):
        errs.append("must contain at least one letter (a-z)")
    if "--" in port:
        errs.append("must not contain consecutive hyphens")
    if port and (port[0] == "-" or port[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return errs


PERCENT_FMT = "[0-9]+%"
_PERCENT_RE = re.compile(PERCENT_FMT)


@_strings_only
def percent_errors(value: str) -> list[str]:
    """IsValidPercent."""
    if _full(_PERCENT_RE, value):
        return []
    msg = "a valid percent string must be a numeric string followed by an ending '%'"
    return [regex_error(msg, PERCENT_FMT, "1%", "93%")]


@_strings_only
def relaxed_env_var_name_errors(value: str) -> list[str]:
    """IsRelaxedEnvVarName (RelaxedEnvironmentVariableValidation is on by default since 1.32)."""
    errs: list[str] = []
    if not value:
        errs.append("environment variable name " + empty_error())
    for ch in value:
        if ord(ch) > 127 or not ch.isprintable() or ch == "=":
            errs.append("a valid environment variable name must consist only of printable ASCII characters other than "
                        "'='")
            break
    return errs


HTTP_HEADER_NAME_FMT = "[-A-Za-z0-9]+"
_HTTP_HEADER_NAME_RE = re.compile(HTTP_HEADER_NAME_FMT)


@_strings_only
def http_header_name_errors(value: str) -> list[str]:
    if _full(_HTTP_HEADER_NAME_RE, value):
        return []
    return [regex_error("a valid HTTP header must consist of alphanumeric characters or '-'", HTTP_HEADER_NAME_FMT,
                        "X-Header-Name")]


_CONFIG_KEY = re.compile(r"[-._a-zA-Z0-9]+")
_CONFIG_KEY_MSG = ("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or "
                   "'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')")


def config_key_errors(key: str) -> list[str]:
    """IsConfigMapKey (ConfigMap, Secret, projected keys)."""
    out = []
    if len(key) > 253:
        out.append(max_len_error(253))
    if not _CONFIG_KEY.fullmatch(key):
        out.append(_CONFIG_KEY_MSG)
    if key == ".":
        out.append("must not be '.'")
    elif key == "..":
        out.append("must not be '..'")
    elif key.startswith(".."):
        out.append("must not start with '..'")
    return out
