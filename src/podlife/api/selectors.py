"""Label selectors: the string form (kubectl -l), metav1.LabelSelector and NodeSelectorTerm.

Follows k8s.io/apimachinery/pkg/labels/selector.go (Requirement, Parse, the
lexer/parser), k8s.io/apimachinery/pkg/apis/meta/v1/helpers.go
(LabelSelectorAsSelector), .../meta/v1/validation/validation.go
(ValidateLabelSelector, ValidateLabels) and
k8s.io/component-helpers/scheduling/corev1/nodeaffinity (node selector terms).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import orjson

from podlife.api import names
from podlife.api.meta import kept
from podlife.api.errors import FieldError
from podlife.engine.slices import pause

IN, NOT_IN, EQUALS, DOUBLE_EQUALS, NOT_EQUALS = "in", "notin", "=", "==", "!="
EXISTS, DOES_NOT_EXIST, GREATER_THAN, LESS_THAN = "exists", "!", "gt", "lt"
_BINARY_OPERATORS = [IN, NOT_IN, EQUALS, DOUBLE_EQUALS, NOT_EQUALS, GREATER_THAN, LESS_THAN]
_VALID_OPERATORS = _BINARY_OPERATORS + [EXISTS, DOES_NOT_EXIST]

NODE_SELECTOR_OPERATORS = ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]
_NODE_OP = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": DOES_NOT_EXIST, "Gt": GREATER_THAN,
            "Lt": LESS_THAN}
_LABEL_SELECTOR_OP = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": DOES_NOT_EXIST}


def _parse_int64(s: str) -> int | None:
    """strconv.ParseInt(s, 10, 64)."""
    body = s[1:] if s[:1] in ("+", "-") else s
    if not body or not body.isascii() or not body.isdigit():
        return None
    v = int(s)
    return v if -(2**63) <= v < 2**63 else None


def _go_list(values: list[str]) -> str:
    return "[]string{" + ", ".join(f'"{v}"' for v in values) + "}"


@dataclass(frozen=True)
class Requirement:
    """labels.Requirement: key, operator (selection.Operator spelling) and values."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        labels = labels or {}
        op = self.operator
        if op in (IN, EQUALS, DOUBLE_EQUALS):
            return self.key in labels and labels[self.key] in self.values
        if op in (NOT_IN, NOT_EQUALS):
            return self.key not in labels or labels[self.key] not in self.values
        if op == EXISTS:
            return self.key in labels
        if op == DOES_NOT_EXIST:
            return self.key not in labels
        if op in (GREATER_THAN, LESS_THAN):
            if self.key not in labels or len(self.values) != 1:
                return False
            have, want = _parse_int64(labels[self.key]), _parse_int64(self.values[0])
            if have is None or want is None:
                return False
            return have > want if op == GREATER_THAN else have < want
        return False

    def __str__(self) -> str:
        op = self.operator
        head = ("!" if op == DOES_NOT_EXIST else "") + self.key
        if op in (EXISTS, DOES_NOT_EXIST):
            return head
        sym = {IN: " in ", NOT_IN: " notin ", GREATER_THAN: ">", LESS_THAN: "<"}.get(op, op)
        vals = self.values[0] if len(self.values) == 1 else ",".join(sorted(self.values))
        return f"{head}{sym}({vals})" if op in (IN, NOT_IN) else f"{head}{sym}{vals}"


def new_requirement(key: str, op: str, values: list[str] | tuple[str, ...], path: str | None = None) -> Requirement:
    """labels.NewRequirement: validates and builds; raises ValueError with the aggregated errors."""
    base = path or ""
    values = list(values)
    errs: list[str] = []
    key_errs = names.qualified_name_errors(key)
    if key_errs:
        errs.append(f'{_join(base, "key")}: Invalid value: "{key}": ' + "; ".join(key_errs))
    vpath = _join(base, "values")
    if op in (IN, NOT_IN):
        if not values:
            errs.append(f"{vpath}: Invalid value: {_go_list(values)}: for 'in', 'notin' operators, values set can't be "
                        "empty")
    elif op in (EQUALS, DOUBLE_EQUALS, NOT_EQUALS):
        if len(values) != 1:
            errs.append(f"{vpath}: Invalid value: {_go_list(values)}: exact-match compatibility requires one single "
                        "value")
    elif op in (EXISTS, DOES_NOT_EXIST):
        if values:
            errs.append(f"{vpath}: Invalid value: {_go_list(values)}: values set must be empty for exists and does not "
                        "exist")
    elif op in (GREATER_THAN, LESS_THAN):
        if len(values) != 1:
            errs.append(f"{vpath}: Invalid value: {_go_list(values)}: for 'Gt', 'Lt' operators, exactly one value is "
                        "required")
        for i, v in enumerate(values):
            if _parse_int64(v) is None:
                errs.append(f'{vpath}[{i}]: Invalid value: "{v}": for \'Gt\', \'Lt\' operators, the value must be an '
                            'integer')
    else:
        supported = ", ".join(f'"{o}"' for o in _VALID_OPERATORS)
        errs.append(f'{_join(base, "operator")}: Unsupported value: "{op}": supported values: {supported}')
    for i, v in enumerate(values):
        v_errs = names.label_value_errors(v)
        if v_errs:
            errs.append(f'{vpath}[{i}][{key}]: Invalid value: "{v}": ' + "; ".join(v_errs))
    if errs:
        raise ValueError(errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]")
    return Requirement(key, op, tuple(values))


