"""Validation results: :class:`ConfigValue` per key and :class:`Config` for a whole connector."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from cdk.config._types import java_string

__all__ = ["Config", "ConfigValue"]


class ConfigValue:
    """The validation result of one configuration key (Kafka's ``ConfigValue``).

    Args:
        name: the configuration key.
        value: the parsed value (``None`` when it could not be parsed).
        recommended_values: values a UI may offer.
        error_messages: what is wrong with the value.
        visible: whether a UI should show the key.
    """

    __slots__ = ("error_messages", "name", "recommended_values", "value", "visible")

    def __init__(
        self,
        name: str,
        value: Any = None,
        recommended_values: Iterable[Any] | None = None,
        error_messages: Iterable[str] | None = None,
        visible: bool = True,
    ) -> None:
        self.name = name
        self.value = value
        self.recommended_values: list[Any] = list(recommended_values or ())
        self.error_messages: list[str] = list(error_messages or ())
        self.visible = visible

    def add_error_message(self, message: str) -> None:
        """Append an error message."""
        self.error_messages.append(message)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ConfigValue):
            return NotImplemented
        return (
            self.name == other.name
            and self.value == other.value
            and self.recommended_values == other.recommended_values
            and self.error_messages == other.error_messages
            and self.visible == other.visible
        )

    def __hash__(self) -> int:
        return hash((self.name, repr(self.value), tuple(self.error_messages), self.visible))

    def __repr__(self) -> str:
        return (
            f"[{self.name},{java_string(self.value)},{java_string(self.recommended_values)},"
            f"{java_string(self.error_messages)},{java_string(self.visible)}]"
        )


class Config:
    """The validation result of a whole configuration: what ``Connector.validate`` returns.

    Args:
        config_values: one :class:`ConfigValue` per key.
    """

    __slots__ = ("config_values",)

    def __init__(self, config_values: Iterable[ConfigValue]) -> None:
        self.config_values: list[ConfigValue] = list(config_values)

    def error_count(self) -> int:
        """The total number of error messages over all keys."""
        return sum(len(v.error_messages) for v in self.config_values)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Config):
            return NotImplemented
        return self.config_values == other.config_values

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Config(config_values={self.config_values!r})"
