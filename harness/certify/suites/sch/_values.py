"""Comparing values exactly: both sides reduced to nested dicts and lists of atoms."""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import math
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cdk.data import (
    Date,
    Decimal,
    Field,
    Schema,
    SchemaType,
    Struct,
    Time,
    Timestamp,
)

__all__: list[str] = []


@dataclass(frozen=True)
class _Atom:
    """A leaf value: ``key`` is what is compared, ``text`` how it is shown."""

    key: tuple[Any, ...]
    text: str = field(compare=False)

    def matches(self, other: object) -> bool:
        if not isinstance(other, _Atom):
            return False
        if self.key[0] == "float32" and other.key[0] == "number":
            return bool(_float32(other.key[1]) == self.key[1])  # JSON reads FLOAT32 as double
        return self.key == other.key


_ABSENT = _Atom(("absent",), "nothing (the field is missing)")


def _other(value: Any) -> _Atom:
    return _Atom(("other", type(value).__name__, repr(value)), _shown(value))


def _shown(value: Any) -> str:
    return f"{value!r:.200} ({type(value).__name__})"


def _canon(schema: Schema | None, value: Any) -> Any:
    """``value`` read in ``schema`` as nested dicts and lists of :class:`_Atom` (None for null).

    Without a schema, the value is plain data (what JSON without schemas reads back).
    """
    if value is None and schema is not None:
        value = schema.default_value  # converters write a null field with a default as it
    if value is None:
        return None
    if schema is None:
        return _canon_plain(value)
    logical = schema.name
    if logical == Decimal.LOGICAL_NAME:
        if not isinstance(value, decimal.Decimal):
            return _other(value)
        scale, declared = _scale(value), schema.parameters.get(Decimal.SCALE_FIELD)
        note = "" if str(scale) == declared else f", but the schema's scale is {declared}"
        return _Atom(("decimal", value, scale), f"{value!r} (scale {scale}{note})")
    if logical == Timestamp.LOGICAL_NAME:
        if not isinstance(value, dt.datetime):
            return _other(value)
        return _Atom(("timestamp", _millis(value)), f"the Timestamp {value.isoformat()}")
    if logical == Date.LOGICAL_NAME:
        if not isinstance(value, dt.date) or isinstance(value, dt.datetime):
            return _other(value)
        return _Atom(("date", value), f"the Date {value.isoformat()}")
    if logical == Time.LOGICAL_NAME:
        if not isinstance(value, dt.time):
            return _other(value)
        return _Atom(("time", _time_millis(value)), f"the Time {value.isoformat()}")
    kind = schema.type
    if kind is SchemaType.STRUCT:
        if not isinstance(value, (Struct, Mapping)):
            return _other(value)
        return {f.name: _struct_field(value, f) for f in schema.fields}
    if kind is SchemaType.ARRAY:
        if not isinstance(value, (list, tuple)):
            return _other(value)
        return [_canon(schema.value_schema, v) for v in value]
    if kind is SchemaType.MAP:
        if not isinstance(value, Mapping):
            return _other(value)
        return {
            repr(_canon(schema.key_schema, k)): _canon(schema.value_schema, v)
            for k, v in value.items()
        }
    return _canon_primitive(kind, value)


def _struct_field(value: Struct | Mapping[str, Any], f: Field) -> Any:
    if isinstance(value, Struct):
        return _canon(f.schema, value.get(f.name)) if value.schema.field(f.name) else _ABSENT
    return _canon(f.schema, value[f.name]) if f.name in value else _ABSENT


def _canon_primitive(kind: SchemaType, value: Any) -> _Atom:
    if kind is SchemaType.BYTES:
        if not isinstance(value, (bytes, bytearray, memoryview)):
            return _other(value)
        return _Atom(("bytes", bytes(value)), repr(bytes(value)))
    if kind in (SchemaType.FLOAT32, SchemaType.FLOAT64):
        if not _is_number(value):
            return _other(value)
        number = _float32(value) if kind is SchemaType.FLOAT32 else float(value)
        # -0.0 == 0.0 in Python: the sign of a zero is compared on its own
        sign = math.copysign(1.0, number) if number == 0.0 else 1.0
        return _Atom(("float", "nan" if math.isnan(number) else number, sign), repr(value))
    expected: type = {SchemaType.BOOLEAN: bool, SchemaType.STRING: str}.get(kind, int)
    if type(value) is not expected and not (expected is int and _is_int(value)):
        return _other(value)
    return _Atom((kind.name, value), repr(value))


