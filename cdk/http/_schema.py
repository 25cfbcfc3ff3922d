"""JSON records to Connect data: schema inference, record mapping and schema evolution.

:func:`infer_schema` derives a STRUCT schema from sample records; :class:`JsonRecordMapper` turns
JSON records (``response.json()`` objects) into :class:`~cdk.data.Struct` values of a schema,
inferred or declared by the connector alike, and can evolve the schema when records bring new
fields::

    schema = infer_schema(samples, name="com.example.User")
    mapper = JsonRecordMapper(schema, unknown_fields="evolve")
    struct = mapper.to_struct(record)  # record has a new field: mapper.schema is now version 2
    SourceRecord(..., value_schema=mapper.schema, value=struct)

Inferred types: ``bool`` BOOLEAN, ``int`` INT64 (a ``Decimal`` of scale 0 beyond 64 bits),
``float`` (or ints and floats mixed) FLOAT64, ``str`` STRING, except ISO-8601 timestamps
(``2024-05-01T10:00:00Z``) as the ``Timestamp`` logical type and ISO dates (``2024-05-01``) as
``Date``, when every non-null sample value of the field parses; objects nested STRUCTs, lists
ARRAYs of their element type (elements optional; no element seen: optional STRING), a field
only ever null optional STRING. Every field is optional (APIs omit fields) unless named in
``required``; fields are ordered by first appearance.
"""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
import decimal as _decimal
import re
from collections.abc import Callable, Collection, Mapping
from typing import Any, Literal

from cdk.data import Date, Decimal, Schema, SchemaBuilder, SchemaType, Struct, Time, Timestamp
from cdk.errors import DataException

__all__ = ["JsonRecordMapper", "infer_schema"]

_UTC = _dt.timezone.utc
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_UTC)
_TIMESTAMP = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)[Tt ](\d\d):(\d\d)(?::(\d\d)(?:[.,](\d+))?)?(Z|z|[+-]\d\d(?::?\d\d)?)?"
)
_DATE = re.compile(r"\d{4}-\d\d-\d\d")
_TIME = re.compile(r"(\d\d):(\d\d)(?::(\d\d)(?:[.,](\d+))?)?Z?")
_INTEGER = re.compile(r"[+-]?\d+")
_INT64 = (-(2**63), 2**63 - 1)
_INT_RANGES = {
    SchemaType.INT8: (-(2**7), 2**7 - 1),
    SchemaType.INT16: (-(2**15), 2**15 - 1),
    SchemaType.INT32: (-(2**31), 2**31 - 1),
    SchemaType.INT64: _INT64,
}
#: Epoch numbers this large (or larger) are milliseconds; smaller ones seconds (1e11 s is in
#: the year 5138, 1e11 ms in 1973).
_EPOCH_MILLIS_FROM = 10**11


def parse_timestamp(text: str) -> tuple[_dt.datetime, int] | None:
    """An ISO-8601 date-time as (UTC datetime, nanoseconds of its second), or ``None``.

    Accepts ``T`` or a space between date and time, optional seconds and fraction, and ``Z`` or
    an offset (none: UTC). The datetime keeps microseconds; the nanoseconds keep 9 digits.
    """
    m = _TIMESTAMP.fullmatch(text)
    if m is None:
        return None
    year, month, day, hour, minute, second, fraction, zone = m.groups()
    nanos = int((fraction or "")[:9].ljust(9, "0"))
    try:
        tz = _UTC
        if zone is not None and zone not in "Zz":
            digits = zone[1:].replace(":", "")
            offset = _dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:] or 0))
            tz = _dt.timezone(-offset if zone[0] == "-" else offset)
        local = _dt.datetime(
            int(year), int(month), int(day), int(hour), int(minute), int(second or 0),
            nanos // 1000, tzinfo=tz,
        )  # fmt: skip
        return local.astimezone(_UTC), nanos
    except (ValueError, OverflowError):
        return None


def parse_date(text: str) -> _dt.date | None:
    """An ISO-8601 calendar date (``2024-05-01``), or ``None``."""
    if _DATE.fullmatch(text) is None:
        return None
    try:
        return _dt.date.fromisoformat(text)
    except ValueError:
        return None


