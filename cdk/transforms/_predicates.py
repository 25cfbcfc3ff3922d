"""The built-in predicates: HasHeaderKey, RecordIsTombstone and TopicNameMatches.

A transformation runs only on the records its predicate matches when configured with
``transforms.<alias>.predicate=<predicate alias>`` (``negate=true`` inverts the test).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from cdk.config import NO_DEFAULT, ConfigDef, Importance, Type, validators
from cdk.errors import ConfigException
from cdk.transforms._base import Predicate, R
from cdk.transforms._regex_router import RegexValidator, compile_java_regex

__all__ = ["HasHeaderKey", "RecordIsTombstone", "TopicNameMatches"]

NAME_CONFIG = "name"
PATTERN_CONFIG = "pattern"

HAS_HEADER_KEY_CONFIG_DEF: ConfigDef = ConfigDef().define(
    NAME_CONFIG,
    Type.STRING,
    NO_DEFAULT,
    validators.NonEmptyString(),
    Importance.MEDIUM,
    "The header name to look for.",
)

RECORD_IS_TOMBSTONE_CONFIG_DEF: ConfigDef = ConfigDef()

TOPIC_NAME_MATCHES_CONFIG_DEF: ConfigDef = ConfigDef().define(
    PATTERN_CONFIG,
    Type.STRING,
    NO_DEFAULT,
    validators.CompositeValidator.of(validators.NonEmptyString(), RegexValidator()),
    Importance.MEDIUM,
    "A regular expression the whole topic name must match.",
)


class HasHeaderKey(Predicate[R]):
    """True for records with at least one header named ``name``."""

    def __init__(self) -> None:
        self._name = ""

    def config(self) -> ConfigDef:
        """HasHeaderKey's ConfigDef."""
        return HAS_HEADER_KEY_CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        """Read ``name``.

        Raises:
            ConfigException: ``name`` is missing or empty.
        """
        self._name = HAS_HEADER_KEY_CONFIG_DEF.parse(configs)[NAME_CONFIG]

    def test(self, record: R) -> bool:
        """Whether the record has a header with the configured name."""
        return record.headers.last_with_name(self._name) is not None

    def __repr__(self) -> str:
        return f"HasHeaderKey{{name='{self._name}'}}"


class RecordIsTombstone(Predicate[R]):
    """True for tombstones: records whose value is null."""

    def config(self) -> ConfigDef:
        """An empty ConfigDef: RecordIsTombstone has no settings."""
        return RECORD_IS_TOMBSTONE_CONFIG_DEF

    def test(self, record: R) -> bool:
        """Whether the record's value is ``None``."""
        return record.value is None

    def __repr__(self) -> str:
        return "RecordIsTombstone{}"


class TopicNameMatches(Predicate[R]):
    """True for records whose whole topic name matches the regular expression ``pattern``."""

    def __init__(self) -> None:
        self._pattern: re.Pattern[str] | None = None

    def config(self) -> ConfigDef:
        """TopicNameMatches' ConfigDef."""
        return TOPIC_NAME_MATCHES_CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        """Compile ``pattern``.

        Raises:
            ConfigException: ``pattern`` is missing, empty or not a valid regular expression.
        """
        value = TOPIC_NAME_MATCHES_CONFIG_DEF.parse(configs)[PATTERN_CONFIG]
        try:
            self._pattern = compile_java_regex(value)
        except re.error as exc:  # pragma: no cover - the validator has compiled it already
            raise ConfigException(
                PATTERN_CONFIG, value, f"entry must be a Java-compatible regular expression: {exc}"
            ) from exc

    def test(self, record: R) -> bool:
        """Whether the record's topic matches the pattern in full."""
        if self._pattern is None or record.topic is None:
            return False
        return self._pattern.fullmatch(record.topic) is not None

    def __repr__(self) -> str:
        pattern = None if self._pattern is None else self._pattern.pattern
        return f"TopicNameMatches{{pattern={pattern}}}"
