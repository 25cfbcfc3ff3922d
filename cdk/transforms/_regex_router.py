r"""RegexRouter: rename topics with a regular expression (Kafka's ``RegexRouter``).

The ``replacement`` uses Java's ``Matcher`` syntax: ``$1`` / ``${name}`` insert a group, ``\\$``
and ``\\\\`` are a literal dollar and backslash.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from cdk.config import NO_DEFAULT, ConfigDef, Importance, Type, validators
from cdk.errors import ConfigException
from cdk.transforms._base import R, Transformation

__all__ = ["RegexRouter", "RegexValidator", "compile_java_regex", "java_replacement"]

REGEX_CONFIG = "regex"
REPLACEMENT_CONFIG = "replacement"


_JAVA_NAMED_GROUP = re.compile(r"(?<!\\)\(\?<([A-Za-z][A-Za-z0-9]*)>")


def compile_java_regex(pattern: str) -> re.Pattern[str]:
    """Compile a Java regular expression with Python's ``re``.

    Java's named groups ``(?<name>...)`` are accepted (as ``(?P<name>...)``); the rest of the
    syntax the two share is used as is.

    Raises:
        re.error: the pattern is not valid.
    """
    return re.compile(_JAVA_NAMED_GROUP.sub(r"(?P<\1>", pattern))


class RegexValidator(validators.Validator):
    """Accepts strings that compile as regular expressions (Kafka's ``RegexValidator``)."""

    def ensure_valid(self, name: str, value: Any) -> None:
        """Compile the value; raise a ConfigException naming ``name`` if that fails."""
        try:
            compile_java_regex(value)
        except (re.error, TypeError) as exc:
            raise ConfigException(name, value, f"Invalid regex: {exc}") from exc

    def __str__(self) -> str:
        return "valid regex"


CONFIG_DEF: ConfigDef = (
    ConfigDef()
    .define(
        REGEX_CONFIG,
        Type.STRING,
        NO_DEFAULT,
        RegexValidator(),
        Importance.HIGH,
        "Regular expression the whole topic name must match for the topic to be renamed.",
    )
    .define(
        REPLACEMENT_CONFIG,
        Type.STRING,
        NO_DEFAULT,
        None,
        Importance.HIGH,
        "The new topic name; $1, $2 ... (or ${name}) insert the groups the regex captured.",
    )
)


def java_replacement(pattern: re.Pattern[str], replacement: str) -> Callable[[re.Match[str]], str]:
    """Compile a Java ``Matcher.replaceFirst`` replacement string for ``pattern``.

    ``$n`` takes as many digits as still name an existing group (so ``$10`` is group 1 then "0"
    when the pattern has fewer than ten groups); a group that did not take part inserts nothing.

    Raises:
        ValueError: an illegal group reference, a missing group, or a trailing backslash.
    """
    parts: list[str | int] = []
    literal: list[str] = []
    i, n = 0, len(replacement)

    def flush() -> None:
        if literal:
            parts.append("".join(literal))
            literal.clear()

    while i < n:
        char = replacement[i]
        if char == "\\":
            i += 1
            if i >= n:
                raise ValueError("character to be escaped is missing")
            literal.append(replacement[i])
            i += 1
        elif char == "$":
            i += 1
            if i >= n:
                raise ValueError("Illegal group reference: group index is missing")
            if replacement[i] == "{":
                end = replacement.find("}", i)
                name = replacement[i + 1 : end] if end > 0 else ""
                if end < 0 or not name:
                    raise ValueError("named capturing group is missing trailing '}'")
                if name not in pattern.groupindex:
                    raise ValueError(f"No group with name {{{name}}}")
                flush()
                parts.append(pattern.groupindex[name])
                i = end + 1
            elif replacement[i].isdigit():
                number = int(replacement[i])
                if number > pattern.groups:
                    raise ValueError(f"No group {number}")
                i += 1
                while i < n and replacement[i].isdigit():
                    longer = number * 10 + int(replacement[i])
                    if longer > pattern.groups:
                        break
                    number = longer
                    i += 1
                flush()
                parts.append(number)
            else:
                raise ValueError("Illegal group reference")
        else:
            literal.append(char)
            i += 1
    flush()

    def expand(match: re.Match[str]) -> str:
        return "".join(p if isinstance(p, str) else (match.group(p) or "") for p in parts)

    return expand


class RegexRouter(Transformation[R]):
    r"""Rename the topic when ``regex`` matches the whole topic name.

    Example: ``regex=(.*)-(\\d+)`` with ``replacement=$1`` routes ``orders-2024`` to ``orders``.
    Topics that do not match pass unchanged.
    """

    def __init__(self) -> None:
        self._regex: re.Pattern[str] = re.compile("")
        self._expand: Callable[[re.Match[str]], str] = lambda m: ""

    def config(self) -> ConfigDef:
        """RegexRouter's ConfigDef."""
        return CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        """Compile ``regex`` and ``replacement``.

        Raises:
            ConfigException: a missing setting, a bad regex, or a replacement that refers to a
                group the regex does not have.
        """
        parsed = CONFIG_DEF.parse(configs)
        self._regex = compile_java_regex(parsed[REGEX_CONFIG])
        replacement = parsed[REPLACEMENT_CONFIG]
        try:
            self._expand = java_replacement(self._regex, replacement)
        except ValueError as exc:
            raise ConfigException(REPLACEMENT_CONFIG, replacement, str(exc)) from exc

    def apply(self, record: R) -> R | None:
        """The record with its topic renamed, or unchanged when the regex does not match."""
        topic = record.topic
        if topic is None or self._regex.fullmatch(topic) is None:
            return record
        # Java's replaceFirst() searches again from the start, which may find a shorter match
        first = self._regex.search(topic)
        assert first is not None  # a full match exists, so a search finds one
        updated = topic[: first.start()] + self._expand(first) + topic[first.end() :]
        return record.new_record(topic=updated)
