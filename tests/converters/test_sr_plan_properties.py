"""Property tests: the compiled plans of ProtobufConverter, JsonSchemaConverter and AvroConverter
(the fast path, :mod:`cdk.converters._sr_plan`) give exactly what the general path gives.

For random struct schemas and values, a converter with plans and one without (``use_plans =
False``) on one ``mock://`` registry must write the same bytes and read the same schema and value
(types included: an ``int`` is not a ``float``, ``-0.0`` is not ``0.0``), or fail with the same
error; values of exact types take the plan (asserted: the plan itself answers; for Avro where the
schema has one: primitives, logical types and nested records), values of other
accepted types (a tuple for an array, an int for a float, a bytearray, a struct of an equal
schema object) and corrupted payloads fall back to the general path.
"""

from __future__ import annotations

import itertools
import os
import re
from typing import Any

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cdk.converters import AvroConverter, JsonSchemaConverter, ProtobufConverter
from cdk.data import Decimal, Schema, SchemaBuilder, SchemaType, Struct
from cdk.errors import DataException
from harness.strategies import struct_schemas, values_for

SETTINGS = settings(
    max_examples=int(os.environ.get("SR_PLAN_PROP_EXAMPLES", "60")),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    deadline=None,
)
_ids = itertools.count()

PROTOBUF_CONFIGS = [
    {},
    {"optional.for.nullables": "true"},
    {"wrapper.for.nullables": "true"},
    {"optional.for.nullables": "true", "enhanced.protobuf.schema.support": "true"},
]
JSON_SCHEMA_CONFIGS = [
    {},
    {"decimal.format": "NUMERIC"},
    {"object.additional.properties": "false"},
]
AVRO_CONFIGS = [
    {},
    {"connect.meta.data": "false"},
    {"scrub.invalid.names": "true", "enhanced.avro.schema.support": "true"},
]
CASES = (
    [(ProtobufConverter, c) for c in PROTOBUF_CONFIGS]
    + [(JsonSchemaConverter, c) for c in JSON_SCHEMA_CONFIGS]
    + [(AvroConverter, c) for c in AVRO_CONFIGS]
)
IDS = [
    f"{cls.__name__}-{'-'.join(f'{k}={v}' for k, v in c.items()) or 'defaults'}" for cls, c in CASES
]


def pair(cls: type[Any], configs: dict[str, str]) -> tuple[Any, Any]:
    """A converter with plans and one without, on one fresh mock registry."""
    registry = SchemaRegistryClient.new_client({"url": f"mock://plan-{next(_ids)}"})
    made = []
    for plans in (True, False):
        conv = cls(registry)
        conv.use_plans = plans
        conv.configure({"schema.registry.url": "mock://unused", **configs}, False)
        made.append(conv)
    return made[0], made[1]


def same(a: Any, b: Any) -> bool:
    """Equal, types included (``1`` is not ``1.0``, ``-0.0`` not ``0.0``), through containers."""
    if isinstance(a, Struct) and isinstance(b, Struct):
        return (
            a.schema == b.schema
            and type(a) is type(b)
            and all(same(x, y) for x, y in zip(a._values, b._values, strict=True))
        )
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if type(a) is not type(b):
        return False
    return repr(a) == repr(b) if isinstance(a, float) else bool(a == b)


def outcome(fn: Any) -> tuple[str, Any]:
    try:
        return "ok", fn()
    except DataException as exc:
        # fastavro's EOFError names its stream object ("<_io.BytesIO object at 0x...>")
        return "error", re.sub(r" at 0x[0-9a-f]+", " at 0x...", str(exc))


def has_bytes(schema: Schema) -> bool:
    if schema.type is SchemaType.BYTES:
        return True
    if schema.type is SchemaType.STRUCT:
        return any(has_bytes(f.schema) for f in schema.fields)
    if schema.type is SchemaType.ARRAY:
        return has_bytes(schema.value_schema)
    if schema.type is SchemaType.MAP:
        return has_bytes(schema.key_schema) or has_bytes(schema.value_schema)
    return False


def avro_plannable(schema: Schema) -> bool:
    """Whether the Avro plans cover ``schema``: primitives, logical types, nested structs."""
    if schema.type is SchemaType.STRUCT:
        return all(avro_plannable(f.schema) for f in schema.fields)
    return schema.type not in (SchemaType.ARRAY, SchemaType.MAP)


def none_for_default(schema: Schema, value: Any) -> bool:
    """Whether a ``None`` in the struct stands for a default (the Avro plan leaves those)."""
    if not isinstance(value, Struct):
        return False
    return any(
        (v is None and f.schema.default_value is not None) or none_for_default(f.schema, v)
        for f, v in zip(schema.fields, value._values, strict=True)
    )