def _dicts(x: object) -> list[Mapping]:
    """The mapping items of a list (anything else is ignored, as a decoder would reject it)."""
    return [i for i in x if isinstance(i, Mapping)] if isinstance(x, list) else []


def _strs(x: object) -> list[str]:
    return [str(i) for i in x] if isinstance(x, list) else []


def _join(base: str, child: str) -> str:
    return f"{base}.{child}" if base else child


@dataclass(frozen=True)
class Selector:
    """labels.Selector: AND of requirements. ``nothing=True`` is labels.Nothing()."""

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        if self.nothing:
            return False
        return all(r.matches(labels) for r in self.requirements)

    __call__ = matches

    def empty(self) -> bool:
        """True when the selector does not restrict anything (labels.Everything())."""
        return not self.nothing and not self.requirements

    def required_pair(self) -> tuple[str, str] | None:
        """A label (key, value) every set of labels the selector matches has (the first such requirement's),
        None if there is none."""
        if self.nothing:
            return None
        for r in self.requirements:
            if r.operator in (EQUALS, DOUBLE_EQUALS, IN) and len(r.values) == 1:
                return r.key, r.values[0]
        return None

    def requires_exact_match(self, label: str) -> str | None:
        for r in self.requirements:
            if r.key == label:
                if r.operator in (EQUALS, DOUBLE_EQUALS, IN) and len(r.values) == 1:
                    return r.values[0]
                return None
        return None

    def __str__(self) -> str:
        return "" if self.nothing else ",".join(str(r) for r in self.requirements)


EVERYTHING = Selector()
NOTHING = Selector(nothing=True)


def _sorted(reqs: list[Requirement]) -> tuple[Requirement, ...]:
    return tuple(sorted(reqs, key=lambda r: r.key))  # sort.Sort(ByKey): stable enough for equal keys


def selector_from_set(labels: Mapping[str, str] | None) -> Selector:
    """labels.SelectorFromSet: exact matches on every pair; empty -> Everything."""
    if not labels:
        return EVERYTHING
    return Selector(_sorted([Requirement(k, EQUALS, (v,)) for k, v in labels.items()]))


# --- the string form: labels.Parse ------------------------------------------------

_SPECIAL = frozenset("=!(),><")
_WHITESPACE = frozenset(" \t\r\n")
# token kinds
_ERR, _EOS, _CPAR, _COMMA, _NOT, _DEQ, _EQ, _GT, _ID, _IN, _LT, _NEQ, _NOTIN, _OPAR = range(14)
_LITERALS = {")": _CPAR, ",": _COMMA, "!": _NOT, "==": _DEQ, "=": _EQ, ">": _GT, "in": _IN, "<": _LT,
             "!=": _NEQ, "notin": _NOTIN, "(": _OPAR}


def _lex(s: str) -> list[tuple[int, str]]:
    items: list[tuple[int, str]] = []
    pos, end = 0, len(s)
    while True:
        while pos < end and s[pos] in _WHITESPACE:
            pos += 1
        if pos >= end:
            items.append((_EOS, ""))
            return items
        if s[pos] in _SPECIAL:
            buf, last = "", None
            while pos < end and s[pos] in _SPECIAL:
                buf += s[pos]
                if buf in _LITERALS:
                    last = (_LITERALS[buf], buf)
                    pos += 1
                elif last is not None:
                    break
                else:
                    pos += 1
            items.append(last if last is not None else (_ERR, f"error expected: keyword found '{buf}'"))
            continue
        start = pos
        while pos < end and s[pos] not in _SPECIAL and s[pos] not in _WHITESPACE:
            pos += 1
        word = s[start:pos]
        items.append((_LITERALS.get(word, _ID), word))


