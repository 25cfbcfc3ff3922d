"""Validators for configuration values, as Kafka's ``ConfigDef`` validators.

A validator has ``ensure_valid(name, value)``, which raises
:class:`~cdk.errors.ConfigException` for a bad (already parsed) value, and a ``__str__`` that is
the "Valid Values" text of the generated documentation, matching Kafka's exactly::

    >>> str(Range.between(1, 10))
    '[1,...,10]'
    >>> str(ValidString.of("a", "b"))
    '[a, b]'
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable
from typing import Any

from cdk.config._types import java_number
from cdk.errors import ConfigException

__all__ = [
    "CaseInsensitiveValidString",
    "CompositeValidator",
    "LambdaValidator",
    "ListSize",
    "NonEmptyString",
    "NonEmptyStringWithoutControlChars",
    "NonNullValidator",
    "Range",
    "ValidList",
    "ValidString",
    "Validator",
]


class Validator(abc.ABC):
    """Checks one parsed configuration value."""

    @abc.abstractmethod
    def ensure_valid(self, name: str, value: Any) -> None:
        """Raise :class:`~cdk.errors.ConfigException` if ``value`` is not valid for ``name``.

        Args:
            name: the configuration key.
            value: the parsed value (``None`` when unset and without default).
        """

    def __str__(self) -> str:
        return ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self)!r})"


def _require_str(name: str, value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ConfigException(
            name, value, f"Expected a string, but it was a {type(value).__name__}"
        )
    return value


def _require_list(name: str, value: Any) -> list[Any]:
    if not isinstance(value, (list, tuple)):
        raise ConfigException(name, value, "Expected a list")
    return list(value)


class Range(Validator):
    """An inclusive numeric range; either bound may be open.

    Use :meth:`at_least` or :meth:`between`. ``None`` fails with "Value must be non-null".
    """

    def __init__(self, min: float | None = None, max: float | None = None) -> None:
        self.min = min
        self.max = max

    @classmethod
    def at_least(cls, min: float) -> Range:
        """A range with only a lower bound."""
        return cls(min, None)

    @classmethod
    def between(cls, min: float, max: float) -> Range:
        """A range with both bounds, inclusive."""
        return cls(min, max)

    def ensure_valid(self, name: str, value: Any) -> None:
        """Check that ``value`` is a number inside the range."""
        if value is None:
            raise ConfigException(name, None, "Value must be non-null")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigException(name, value, "Expected a number")
        if self.min is not None and float(value) < float(self.min):
            raise ConfigException(name, value, f"Value must be at least {java_number(self.min)}")
        if self.max is not None and float(value) > float(self.max):
            raise ConfigException(
                name, value, f"Value must be no more than {java_number(self.max)}"
            )

    def __str__(self) -> str:
        if self.min is None and self.max is None:
            return "[...]"
        if self.min is None:
            return f"[...,{java_number(self.max)}]"  # type: ignore[arg-type]
        if self.max is None:
            return f"[{java_number(self.min)},...]"
        return f"[{java_number(self.min)},...,{java_number(self.max)}]"


class ValidString(Validator):
    """The value must be one of the given strings (case-sensitive). ``None`` fails."""

    def __init__(self, valid_strings: Iterable[str]) -> None:
        self.valid_strings = list(valid_strings)

    @classmethod
    def of(cls, *valid_strings: str) -> ValidString:
        """A validator accepting exactly these strings."""
        return cls(valid_strings)

    in_ = of

    def ensure_valid(self, name: str, value: Any) -> None:
        """Check that ``value`` is one of the valid strings."""
        if value not in self.valid_strings:
            raise ConfigException(
                name, value, "String must be one of: " + ", ".join(self.valid_strings)
            )

    def __str__(self) -> str:
        return "[" + ", ".join(self.valid_strings) + "]"


class CaseInsensitiveValidString(Validator):
    """The value must be one of the given strings, ignoring case. ``None`` fails."""

    def __init__(self, valid_strings: Iterable[str]) -> None:
        self.valid_strings = list(dict.fromkeys(s.upper() for s in valid_strings))

    @classmethod
    def of(cls, *valid_strings: str) -> CaseInsensitiveValidString:
        """A validator accepting these strings in any case."""
        return cls(valid_strings)

    in_ = of

    def ensure_valid(self, name: str, value: Any) -> None:
        """Check that ``value`` upper-cased is one of the valid strings."""
        if not isinstance(value, str) or value.upper() not in self.valid_strings:
            raise ConfigException(
                name,
                value,
                "String must be one of (case insensitive): " + ", ".join(self.valid_strings),
            )

    def __str__(self) -> str:
        return "(case insensitive) [" + ", ".join(self.valid_strings) + "]"


class ValidList(Validator):
    """Every element of a LIST value must be one of the given strings."""

    def __init__(self, valid_strings: Iterable[str]) -> None:
        self.valid_string = ValidString(valid_strings)

    @classmethod
    def of(cls, *valid_strings: str) -> ValidList:
        """A validator accepting lists whose elements are all among these strings."""
        return cls(valid_strings)

    in_ = of

    def ensure_valid(self, name: str, value: Any) -> None:
        """Check each element of the list."""
        for item in _require_list(name, value):
            self.valid_string.ensure_valid(name, item)

    def __str__(self) -> str:
        return str(self.valid_string)


class NonNullValidator(Validator):
    """The value must not be ``None``."""

    def ensure_valid(self, name: str, value: Any) -> None:
        """Check that ``value`` is set."""
        if value is None:
            raise ConfigException(name, "null", "entry must be non null")

    def __str__(self) -> str:
        return "non-null string"


class NonEmptyString(Validator):
    """The value must not be the empty string (``None`` passes)."""

    def ensure_valid(self, name: str, value: Any) -> None:
        """Check that ``value`` is not ``""``."""
        text = _require_str(name, value)
        if text is not None and not text:
            raise ConfigException(name, value, "String must be non-empty")

    def __str__(self) -> str:
        return "non-empty string"


def _is_iso_control(char: str) -> bool:
    code = ord(char)
    return code <= 0x1F or 0x7F <= code <= 0x9F


class NonEmptyStringWithoutControlChars(Validator):
    """The value must be non-empty and free of ISO control characters (``None`` passes)."""

    def ensure_valid(self, name: str, value: Any) -> None:
        """Check that ``value`` is non-empty and has no control characters."""
        text = _require_str(name, value)
        if text is None:
            return
        if not text:
            raise ConfigException(name, value, "String may not be empty")
        found = [str(ord(c)) for c in text if _is_iso_control(c)]
        if found:
            raise ConfigException(
                name,
                value,
                "String may not contain control sequences but had the following ASCII chars: "
                + ", ".join(found),
            )

    def __str__(self) -> str:
        return "non-empty string without ISO control characters"


class ListSize(Validator):
    """A LIST value may have at most ``max_size`` elements."""

    def __init__(self, max_size: int) -> None:
        self.max_size = max_size

    @classmethod
    def at_most(cls, max_size: int) -> ListSize:
        """A validator for lists of at most ``max_size`` elements."""
        return cls(max_size)

    at_most_of_size = at_most

    def ensure_valid(self, name: str, value: Any) -> None:
        """Check the length of the list."""
        if len(_require_list(name, value)) > self.max_size:
            raise ConfigException(name, value, f"exceeds maximum list size of [{self.max_size}].")

    def __str__(self) -> str:
        return f"List containing maximum of {self.max_size} elements"


class LambdaValidator(Validator):
    """A validator from a function ``fn(name, value)`` and a description.

    ``fn`` raises :class:`~cdk.errors.ConfigException` for bad values; ``description`` is the
    "Valid Values" text, or a function returning it.
    """

    def __init__(
        self, fn: Callable[[str, Any], None], description: str | Callable[[], str]
    ) -> None:
        self.fn = fn
        self.description = description

    @classmethod
    def of(
        cls, fn: Callable[[str, Any], None], description: str | Callable[[], str]
    ) -> LambdaValidator:
        """A validator calling ``fn(name, value)``, documented by ``description``."""
        return cls(fn, description)

    with_ = of

    def ensure_valid(self, name: str, value: Any) -> None:
        """Call the function."""
        self.fn(name, value)

    def __str__(self) -> str:
        return self.description() if callable(self.description) else self.description


class CompositeValidator(Validator):
    """Runs several validators in order; the first failure wins."""

    def __init__(self, validators: Iterable[Validator]) -> None:
        self.validators = tuple(validators)

    @classmethod
    def of(cls, *validators: Validator) -> CompositeValidator:
        """A validator running all of these in order."""
        return cls(validators)

    def ensure_valid(self, name: str, value: Any) -> None:
        """Run each validator."""
        for validator in self.validators:
            validator.ensure_valid(name, value)

    def __str__(self) -> str:
        return ", ".join(str(v) for v in self.validators)
