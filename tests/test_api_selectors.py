"""Label selectors, checked against k8s.io/apimachinery/pkg/labels and metav1 helpers."""

import pytest

from podlife.api import names
from podlife.api.selectors import (
    label_selector_as_selector,
    matches,
    matches_node_selector,
    matches_node_selector_term,
    parse,
    selector_from_set,
    to_string,
    validate_labels,
    validate_node_selector,
    validate_selector,
)

QUALIFIED_NAME_PART_ERROR = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL_VALUE_ERROR = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
    "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


# --- metav1.LabelSelector ----------------------------------------------------------------


def test_none_selector_matches_nothing_and_empty_matches_everything():
    assert matches(None, {"a": "b"}) is False
    assert matches(None, {}) is False
    assert matches({}, {"a": "b"}) is True
    assert matches({}, None) is True
    assert matches({"matchLabels": {}, "matchExpressions": []}, {}) is True


def test_match_labels_are_anded():
    sel = {"matchLabels": {"app": "web", "tier": "fe"}}
    assert matches(sel, {"app": "web", "tier": "fe", "extra": "x"})
    assert not matches(sel, {"app": "web"})
    assert not matches(sel, {"app": "web", "tier": "be"})
    assert not matches(sel, None)


@pytest.mark.parametrize(
    ("expr", "labels", "expected"),
    [
        ({"key": "env", "operator": "In", "values": ["prod", "qa"]}, {"env": "qa"}, True),
        ({"key": "env", "operator": "In", "values": ["prod", "qa"]}, {"env": "dev"}, False),
        ({"key": "env", "operator": "In", "values": ["prod"]}, {}, False),
        ({"key": "env", "operator": "NotIn", "values": ["prod"]}, {"env": "dev"}, True),
        ({"key": "env", "operator": "NotIn", "values": ["prod"]}, {"env": "prod"}, False),
        ({"key": "env", "operator": "NotIn", "values": ["prod"]}, {}, True),  # missing key matches NotIn
        ({"key": "env", "operator": "Exists"}, {"env": ""}, True),
        ({"key": "env", "operator": "Exists"}, {}, False),
        ({"key": "env", "operator": "DoesNotExist"}, {}, True),
        ({"key": "env", "operator": "DoesNotExist"}, {"env": "x"}, False),
    ],
)
def test_match_expressions(expr, labels, expected):
    assert matches({"matchExpressions": [expr]}, labels) is expected


def test_match_labels_and_expressions_combine():
    sel = {"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "canary", "operator": "DoesNotExist"}]}
    assert matches(sel, {"app": "web"})
    assert not matches(sel, {"app": "web", "canary": "true"})


def test_malformed_selectors_raise():
    with pytest.raises(ValueError, match='^"Gt" is not a valid pod selector operator$'):
        matches({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]}, {})
    with pytest.raises(ValueError, match="values set can't be empty"):
        matches({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]}, {})
    with pytest.raises(ValueError, match="values set must be empty for exists"):
        matches({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}, {})
    with pytest.raises(ValueError, match=r'^key: Invalid value: "-bad"'):
        matches({"matchLabels": {"-bad": "x"}}, {})


