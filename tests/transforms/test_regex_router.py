"""RegexRouter, ported from Kafka's RegexRouterTest, plus Java replacement syntax."""

from __future__ import annotations

import re

import pytest

from cdk.api import SinkRecord
from cdk.errors import ConfigException
from cdk.transforms import RegexRouter
from cdk.transforms._regex_router import java_replacement


def apply(regex: str, replacement: str, topic: str) -> str:
    router: RegexRouter[SinkRecord] = RegexRouter()
    router.configure({"regex": regex, "replacement": replacement})
    out = router.apply(SinkRecord(topic, 0, None, None, None, None, 0))
    router.close()
    assert out is not None
    return out.topic


def test_static_replacement() -> None:
    assert apply("foo", "bar", "foo") == "bar"


def test_doesnt_match() -> None:
    assert apply("foo", "bar", "orig") == "orig"


def test_partial_match_is_not_a_match() -> None:
    assert apply("foo", "bar", "foobar") == "foobar"


def test_identity() -> None:
    assert apply("(.*)", "$1", "orig") == "orig"


def test_add_prefix() -> None:
    assert apply("(.*)", "prefix-$1", "orig") == "prefix-orig"


def test_add_suffix() -> None:
    assert apply("(.*)", "$1-suffix", "orig") == "orig-suffix"


def test_slice() -> None:
    assert apply(r"(.*)-(\d\d\d\d\d\d\d\d)", "$1", "index-20160117") == "index"


def test_named_group_and_escapes() -> None:
    assert apply(r"(?P<base>.*)-v\d", r"${base}\$\\x", "orders-v2") == "orders$\\x"


def test_java_named_groups() -> None:
    assert apply(r"(?<base>.*)-(?<n>\d+)", "${n}.${base}", "orders-7") == "7.orders"


def test_group_numbers_take_only_existing_digits() -> None:
    # one group: "$10" is group 1 followed by a literal 0, as in Java
    assert apply("(a)b", "$10", "ab") == "a0"


def test_non_participating_group_is_empty() -> None:
    assert apply("(x)?(orig)", "[$1]$2", "orig") == "[]orig"


def test_replace_first_searches_again_like_java() -> None:
    # matches() backtracks to the whole name; replaceFirst() then finds the shorter "a"
    assert apply("a|ab", "X", "ab") == "Xb"


def test_unchanged_record_is_returned_as_is() -> None:
    router: RegexRouter[SinkRecord] = RegexRouter()
    router.configure({"regex": "foo", "replacement": "bar"})
    record = SinkRecord("other", 0, None, None, None, None, 0)
    assert router.apply(record) is record


@pytest.mark.parametrize(
    ("replacement", "message"),
    [
        ("$2", "No group 2"),
        ("$", "group index is missing"),
        ("$x", "Illegal group reference"),
        ("${nope}", "No group with name"),
        ("trailing\\", "character to be escaped is missing"),
    ],
)
def test_bad_replacement_names_the_key(replacement: str, message: str) -> None:
    with pytest.raises(ConfigException, match=re.escape(message)) as info:
        RegexRouter().configure({"regex": "(a)", "replacement": replacement})
    assert info.value.name == "replacement"


def test_bad_regex_names_the_key() -> None:
    with pytest.raises(ConfigException, match="configuration regex: Invalid regex") as info:
        RegexRouter().configure({"regex": "(unclosed", "replacement": "x"})
    assert info.value.name == "regex"


def test_missing_config() -> None:
    with pytest.raises(ConfigException, match='"regex"'):
        RegexRouter().configure({"replacement": "x"})
    with pytest.raises(ConfigException, match='"replacement"'):
        RegexRouter().configure({"regex": "x"})


def test_java_replacement_directly() -> None:
    pattern = re.compile(r"(\w+)@(\w+)")
    expand = java_replacement(pattern, "$2 at $1")
    match = pattern.search("user@host")
    assert match is not None
    assert expand(match) == "host at user"
