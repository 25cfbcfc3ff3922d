"""Validators: behaviour and "Valid Values" text (ported from Kafka's ConfigDefTest)."""

from __future__ import annotations

from typing import Any

import pytest

from cdk.config import ConfigDef, Importance, Type
from cdk.config import validators as v
from cdk.errors import ConfigException


def _check(
    type_: Type, validator: v.Validator, default: Any, ok: list[Any], bad: list[Any]
) -> None:
    d = ConfigDef().define("name", type_, default, validator, Importance.HIGH, "docs")
    for value in ok:
        d.parse({"name": value})
    for value in bad:
        with pytest.raises(ConfigException) as info:
            d.parse({"name": value})
        assert info.value.name == "name" or "name" in str(info.value)


def test_range() -> None:
    _check(Type.INT, v.Range.between(0, 10), 5, [1, 5, 9, "0", "10"], [-1, 11, None])


def test_valid_string() -> None:
    _check(
        Type.STRING,
        v.ValidString.of("good", "values", "default"),
        "default",
        ["good", "values", "default"],
        ["bad", "inputs", "DEFAULT", None],
    )


def test_case_insensitive_valid_string() -> None:
    _check(
        Type.STRING,
        v.CaseInsensitiveValidString.of("good", "values", "default"),
        "default",
        ["gOOd", "VALUES", "default"],
        ["Bad", "iNPUts", None],
    )


def test_valid_list() -> None:
    _check(Type.LIST, v.ValidList.of("1", "2", "3"), "1", ["1", "2", "3", "1,2"], ["4", "5", "1,6"])


def test_non_null() -> None:
    _check(Type.STRING, v.NonNullValidator(), "a", ["abb"], [None])


def test_composite() -> None:
    _check(
        Type.STRING,
        v.CompositeValidator.of(v.NonNullValidator(), v.ValidString.of("a", "b")),
        "a",
        ["a", "b"],
        [None, -1, "c"],
    )


def test_non_empty_string_without_control_chars() -> None:
    _check(
        Type.STRING,
        v.NonEmptyStringWithoutControlChars(),
        "defaultname",
        [
            "test",
            "name",
            "test/test",
            "test\u1234",
            "\u1324name\\",
            "/+%>&):??<&()?-",
            "+1",
            "\U0001f601",
            "\uf3b1",
            "     test   \n\r",
            "\n  hello \t",
        ],
        ["nontrailing\nnotallowed", "as\u0001cii control char", "tes\rt", "test\btest", "1\t2", ""],
    )


def test_control_char_message() -> None:
    with pytest.raises(ConfigException) as info:
        v.NonEmptyStringWithoutControlChars().ensure_valid("n", "a\tb\u0085")
    assert str(info.value) == (
        "Invalid value a\tb\u0085 for configuration n: String may not contain control sequences "
        "but had the following ASCII chars: 9, 133"
    )
    v.NonEmptyStringWithoutControlChars().ensure_valid("n", None)
    with pytest.raises(ConfigException, match="String may not be empty"):
        v.NonEmptyStringWithoutControlChars().ensure_valid("n", "")


def test_non_empty_string() -> None:
    validator = v.NonEmptyString()
    validator.ensure_valid("n", None)
    validator.ensure_valid("n", "x")
    with pytest.raises(ConfigException) as info:
        validator.ensure_valid("n", "")
    assert str(info.value) == "Invalid value  for configuration n: String must be non-empty"


def test_list_size() -> None:
    with pytest.raises(ConfigException) as info:
        ConfigDef().define(
            "lst", Type.LIST, ["a", "b"], v.ListSize.at_most(1), Importance.HIGH, "d"
        )
    assert str(info.value) == (
        "Invalid value [a, b] for configuration lst: exceeds maximum list size of [1]."
    )
    ConfigDef().define(
        "lst", Type.LIST, ["a", "b", "c"], v.ListSize.at_most(3), Importance.HIGH, "d"
    )
    ConfigDef().define("lst", Type.LIST, ["a", "b"], v.ListSize.at_most(3), Importance.HIGH, "d")


@pytest.mark.parametrize(
    ("validator", "text"),
    [
        (v.Range.at_least(0), "[0,...]"),
        (v.Range.between(1, 10), "[1,...,10]"),
        (v.Range.between(0.5, 2.0), "[0.5,...,2.0]"),
        (v.Range(None, 5), "[...,5]"),
        (v.Range(), "[...]"),
        (v.ValidString.of("a", "b", "c"), "[a, b, c]"),
        (v.ValidString.in_("x"), "[x]"),
        (v.CaseInsensitiveValidString.of("a", "B"), "(case insensitive) [A, B]"),
        (v.ValidList.of("x", "y"), "[x, y]"),
        (v.NonNullValidator(), "non-null string"),
        (v.NonEmptyString(), "non-empty string"),
        (
            v.NonEmptyStringWithoutControlChars(),
            "non-empty string without ISO control characters",
        ),
        (v.ListSize.at_most(5), "List containing maximum of 5 elements"),
        (v.LambdaValidator.of(lambda n, x: None, "anything"), "anything"),
        (v.LambdaValidator.of(lambda n, x: None, lambda: "computed"), "computed"),
        (
            v.CompositeValidator.of(v.NonEmptyString(), v.ValidString.of("a")),
            "non-empty string, [a]",
        ),
    ],
)
def test_valid_values_text(validator: v.Validator, text: str) -> None:
    assert str(validator) == text
    assert text in repr(validator)


@pytest.mark.parametrize(
    ("validator", "value", "message"),
    [
        (v.Range.at_least(5), 4, "Invalid value 4 for configuration k: Value must be at least 5"),
        (
            v.Range.between(1, 2.5),
            3.0,
            "Invalid value 3.0 for configuration k: Value must be no more than 2.5",
        ),
        (
            v.Range.at_least(0),
            None,
            "Invalid value null for configuration k: Value must be non-null",
        ),
        (
            v.ValidString.of("a", "b"),
            "c",
            "Invalid value c for configuration k: String must be one of: a, b",
        ),
        (
            v.CaseInsensitiveValidString.of("a", "b"),
            "c",
            "Invalid value c for configuration k: String must be one of (case insensitive): A, B",
        ),
        (
            v.NonNullValidator(),
            None,
            "Invalid value null for configuration k: entry must be non null",
        ),
        (v.Range.at_least(0), "x", "Invalid value x for configuration k: Expected a number"),
        (v.ListSize.at_most(1), "x", "Invalid value x for configuration k: Expected a list"),
    ],
)
def test_failure_texts(validator: v.Validator, value: Any, message: str) -> None:
    with pytest.raises(ConfigException) as info:
        validator.ensure_valid("k", value)
    assert str(info.value) == message
