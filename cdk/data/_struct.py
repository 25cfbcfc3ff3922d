"""Structured values: :class:`Struct` and :class:`SchemaAndValue`."""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from cdk.data._schema import (
    Field,
    Schema,
    SchemaType,
    _compiled_check,
    _compiled_fields_check,
    _compiled_values_check,
    validate_value,
)
from cdk.errors import DataException

__all__ = ["SchemaAndValue", "Struct"]


class Struct:
    """A value of a STRUCT schema: one slot per field, validated on :meth:`put`.

    Example::

        user = Struct(schema).put("id", 42).put("email", None)
        user.get("id")  # 42
    """

    __slots__ = ("_values", "schema")

    def __init__(self, schema: Schema) -> None:
        fields = schema._fields if isinstance(schema, Schema) else None  # None: not a STRUCT
        if fields is None:
            raise DataException("Not a struct schema: " + repr(schema))
        self.schema = schema
        self._values: list[Any] = [None] * len(fields)

    @classmethod
    def from_values(cls, schema: Schema, values: Iterable[Any]) -> Struct:
        """A struct holding ``values``, one per field in field order.

        The same as putting each value in turn (``Struct(schema).put(name, value)...``), and
        validated as :meth:`put` validates, but with one check compiled for the schema instead of
        one call per field: the fast way to build structs from rows.

        Example::

            row = Struct.from_values(schema, [42, "alice@example.com"])

        Raises:
            DataException: not a struct schema, not one value per field, or an invalid value
                (naming the first invalid field, with :meth:`put`'s message).
        """
        fields = schema._fields if isinstance(schema, Schema) else None  # None: not a STRUCT
        if fields is None:
            raise DataException("Not a struct schema: " + repr(schema))
        listed = list(values)  # a copy: the caller's list stays the caller's
        if len(listed) != len(fields):
            raise DataException(
                f"{schema!r} has {len(fields)} fields, but {len(listed)} values were given"
            )
        check = schema._values_check
        if check is None:
            check = _compiled_values_check(schema)
        if not check(listed):
            for f, value in zip(fields, listed, strict=True):
                validate_value(f.schema, value, f.name)
        struct = cls.__new__(cls)
        struct.schema = schema
        struct._values = listed
        return struct

    @classmethod
    def _trusted(cls, schema: Schema, values: list[Any]) -> Struct:
        """Build from values that the caller already validated against ``schema`` (converters)."""
        struct = cls.__new__(cls)
        struct.schema = schema
        struct._values = values
        return struct

    def _lookup(self, field: str | Field) -> Field:
        if isinstance(field, Field):
            found = self.schema.field(field.name)
            if found is None or found != field:
                raise DataException(f"{field.name} is not a valid field name", field=field.name)
            return found
        found = self.schema.field(field)
        if found is None:
            raise DataException(f"{field} is not a valid field name", field=field)
        return found

    def put(self, field: str | Field, value: Any) -> Struct:
        """Set a field (by name or :class:`Field`) after validating the value; returns ``self``."""
        f = self.schema._by_name.get(field) if type(field) is str else None
        if f is None:
            f = self._lookup(field)
        schema = f.schema
        check = schema._check
        if check is None:
            check = _compiled_check(schema)
        if not check(value):
            validate_value(schema, value, f.name)
        self._values[f.index] = value
        return self

    def get(self, field: str | Field) -> Any:
        """The field's value, or the field schema's default when the value is ``None``."""
        f = self.schema._by_name.get(field) if type(field) is str else None
        if f is None:
            f = self._lookup(field)
        value = self._values[f.index]
        if value is None:
            return f.schema.default_value
        return value

    def get_without_default(self, field: str | Field) -> Any:
        """The stored value, ``None`` included."""
        return self._values[self._lookup(field).index]

    def _typed(self, field: str, stype: SchemaType, pytype: type | tuple[type, ...]) -> Any:
        f = self._lookup(field)
        if f.schema.type is not stype:
            raise DataException(f"Field '{field}' is not of type {stype.name}", field=field)
        value = self.get(f)
        if value is not None and not isinstance(value, pytype):
            raise DataException(f"Field '{field}' is not of type {stype.name}", field=field)
        return value

    def get_int8(self, field: str) -> int | None:
        """An INT8 field's value."""
        return self._typed(field, SchemaType.INT8, int)  # type: ignore[no-any-return]

    def get_int16(self, field: str) -> int | None:
        """An INT16 field's value."""
        return self._typed(field, SchemaType.INT16, int)  # type: ignore[no-any-return]

    def get_int32(self, field: str) -> int | None:
        """An INT32 field's value."""
        return self._typed(field, SchemaType.INT32, int)  # type: ignore[no-any-return]

    def get_int64(self, field: str) -> int | None:
        """An INT64 field's value."""
        return self._typed(field, SchemaType.INT64, int)  # type: ignore[no-any-return]

    def get_float32(self, field: str) -> float | None:
        """A FLOAT32 field's value."""
        return self._typed(field, SchemaType.FLOAT32, (float, int))  # type: ignore[no-any-return]

    def get_float64(self, field: str) -> float | None:
        """A FLOAT64 field's value."""
        return self._typed(field, SchemaType.FLOAT64, (float, int))  # type: ignore[no-any-return]

    def get_boolean(self, field: str) -> bool | None:
        """A BOOLEAN field's value."""
        return self._typed(field, SchemaType.BOOLEAN, bool)  # type: ignore[no-any-return]

    def get_string(self, field: str) -> str | None:
        """A STRING field's value."""
        return self._typed(field, SchemaType.STRING, str)  # type: ignore[no-any-return]

    def get_bytes(self, field: str) -> bytes | None:
        """A BYTES field's value (logical Decimal fields return ``decimal.Decimal``)."""
        return self._typed(  # type: ignore[no-any-return]
            field, SchemaType.BYTES, (bytes, bytearray, memoryview, _decimal.Decimal)
        )

    def get_array(self, field: str) -> list[Any] | None:
        """An ARRAY field's value."""
        return self._typed(field, SchemaType.ARRAY, (list, tuple))  # type: ignore[no-any-return]

    def get_map(self, field: str) -> dict[Any, Any] | None:
        """A MAP field's value."""
        return self._typed(field, SchemaType.MAP, Mapping)  # type: ignore[no-any-return]

    def get_struct(self, field: str) -> Struct | None:
        """A STRUCT field's value."""
        return self._typed(field, SchemaType.STRUCT, Struct)  # type: ignore[no-any-return]

    def validate(self) -> None:
        """Check every field: non-``None`` unless optional or defaulted, and of the right type."""
        check = self.schema._fields_check
        if check is None:
            check = _compiled_fields_check(self.schema)
        if check(self._values):
            return
        for f, value in zip(self.schema.fields, self._values, strict=True):
            if value is None and f.schema.default_value is not None:
                continue
            validate_value(f.schema, value, f.name)

    def to_dict(self) -> dict[str, Any]:
        """The fields as a dict (nested structs become dicts too), defaults applied."""
        out: dict[str, Any] = {}
        for f in self.schema.fields:
            value = self.get(f)
            out[f.name] = _plain(value)
        return out

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Struct):
            return NotImplemented
        return self.schema == other.schema and self._values == other._values

    def __hash__(self) -> int:
        return hash((self.schema, tuple(_hashable(v) for v in self._values)))

    def __repr__(self) -> str:
        parts = [
            f"{f.name}={_java_str(v)}"
            for f, v in zip(self.schema.fields, self._values, strict=True)
            if v is not None
        ]
        return "Struct{" + ",".join(parts) + "}"


def _plain(value: Any) -> Any:
    if isinstance(value, Struct):
        return value.to_dict()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _hashable(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((repr(k), _hashable(v)) for k, v in value.items()))
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    return value


def _java_str(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (_dt.date, _dt.time)):
        return value.isoformat()
    return str(value)


class SchemaAndValue:
    """A schema and a value that conforms to it (either may be ``None``)."""

    __slots__ = ("schema", "value")

    NULL: ClassVar[SchemaAndValue]

    def __init__(self, schema: Schema | None, value: Any) -> None:
        self.schema = schema
        self.value = value

    def __iter__(self) -> Any:
        yield self.schema
        yield self.value

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SchemaAndValue):
            return NotImplemented
        return self.schema == other.schema and self.value == other.value

    def __hash__(self) -> int:
        return hash((self.schema, _hashable(self.value)))

    def __repr__(self) -> str:
        return f"SchemaAndValue{{schema={self.schema!r}, value={self.value!r}}}"


SchemaAndValue.NULL = SchemaAndValue(None, None)
