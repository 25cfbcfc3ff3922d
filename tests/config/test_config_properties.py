"""Java .properties parsing."""

from __future__ import annotations

from pathlib import Path

import pytest

from cdk.config import load_properties, parse_properties
from cdk.errors import ConfigException


def test_separators() -> None:
    assert parse_properties("a=1\nb:2\nc 3\nd\t=\t4\ne = 5\nf  :  6 \ng\n") == {
        "a": "1",
        "b": "2",
        "c": "3",
        "d": "4",
        "e": "5",
        "f": "6 ",
        "g": "",
    }


def test_comments_and_blank_lines() -> None:
    text = "# comment\n! also a comment\n\n   \n  # indented comment\nkey=value # not a comment\n"
    assert parse_properties(text) == {"key": "value # not a comment"}


def test_line_continuations() -> None:
    text = "fruits = apple, banana, \\\n         pear, \\\n   cherry\nnext=1\n"
    assert parse_properties(text) == {"fruits": "apple, banana, pear, cherry", "next": "1"}


def test_even_backslashes_do_not_continue() -> None:
    assert parse_properties("path=c:\\\\dir\\\\\nnext=2") == {"path": "c:\\dir\\", "next": "2"}


def test_comment_line_is_not_continued() -> None:
    assert parse_properties("# comment \\\nkey=value") == {"key": "value"}


def test_continuation_at_end_of_file() -> None:
    assert parse_properties("key=value\\") == {"key": "value"}


def test_escapes() -> None:
    text = (
        "tab=a\\tb\nnl=a\\nb\nuni=\\u00e9t\\u00E9\nother=\\q\\=\\:\n"
        "key\\ with\\ spaces=v\nk\\=eq=1\n"
    )
    assert parse_properties(text) == {
        "tab": "a\tb",
        "nl": "a\nb",
        "uni": "été",
        "other": "q=:",
        "key with spaces": "v",
        "k=eq": "1",
    }


def test_malformed_unicode_escape() -> None:
    with pytest.raises(ConfigException, match="Malformed"):
        parse_properties("k=\\u12G4")


def test_crlf_and_cr_line_endings() -> None:
    assert parse_properties("a=1\r\nb=2\rc=3") == {"a": "1", "b": "2", "c": "3"}


def test_last_duplicate_wins_and_separator_in_value() -> None:
    assert parse_properties("a=1\na=2\nurl=http://x:8080/p?q=1") == {
        "a": "2",
        "url": "http://x:8080/p?q=1",
    }


def test_worker_properties_file(tmp_path: Path) -> None:
    file = tmp_path / "worker.properties"
    file.write_text(
        "bootstrap.servers=localhost:9092\n"
        "key.converter=org.apache.kafka.connect.json.JsonConverter\n"
        "offset.flush.interval.ms=10000\n",
        encoding="utf-8",
    )
    assert load_properties(file) == {
        "bootstrap.servers": "localhost:9092",
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "offset.flush.interval.ms": "10000",
    }
    assert load_properties(str(file))["bootstrap.servers"] == "localhost:9092"
    assert load_properties("a=1\nb=2\n") == {"a": "1", "b": "2"}
    with pytest.raises(ConfigException, match="Could not read properties from file"):
        load_properties(tmp_path / "missing.properties")