class _Parser:
    def __init__(self, s: str):
        self.items = _lex(s)
        self.pos = 0

    def lookahead(self, values: bool) -> tuple[int, str]:
        tok, lit = self.items[self.pos]
        return (_ID, lit) if values and tok in (_IN, _NOTIN) else (tok, lit)

    def consume(self, values: bool) -> tuple[int, str]:
        item = self.lookahead(values)
        self.pos += 1
        return item

    def parse(self) -> list[Requirement]:
        reqs: list[Requirement] = []
        while True:
            tok, lit = self.lookahead(True)
            if tok == _EOS:
                return reqs
            if tok not in (_ID, _NOT):
                raise ValueError(f"found '{lit}', expected: !, identifier, or 'end of string'")
            try:
                reqs.append(self.requirement())
            except ValueError as exc:
                raise ValueError(f"unable to parse requirement: {exc}") from None
            t, lit = self.consume(True)
            if t == _EOS:
                return reqs
            if t != _COMMA:
                raise ValueError(f"found '{lit}', expected: ',' or 'end of string'")
            t2, l2 = self.lookahead(True)
            if t2 not in (_ID, _NOT):
                raise ValueError(f"found '{l2}', expected: identifier after ','")

    def requirement(self) -> Requirement:
        op = ""
        tok, key = self.consume(True)
        if tok == _NOT:
            op = DOES_NOT_EXIST
            tok, key = self.consume(True)
        if tok != _ID:
            raise ValueError(f"found '{key}', expected: identifier")
        key_errs = names.qualified_name_errors(key)
        if key_errs:
            raise ValueError(f'<nil>: Invalid value: "{key}": ' + "; ".join(key_errs))
        if self.lookahead(True)[0] in (_EOS, _COMMA):
            return new_requirement(key, op or EXISTS, [])
        if op == DOES_NOT_EXIST:
            return new_requirement(key, op, [])  # upstream fails the same way: values can't follow !key
        tok, lit = self.consume(False)
        ops = {_IN: IN, _EQ: EQUALS, _DEQ: DOUBLE_EQUALS, _GT: GREATER_THAN, _LT: LESS_THAN, _NOTIN: NOT_IN,
               _NEQ: NOT_EQUALS}
        if tok not in ops:
            raise ValueError(f"found '{lit}', expected: {', '.join(_BINARY_OPERATORS)}")
        op = ops[tok]
        values = self.set_values() if op in (IN, NOT_IN) else self.exact_value()
        return new_requirement(key, op, sorted(values))

    def set_values(self) -> set[str]:
        tok, lit = self.consume(True)
        if tok != _OPAR:
            raise ValueError(f"found '{lit}' expected: '('")
        tok, lit = self.lookahead(True)
        if tok == _CPAR:
            self.consume(True)
            return {""}
        if tok not in (_ID, _COMMA):
            raise ValueError(f"found '{lit}', expected: ',', ')' or identifier")
        values = self.identifiers()
        if self.consume(True)[0] != _CPAR:
            raise ValueError(f"found '{lit}', expected: ')'")
        return values

    def identifiers(self) -> set[str]:
        out: set[str] = set()
        while True:
            tok, lit = self.consume(True)
            if tok == _ID:
                out.add(lit)
                t2, l2 = self.lookahead(True)
                if t2 == _COMMA:
                    continue
                if t2 == _CPAR:
                    return out
                raise ValueError(f"found '{l2}', expected: ',' or ')'")
            if tok == _COMMA:
                if not out:
                    out.add("")  # "(,"
                t2, _ = self.lookahead(True)
                if t2 in (_CPAR, _COMMA):
                    out.add("")  # ",)" or ",,"
                if t2 == _CPAR:
                    return out
                continue
            raise ValueError(f"found '{lit}', expected: ',', or identifier")

    def exact_value(self) -> set[str]:
        tok, _ = self.lookahead(True)
        if tok in (_EOS, _COMMA):
            return {""}
        tok, lit = self.consume(True)
        if tok == _ID:
            return {lit}
        raise ValueError(f"found '{lit}', expected: identifier")