def last_reader(conv: Any) -> tuple[bytes, Any] | None:
    """The payload start and plan the converter last read with."""
    last = conv._last_decoder
    if last is None:
        return None
    return (last[1], last[2]) if isinstance(conv, AvroConverter) else last  # type: ignore[no-any-return]


def check_read(fast: Any, slow: Any, topic: str, data: bytes) -> tuple[str, Any]:
    """Read ``data`` with both (the plan's converter twice: compile, then use); same results."""
    expected = outcome(lambda: slow.to_connect_data(topic, data))
    for _ in range(2):
        got = outcome(lambda: fast.to_connect_data(topic, data))
        assert got[0] == expected[0], (got, expected)
        if got[0] == "ok":
            assert got[1].schema == expected[1].schema
            assert same(got[1].value, expected[1].value), (got[1].value, expected[1].value)
        else:
            assert got == expected
    return expected


def round_trip(
    fast: Any, slow: Any, topic: str, schema: Schema, value: Any
) -> tuple[bytes | None, bool]:
    """Write and read ``value`` with both converters: the bytes when the write succeeded, and
    whether the read did."""
    expected = outcome(lambda: slow.from_connect_data(topic, schema, value))
    for _ in range(2):
        assert outcome(lambda: fast.from_connect_data(topic, schema, value)) == expected
    if expected[0] != "ok":
        return None, False
    data = expected[1]
    return data, check_read(fast, slow, topic, data)[0] == "ok"


@pytest.mark.parametrize(("cls", "configs"), CASES, ids=IDS)
@SETTINGS
@given(data=st.data())
def test_plan_bytes_and_values_equal_the_general_path(
    cls: type[Any], configs: dict[str, str], data: st.DataObject
) -> None:
    schema = data.draw(struct_schemas(max_depth=2))
    special = data.draw(st.booleans())  # NaN and infinities too
    value = data.draw(values_for(schema, allow_nan=special, allow_infinity=special))
    fast, slow = pair(cls, configs)
    topic = f"t{next(_ids)}"
    written, read = round_trip(fast, slow, topic, schema, value)
    if written is None:
        return
    if cls is AvroConverter and not avro_plannable(schema):
        assert fast._last_encoder is None
        return
    # the plan took these exact-typed values: it answers by itself, with the same bytes
    last = fast._last_encoder
    assert last is not None
    assert last[0] is schema
    if cls is not AvroConverter or not none_for_default(schema, value):
        assert last[2](value) == written
    reader = last_reader(fast)
    if read and (cls is not JsonSchemaConverter or not has_bytes(schema)):
        assert reader is not None
        assert written.startswith(reader[0])
        decoded = reader[1](written)
        assert decoded is not None
        assert same(decoded.value, slow.to_connect_data(topic, written).value)


def loosen(schema: Schema, value: Any, draw: Any) -> Any:
    """An equally valid value of other accepted types, where ``draw`` says so."""
    if value is None:
        return None
    if schema.type is SchemaType.STRUCT:
        values = [loosen(f.schema, value._values[f.index], draw) for f in schema.fields]
        if draw(st.booleans()):  # a struct of an equal, distinct schema object
            copy = SchemaBuilder.struct()
            if schema.name is not None:
                copy.name(schema.name)
            if schema.version is not None:
                copy.version(schema.version)
            if schema.doc is not None:
                copy.doc(schema.doc)
            if schema.parameters:
                copy.parameters(dict(schema.parameters))
            for f in schema.fields:
                copy.field(f.name, f.schema)
            if schema.optional:
                copy.optional()
            other = copy.build()
            assert other == schema
            assert other is not schema
            return Struct._trusted(other, values)
        return Struct._trusted(schema, values)
    if schema.name == Decimal.LOGICAL_NAME:
        return value
    if schema.type is SchemaType.ARRAY:
        items = [loosen(schema.value_schema, v, draw) for v in value]
        return tuple(items) if draw(st.booleans()) else items
    if schema.type in (SchemaType.FLOAT32, SchemaType.FLOAT64):
        if value == int(value) and abs(value) < 2**53 and draw(st.booleans()):
            return int(value)
        return value
    if schema.type is SchemaType.BYTES and draw(st.booleans()):
        return bytearray(value)
    return value


