"""Config value types, importance and width, the required-key sentinel, and :class:`Password`.

``parse_type`` turns a raw value (usually a string from a properties file) into the Python value
of a :class:`Type`, with Kafka's rules and error texts; ``convert_to_string`` goes back.
"""

from __future__ import annotations

import enum
import math
import re
from typing import Any, Final

from cdk.errors import ConfigException

__all__ = [
    "NO_DEFAULT",
    "Importance",
    "Password",
    "Type",
    "Width",
    "convert_to_string",
    "java_number",
    "java_string",
    "parse_type",
]


class Type(enum.Enum):
    """The type of a configuration value (Kafka's ``ConfigDef.Type``)."""

    BOOLEAN = "BOOLEAN"
    STRING = "STRING"
    INT = "INT"
    SHORT = "SHORT"
    LONG = "LONG"
    DOUBLE = "DOUBLE"
    LIST = "LIST"
    CLASS = "CLASS"
    PASSWORD = "PASSWORD"

    @property
    def is_sensitive(self) -> bool:
        """Whether values of this type are secrets (only :attr:`PASSWORD`)."""
        return self is Type.PASSWORD

    def __str__(self) -> str:
        return self.name


class Importance(enum.Enum):
    """How likely a user needs to change a configuration; HIGH sorts first in docs."""

    HIGH = 0
    MEDIUM = 1
    LOW = 2

    def __str__(self) -> str:
        return self.name


class Width(enum.Enum):
    """The width of a configuration value, a hint for user interfaces."""

    NONE = 0
    SHORT = 1
    MEDIUM = 2
    LONG = 3

    def __str__(self) -> str:
        return self.name


class _NoDefault:
    """The type of :data:`NO_DEFAULT`."""

    _instance: _NoDefault | None = None

    def __new__(cls) -> _NoDefault:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NO_DEFAULT"

    def __reduce__(self) -> str:
        return "NO_DEFAULT"

    def __bool__(self) -> bool:
        return False


NO_DEFAULT: Final = _NoDefault()
"""The default value of a required configuration (Kafka's ``ConfigDef.NO_DEFAULT_VALUE``)."""


class Password:
    """A secret configuration value. It prints as ``[hidden]``; :meth:`value` reveals it.

    Two passwords are equal when their secrets are equal.

    Args:
        value: the secret.
    """

    HIDDEN: Final = "[hidden]"
    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def value(self) -> str:
        """Return the secret itself. Never log it."""
        return self._value

    def __str__(self) -> str:
        return self.HIDDEN

    def __repr__(self) -> str:
        return self.HIDDEN

    def __format__(self, format_spec: str) -> str:
        return format(self.HIDDEN, format_spec)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Password) and other._value == self._value

    def __hash__(self) -> int:
        return hash((Password, self._value))


_INT_RE = re.compile(r"[+-]?[0-9]+")
_DOUBLE_RE = re.compile(
    r"[+-]?(?:NaN|Infinity|(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)[fFdD]?)"
)
_COMMA = re.compile(r"\s*,\s*")
_BOUNDS = {
    Type.SHORT: (-(2**15), 2**15 - 1),
    Type.INT: (-(2**31), 2**31 - 1),
    Type.LONG: (-(2**63), 2**63 - 1),
}
_INT_NOUNS = {
    Type.SHORT: "a 16-bit integer (short)",
    Type.INT: "a 32-bit integer",
    Type.LONG: "a 64-bit integer (long)",
}


def _type_name(value: Any) -> str:
    cls = type(value)
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


def _shown(value: Any, type_: Type) -> Any:
    """What an error message may show of a raw value: never a secret."""
    return Password.HIDDEN if type_ is Type.PASSWORD else value


def _java_strip(text: str) -> str:
    """Java's ``String.trim()``: strip characters <= U+0020 from both ends."""
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


def _parse_double(text: str) -> float:
    if not _DOUBLE_RE.fullmatch(text):
        raise ValueError(text)
    body = text.rstrip("fFdD") if text[-1:] in "fFdD" and "Infinity" not in text else text
    return float(body.replace("Infinity", "inf"))


