"""Quantities, checked against k8s.io/apimachinery/pkg/api/resource semantics."""

from fractions import Fraction

import pytest

from podlife.api import quantity
from podlife.api.quantity import (
    BINARY_SI,
    DECIMAL_EXPONENT,
    DECIMAL_SI,
    ERR_FORMAT_WRONG,
    ERR_SUFFIX,
    QuantityError,
    canonical,
    cpu_millis,
    format_bytes,
    is_quantity,
    parse,
    parse_quantity,
    to_bytes,
)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0", Fraction(0)),
        ("100m", Fraction(1, 10)),
        ("1.5", Fraction(3, 2)),
        (".5", Fraction(1, 2)),
        ("5.", Fraction(5)),
        ("+1", Fraction(1)),
        ("-1", Fraction(-1)),
        ("5n", Fraction(5, 10**9)),
        ("3u", Fraction(3, 10**6)),
        ("1k", Fraction(1000)),
        ("1M", Fraction(10**6)),
        ("1G", Fraction(10**9)),
        ("1T", Fraction(10**12)),
        ("1P", Fraction(10**15)),
        ("1E", Fraction(10**18)),
        ("1Ki", Fraction(1024)),
        ("1Mi", Fraction(2**20)),
        ("1Gi", Fraction(2**30)),
        ("1Ti", Fraction(2**40)),
        ("1Pi", Fraction(2**50)),
        ("1Ei", Fraction(2**60)),
        ("1.5Gi", Fraction(3 * 2**29)),
        ("1e3", Fraction(1000)),
        ("12E6", Fraction(12_000_000)),
        ("1e-3", Fraction(1, 1000)),
        ("1E+2", Fraction(100)),
        ("007", Fraction(7)),
    ],
)
def test_parse_exact_values(text, value):
    assert parse_quantity(text) == value


def test_numbers_are_read_like_json_numbers():
    assert parse_quantity(2) == 2
    assert parse_quantity(0.5) == Fraction(1, 2)
    assert parse_quantity(0.1) == Fraction(1, 10)  # repr "0.1", not the binary float
    assert parse_quantity(1e-05) == Fraction(1, 100_000)


def test_formats_remembered():
    assert parse("12E6").format == DECIMAL_EXPONENT
    assert parse("1Mi").format == BINARY_SI
    assert parse("1M").format == DECIMAL_SI
    # a BinarySI value strictly between 0 and 1 becomes DecimalSI (ParseQuantity)
    assert parse("0.0001Ki").format == DECIMAL_SI


def test_sub_nano_values_round_up_in_magnitude():
    assert parse_quantity("0.1n") == Fraction(1, 10**9)
    assert parse_quantity("-0.1n") == Fraction(-1, 10**9)
    assert parse_quantity("1.0000000001") == Fraction(1_000_000_001, 10**9)


def test_binary_values_are_capped_at_int64_max():
    assert parse_quantity("9Ei") == 2**63 - 1
    assert parse_quantity("9E") == 9 * 10**18  # decimal values are not capped


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("10x", ERR_FORMAT_WRONG),
        ("1.2.3", ERR_FORMAT_WRONG),
        ("", ERR_FORMAT_WRONG),
        ("abc", ERR_FORMAT_WRONG),
        ("1 Gi", ERR_FORMAT_WRONG),
        ("10MM", ERR_SUFFIX),
        ("1ki", ERR_SUFFIX),  # suffixes are case-sensitive upstream
        ("1e", ERR_SUFFIX),
        ("1Ki2", ERR_SUFFIX),
    ],
)
def test_bad_strings_raise_with_upstream_message(text, message):
    with pytest.raises(QuantityError) as info:
        parse(text)
    assert str(info.value) == message
    assert isinstance(info.value, ValueError)
    assert info.value.value == text


def test_error_message_text():
    assert ERR_FORMAT_WRONG == ("quantities must match the regular expression "
                                "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    assert ERR_SUFFIX == "unable to parse quantity's suffix"


@pytest.mark.parametrize("bad", [None, True, [], float("nan"), float("inf")])
def test_non_quantities_rejected(bad):
    assert not is_quantity(bad)
    with pytest.raises(ValueError):
        parse_quantity(bad)


def test_is_quantity():
    assert is_quantity("250m")
    assert is_quantity(3)
    assert not is_quantity("250 m")


@pytest.mark.parametrize(
    ("value", "millis"),
    [("100m", 100), ("1", 1000), ("1.5", 1500), (2, 2000), ("250m", 250), ("0.1m", 1), ("1e-4", 1), ("-0.5m", -1),
     ("-1", -1000)],
)
def test_cpu_millis_rounds_up(value, millis):
    assert cpu_millis(value) == millis


@pytest.mark.parametrize(
    ("value", "n"),
    [
        ("1Gi", 1073741824),
        ("1G", 1_000_000_000),
        ("123Mi", 128974848),
        ("128974848", 128974848),
        ("129e6", 129_000_000),
        ("1.5Ki", 1536),
        ("0.5", 1),
        ("100m", 1),
        ("-0.5", -1),
    ],
)
def test_to_bytes_rounds_up(value, n):
    assert to_bytes(value) == n


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("1.5", "1500m"),
        ("1.5Gi", "1536Mi"),
        ("1000", "1k"),
        ("2048", "2048"),
        ("1Gi", "1Gi"),
        ("0.5Gi", "512Mi"),
        ("0.5Ki", "512"),
        ("1500Ki", "1500Ki"),
        ("1024Ki", "1Mi"),
        ("129e6", "129e6"),
        ("1.5e3", "1500"),
        ("0.1m", "100u"),
        ("100m", "100m"),
        ("1000m", "1"),
        ("-1.5", "-1500m"),
        ("0Mi", "0"),
        (0.5, "500m"),
    ],
)
def test_canonical_string(value, text):
    assert canonical(value) == text


def test_canonical_with_milli_round_up_as_defaulting_does():
    assert canonical("0.1m", milli=True) == "1m"
    assert canonical("1.0001", milli=True) == "1001m"
    assert canonical("500m", milli=True) == "500m"


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (209715200, "200Mi"),
        (1024, "1Ki"),
        (1073741824, "1Gi"),
        (1572864, "1536Ki"),
        (1000, "1000"),
        (1536, "1536"),
        (0, "0"),
        (2**60, "1Ei"),
        (2**70, "1024Ei"),
    ],
)
def test_format_bytes(n, text):
    assert format_bytes(n) == text


def test_format_bytes_roundtrips_through_parse():
    for n in (1, 1000, 1024, 5 * 2**30, 12345678):
        assert to_bytes(format_bytes(n)) == n


def test_quantity_methods():
    q = quantity.parse("1536Mi")
    assert q.int_value() == 1536 * 2**20
    assert q.milli_value() == 1536 * 2**20 * 1000
    assert str(q) == "1536Mi"