def _canon_plain(value: Any) -> Any:
    """Plain (schemaless) data as atoms; numbers compare by value, bytes as their base64."""
    if value is None:
        return None
    if isinstance(value, Struct):
        return _canon_json(value.schema, value)
    if isinstance(value, bool):
        return _Atom(("bool", value), repr(value))
    if _is_number(value):
        number = "nan" if isinstance(value, float) and math.isnan(value) else value
        return _Atom(("number", number), repr(value))
    if isinstance(value, str):
        return _Atom(("string", value), repr(value))
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _canon_plain(base64.b64encode(bytes(value)).decode("ascii"))
    if isinstance(value, Mapping):
        if all(isinstance(k, str) for k in value):
            return {k: _canon_plain(v) for k, v in value.items()}
        return [[_canon_plain(k), _canon_plain(v)] for k, v in value.items()]
    if isinstance(value, (list, tuple)):
        return [_canon_plain(v) for v in value]
    return _other(value)


def _canon_json(schema: Schema | None, value: Any) -> Any:
    """The plain data a JsonConverter without schemas (decimal.format=NUMERIC) gives back."""
    if value is None and schema is not None:
        value = schema.default_value
    if value is None or schema is None:
        return _canon_plain(value)
    logical = schema.name
    if logical == Decimal.LOGICAL_NAME and isinstance(value, decimal.Decimal):
        return _canon_plain(float(value))
    if logical == Timestamp.LOGICAL_NAME and isinstance(value, dt.datetime):
        return _canon_plain(_millis(value))
    if logical == Date.LOGICAL_NAME and isinstance(value, dt.date):
        return _canon_plain(Date.from_logical(schema, value))
    if logical == Time.LOGICAL_NAME and isinstance(value, dt.time):
        return _canon_plain(_time_millis(value))
    kind = schema.type
    if kind is SchemaType.STRUCT and isinstance(value, Struct):
        return {f.name: _canon_json(f.schema, value.get(f.name)) for f in schema.fields}
    if kind is SchemaType.ARRAY and isinstance(value, (list, tuple)):
        return [_canon_json(schema.value_schema, v) for v in value]
    if kind is SchemaType.MAP and isinstance(value, Mapping):
        if schema.key_schema.type is SchemaType.STRING:
            return {k: _canon_json(schema.value_schema, v) for k, v in value.items()}
        return [
            [_canon_json(schema.key_schema, k), _canon_json(schema.value_schema, v)]
            for k, v in value.items()
        ]
    if kind is SchemaType.FLOAT32 and _is_number(value):
        return _Atom(("float32", _float32(value)), repr(value))
    return _canon_plain(value)


def _difference(
    sent: Any, got: Any, path: str, verb: str = "got back", gave: str = "sent"
) -> str | None:
    """The first difference between two reduced values, naming the field; None if equal.

    ``gave`` says what produced ``sent`` (``sent``, ``wrote``), ``verb`` what produced ``got``.
    """
    if isinstance(sent, dict) and isinstance(got, dict):
        for key, item in sent.items():
            inner = f"{path}.{key}"
            if key not in got:
                return f"{inner}: {gave} {_text(item)}, {verb} nothing (the field is missing)"
            found = _difference(item, got[key], inner, verb, gave)
            if found is not None:
                return found
        extra = sorted(set(got) - set(sent))
        return f"{path}: {verb} fields that were not {gave}: {extra}" if extra else None
    if isinstance(sent, list) and isinstance(got, list):
        if len(sent) != len(got):
            return f"{path}: {gave} {len(sent)} elements, {verb} {len(got)}"
        for index, (a, b) in enumerate(zip(sent, got, strict=True)):
            found = _difference(a, b, f"{path}[{index}]", verb, gave)
            if found is not None:
                return found
        return None
    if sent is None and got is None:
        return None
    if isinstance(sent, _Atom) and sent.matches(got):
        return None
    return f"{path}: {gave} {_text(sent)}, {verb} {_text(got)}"


def _text(reduced: Any) -> str:
    if reduced is None:
        return "null"
    if isinstance(reduced, _Atom):
        return reduced.text
    if isinstance(reduced, dict):
        return f"a map or struct with {sorted(reduced)}"
    return f"a list of {len(reduced)}"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _float32(value: float) -> float:
    try:
        return float(struct.unpack("<f", struct.pack("<f", value))[0])
    except OverflowError:
        return math.copysign(math.inf, value)


def _scale(value: decimal.Decimal) -> int:
    exponent = value.as_tuple().exponent
    return -exponent if isinstance(exponent, int) else 0


def _millis(value: dt.datetime) -> int:
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.timezone.utc)  # naive is UTC, as in cdk.data
    delta = value - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def _time_millis(value: dt.time) -> int:
    return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000
