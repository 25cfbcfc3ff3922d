"""Record headers: :class:`Header` and the ordered, mutable :class:`Headers` collection."""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from cdk.data import (
    Date,
    Decimal,
    Schema,
    SchemaAndValue,
    SchemaType,
    Struct,
    Time,
    Timestamp,
    validate_value,
)
from cdk.errors import DataException

__all__ = ["Header", "Headers"]


class Header:
    """One header: a key, an optional schema and a value (immutable)."""

    __slots__ = ("key", "schema", "value")

    def __init__(self, key: str, schema: Schema | None, value: Any) -> None:
        if key is None:
            raise DataException("Header key cannot be null")
        if schema is not None:
            _check_value(schema, value, key)
        self.key = key
        self.schema = schema
        self.value = value

    def rename(self, key: str) -> Header:
        """The same header under another key."""
        return Header(key, self.schema, self.value)

    def with_(self, schema: Schema | None, value: Any) -> Header:
        """A header with this key and another schema and value."""
        return Header(self.key, schema, value)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Header):
            return NotImplemented
        return (self.key, self.schema, self.value) == (other.key, other.schema, other.value)

    def __hash__(self) -> int:
        return hash((self.key, self.schema, repr(self.value)))

    def __repr__(self) -> str:
        return f"ConnectHeader(key={self.key}, value={self.value!r}, schema={self.schema!r})"


def _check_value(schema: Schema, value: Any, key: str) -> None:
    """Validate a header value; ARRAY/MAP schemas without element schemas are checked shallowly.

    Such schemas come from :meth:`~cdk.data.Values.parse_string` (``[]``, ``[1, "a"]``) and so
    from the :class:`~cdk.converters.SimpleHeaderConverter`.
    """
    expected: tuple[type, ...] = ()
    if schema.type is SchemaType.ARRAY:
        missing, expected = schema._value_schema is None, (list, tuple)
    elif schema.type is SchemaType.MAP:
        missing = schema._key_schema is None or schema._value_schema is None
        expected = (Mapping,)
    else:
        missing = False
    if missing:
        if value is None and not schema.optional:
            raise DataException(
                f'Invalid value: null used for required field: "{key}", schema type: {schema.type}',
                field=key,
            )
        if value is not None and not isinstance(value, expected):
            raise DataException(
                f"Invalid Python object for schema with type {schema.type}: "
                f'class {type(value).__name__} for field: "{key}"',
                field=key,
            )
        return
    validate_value(schema, value, key)