def epoch_nanos(value: int | float | _decimal.Decimal) -> int:
    """Nanoseconds since the epoch of an epoch number: seconds, or milliseconds from 1e11 on."""
    exact = value if isinstance(value, _decimal.Decimal) else _decimal.Decimal(str(value))
    scale = 10**6 if abs(exact) >= _EPOCH_MILLIS_FROM else 10**9
    return int((exact * scale).to_integral_value(_decimal.ROUND_FLOOR))


def infer_schema(
    samples: Collection[Mapping[str, Any]],
    *,
    name: str,
    version: int = 1,
    required: Collection[str] = (),
) -> Schema:
    """A STRUCT schema for JSON records, inferred from samples (see the module's type table).

    Args:
        samples: sample records (JSON objects).
        name: the schema name.
        version: the schema version.
        required: dotted paths of fields that are required (``"id"``, ``"address.city"``); each
            must be present and non-null in every sample.

    Raises:
        DataException: a sample is not an object, a field has values of incompatible types, or
            a required field is missing or null in a sample.
    """
    root = _Shape()
    for sample in samples:
        if not isinstance(sample, Mapping):
            raise DataException(f"A sample record is not a JSON object: {_show(sample)}")
        root.add(sample, "")
    for path in required:
        root.check_required(path)
    if not root.kinds:
        return _rebuild_struct(SchemaBuilder.struct().build(), [], name, version)
    schema = root.to_schema("", optional=False, required=frozenset(required))
    return _rebuild_struct(schema, [(f.name, f.schema) for f in schema.fields], name, version)


class _Shape:
    """What the samples of one field hold: JSON kinds, string formats, nested fields/elements."""

    __slots__ = ("dates", "element", "fields", "kinds", "objects", "present", "timestamps")

    def __init__(self) -> None:
        self.kinds: set[str] = set()
        self.timestamps = True
        self.dates = True
        self.fields: dict[str, _Shape] = {}
        self.objects = 0  # how many objects were added
        self.present = 0  # how many non-null values were added
        self.element: _Shape | None = None

    def add(self, value: Any, path: str) -> None:
        self.present += value is not None
        if value is None:
            self.kinds.add("null")
        elif isinstance(value, bool):
            self.kinds.add("bool")
        elif isinstance(value, int):
            self.kinds.add("int" if _INT64[0] <= value <= _INT64[1] else "bigint")
        elif isinstance(value, float):
            self.kinds.add("float")
        elif isinstance(value, str):
            self.kinds.add("str")
            self.timestamps = self.timestamps and parse_timestamp(value) is not None
            self.dates = self.dates and parse_date(value) is not None
        elif isinstance(value, Mapping):
            self.kinds.add("object")
            self.objects += 1
            for key, item in value.items():
                self.fields.setdefault(str(key), _Shape()).add(item, _join(path, str(key)))
        elif isinstance(value, (list, tuple)):
            self.kinds.add("array")
            self.element = self.element or _Shape()
            for item in value:
                self.element.add(item, f"{path}[]")
        else:
            raise DataException(f'Field "{path}": {_show(value)} is not a JSON value', field=path)

    def check_required(self, path: str) -> None:
        shape: _Shape = self
        for part in path.split("."):
            child = shape.fields.get(part)
            if child is None or child.present < shape.objects:
                raise DataException(
                    f'Required field "{path}" is missing or null in a sample record', field=path
                )
            shape = child

    def to_schema(self, path: str, *, optional: bool, required: frozenset[str]) -> Schema:
        kinds = self.kinds - {"null"}
        builder: SchemaBuilder
        if not kinds:
            return Schema.OPTIONAL_STRING_SCHEMA
        if kinds == {"bool"}:
            builder = SchemaBuilder.boolean()
        elif kinds <= {"int", "bigint", "float"}:
            if "float" in kinds:
                builder = SchemaBuilder.float64()
            else:
                builder = Decimal.builder(0) if "bigint" in kinds else SchemaBuilder.int64()
        elif kinds == {"str"}:
            if self.timestamps:
                builder = Timestamp.builder()
            else:
                builder = Date.builder() if self.dates else SchemaBuilder.string()
        elif kinds == {"object"}:
            builder = SchemaBuilder.struct()
            for key, shape in self.fields.items():
                sub = _join(path, key)
                builder.field(
                    key, shape.to_schema(sub, optional=sub not in required, required=required)
                )
        elif kinds == {"array"}:
            element = self.element or _Shape()
            builder = SchemaBuilder.array(
                element.to_schema(f"{path}[]", optional=True, required=required)
            )
        else:
            raise DataException(
                f'Field "{path}" has values of incompatible types: {", ".join(sorted(kinds))}',
                field=path,
            )
        return builder.optional().build() if optional else builder.build()