def parse(selector: str) -> Selector:
    """labels.Parse: ``a=b,c!=d,e in (x,y),f notin (z),g,!h``; also ``==``, ``>`` and ``<``.

    Returns a Selector (callable, and with ``.matches(labels)``); raises ValueError
    with the upstream message on bad syntax. The empty string selects everything.
    """
    return Selector(_sorted(_Parser(selector).parse()))


# --- metav1.LabelSelector --------------------------------------------------------


def label_selector_as_selector(sel: Mapping | None) -> Selector:
    """LabelSelectorAsSelector: None -> Nothing, {} -> Everything; raises ValueError if malformed."""
    if sel is None:
        return NOTHING
    if not isinstance(sel, Mapping):
        raise ValueError(f"invalid label selector: {sel!r}")
    match_labels = sel.get("matchLabels") or {}
    exprs = sel.get("matchExpressions") or []
    if not isinstance(match_labels, Mapping) or not isinstance(exprs, list):
        raise ValueError(f"invalid label selector: {dict(sel)!r}")
    if not match_labels and not exprs:
        return EVERYTHING
    reqs = [new_requirement(str(k), EQUALS, [str(v)]) for k, v in match_labels.items()]
    for expr in exprs:
        expr = expr if isinstance(expr, Mapping) else {}
        op = _LABEL_SELECTOR_OP.get(str(expr.get("operator")))
        if op is None:
            raise ValueError(f'"{expr.get("operator") or ""}" is not a valid pod selector operator')
        reqs.append(new_requirement(str(expr.get("key") or ""), op, _strs(expr.get("values"))))
    return Selector(_sorted(reqs))


def matches(selector: Mapping | None, labels: Mapping[str, str] | None) -> bool:
    """Does a metav1.LabelSelector dict select these labels?

    As upstream: ``None`` (a missing selector) matches NOTHING, while an empty
    selector ``{}`` matches EVERYTHING. A malformed selector (bad operator, bad
    key, In without values, ...) raises ValueError, as LabelSelectorAsSelector
    returns an error; callers that want "no match" must catch it.
    """
    return compiled(selector).matches(labels)


_COMPILED: dict[bytes, Selector] = {}
T = TypeVar("T")


def once(memo: dict[bytes, T], value: object, make: Callable[[Any], T], *, sort_keys: bool = True,
         limit: int = 100_000) -> T:
    """make(value), kept per distinct JSON form of value (made afresh for a value that has none; nothing is
    kept when make raises). ``sort_keys=False``: values whose keys come in another order are distinct. Past
    ``limit`` values the memo starts again."""
    try:
        key = orjson.dumps(value, option=orjson.OPT_SORT_KEYS if sort_keys else None)
    except TypeError:
        return make(value)
    found = memo.get(key)
    if found is None:
        if len(memo) > limit:
            memo.clear()
        found = memo[kept(key)] = make(value)
    return found


def compiled(selector: Mapping | None) -> Selector:
    """label_selector_as_selector, parsed once per distinct selector (controllers and the scheduler ask the same
    few selectors millions of times). Malformed selectors are not cached: they raise every time."""
    if selector is None:
        return NOTHING
    return once(_COMPILED, selector, label_selector_as_selector)


def to_string(selector: Mapping | None) -> str:
    """FormatLabelSelector: the kubectl string form, "<none>" when empty, "<error>" when invalid."""
    try:
        s = str(label_selector_as_selector(selector))
    except ValueError:
        return "<error>"
    return s or "<none>"


# --- validation ------------------------------------------------------------------


def validate_label_name(key: str, path: str) -> list[FieldError]:
    """ValidateLabelName (meta/v1/validation)."""
    return [FieldError(path, "Invalid value", m, key) for m in names.qualified_name_errors(key)]


_LABEL_ERRORS: dict[tuple[str, tuple[tuple[Any, Any], ...]], list[FieldError]] = {}
_LABEL_ERRORS_KEPT = 4096


def validate_labels(labels: Mapping | None, path: str) -> list[FieldError]:
    """ValidateLabels: qualified-name keys, label-syntax values. Errors point at ``path`` itself. The outcome is
    kept per path and labels (every replica of a template carries the same)."""
    if labels is not None and not isinstance(labels, Mapping):
        return [FieldError(path, "Invalid value", "must be a map of string keys to string values", labels)]
    if not labels:
        return []
    try:
        key = (path, tuple(labels.items()))
        found = _LABEL_ERRORS.get(key)
    except TypeError:   # a value that is not hashable (so not a string): no memo
        return _label_errors(labels, path)
    if found is None:
        if len(_LABEL_ERRORS) >= _LABEL_ERRORS_KEPT:
            _LABEL_ERRORS.clear()
        found = _LABEL_ERRORS[key] = _label_errors(labels, path)
    return list(found)