def parse_type(name: str, value: Any, type_: Type) -> Any:
    """Parse ``value`` into the Python value of ``type_``, as Kafka's ``ConfigDef.parseType``.

    Strings are trimmed first. BOOLEAN accepts ``true``/``false`` in any case; INT, SHORT and LONG
    are range-checked; LIST splits on commas (with surrounding whitespace), keeping trailing empty
    elements, and the empty string is the empty list; CLASS loads the named class; PASSWORD wraps
    the string in :class:`Password`. Python values of the right type pass through (``int`` for the
    integer types, ``int``/``float`` for DOUBLE, ``list``/``tuple`` for LIST, a class for CLASS).
    ``None`` stays ``None``.

    Args:
        name: the configuration key, for error messages.
        value: the raw value.
        type_: the expected type.

    Returns:
        The parsed value.

    Raises:
        ConfigException: the value does not fit the type; the message names the key (passwords
            are shown as ``[hidden]``).
    """
    if value is None:
        return None
    trimmed = _java_strip(value) if isinstance(value, str) else None
    if type_ is Type.BOOLEAN:
        if trimmed is not None:
            if trimmed.lower() == "true":
                return True
            if trimmed.lower() == "false":
                return False
        elif isinstance(value, bool):
            return value
        raise ConfigException(name, value, "Expected value to be either true or false")
    if type_ is Type.PASSWORD:
        if isinstance(value, Password):
            return value
        if trimmed is not None:
            return Password(trimmed)
        raise ConfigException(
            name,
            Password.HIDDEN,
            f"Expected value to be a string, but it was a {_type_name(value)}",
        )
    if type_ is Type.STRING:
        if trimmed is not None:
            return trimmed
        raise ConfigException(
            name, value, f"Expected value to be a string, but it was a {_type_name(value)}"
        )
    if type_ in _BOUNDS:
        low, high = _BOUNDS[type_]
        if trimmed is not None:
            if not _INT_RE.fullmatch(trimmed):
                raise ConfigException(name, value, f"Not a number of type {type_.name}")
            number = int(trimmed)
        elif isinstance(value, int) and not isinstance(value, bool):
            number = value
        else:
            raise ConfigException(
                name,
                value,
                f"Expected value to be {_INT_NOUNS[type_]}, but it was a {_type_name(value)}",
            )
        if not low <= number <= high:
            raise ConfigException(name, value, f"Not a number of type {type_.name}")
        return number
    if type_ is Type.DOUBLE:
        if trimmed is not None:
            try:
                return _parse_double(trimmed)
            except ValueError:
                raise ConfigException(name, value, "Not a number of type DOUBLE") from None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        raise ConfigException(
            name, value, f"Expected value to be a double, but it was a {_type_name(value)}"
        )
    if type_ is Type.LIST:
        if isinstance(value, (list, tuple)):
            return list(value)
        if trimmed is not None:
            return [] if not trimmed else _COMMA.split(trimmed)
        raise ConfigException(name, value, "Expected a comma separated list.")
    if type_ is Type.CLASS:
        if isinstance(value, type):
            return value
        if trimmed is not None:
            from cdk.config._classes import load_class

            try:
                return load_class(trimmed)
            except ConfigException:
                raise ConfigException(name, value, f"Class {value} could not be found.") from None
        raise ConfigException(name, value, "Expected a Class instance or class name.")
    raise ConfigException(name, _shown(value, type_), "Unknown type.")  # pragma: no cover


def java_number(value: float | int) -> str:
    """Format a number as Java's ``toString`` would (``5``, ``5.0``, ``1.0E10``, ``NaN``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    magnitude = abs(value)
    if 1e-3 <= magnitude < 1e7:
        text = repr(value)
        if "e" in text or "E" in text:
            text = f"{value:f}".rstrip("0")
        return text if "." in text else text + ".0"
    sign = "-" if value < 0 else ""
    shortest = repr(magnitude)
    mant, _, exp_text = shortest.partition("e")
    exp = int(exp_text) if exp_text else 0
    point = mant.index(".") if "." in mant else len(mant)
    mant_digits = mant.replace(".", "")
    stripped = mant_digits.lstrip("0")
    exp += point - 1 - (len(mant_digits) - len(stripped))
    stripped = stripped.rstrip("0") or "0"
    frac = stripped[1:] or "0"
    return f"{sign}{stripped[0]}.{frac}E{exp}"


def java_string(value: Any) -> str:
    """Render a value the way Java's ``toString`` would (``null``, ``true``, ``[a, b]``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return java_number(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(java_string(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{java_string(k)}={java_string(v)}" for k, v in value.items()) + "}"
    if isinstance(value, type):
        return f"class {_class_name(value)}"
    return str(value)


def _class_name(cls: type[Any]) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def convert_to_string(parsed: Any, type_: Type | None) -> str | None:
    """Render a parsed value as a config string, as Kafka's ``ConfigDef.convertToString``.

    LIST values are joined with ``,``; CLASS gives ``module.QualName``; BOOLEAN gives
    ``true``/``false``; DOUBLE uses Java's formatting; a :class:`Password` gives ``[hidden]``.
    ``None`` gives ``None``.
    """
    if parsed is None:
        return None
    if type_ is Type.LIST or (type_ is None and isinstance(parsed, (list, tuple))):
        return ",".join(java_string(v) for v in parsed)
    if type_ is Type.CLASS or (type_ is None and isinstance(parsed, type)):
        if isinstance(parsed, type):
            return _class_name(parsed)
        return str(parsed)
    if isinstance(parsed, (bool, int, float)):
        return java_number(parsed)
    return str(parsed)