#: How unknown record fields (not in the schema) are handled by :class:`JsonRecordMapper`.
UnknownFields = Literal["error", "ignore", "evolve"]


class JsonRecordMapper:
    """Maps JSON records onto Struct values of a STRUCT schema, declared or inferred.

    Conversions: ISO-8601 strings (or epoch numbers) to UTC ``datetime`` for ``Timestamp``, ISO
    dates to ``date`` for ``Date``, ``HH:MM:SS`` to ``time`` for ``Time``, numbers or numeric
    strings to ``decimal.Decimal`` for ``Decimal``, ints to floats for FLOAT32/FLOAT64,
    integer strings to ints for INT8..INT64, base64 text to bytes for BYTES, objects to nested
    structs or maps, lists to arrays. A field missing from a record maps to null.

    Args:
        schema: the STRUCT schema records map onto (the first version when evolving).
        unknown_fields: what a record field the schema lacks does: ``"error"`` raises
            :class:`DataException` naming it, ``"ignore"`` leaves it out, ``"evolve"`` makes a
            new schema version with it (see :meth:`evolve`).
    """

    def __init__(self, schema: Schema, *, unknown_fields: UnknownFields = "error") -> None:
        if schema.type is not SchemaType.STRUCT:
            raise DataException(f"A JsonRecordMapper needs a STRUCT schema, not {schema!r}")
        if unknown_fields not in ("error", "ignore", "evolve"):
            raise DataException(
                f"unknown_fields must be error, ignore or evolve: {unknown_fields!r}"
            )
        self._schema = schema
        self._unknown = unknown_fields

    @property
    def schema(self) -> Schema:
        """The current schema (a later version after an evolution)."""
        return self._schema

    def to_struct(self, record: Mapping[str, Any]) -> Struct:
        """The record as a Struct of the current schema (evolved first when allowed).

        Raises:
            DataException: a value does not fit its field's schema (naming the field path and
                the value), a required field is null, or an unknown field is not allowed.
        """
        try:
            return self._struct(self._schema, record, "")
        except DataException:
            if self._unknown != "evolve" or not self.evolve(record):
                raise
        return self._struct(self._schema, record, "")

    def evolve(self, record: Mapping[str, Any]) -> bool:
        """Add the record's new fields to the schema; True when a new version was made.

        The new version (the current one + 1) appends the new fields as optional fields, with
        types inferred from this record (nested structs gain fields the same way); existing
        fields are unchanged.

        Raises:
            DataException: an existing field's value has a type the field cannot hold, naming the
                field, the schema's type and the record's.
        """
        evolved = self._evolved(self._schema, record, "")
        if evolved is None:
            return False
        version = (self._schema.version or 0) + 1
        fields = [(f.name, f.schema) for f in evolved.fields]
        self._schema = _rebuild_struct(evolved, fields, evolved.name, version)
        return True

    def _evolved(self, schema: Schema, value: Any, path: str) -> Schema | None:
        if value is None:
            return None
        if schema.type is SchemaType.STRUCT and isinstance(value, Mapping):
            fields: list[tuple[str, Schema]] = []
            changed = False
            for f in schema.fields:
                sub = self._evolved(f.schema, value.get(f.name), _join(path, f.name))
                fields.append((f.name, f.schema if sub is None else sub))
                changed = changed or sub is not None
            for key, item in value.items():
                if schema.field(str(key)) is None:
                    fields.append((str(key), _infer_value(item, _join(path, str(key)))))
                    changed = True
            if not changed:
                return None
            if schema.default_value is not None:
                raise DataException(
                    f'Cannot add fields to struct "{path}" with a default', field=path
                )
            return _rebuild_struct(schema, fields, schema.name, schema.version)
        if schema.type is SchemaType.ARRAY and isinstance(value, (list, tuple)):
            element, changed = schema.value_schema, False
            for index, item in enumerate(value):
                sub = self._evolved(element, item, f"{path}[{index}]")
                if sub is not None:
                    element, changed = sub, True
            return _rebuild_array(schema, element) if changed else None
        try:
            self._convert(schema, value, path, ignore_unknown=True)
        except DataException as exc:
            raise DataException(
                f'Field "{path}" changed type incompatibly: the schema has {_describe(schema)}, '
                f"the record has {_describe(_infer_value(value, path))} ({_show(value)})",
                field=path,
            ) from exc
        return None

    def _struct(
        self, schema: Schema, record: Any, path: str, *, ignore_unknown: bool = False
    ) -> Struct:
        if not isinstance(record, Mapping):
            raise _misfit(schema, record, path)
        ignore_unknown = ignore_unknown or self._unknown == "ignore"
        if not ignore_unknown:
            for key in record:
                if schema.field(str(key)) is None:
                    field = _join(path, str(key))
                    raise DataException(
                        f'Field "{field}" of the record is not in the schema '
                        f"({self._schema.name} version {self._schema.version})",
                        field=field,
                    )
        values = [
            self._convert(
                f.schema, record.get(f.name), _join(path, f.name), ignore_unknown=ignore_unknown
            )
            for f in schema.fields
        ]
        return Struct.from_values(schema, values)

    def _convert(self, schema: Schema, value: Any, path: str, *, ignore_unknown: bool) -> Any:
        if value is None:
            if schema.optional or schema.default_value is not None:
                return None
            raise DataException(
                f'Field "{path}" is required but the record has no value for it', field=path
            )
        logical = _LOGICAL.get(schema.name or "")
        if logical is not None:
            return logical(schema, value, path)
        stype = schema.type
        if stype is SchemaType.STRUCT:
            return self._struct(schema, value, path, ignore_unknown=ignore_unknown)
        if stype is SchemaType.ARRAY:
            if not isinstance(value, (list, tuple)):
                raise _misfit(schema, value, path)
            element = schema.value_schema
            return [
                self._convert(element, item, f"{path}[{i}]", ignore_unknown=ignore_unknown)
                for i, item in enumerate(value)
            ]
        if stype is SchemaType.MAP:
            if not isinstance(value, Mapping):
                raise _misfit(schema, value, path)
            ks, vs = schema.key_schema, schema.value_schema
            return {
                self._convert(ks, k, f"{path}.<key>", ignore_unknown=True): self._convert(
                    vs, v, _join(path, str(k)), ignore_unknown=ignore_unknown
                )
                for k, v in value.items()
            }
        return _PRIMITIVE[stype](schema, value, path)


