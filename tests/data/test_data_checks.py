"""The validation compiled per schema (cdk.data._checks) against the full validation.

The full validation (``cdk.data._schema._validate``, Kafka's ``ConnectSchema.validateValue``)
is the reference: a compiled check may answer "not sure" (then the full validation runs and
words the error), but it must never accept a value the full validation rejects, and what
``validate_value``, ``Struct.put`` and ``Struct.validate`` reject, and with which message, must
be exactly what the full validation alone gives.
"""

from __future__ import annotations

import datetime as dt
import decimal
import enum
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cdk.data import Date, Decimal, Schema, SchemaBuilder, SchemaType, Struct, Time, Timestamp
from cdk.data._checks import compile_check, compile_fields_check
from cdk.data._schema import _validate, validate_value
from cdk.errors import DataException
from harness.strategies import schema_and_value, schemas, struct_schemas, values_for

_UTC = dt.timezone.utc


class _Int(int):
    """An int subclass: the full validation accepts it, the compiled check defers."""


class _Color(enum.IntEnum):
    RED = 1


_OTHER = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()

# Values of every kind, most of them wrong for any given schema.
_ZOO = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([-(2**63) - 1, 2**63, -129, 128, -32769, 32768, 2**31, -(2**31) - 1]),
    st.floats(),
    st.text(max_size=5),
    st.binary(max_size=5),
    st.binary(max_size=5).map(bytearray),
    st.binary(max_size=5).map(memoryview),
    st.decimals(allow_nan=False, places=2),
    st.dates(),
    st.datetimes(),
    st.datetimes(timezones=st.just(_UTC)),
    st.times(),
    st.just(_Int(5)),
    st.just(_Color.RED),
    st.just(Struct(_OTHER).put("a", 1)),
    st.lists(st.integers(-3, 3), max_size=3),
    st.lists(st.integers(-3, 3), max_size=3).map(tuple),
    st.dictionaries(st.text(max_size=2), st.integers(-3, 3), max_size=2),
    st.dictionaries(st.integers(-3, 3), st.text(max_size=2), max_size=2),
)


def _reference_error(schema: Schema, value: Any, field: str | None = None) -> str | None:
    """The full validation's verdict: None (valid) or its message."""
    location = "value" if field is None else f'field: "{field}"'
    try:
        _validate(schema, value, location, field)
    except DataException as exc:
        return str(exc)
    return None


def _error(call: Any) -> str | None:
    try:
        call()
    except DataException as exc:
        return str(exc)
    return None


def _mutated(draw: Any, value: Any) -> Any:
    """``value`` with one nested value (a struct field, an element, a map value) replaced."""
    if isinstance(value, Struct) and value.schema.fields and draw(st.booleans()):
        copy = Struct._trusted(value.schema, list(value._values))
        index = draw(st.integers(0, len(copy._values) - 1))
        copy._values[index] = _mutated(draw, copy._values[index])
        return copy
    if isinstance(value, list) and value and draw(st.booleans()):
        copy = list(value)
        index = draw(st.integers(0, len(copy) - 1))
        copy[index] = _mutated(draw, copy[index])
        return copy
    if isinstance(value, dict) and value and draw(st.booleans()):
        copy = dict(value)
        key = draw(st.sampled_from(sorted(copy, key=repr)))
        copy[key] = _mutated(draw, copy[key])
        return copy
    return draw(_ZOO)


@st.composite
def _schema_and_any_value(draw: Any) -> tuple[Schema, Any]:
    schema = draw(schemas(max_depth=2))
    valid = draw(values_for(schema, allow_nan=True, allow_infinity=True))
    if draw(st.integers(0, 3)) == 0:
        return schema, valid
    return schema, _mutated(draw, valid)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(_schema_and_any_value())
def test_validate_value_rejects_exactly_what_the_full_validation_rejects(case: Any) -> None:
    schema, value = case
    expected = _reference_error(schema, value)
    if compile_check(schema)(value):
        assert expected is None, f"compiled check accepted {value!r}: {expected}"
    assert _error(lambda: validate_value(schema, value)) == expected
    named = _reference_error(schema, value, "f")
    assert _error(lambda: validate_value(schema, value, "f")) == named


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(schema_and_value(max_depth=2, allow_nan=True, allow_infinity=True))
def test_the_values_connectors_build_take_the_compiled_path(sv: Any) -> None:
    """Valid values of the exact Python types are accepted without the full validation."""
    assert compile_check(sv.schema)(sv.value)
    if sv.schema.type is SchemaType.STRUCT and sv.value is not None:
        assert compile_fields_check(sv.schema)(sv.value._values)


@st.composite
def _struct_with_one_field_set(draw: Any) -> tuple[Struct, str, Any]:
    schema = draw(struct_schemas(max_depth=2))
    struct = draw(values_for(schema))
    field = draw(st.sampled_from(schema.fields))
    valid = draw(values_for(field.schema))
    value = valid if draw(st.booleans()) else _mutated(draw, valid)
    return struct, field.name, value


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(_struct_with_one_field_set())
def test_struct_put_and_validate_reject_what_the_full_validation_rejects(case: Any) -> None:
    struct, name, value = case
    field = struct.schema.field(name)
    assert field is not None
    expected = _reference_error(field.schema, value, name)
    before = list(struct._values)
    assert _error(lambda: struct.put(name, value)) == expected
    if expected is not None:
        assert struct._values == before  # a rejected value is not stored
    # validate() over a value list set behind put's back: the full loop's verdict
    raw = Struct._trusted(struct.schema, list(before))
    raw._values[field.index] = value
    reference = None
    for f, v in zip(raw.schema.fields, raw._values, strict=True):
        if v is None and f.schema.default_value is not None:
            continue
        reference = _reference_error(f.schema, v, f.name)
        if reference is not None:
            break
    assert _error(raw.validate) == reference