def test_selector_string_form_is_sorted_by_key():
    sel = {"matchLabels": {"z": "1", "a": "2"},
           "matchExpressions": [{"key": "m", "operator": "In", "values": ["y", "x"]}]}
    assert to_string(sel) == "a=2,m in (x,y),z=1"
    assert to_string({}) == "<none>"
    assert to_string({"matchExpressions": [{"key": "a", "operator": "Bad"}]}) == "<error>"
    assert str(label_selector_as_selector({"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]})) == "!a"


def test_selector_from_set():
    sel = selector_from_set({"b": "2", "a": "1"})
    assert str(sel) == "a=1,b=2"
    assert sel.matches({"a": "1", "b": "2"}) and not sel.matches({"a": "1"})
    assert selector_from_set({}).empty() and selector_from_set(None).matches({"x": "y"})


# --- the string form (labels.Parse) -------------------------------------------------------

FULL = "a=b,c!=d,e in (x,y),f notin (z),g,!h"


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        ({"a": "b", "e": "x", "g": ""}, True),
        ({"a": "b", "e": "y", "g": "1", "c": "e", "f": "q"}, True),
        ({"a": "b", "e": "x", "g": "1", "c": "d"}, False),  # c!=d
        ({"a": "b", "e": "z", "g": "1"}, False),  # e in (x,y)
        ({"a": "b", "e": "x", "g": "1", "f": "z"}, False),  # f notin (z)
        ({"a": "b", "e": "x"}, False),  # g must exist
        ({"a": "b", "e": "x", "g": "1", "h": ""}, False),  # !h
        ({"a": "c", "e": "x", "g": "1"}, False),
    ],
)
def test_parse_full_grammar(labels, expected):
    sel = parse(FULL)
    assert sel.matches(labels) is expected
    assert sel(labels) is expected  # callable too


def test_parse_double_equals_and_spaces():
    sel = parse("  app == web ,  tier in ( fe , be )")
    assert sel.matches({"app": "web", "tier": "be"})
    assert not sel.matches({"app": "web", "tier": "db"})
    assert str(sel) == "app==web,tier in (be,fe)"


def test_parse_string_round_trip_sorts_requirements_by_key():
    assert str(parse(FULL)) == FULL
    assert str(parse("z=1,a=2")) == "a=2,z=1"
    assert str(parse("x in (foo,,baz),y,z notin ()")) == "x in (,baz,foo),y,z notin ()"


def test_parse_empty_values():
    assert parse("a=").matches({"a": ""})
    assert not parse("a=").matches({})
    assert parse("a notin ()").matches({"a": "x"})
    assert not parse("a notin ()").matches({"a": ""})


def test_parse_empty_string_selects_everything():
    sel = parse("")
    assert sel.empty()
    assert sel.matches({}) and sel.matches({"a": "b"})


def test_parse_gt_lt_compare_integers():
    gt = parse("k>5")
    assert gt.matches({"k": "6"}) and not gt.matches({"k": "5"}) and not gt.matches({"k": "x"})
    assert not gt.matches({})
    assert parse("k<5").matches({"k": "-3"})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
        ("!a=b", "found '=', expected: ',' or 'end of string'"),
        ("a=b,", "found '', expected: identifier after ','"),
        (",a", "found ',', expected: !, identifier, or 'end of string'"),
        ("a in", "unable to parse requirement: found '' expected: '('"),
        ("a in (b", "unable to parse requirement: found '', expected: ',' or ')'"),
        ("a=b c", "found 'c', expected: ',' or 'end of string'"),
        ("k>x",
         "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an "
         "integer"),
    ],
)
def test_parse_errors_use_upstream_wording(text, message):
    with pytest.raises(ValueError) as info:
        parse(text)
    assert str(info.value) == message


def test_parse_rejects_bad_keys_and_values():
    with pytest.raises(ValueError) as info:
        parse("-a=b")
    assert str(info.value) == 'unable to parse requirement: <nil>: Invalid value: "-a": ' + QUALIFIED_NAME_PART_ERROR
    with pytest.raises(ValueError, match=r'^unable to parse requirement: values\[0\]\[a\]: Invalid value: "b_"'):
        parse("a=b_")


# --- validation -----------------------------------------------------------------------------


def test_validate_labels_accepts_valid():
    labels = {"app": "web", "example.com/tier": "front-end", "k8s.io/x": "", "A_b.c": "Z9"}
    assert validate_labels(labels, "metadata.labels") == []
    assert validate_labels(None, "metadata.labels") == []


