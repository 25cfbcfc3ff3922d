"""TimestampConverter: convert timestamps between strings, epoch numbers and Connect logical types.

Also holds :class:`SimpleDateFormat`, the subset of Java's ``java.text.SimpleDateFormat`` patterns
that Kafka's configs use (``timestamp.format``, ``format``), always in UTC and in English.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Mapping
from typing import Any, ClassVar, NamedTuple

from cdk.config import NO_DEFAULT, ConfigDef, Importance, Type, validators
from cdk.data import Date, Schema, SchemaBuilder, SchemaType, Struct, Time, Timestamp
from cdk.data._logical import datetime_to_millis, millis_to_datetime
from cdk.errors import ConfigException, ConnectException, DataException
from cdk.transforms._base import (
    KeyMixin,
    KeyOrValue,
    R,
    SchemaCache,
    Transformation,
    ValueMixin,
    attach_variants,
    copy_schema_basics,
    require_map,
    require_struct_or_null,
    struct_get,
)

__all__ = ["SimpleDateFormat", "TimestampConverter"]

_UTC = _dt.timezone.utc
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_UTC)

# -- SimpleDateFormat -----------------------------------------------------------------------------
_JAVA_LETTERS = frozenset("GyYMLwWDdFEuaHkKhmsSzZX")
_UNSUPPORTED = {
    "Y": "week year",
    "w": "week in year",
    "W": "week in month",
    "F": "day of week in month",
}
_NUMERIC = frozenset("yMLdDuHkKhmsS")
_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_ZONE = r"(?:GMT|UTC|UT)(?:[+-]\d{1,2}(?::?\d{2})?)?|Z|[+-]\d{2}(?::?\d{2})?"


class _Token(NamedTuple):
    letter: str  # "" for literal text
    width: int
    text: str


def _is_numeric(token: _Token) -> bool:
    return token.letter in _NUMERIC and not (token.letter in "ML" and token.width >= 3)


def _tokenize(pattern: str) -> list[_Token]:
    tokens: list[_Token] = []
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if char == "'":
            if i + 1 < n and pattern[i + 1] == "'":
                tokens.append(_Token("", 0, "'"))
                i += 2
                continue
            j, text = i + 1, []
            while True:
                if j >= n:
                    raise ValueError("Unterminated quote")
                if pattern[j] == "'":
                    if j + 1 < n and pattern[j + 1] == "'":
                        text.append("'")
                        j += 2
                        continue
                    break
                text.append(pattern[j])
                j += 1
            tokens.append(_Token("", 0, "".join(text)))
            i = j + 1
        elif ("a" <= char <= "z") or ("A" <= char <= "Z"):
            if char not in _JAVA_LETTERS:
                raise ValueError(f"Illegal pattern character '{char}'")
            if char in _UNSUPPORTED:
                raise ValueError(f"pattern letter '{char}' ({_UNSUPPORTED[char]}) is not supported")
            j = i
            while j < n and pattern[j] == char:
                j += 1
            if char == "X" and j - i > 3:
                raise ValueError(f"invalid ISO 8601 format: length={j - i}")
            tokens.append(_Token(char, j - i, char * (j - i)))
            i = j
        else:
            tokens.append(_Token("", 0, char))
            i += 1
    return tokens


class SimpleDateFormat:
    """A Java ``SimpleDateFormat`` pattern, formatting and parsing in UTC with English names.

    Supported letters: ``G y M L d D E u a H k K h m s S z Z X`` and quoted literals (``'T'``,
    ``''``). Java's week-based letters (``Y w W F``) are not supported. Parsing is lenient like
    Java's: out-of-range fields roll over (``2021-02-30`` is March 2nd) and text after the pattern
    is ignored.

    Example::

        SimpleDateFormat("yyyy-MM-dd'T'HH:mm:ss.SSSX").format(dt)  # '2017-01-03T06:30:01.864Z'

    Raises:
        ValueError: the pattern is not valid (the message is Java's where Java has one).
    """

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._tokens = _tokenize(pattern)
        self._regex: re.Pattern[str] | None = None

    def to_pattern(self) -> str:
        """The pattern text."""
        return self.pattern

    # -- formatting ----------------------------------------------------------------------------
    def format(self, value: _dt.datetime) -> str:
        """Render an instant (a naive datetime is read as UTC)."""
        if value.tzinfo is None:
            value = value.replace(tzinfo=_UTC)
        value = value.astimezone(_UTC)
        return "".join(self._format_token(t, value) for t in self._tokens)

    @staticmethod
    def _format_token(token: _Token, v: _dt.datetime) -> str:
        letter, count = token.letter, token.width
        if not letter:
            return token.text
        if letter == "G":
            return "AD"
        if letter == "y":
            return f"{v.year % 100:02d}" if count == 2 else f"{v.year:0{count}d}"
        if letter in "ML":
            if count >= 4:
                return _MONTHS[v.month - 1]
            if count == 3:
                return _MONTHS[v.month - 1][:3]
            return f"{v.month:0{count}d}"
        if letter == "E":
            name = _DAYS[v.weekday()]
            return name if count >= 4 else name[:3]
        if letter == "a":
            return "AM" if v.hour < 12 else "PM"
        if letter == "z":
            return "Coordinated Universal Time" if count >= 4 else "UTC"
        if letter == "Z":
            return "+0000"
        if letter == "X":
            return "Z"
        number = {
            "d": v.day,
            "D": v.timetuple().tm_yday,
            "u": v.isoweekday(),
            "H": v.hour,
            "k": v.hour or 24,
            "K": v.hour % 12,
            "h": v.hour % 12 or 12,
            "m": v.minute,
            "s": v.second,
            "S": v.microsecond // 1000,
        }[letter]
        return f"{number:0{count}d}"

    # -- parsing -------------------------------------------------------------------------------
    def _compiled(self) -> re.Pattern[str]:
        if self._regex is None:
            parts = []
            for index, token in enumerate(self._tokens):
                following = self._tokens[index + 1] if index + 1 < len(self._tokens) else None
                parts.append(self._token_regex(index, token, following))
            self._regex = re.compile("".join(parts))
        return self._regex

    @staticmethod
    def _token_regex(index: int, token: _Token, following: _Token | None) -> str:
        letter, count = token.letter, token.width
        if not letter:
            return re.escape(token.text)
        group = f"(?P<g{index}>"
        if _is_numeric(token):
            abutting = following is not None and _is_numeric(following)
            return group + (rf"\d{{{count}}})" if abutting else r"\d+)")
        if letter in "ML":
            names = "|".join(list(_MONTHS) + [m[:3] for m in _MONTHS])
            return group + f"(?i:{names}))"
        if letter == "E":
            names = "|".join(list(_DAYS) + [d[:3] for d in _DAYS])
            return group + f"(?i:{names}))"
        if letter == "a":
            return group + "(?i:AM|PM))"
        if letter == "G":
            return group + "(?i:AD|BC))"
        return group + f"(?i:{_ZONE}))"

    def parse(self, text: str) -> _dt.datetime:
        """Parse text into an aware UTC datetime.

        Raises:
            ValueError: the text does not match the pattern.
        """
        match = self._compiled().match(text)
        if match is None:
            raise ValueError(f'Unparseable date: "{text}"')
        fields: dict[str, Any] = {}
        two_digit_year = False
        for index, token in enumerate(self._tokens):
            if not token.letter:
                continue
            raw = match.group(f"g{index}")
            if _is_numeric(token):
                fields[token.letter] = int(raw)
                if token.letter == "y" and token.width <= 2 and len(raw) == 2:
                    two_digit_year = True
            elif token.letter in "ML":
                fields["M"] = _month_number(raw)
            elif token.letter in "azZX":
                fields[token.letter if token.letter == "a" else "zone"] = raw.upper()
        return _resolve(fields, two_digit_year)


def _month_number(name: str) -> int:
    lowered = name.lower()
    for number, month in enumerate(_MONTHS, start=1):
        if lowered in (month.lower(), month[:3].lower()):
            return number
    raise ValueError(f"Unknown month {name}")  # pragma: no cover - the regex admits only months


def _zone_offset(zone: str | None) -> _dt.timedelta:
    if zone is None:
        return _dt.timedelta(0)
    offset = re.search(r"([+-])(\d{1,2}):?(\d{2})?$", zone)
    if offset is None:
        return _dt.timedelta(0)
    sign = -1 if offset.group(1) == "-" else 1
    minutes = int(offset.group(2)) * 60 + int(offset.group(3) or 0)
    return sign * _dt.timedelta(minutes=minutes)


def _resolve(fields: dict[str, Any], two_digit_year: bool) -> _dt.datetime:
    year = fields.get("y", 1970)
    if two_digit_year:
        # Java's default: a two-digit year lands within 80 years before and 20 after now
        start = _dt.datetime.now(_UTC).year - 80
        year = (start // 100) * 100 + year
        if year < start:
            year += 100
    if "H" in fields:
        hour = fields["H"]
    elif "k" in fields:
        hour = 0 if fields["k"] == 24 else fields["k"]
    else:
        hour = fields.get("K", 0)
        if "h" in fields:
            hour = 0 if fields["h"] == 12 else fields["h"]
        if fields.get("a") == "PM":
            hour += 12
    months = fields.get("M", 1) - 1
    days = fields.get("d", 1) - 1
    if "D" in fields and "M" not in fields and "d" not in fields:
        days = fields["D"] - 1
    try:
        base = _dt.datetime(year + months // 12, months % 12 + 1, 1, tzinfo=_UTC)
        return (
            base
            + _dt.timedelta(
                days=days,
                hours=hour,
                minutes=fields.get("m", 0),
                seconds=fields.get("s", 0),
                milliseconds=fields.get("S", 0),
            )
            - _zone_offset(fields.get("zone"))
        )
    except (OverflowError, ValueError) as exc:
        raise ValueError(f"Date out of range: {exc}") from exc


# -- TimestampConverter ---------------------------------------------------------------------------
_PURPOSE = "converting timestamp formats"
TYPE_STRING = "string"
TYPE_UNIX = "unix"
TYPE_DATE = "Date"
TYPE_TIME = "Time"
TYPE_TIMESTAMP = "Timestamp"
_PRECISIONS = ("nanoseconds", "microseconds", "milliseconds", "seconds")

OPTIONAL_DATE_SCHEMA = Date.builder().optional().build()
OPTIONAL_TIME_SCHEMA = Time.builder().optional().build()
OPTIONAL_TIMESTAMP_SCHEMA = Timestamp.builder().optional().build()

_TYPE_SCHEMAS: dict[str, tuple[Schema, Schema]] = {
    TYPE_STRING: (Schema.STRING_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA),
    TYPE_UNIX: (Schema.INT64_SCHEMA, Schema.OPTIONAL_INT64_SCHEMA),
    TYPE_DATE: (Date.SCHEMA, OPTIONAL_DATE_SCHEMA),
    TYPE_TIME: (Time.SCHEMA, OPTIONAL_TIME_SCHEMA),
    TYPE_TIMESTAMP: (Timestamp.SCHEMA, OPTIONAL_TIMESTAMP_SCHEMA),
}


def _class(value: Any) -> str:
    return f"class {type(value).__name__}"


def _truncating_div(value: int, divisor: int) -> int:
    """Integer division rounding toward zero, as Java's TimeUnit conversions."""
    quotient = abs(value) // divisor
    return quotient if value >= 0 else -quotient


def _to_ms_precision(value: _dt.datetime) -> _dt.datetime:
    if value.tzinfo is None:
        value = value.replace(tzinfo=_UTC)
    value = value.astimezone(_UTC)
    return value.replace(microsecond=value.microsecond // 1000 * 1000)


CONFIG_DEF: ConfigDef = (
    ConfigDef()
    .define(
        "field",
        Type.STRING,
        "",
        None,
        Importance.HIGH,
        "The field holding the timestamp; leave empty when the whole key or value is the "
        "timestamp.",
    )
    .define(
        "target.type",
        Type.STRING,
        NO_DEFAULT,
        validators.ValidString.of(TYPE_STRING, TYPE_UNIX, TYPE_DATE, TYPE_TIME, TYPE_TIMESTAMP),
        Importance.HIGH,
        "What to convert the timestamp to: string, unix, Date, Time or Timestamp.",
    )
    .define(
        "format",
        Type.STRING,
        "",
        None,
        Importance.MEDIUM,
        "A java.text.SimpleDateFormat pattern, used to render the timestamp when "
        "target.type=string and to read timestamps that arrive as strings.",
    )
    .define(
        "unix.precision",
        Type.STRING,
        "milliseconds",
        validators.ValidString.of(*_PRECISIONS),
        Importance.LOW,
        "The unit of Unix epoch numbers, for output with target.type=unix and for reading "
        "integer input: seconds, milliseconds, microseconds or nanoseconds. Sub-millisecond "
        "digits are lost in conversions.",
    )
    .define(
        "replace.null.with.default",
        Type.BOOLEAN,
        True,
        None,
        Importance.MEDIUM,
        "Whether a null field that has a default value is replaced by that default (true) "
        "or kept as null (false).",
    )
)


class TimestampConverter(KeyOrValue, Transformation[R]):
    """Convert a timestamp (the whole key/value, or one field of it) to another representation.

    Representations: ``string`` (rendered/parsed with ``format``), ``unix`` (epoch number in
    ``unix.precision`` units), and the Connect logical types ``Date`` (``datetime.date``),
    ``Time`` (``datetime.time``) and ``Timestamp`` (UTC ``datetime.datetime``). Use
    ``TimestampConverter.Key`` or ``TimestampConverter.Value``.
    """

    Key: ClassVar[type[TimestampConverter[Any]]]
    Value: ClassVar[type[TimestampConverter[Any]]]

    def __init__(self) -> None:
        self._field = ""
        self._type = TYPE_TIMESTAMP
        self._format: SimpleDateFormat | None = None
        self._precision = "milliseconds"
        self._replace_null_with_default = True
        self._schema_cache: SchemaCache[Schema, Schema] = SchemaCache()

    def config(self) -> ConfigDef:
        """The ConfigDef: ``field``, ``target.type``, ``format``, ``unix.precision``, ..."""
        return CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        """Read the settings and compile ``format``.

        Raises:
            ConfigException: a bad or missing setting, naming the key.
        """
        parsed = CONFIG_DEF.parse(configs)
        self._field = parsed["field"]
        self._type = parsed["target.type"]
        self._precision = parsed["unix.precision"]
        self._replace_null_with_default = parsed["replace.null.with.default"]
        self._schema_cache = SchemaCache()
        pattern: str = parsed["format"]
        if self._type == TYPE_STRING and not pattern.strip():
            raise ConfigException(
                "format",
                pattern,
                "TimestampConverter requires format option to be specified when using string "
                "timestamps",
            )
        self._format = None
        if pattern.strip():
            try:
                self._format = SimpleDateFormat(pattern)
            except ValueError as exc:
                raise ConfigException(
                    "format",
                    pattern,
                    "TimestampConverter requires a SimpleDateFormat-compatible pattern for "
                    f"string timestamps: {pattern} ({exc})",
                ) from exc

    def apply(self, record: R) -> R | None:
        """Convert the configured timestamp in the record's key or value."""
        schema = self.operating_schema(record)
        if schema is None:
            return self._apply_schemaless(record)
        return self._apply_with_schema(record, schema)

    # -- schemaless ------------------------------------------------------------------------------
    def _apply_schemaless(self, record: R) -> R:
        raw = self.operating_value(record)
        if raw is None or not self._field:
            return self.new_record(record, None, self._convert(raw, None))
        value = require_map(raw, _PURPOSE)
        updated = dict(value)
        updated[self._field] = self._convert(value.get(self._field), None)
        return self.new_record(record, None, updated)

    # -- with schema -----------------------------------------------------------------------------
    def _apply_with_schema(self, record: R, schema: Schema) -> R:
        if not self._field:
            updated_schema = _TYPE_SCHEMAS[self._type][1 if schema.optional else 0]
            converted = self._convert(self.operating_value(record), _type_from_schema(schema))
            return self.new_record(record, updated_schema, converted)
        value = require_struct_or_null(self.operating_value(record), _PURPOSE)
        cached = self._schema_cache.get_or_compute(schema, self._updated_schema)
        return self.new_record(record, cached, self._convert_struct(value, cached))

    def _updated_schema(self, schema: Schema) -> Schema:
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        for field in schema.fields:
            if field.name == self._field:
                builder.field(field.name, _TYPE_SCHEMAS[self._type][int(field.schema.optional)])
            else:
                builder.field(field.name, field.schema)
        updated = builder.build()
        if isinstance(schema.default_value, Struct):
            # the default must be a struct of the new schema itself, which only exists once built
            updated.default_value = self._convert_struct(schema.default_value, updated)
        return updated

    def _convert_struct(self, value: Struct | None, updated_schema: Schema) -> Struct | None:
        if value is None:
            return None
        updated = Struct(updated_schema)
        for field in value.schema.fields:
            field_value = struct_get(value, field, self._replace_null_with_default)
            if field.name == self._field:
                field_value = self._convert(field_value, _type_from_schema(field.schema))
            updated.put(field.name, field_value)
        return updated

    # -- conversion ------------------------------------------------------------------------------
    def _convert(self, timestamp: Any, source_type: str | None) -> Any:
        if timestamp is None:
            return None
        if source_type is None:
            source_type = _infer_type(timestamp)
        return self._to_type(self._to_raw(timestamp, source_type))

    def _to_raw(self, value: Any, source_type: str) -> _dt.datetime:
        if source_type == TYPE_STRING:
            if not isinstance(value, str):
                raise DataException(
                    f"Expected string timestamp to be a String, but found {_class(value)}"
                )
            if self._format is None:
                raise DataException(
                    "TimestampConverter requires the format option to parse string timestamps"
                )
            try:
                return self._format.parse(value)
            except ValueError as exc:
                raise DataException(
                    f"Could not parse timestamp: value ({value}) does not match pattern "
                    f"({self._format.to_pattern()})"
                ) from exc
        if source_type == TYPE_UNIX:
            if not isinstance(value, int) or isinstance(value, bool):
                raise DataException(
                    f"Expected Unix timestamp to be a Long, but found {_class(value)}"
                )
            millis = value
            if self._precision == "seconds":
                millis = value * 1000
            elif self._precision == "microseconds":
                millis = _truncating_div(value, 1000)
            elif self._precision == "nanoseconds":
                millis = _truncating_div(value, 1_000_000)
            return millis_to_datetime(millis)
        if source_type == TYPE_TIMESTAMP:
            if not isinstance(value, _dt.datetime):
                raise DataException(
                    f"Expected Timestamp to be a datetime.datetime, but found {_class(value)}"
                )
            return _to_ms_precision(value)
        if source_type == TYPE_DATE:
            if isinstance(value, _dt.datetime):
                return _to_ms_precision(value)
            if not isinstance(value, _dt.date):
                raise DataException(
                    f"Expected Date to be a datetime.date, but found {_class(value)}"
                )
            return _dt.datetime(value.year, value.month, value.day, tzinfo=_UTC)
        if source_type == TYPE_TIME:
            if isinstance(value, _dt.datetime):
                return _to_ms_precision(value)
            if not isinstance(value, _dt.time):
                raise DataException(
                    f"Expected Time to be a datetime.time, but found {_class(value)}"
                )
            return _to_ms_precision(_dt.datetime.combine(_EPOCH.date(), value, tzinfo=_UTC))
        raise ConnectException(f"Unsupported timestamp type: {source_type}")  # pragma: no cover

    def _to_type(self, raw: _dt.datetime) -> Any:
        target = self._type
        if target == TYPE_STRING:
            assert self._format is not None  # configure() insists on a format for strings
            return self._format.format(raw)
        if target == TYPE_UNIX:
            millis = datetime_to_millis(raw)
            if self._precision == "seconds":
                return _truncating_div(millis, 1000)
            if self._precision == "microseconds":
                return millis * 1000
            if self._precision == "nanoseconds":
                return millis * 1_000_000
            return millis
        if target == TYPE_DATE:
            return raw.date()
        if target == TYPE_TIME:
            return raw.time()
        return raw


def _type_from_schema(schema: Schema) -> str:
    if schema.name == Timestamp.LOGICAL_NAME:
        return TYPE_TIMESTAMP
    if schema.name == Date.LOGICAL_NAME:
        return TYPE_DATE
    if schema.name == Time.LOGICAL_NAME:
        return TYPE_TIME
    if schema.type is SchemaType.STRING:
        return TYPE_STRING
    if schema.type is SchemaType.INT64:
        return TYPE_UNIX
    raise ConnectException(
        f"Schema {schema!r} does not correspond to a known timestamp type format"
    )


def _infer_type(value: Any) -> str:
    if isinstance(value, _dt.datetime):
        return TYPE_TIMESTAMP
    if isinstance(value, _dt.date):
        return TYPE_DATE
    if isinstance(value, _dt.time):
        return TYPE_TIME
    if isinstance(value, int) and not isinstance(value, bool):
        return TYPE_UNIX
    if isinstance(value, str):
        return TYPE_STRING
    raise DataException(
        f"TimestampConverter does not support {_class(value)} objects as timestamps"
    )


class _Key(KeyMixin, TimestampConverter[R]):
    """Convert a timestamp in the record key."""


class _Value(ValueMixin, TimestampConverter[R]):
    """Convert a timestamp in the record value."""


attach_variants(TimestampConverter, _Key, _Value)