@pytest.mark.parametrize(("cls", "configs"), CASES, ids=IDS)
@SETTINGS
@given(data=st.data())
def test_other_accepted_types_fall_back_to_the_same_bytes(
    cls: type[Any], configs: dict[str, str], data: st.DataObject
) -> None:
    schema = data.draw(struct_schemas(max_depth=2))
    value = data.draw(values_for(schema))
    fast, slow = pair(cls, configs)
    topic = f"t{next(_ids)}"
    written = outcome(lambda: slow.from_connect_data(topic, schema, value))
    if written[0] != "ok":
        return
    assert fast.from_connect_data(topic, schema, value) == written[1]  # compiles the plan
    loose = loosen(schema, value, data.draw)
    assert outcome(lambda: fast.from_connect_data(topic, schema, loose)) == outcome(
        lambda: slow.from_connect_data(topic, schema, loose)
    )


@pytest.mark.parametrize(("cls", "configs"), CASES, ids=IDS)
@SETTINGS
@given(data=st.data())
def test_corrupt_payloads_read_as_the_general_path_reads_them(
    cls: type[Any], configs: dict[str, str], data: st.DataObject
) -> None:
    schema = data.draw(struct_schemas(max_depth=2))
    value = data.draw(values_for(schema))
    fast, slow = pair(cls, configs)
    topic = f"t{next(_ids)}"
    written = outcome(lambda: slow.from_connect_data(topic, schema, value))
    if written[0] != "ok":
        return
    good: bytes = written[1]
    check_read(fast, slow, topic, good)  # the plan is compiled and last
    start = 6 if cls is ProtobufConverter else 5
    body = bytearray(good[start:])
    for _ in range(data.draw(st.integers(1, 4))):
        edit = data.draw(st.sampled_from(["flip", "cut", "append"]))
        if edit == "flip" and body:
            i = data.draw(st.integers(0, len(body) - 1))
            body[i] = data.draw(st.integers(0, 255))
        elif edit == "cut" and body:
            del body[data.draw(st.integers(0, len(body) - 1)) :]
        else:
            body += data.draw(st.binary(min_size=1, max_size=4))
    check_read(fast, slow, topic, good[:start] + bytes(body))


def test_plans_are_used_for_the_bench_record() -> None:
    schema = (
        SchemaBuilder.struct()
        .name("bench.User")
        .field("id", Schema.INT64_SCHEMA)
        .field("name", Schema.STRING_SCHEMA)
        .field("email", Schema.OPTIONAL_STRING_SCHEMA)
        .field("score", Schema.FLOAT64_SCHEMA)
        .field("active", Schema.BOOLEAN_SCHEMA)
        .build()
    )
    struct = Struct.from_values(schema, [1, "ada", None, 1.5, True])
    for cls in (ProtobufConverter, JsonSchemaConverter, AvroConverter):
        fast, slow = pair(cls, {})
        data = fast.from_connect_data("t", schema, struct)
        assert data == slow.from_connect_data("t", schema, struct)
        assert fast._last_encoder is not None
        assert fast._last_encoder[2](struct) == data
        read = fast.to_connect_data("t", data)
        reader = last_reader(fast)
        assert reader is not None
        planned = reader[1](data)
        assert planned is not None
        assert planned.schema is read.schema
        assert same(planned.value, slow.to_connect_data("t", data).value)


@pytest.mark.parametrize("cls", [ProtobufConverter, JsonSchemaConverter, AvroConverter])
def test_alternating_schemas_and_topics_keep_their_plans(cls: type[Any]) -> None:
    a = SchemaBuilder.struct().name("A").field("id", Schema.INT64_SCHEMA).build()
    b = (
        SchemaBuilder.struct()
        .name("B")
        .field("name", Schema.STRING_SCHEMA)
        .field("ok", Schema.OPTIONAL_BOOLEAN_SCHEMA)
        .build()
    )
    records = [("ta", a, Struct.from_values(a, [7])), ("tb", b, Struct.from_values(b, ["x", True]))]
    fast, slow = pair(cls, {})
    written = [slow.from_connect_data(t, s, v) for t, s, v in records]
    for _ in range(3):
        for (topic, schema, value), data in zip(records, written, strict=True):
            assert fast.from_connect_data(topic, schema, value) == data
            last = fast._last_encoder
            assert last is not None
            assert last[0] is schema  # the plan of this schema took the record
            assert last[2](value) == data
            got = fast.to_connect_data(topic, data)
            assert same(got.value, slow.to_connect_data(topic, data).value)
            reader = last_reader(fast)
            assert reader is not None
            assert data.startswith(reader[0])
    # a distinct but equal schema object finds the plan of the equal schema
    copy = SchemaBuilder.struct().name("A").field("id", Schema.INT64_SCHEMA).build()
    value = Struct.from_values(copy, [8])
    assert fast.from_connect_data("ta", copy, value) == slow.from_connect_data("ta", copy, value)
    last = fast._last_encoder
    assert last is not None
    assert last[0] is copy