@pytest.mark.parametrize(
    ("schema", "value", "message"),
    [
        (
            Schema.INT8_SCHEMA,
            128,
            "Invalid Python object for schema with type INT8: class int (128 is out of range "
            '[-128, 127]) for field: "f"',
        ),
        (
            Schema.INT64_SCHEMA,
            True,
            'Invalid Python object for schema with type INT64: class bool for field: "f"',
        ),
        (
            Schema.STRING_SCHEMA,
            None,
            'Invalid value: null used for required field: "f", schema type: STRING',
        ),
        (
            Date.SCHEMA,
            dt.datetime(2024, 1, 1),
            'Invalid Python object for schema "org.apache.kafka.connect.data.Date" with type '
            'INT32: class datetime (a Date value must be a datetime.date) for field: "f"',
        ),
        (
            Decimal.schema(2),
            1.5,
            'Invalid Python object for schema "org.apache.kafka.connect.data.Decimal" with type '
            'BYTES: class float for field: "f"',
        ),
    ],
)
def test_put_messages_name_the_field(schema: Schema, value: Any, message: str) -> None:
    struct = Struct(SchemaBuilder.struct().field("f", schema).build())
    with pytest.raises(DataException) as info:
        struct.put("f", value)
    assert str(info.value) == message
    assert info.value.field == "f"


def test_values_the_check_defers_are_still_accepted() -> None:
    """Subclasses, tuples, bytearrays, equal schemas: the full validation accepts them."""
    schema = (
        SchemaBuilder.struct()
        .field("i", Schema.INT32_SCHEMA)
        .field("b", Schema.BYTES_SCHEMA)
        .field("a", SchemaBuilder.array(Schema.INT8_SCHEMA))
        .field("s", _OTHER)
        .field("t", Time.SCHEMA)
        .field("ts", Timestamp.SCHEMA)
        .build()
    )
    equal = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    struct = (
        Struct(schema)
        .put("i", _Int(3))
        .put("b", bytearray(b"x"))
        .put("a", (1, 2))
        .put("s", Struct(equal).put("a", 1))
        .put("t", dt.time(1, 2))
        .put("ts", dt.datetime(2024, 1, 1, tzinfo=_UTC))
    )
    assert not compile_fields_check(schema)(struct._values)
    struct.validate()


def test_a_default_set_after_the_schema_was_built_is_seen() -> None:
    """Transforms set a new schema's default just after building it (SetSchemaMetadata)."""
    child = SchemaBuilder.int32().build()
    parent = SchemaBuilder.struct().field("c", child).build()
    struct = Struct._trusted(parent, [None])
    with pytest.raises(DataException):
        struct.validate()
    child.default_value = 7
    struct.validate()  # a None field with a default is valid, the check compiled before or not


def test_decimal_subclass_and_exact_decimal() -> None:
    schema = Decimal.schema(2)
    assert compile_check(schema)(decimal.Decimal("1.50"))
    assert not compile_check(schema)(1.5)


@pytest.mark.parametrize(
    "stype", [SchemaType.INT8, SchemaType.INT16, SchemaType.INT32, SchemaType.INT64]
)
def test_integer_bounds(stype: SchemaType) -> None:
    bits = {SchemaType.INT8: 8, SchemaType.INT16: 16, SchemaType.INT32: 32, SchemaType.INT64: 64}
    lo, hi = -(2 ** (bits[stype] - 1)), 2 ** (bits[stype] - 1) - 1
    schema = Schema(stype)
    for value in (lo - 1, lo, 0, hi, hi + 1, 1.0, True):
        valid = _reference_error(schema, value) is None
        assert compile_check(schema)(value) is valid, value


@st.composite
def _struct_values(draw: Any) -> tuple[Schema, list[Any]]:
    schema = draw(struct_schemas(max_depth=2))
    values = []
    for f in schema.fields:
        valid = draw(values_for(f.schema))
        values.append(valid if draw(st.integers(0, 4)) else _mutated(draw, valid))
    return schema, values


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(_struct_values())
def test_from_values_is_putting_each_value_in_turn(case: Any) -> None:
    schema, values = case
    by_put = Struct(schema)
    expected = None
    for f, value in zip(schema.fields, values, strict=True):
        expected = _error(lambda f=f, value=value: by_put.put(f.name, value))
        if expected is not None:
            break
    built: list[Struct] = []
    assert _error(lambda: built.append(Struct.from_values(schema, values))) == expected
    if expected is None:
        assert built[0] == by_put
        assert built[0]._values is not values  # the caller's list is not shared


def test_from_values_needs_one_value_per_field_of_a_struct_schema() -> None:
    with pytest.raises(DataException, match="has 1 fields, but 2 values were given"):
        Struct.from_values(_OTHER, [1, 2])
    with pytest.raises(DataException, match="Not a struct schema"):
        Struct.from_values(Schema.INT32_SCHEMA, [1])
    with pytest.raises(DataException) as info:
        Struct.from_values(_OTHER, ["x"])
    assert info.value.field == "a"
    assert Struct.from_values(_OTHER, iter([7])).get("a") == 7


def test_a_builder_is_not_a_struct_schema() -> None:
    builder = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA)
    for make in (lambda: Struct(builder), lambda: Struct.from_values(builder, [1])):  # type: ignore[arg-type]
        with pytest.raises(DataException, match="Not a struct schema"):
            make()