class Headers:
    """An ordered collection of headers; several headers may share a key.

    Mutating methods return ``self`` so calls chain:
    ``headers.add_string("a", "x").add_int32("b", 1)``.
    """

    __slots__ = ("_headers",)

    def __init__(self, headers: Iterable[Header] | None = None) -> None:
        self._headers: list[Header] = list(headers or ())

    # -- reading -------------------------------------------------------------------------------
    def __iter__(self) -> Iterator[Header]:
        return iter(list(self._headers))

    def __len__(self) -> int:
        return len(self._headers)

    def __bool__(self) -> bool:
        return bool(self._headers)

    def size(self) -> int:
        """The number of headers."""
        return len(self._headers)

    def is_empty(self) -> bool:
        """True when there are no headers."""
        return not self._headers

    def all_with_name(self, key: str) -> list[Header]:
        """Every header with this key, in order."""
        return [h for h in self._headers if h.key == key]

    def last_with_name(self, key: str) -> Header | None:
        """The last header with this key, or ``None``."""
        for header in reversed(self._headers):
            if header.key == key:
                return header
        return None

    # -- adding --------------------------------------------------------------------------------
    def add_header(self, header: Header) -> Headers:
        """Append a header."""
        self._headers.append(header)
        return self

    def add(self, key: str, value: Any, schema: Schema | None = None) -> Headers:
        """Append a header; ``value`` may be a :class:`~cdk.data.SchemaAndValue`."""
        if isinstance(value, SchemaAndValue):
            schema, value = value.schema, value.value
        return self.add_header(Header(key, schema, value))

    def add_string(self, key: str, value: str | None) -> Headers:
        """Append a STRING header (optional schema when ``value`` is ``None``)."""
        schema = Schema.OPTIONAL_STRING_SCHEMA if value is None else Schema.STRING_SCHEMA
        return self.add(key, value, schema)

    def add_boolean(self, key: str, value: bool) -> Headers:
        """Append a BOOLEAN header."""
        return self.add(key, value, Schema.BOOLEAN_SCHEMA)

    def add_int8(self, key: str, value: int) -> Headers:
        """Append an INT8 header."""
        return self.add(key, value, Schema.INT8_SCHEMA)

    def add_int16(self, key: str, value: int) -> Headers:
        """Append an INT16 header."""
        return self.add(key, value, Schema.INT16_SCHEMA)

    def add_int32(self, key: str, value: int) -> Headers:
        """Append an INT32 header."""
        return self.add(key, value, Schema.INT32_SCHEMA)

    def add_int64(self, key: str, value: int) -> Headers:
        """Append an INT64 header."""
        return self.add(key, value, Schema.INT64_SCHEMA)

    def add_float32(self, key: str, value: float) -> Headers:
        """Append a FLOAT32 header."""
        return self.add(key, value, Schema.FLOAT32_SCHEMA)

    def add_float64(self, key: str, value: float) -> Headers:
        """Append a FLOAT64 header."""
        return self.add(key, value, Schema.FLOAT64_SCHEMA)

    def add_bytes(self, key: str, value: bytes | None) -> Headers:
        """Append a BYTES header (optional schema when ``value`` is ``None``)."""
        schema = Schema.OPTIONAL_BYTES_SCHEMA if value is None else Schema.BYTES_SCHEMA
        return self.add(key, value, schema)

    def add_list(self, key: str, value: list[Any] | None, schema: Schema) -> Headers:
        """Append an ARRAY header with the given schema."""
        return self.add(key, value, schema)

    def add_map(self, key: str, value: dict[Any, Any] | None, schema: Schema) -> Headers:
        """Append a MAP header with the given schema."""
        return self.add(key, value, schema)

    def add_struct(self, key: str, value: Struct) -> Headers:
        """Append a STRUCT header (its schema is the struct's)."""
        return self.add(key, value, value.schema)

    def add_decimal(self, key: str, value: _decimal.Decimal) -> Headers:
        """Append a Decimal header at the value's own scale."""
        exponent = value.as_tuple().exponent
        scale = -exponent if isinstance(exponent, int) else 0
        return self.add(key, value, Decimal.schema(scale))

    def add_date(self, key: str, value: _dt.date) -> Headers:
        """Append a Date header."""
        return self.add(key, value, Date.SCHEMA)

    def add_time(self, key: str, value: _dt.time) -> Headers:
        """Append a Time header."""
        return self.add(key, value, Time.SCHEMA)

    def add_timestamp(self, key: str, value: _dt.datetime) -> Headers:
        """Append a Timestamp header."""
        return self.add(key, value, Timestamp.SCHEMA)

    def add_all(self, headers: Iterable[Header]) -> Headers:
        """Append several headers."""
        self._headers.extend(headers)
        return self

    # -- changing ------------------------------------------------------------------------------
    def remove(self, key: str) -> Headers:
        """Remove every header with this key."""
        self._headers = [h for h in self._headers if h.key != key]
        return self

    def retain_latest(self, key: str | None = None) -> Headers:
        """Keep only the last header of each key (or of ``key`` only)."""
        seen: set[str] = set()
        kept: list[Header] = []
        for header in reversed(self._headers):
            if key is not None and header.key != key:
                kept.append(header)
            elif header.key not in seen:
                seen.add(header.key)
                kept.append(header)
        self._headers = kept[::-1]
        return self

    def clear(self) -> Headers:
        """Remove every header."""
        self._headers.clear()
        return self

    def apply(
        self, transform: Callable[[Header], Header | None], key: str | None = None
    ) -> Headers:
        """Replace each header (of ``key`` only, if given) by ``transform(header)``.

        A transform returning ``None`` removes the header.
        """
        out: list[Header] = []
        for header in self._headers:
            if key is not None and header.key != key:
                out.append(header)
                continue
            replaced = transform(header)
            if replaced is not None:
                out.append(replaced)
        self._headers = out
        return self

    def duplicate(self) -> Headers:
        """A shallow copy (headers are immutable)."""
        return Headers(self._headers)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Headers):
            return NotImplemented
        return self._headers == other._headers

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return f"ConnectHeaders(headers={self._headers!r})"