def _integer(schema: Schema, value: Any, path: str) -> int:
    if isinstance(value, bool):
        raise _misfit(schema, value, path)
    if (isinstance(value, float) and value.is_integer()) or (
        isinstance(value, str) and _INTEGER.fullmatch(value.strip())
    ):
        value = int(value)
    if not isinstance(value, int):
        raise _misfit(schema, value, path)
    lo, hi = _INT_RANGES[schema.type]
    if not lo <= value <= hi:
        raise _misfit(schema, value, path, f" (out of range [{lo}, {hi}])")
    return value


def _float(schema: Schema, value: Any, path: str) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
    raise _misfit(schema, value, path)


def _of_type(kind: type) -> Callable[[Schema, Any, str], Any]:
    def convert(schema: Schema, value: Any, path: str) -> Any:
        if not isinstance(value, kind):
            raise _misfit(schema, value, path)
        return value

    return convert


def _bytes(schema: Schema, value: Any, path: str) -> bytes:
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, str):
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise _misfit(schema, value, path, " (not base64)") from None
    raise _misfit(schema, value, path)


def _timestamp(schema: Schema, value: Any, path: str) -> _dt.datetime:
    if isinstance(value, _dt.datetime):
        return value.astimezone(_UTC) if value.tzinfo is not None else value.replace(tzinfo=_UTC)
    if isinstance(value, str):
        parsed = parse_timestamp(value)
        if parsed is not None:
            return parsed[0]
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return _EPOCH + _dt.timedelta(microseconds=epoch_nanos(value) // 1000)
        except (OverflowError, _decimal.InvalidOperation):
            pass
    raise _misfit(schema, value, path)


def _date(schema: Schema, value: Any, path: str) -> _dt.date:
    if isinstance(value, _dt.date) and not isinstance(value, _dt.datetime):
        return value
    parsed = parse_date(value) if isinstance(value, str) else None
    if parsed is None:
        raise _misfit(schema, value, path)
    return parsed


def _time(schema: Schema, value: Any, path: str) -> _dt.time:
    m = _TIME.fullmatch(value) if isinstance(value, str) else None
    if m is not None:
        hour, minute, second, fraction = m.groups()
        try:
            micros = int((fraction or "")[:6].ljust(6, "0"))
            return _dt.time(int(hour), int(minute), int(second or 0), micros)
        except ValueError:
            pass
    raise _misfit(schema, value, path)


def _decimal_value(schema: Schema, value: Any, path: str) -> _decimal.Decimal:
    if isinstance(value, (int, float, str, _decimal.Decimal)) and not isinstance(value, bool):
        try:
            number = _decimal.Decimal(str(value).strip())
            quantum = _decimal.Decimal(1).scaleb(-Decimal.scale(schema))
            with _decimal.localcontext() as ctx:
                ctx.prec = max(len(number.as_tuple().digits) + abs(quantum.adjusted()) + 2, 28)
                ctx.traps[_decimal.Inexact] = True
                return number.quantize(quantum)
        except _decimal.DecimalException:
            pass
    raise _misfit(schema, value, path)


_PRIMITIVE: dict[SchemaType, Callable[[Schema, Any, str], Any]] = {
    SchemaType.INT8: _integer,
    SchemaType.INT16: _integer,
    SchemaType.INT32: _integer,
    SchemaType.INT64: _integer,
    SchemaType.FLOAT32: _float,
    SchemaType.FLOAT64: _float,
    SchemaType.BOOLEAN: _of_type(bool),
    SchemaType.STRING: _of_type(str),
    SchemaType.BYTES: _bytes,
}
_LOGICAL: dict[str, Callable[[Schema, Any, str], Any]] = {
    Timestamp.LOGICAL_NAME: _timestamp,
    Date.LOGICAL_NAME: _date,
    Time.LOGICAL_NAME: _time,
    Decimal.LOGICAL_NAME: _decimal_value,
}


def _infer_value(value: Any, path: str) -> Schema:
    shape = _Shape()
    shape.add(value, path)
    return shape.to_schema(path, optional=True, required=frozenset())


def _rebuild_struct(
    schema: Schema, fields: list[tuple[str, Schema]], name: str | None, version: int | None
) -> Schema:
    builder = SchemaBuilder.struct()
    if name is not None:
        builder.name(name)
    if version is not None:
        builder.version(version)
    if schema.doc is not None:
        builder.doc(schema.doc)
    builder.parameters(schema.parameters)
    for field_name, field_schema in fields:
        builder.field(field_name, field_schema)
    return builder.optional().build() if schema.optional else builder.build()


def _rebuild_array(schema: Schema, element: Schema) -> Schema:
    builder = SchemaBuilder.array(element).parameters(schema.parameters)
    if schema.name is not None:
        builder.name(schema.name)
    if schema.doc is not None:
        builder.doc(schema.doc)
    if schema.version is not None:
        builder.version(schema.version)
    return builder.optional().build() if schema.optional else builder.build()


def _describe(schema: Schema) -> str:
    if schema.name in _LOGICAL:
        short = (schema.name or "").rsplit(".", 1)[-1]
        if short == "Decimal":
            return f"Decimal(scale={Decimal.scale(schema)})"
        return short
    if schema.type is SchemaType.ARRAY:
        return f"ARRAY<{_describe(schema.value_schema)}>"
    if schema.type is SchemaType.MAP:
        return f"MAP<{_describe(schema.key_schema)}, {_describe(schema.value_schema)}>"
    return schema.type.name


def _misfit(schema: Schema, value: Any, path: str, why: str = "") -> DataException:
    return DataException(
        f'Field "{path}": {_show(value)} ({type(value).__name__}) does not fit '
        f"{_describe(schema)}{why}",
        field=path,
    )


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name