def test_validate_labels_key_errors():
    errs = validate_labels({"-bad": "x"}, "metadata.labels")
    assert [(e.path, e.type, e.value, e.detail) for e in errs] == [
        ("metadata.labels", "Invalid value", "-bad", QUALIFIED_NAME_PART_ERROR)
    ]
    errs = validate_labels({"a/b/c": "x"}, "metadata.labels")
    assert errs[0].detail.startswith("a qualified name must consist of alphanumeric characters")
    assert errs[0].detail.endswith("with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")
    errs = validate_labels({"Bad.Prefix/name": "x"}, "l")
    assert [e.detail for e in errs] == ["prefix part " + names.DNS1123_SUBDOMAIN_ERROR]
    errs = validate_labels({"/name": "x"}, "l")
    assert [e.detail for e in errs] == ["prefix part must be non-empty"]
    errs = validate_labels({"a" * 64: "x"}, "l")
    assert [e.detail for e in errs] == ["name part must be no more than 63 characters"]


def test_validate_labels_value_errors():
    errs = validate_labels({"k": "a" * 64}, "spec.nodeSelector")
    assert [(e.path, e.value, e.detail)
            for e in errs] == [("spec.nodeSelector", "a" * 64, "must be no more than 63 characters")]
    errs = validate_labels({"k": "bad value"}, "spec.nodeSelector")
    assert [e.detail for e in errs] == [LABEL_VALUE_ERROR]
    assert validate_labels({"k": "a" * 63}, "x") == []


def test_validate_selector():
    assert validate_selector(None, "spec.selector") == []
    assert validate_selector({"matchLabels": {"a": "b"},
                              "matchExpressions": [{"key": "c", "operator": "In", "values": ["d"]}]}, "s") == []
    errs = validate_selector(
        {
            "matchExpressions": [
                {"key": "a", "operator": "Foo"},
                {"key": "b", "operator": "In"},
                {"key": "c", "operator": "DoesNotExist", "values": ["x"]},
                {"key": "d", "operator": "In", "values": ["bad value"]},
            ]
        },
        "spec.selector",
    )
    assert [str(e) for e in errs] == [
        'spec.selector.matchExpressions[0].operator: Invalid value: "Foo": not a valid selector operator',
        "spec.selector.matchExpressions[1].values: Required value: must be specified when `operator` is 'In' or "
        "'NotIn'",
        "spec.selector.matchExpressions[2].values: Forbidden: may not be specified when `operator` is 'Exists' or "
        "'DoesNotExist'",
        'spec.selector.matchExpressions[3].values[0]: Invalid value: "bad value": ' + LABEL_VALUE_ERROR,
    ]


def test_validate_selector_checks_keys_and_match_labels():
    errs = validate_selector({"matchLabels": {"ok": "-x-"}, "matchExpressions": [{"key": "", "operator": "Exists"}]},
                             "s")
    assert [(e.path, e.value) for e in errs] == [("s.matchLabels", "-x-"), ("s.matchExpressions[0].key", ""),
                                                 ("s.matchExpressions[0].key", "")]
    assert errs[1].detail == "name part must be non-empty"


# --- node selector terms ---------------------------------------------------------------------

NODE = {"kubernetes.io/hostname": "n1", "zone": "a", "cores": "8", "gpu": ""}


@pytest.mark.parametrize(
    ("exprs", "expected"),
    [
        ([{"key": "zone", "operator": "In", "values": ["a", "b"]}], True),
        ([{"key": "zone", "operator": "In", "values": ["b"]}], False),
        ([{"key": "zone", "operator": "NotIn", "values": ["b"]}], True),
        ([{"key": "missing", "operator": "NotIn", "values": ["b"]}], True),
        ([{"key": "gpu", "operator": "Exists"}], True),
        ([{"key": "gpu", "operator": "DoesNotExist"}], False),
        ([{"key": "cores", "operator": "Gt", "values": ["4"]}], True),
        ([{"key": "cores", "operator": "Gt", "values": ["8"]}], False),
        ([{"key": "cores", "operator": "Lt", "values": ["16"]}], True),
        ([{"key": "zone", "operator": "Gt", "values": ["1"]}], False),  # label is not an integer
        ([{"key": "missing", "operator": "Lt", "values": ["1"]}], False),
        ([{"key": "zone", "operator": "In", "values": ["a"]}, {"key": "cores", "operator": "Lt", "values": ["4"]}],
         False),
    ],
)
def test_matches_node_selector_term(exprs, expected):
    assert matches_node_selector_term({"matchExpressions": exprs}, NODE) is expected