def _label_errors(labels: Mapping, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for k in sorted(labels or {}):
        pause()   # many labels are checked in slices (podlife.engine.slices)
        v = labels[k]
        errs.extend(validate_label_name(k, path))
        if not isinstance(v, str):
            errs.append(FieldError(path, "Invalid value", "must be a string", v))
            continue
        errs.extend(FieldError(path, "Invalid value", m, v) for m in names.label_value_errors(v))
    return errs


def validate_selector(sel: Mapping | None, path: str, *, allow_invalid_label_value: bool = False) -> list[FieldError]:
    """ValidateLabelSelector + ValidateLabelSelectorRequirement."""
    if sel is None:
        return []
    if not isinstance(sel, Mapping):
        return [FieldError(path, "Invalid value", "must be an object", sel)]
    errs = validate_labels(sel.get("matchLabels"), f"{path}.matchLabels")
    for i, expr in enumerate(_dicts(sel.get("matchExpressions"))):
        errs.extend(_validate_selector_requirement(expr, f"{path}.matchExpressions[{i}]", allow_invalid_label_value))
    return errs


def _validate_selector_requirement(expr: Mapping, path: str, allow_invalid_value: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    op = expr.get("operator") or ""
    values = _strs(expr.get("values"))
    if op in ("In", "NotIn"):
        if not values:
            errs.append(FieldError(f"{path}.values", "Required value",
                                   "must be specified when `operator` is 'In' or 'NotIn'"))
    elif op in ("Exists", "DoesNotExist"):
        if values:
            errs.append(FieldError(f"{path}.values", "Forbidden",
                                   "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
    else:
        errs.append(FieldError(f"{path}.operator", "Invalid value", "not a valid selector operator", op))
    errs.extend(validate_label_name(expr.get("key") or "", f"{path}.key"))
    if not allow_invalid_value:
        for i, v in enumerate(values):
            errs.extend(FieldError(f"{path}.values[{i}]", "Invalid value", m, v)
                        for m in names.label_value_errors(str(v)))
    return errs


# --- node selectors (nodeaffinity.go) --------------------------------------------


def _node_term_selector(exprs: list[Mapping]) -> Selector:
    """nodeSelectorRequirementsAsSelector; raises ValueError on a parse error."""
    reqs = []
    for expr in exprs:
        op = _NODE_OP.get(str(expr.get("operator")))
        if op is None:
            supported = ", ".join(f'"{o}"' for o in NODE_SELECTOR_OPERATORS)
            raise ValueError(f'Unsupported value: "{expr.get("operator")}": supported values: {supported}')
        reqs.append(new_requirement(str(expr.get("key") or ""), op, _strs(expr.get("values"))))
    return Selector(_sorted(reqs))


class NodeSelectorTermMatcher:
    """One NodeSelectorTerm parsed once: its matchExpressions as a Selector, its matchFields as (key, operator,
    value) triples. A term that fails to parse (bad operator, In without values, a field requirement that is
    not In/NotIn with one value) matches nothing, as a term with neither list does."""

    __slots__ = ("selector", "fields", "never")

    def __init__(self, term: object) -> None:
        self.selector: Selector | None = None
        self.fields: tuple[tuple[str, str, str], ...] = ()
        self.never = True
        if not isinstance(term, Mapping):
            return
        exprs = _dicts(term.get("matchExpressions"))
        fields = _dicts(term.get("matchFields"))
        if not exprs and not fields:
            return
        try:
            self.selector = _node_term_selector(exprs) if exprs else None
            self.fields = tuple(_node_field_requirement(f) for f in fields)
        except ValueError:
            return
        self.never = False

    def matches(self, labels: Mapping[str, str] | None, node_name: str | None = None) -> bool:
        if self.never or (self.selector is not None and not self.selector.matches(labels)):
            return False
        if not self.fields or not node_name:
            return True  # upstream ignores matchFields when the node has no fields
        # nodeSelectorRequirementsAsFieldSelector: only metadata.name is a field of a node
        return all((node_name if key == "metadata.name" else "") == value if op == "In" else
                   (node_name if key == "metadata.name" else "") != value for key, op, value in self.fields)


def _node_field_requirement(expr: Mapping) -> tuple[str, str, str]:
    """nodeSelectorRequirementsAsFieldSelector: In/NotIn with exactly one value, else an error."""
    op, values = expr.get("operator"), _strs(expr.get("values"))
    if op not in ("In", "NotIn") or len(values) != 1:
        raise ValueError(f'invalid node field selector requirement {dict(expr)}')
    return expr.get("key") or "", op, values[0]


_COMPILED_TERMS: dict[bytes, NodeSelectorTermMatcher] = {}


def compiled_node_selector_term(term: object) -> NodeSelectorTermMatcher:
    """A NodeSelectorTerm parsed once per distinct term (the scheduler asks the same few terms of every node)."""
    return once(_COMPILED_TERMS, term, NodeSelectorTermMatcher)


def matches_node_selector_term(term: Mapping, labels: Mapping[str, str] | None, node_name: str | None = None) -> bool:
    """Does one NodeSelectorTerm match a node's labels (and name, for matchFields)?

    As upstream: a term with neither matchExpressions nor matchFields matches
    nothing; Gt/Lt compare the label as a 64-bit integer (non-integers never
    match); a term that fails to parse (bad operator, In without values, ...)
    does not match.
    """
    return compiled_node_selector_term(term).matches(labels, node_name)


def matches_node_selector(node_selector: Mapping | None, labels: Mapping[str, str] | None,
                          node_name: str | None = None) -> bool:
    """A NodeSelector: its terms are ORed. None matches everything (no constraint)."""
    if node_selector is None:
        return True
    return any(matches_node_selector_term(t, labels, node_name) for t in _dicts(node_selector.get("nodeSelectorTerms")))


def validate_node_selector_term(term: Mapping, path: str, *,
                                allow_invalid_label_value: bool = False) -> list[FieldError]:
    """ValidateNodeSelectorTerm (core/validation)."""
    errs: list[FieldError] = []
    for j, req in enumerate(_dicts(term.get("matchExpressions"))):
        p = f"{path}.matchExpressions[{j}]"
        op, values = req.get("operator") or "", _strs(req.get("values"))
        if op in ("In", "NotIn"):
            if not values:
                errs.append(FieldError(f"{p}.values", "Required value",
                                       "must be specified when `operator` is 'In' or 'NotIn'"))
        elif op in ("Exists", "DoesNotExist"):
            if values:
                errs.append(FieldError(f"{p}.values", "Forbidden",
                                       "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
        elif op in ("Gt", "Lt"):
            if len(values) != 1:
                errs.append(FieldError(f"{p}.values", "Required value",
                                       "must be specified single value when `operator` is 'Lt' or 'Gt'"))
        else:
            errs.append(FieldError(f"{p}.operator", "Invalid value", "not a valid selector operator", op))
        errs.extend(validate_label_name(req.get("key") or "", f"{p}.key"))
        if not allow_invalid_label_value:
            for i, v in enumerate(values):
                errs.extend(FieldError(f"{p}.values[{i}]", "Invalid value", m, v)
                            for m in names.label_value_errors(str(v)))
    for j, req in enumerate(_dicts(term.get("matchFields"))):
        p = f"{path}.matchFields[{j}]"
        op, values = req.get("operator") or "", _strs(req.get("values"))
        if op in ("In", "NotIn"):
            if len(values) != 1:
                errs.append(FieldError(f"{p}.values", "Required value",
                                       "must be only one value when `operator` is 'In' or 'NotIn' for node field "
                                       "selector"))
        else:
            errs.append(FieldError(f"{p}.operator", "Invalid value", "not a valid selector operator", op))
        if req.get("key") != "metadata.name":
            errs.append(FieldError(f"{p}.key", "Invalid value", "not a valid field selector key", req.get("key") or ""))
        else:
            for i, v in enumerate(values):
                errs.extend(FieldError(f"{p}.values[{i}]", "Invalid value", m, v)
                            for m in names.name_is_dns_subdomain(str(v)))
    return errs


def validate_node_selector(ns: Mapping, path: str) -> list[FieldError]:
    """ValidateNodeSelector: at least one term, each valid."""
    terms = _dicts(ns.get("nodeSelectorTerms"))
    if not terms:
        return [FieldError(f"{path}.nodeSelectorTerms", "Required value", "must have at least one node selector term")]
    errs: list[FieldError] = []
    for i, term in enumerate(terms):
        errs.extend(validate_node_selector_term(term, f"{path}.nodeSelectorTerms[{i}]"))
    return errs
