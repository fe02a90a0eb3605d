"""A manifest proven valid against a built-in schema without jsonschema (issue 31, start-up).

Importing jsonschema and building its validator is a fifth of a small run's start-up, and nearly every manifest
passes. This walks the few keywords the Kubernetes definitions use (type, properties, additionalProperties,
items, required, enum, format, oneOf, $ref) with jsonschema's Draft 2020-12 meaning of each, and answers True
(valid), False (invalid) or None (not decided here: a keyword or a value it does not handle). Anything but True
goes to jsonschema, which gives the errors; True is only given where jsonschema would yield no error.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

Verdict = Optional[bool]

# annotations jsonschema ignores; any other keyword leaves the verdict to jsonschema
_IGNORED = frozenset(("description", "x-kubernetes-list-type", "x-kubernetes-list-map-keys",
                      "x-kubernetes-patch-strategy", "x-kubernetes-patch-merge-key", "x-kubernetes-map-type",
                      "x-kubernetes-unions", "x-kubernetes-group-version-kind"))


def _is_type(name: str, v: Any) -> Verdict:
    """jsonschema's Draft 2020-12 type checker (jsonschema/_types.py)."""
    if name == "string":
        return isinstance(v, str)
    if name == "object":
        return isinstance(v, dict)
    if name == "array":
        return isinstance(v, list)
    if name == "boolean":
        return isinstance(v, bool)
    if name == "null":
        return v is None
    if name == "integer":   # draft 6 on: a float without a fraction is an integer
        return not isinstance(v, bool) and (isinstance(v, int) or (isinstance(v, float) and v.is_integer()))
    if name == "number":
        if isinstance(v, (bool, str, dict, list)) or v is None:
            return False
        return True if isinstance(v, (int, float)) else None   # numbers.Number: leave the rare others to it
    return None


class QuickCheck:
    """Checks instances against one schema document's ``$defs`` with the format tests jsonschema is given."""

    def __init__(self, defs: dict[str, Any], formats: dict[str, Callable[[Any], bool]], patch: bool = False
                 ) -> None:
        """``patch``: as schema.check_patch reads jsonschema's errors, which drops those of ``required`` and those
        at a null (a merge patch's delete): True is then "no error check_patch keeps"."""
        self.defs = defs
        self.formats = formats
        self.patch = patch

    def valid(self, definition: str, instance: Any) -> Verdict:
        try:
            return self._check(self.defs[definition], instance)
        except RecursionError:   # deeper than this walk can follow: jsonschema decides (and names the place)
            return None

    def _check(self, schema: Any, v: Any) -> Verdict:
        if self.patch and v is None:
            return True
        if schema is True:
            return True
        if schema is False:
            return False
        if not isinstance(schema, dict):
            return None
        undecided = False
        for key, want in schema.items():
            if key in _IGNORED:
                continue
            verdict = self._keyword(key, want, schema, v)
            if verdict is False:
                return False
            if verdict is None:
                undecided = True
        return None if undecided else True

    def _keyword(self, key: str, want: Any, schema: dict[str, Any], v: Any) -> Verdict:
        if key == "type":
            if isinstance(want, str):
                return _is_type(want, v)
            verdicts = [_is_type(t, v) for t in want]
            return True if True in verdicts else None if None in verdicts else False
        if key == "$ref":
            if not isinstance(want, str) or not want.startswith("#/$defs/"):
                return None
            target = self.defs.get(want[len("#/$defs/"):])
            return None if target is None else self._check(target, v)
        if key == "properties":
            if not isinstance(v, dict):
                return True
            return _all(self._check(want[k], item) for k, item in v.items() if k in want)
        if key == "additionalProperties":
            if not isinstance(v, dict):
                return True
            known = schema.get("properties") or {}
            if "patternProperties" in schema:
                return None
            return _all(self._check(want, item) for k, item in v.items() if k not in known)
        if key == "items":
            if not isinstance(v, list):
                return True
            if "prefixItems" in schema:
                return None
            return _all(self._check(want, item) for item in v)
        if key == "required":
            return self.patch or not isinstance(v, dict) or all(k in v for k in want)
        if key == "enum":
            # jsonschema/_utils.py equal: a string equals only an equal string; None only None
            if isinstance(v, str):
                return any(isinstance(e, str) and e == v for e in want)
            if v is None:
                return any(e is None for e in want)
            return None
        if key == "format":
            test = self.formats.get(want)
            if test is None:   # a format jsonschema was given no check for passes
                return True
            try:
                return bool(test(v))
            except ValueError:
                return False
        if key == "oneOf":
            if self.patch:   # the branches as jsonschema sees them: exactly one valid, or jsonschema decides
                strict = QuickCheck(self.defs, self.formats)
                return True if [strict._check(branch, v) for branch in want].count(True) == 1 else None
            verdicts = [self._check(branch, v) for branch in want]
            if None in verdicts:
                return None
            return verdicts.count(True) == 1
        return None


def _all(verdicts: Any) -> Verdict:
    undecided = False
    for verdict in verdicts:
        if verdict is False:
            return False
        if verdict is None:
            undecided = True
    return None if undecided else True