def test_node_selector_term_edge_cases():
    assert matches_node_selector_term({}, NODE) is False  # empty term selects nothing
    assert matches_node_selector_term({"matchExpressions": []}, NODE) is False
    bad_op = {"matchExpressions": [{"key": "zone", "operator": "Equals", "values": ["a"]}]}
    assert matches_node_selector_term(bad_op, NODE) is False
    two_values = {"matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["1", "2"]}]}
    assert matches_node_selector_term(two_values, NODE) is False
    in_empty = {"matchExpressions": [{"key": "zone", "operator": "In", "values": []}]}
    assert matches_node_selector_term(in_empty, NODE) is False


def test_node_selector_term_match_fields():
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
    assert matches_node_selector_term(term, {}, node_name="n1")
    assert not matches_node_selector_term(term, {}, node_name="n2")
    not_in = {"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n1"]}]}
    assert matches_node_selector_term(not_in, {}, node_name="n2")
    assert not matches_node_selector_term(not_in, {}, node_name="n1")


def test_node_selector_term_parsed_once_with_the_same_answers():
    # nodeSelectorRequirementsAsSelector / AsFieldSelector run once per distinct term; the answers are those
    # of parsing every time: matchFields ignored for a node without fields, a malformed field requirement or
    # expression fails the whole term
    from podlife.api.selectors import compiled_node_selector_term

    term = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}],
            "matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n1"]}]}
    assert compiled_node_selector_term(term) is compiled_node_selector_term(dict(reversed(term.items())))
    assert matches_node_selector_term(term, NODE, node_name="n2")
    assert not matches_node_selector_term(term, NODE, node_name="n1")
    assert matches_node_selector_term(term, NODE)                      # no node name: fields not checked
    assert not matches_node_selector_term(term, {"zone": "b"}, node_name="n2")
    bad_field = {"matchFields": [{"key": "metadata.name", "operator": "Exists"}]}
    assert not matches_node_selector_term(bad_field, NODE) and not matches_node_selector_term(bad_field, NODE, "n1")
    bad_expr = {**term, "matchExpressions": [{"key": "zone", "operator": "In", "values": []}]}
    assert not matches_node_selector_term(bad_expr, NODE, node_name="n2")


def test_node_selector_terms_are_ored():
    ns = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]},
                                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}
    assert matches_node_selector(ns, NODE)
    assert not matches_node_selector({"nodeSelectorTerms": []}, NODE)
    assert matches_node_selector(None, NODE)


def test_validate_node_selector():
    assert [str(e) for e in validate_node_selector({"nodeSelectorTerms": []}, "p")] == [
        "p.nodeSelectorTerms: Required value: must have at least one node selector term"
    ]
    ns = {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "a", "operator": "Gt", "values": []},
        {"key": "b", "operator": "Bogus"},
    ], "matchFields": [{"key": "spec.x", "operator": "In", "values": ["a"]}]}]}
    assert [str(e) for e in validate_node_selector(ns, "p")] == [
        "p.nodeSelectorTerms[0].matchExpressions[0].values: Required value: must be specified single value when "
        "`operator` is 'Lt' or 'Gt'",
        'p.nodeSelectorTerms[0].matchExpressions[1].operator: Invalid value: "Bogus": not a valid selector operator',
        'p.nodeSelectorTerms[0].matchFields[0].key: Invalid value: "spec.x": not a valid field selector key',
    ]
