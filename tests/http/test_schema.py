"""JSON to Connect data (cdk.http._schema): inference, mapping, evolution."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pytest

from cdk.data import Date, Decimal, Schema, SchemaBuilder, SchemaType, Struct, Time, Timestamp
from cdk.errors import DataException
from cdk.http import JsonRecordMapper, infer_schema

_UTC = dt.timezone.utc

SAMPLES: list[dict[str, Any]] = [
    {
        "id": 1,
        "name": "Ada",
        "active": True,
        "score": 1,
        "created_at": "2024-05-01T10:00:00Z",
        "birthday": "1990-12-10",
        "address": {"city": "London", "zip": "N1"},
        "tags": ["a", "b"],
        "nothing": None,
        "empty": [],
    },
    {
        "id": 2,
        "score": 2.5,
        "created_at": "2024-05-01T12:00:00.123+02:00",
        "birthday": None,
        "address": {"city": "Paris", "floor": 3},
        "tags": [],
        "items": [{"sku": "x", "qty": 1}, {"sku": "y", "price": 9.5}],
    },
]


def _field(schema: Schema, path: str) -> Schema:
    for part in path.split("."):
        found = schema.field(part)
        assert found is not None, path
        schema = found.schema
    return schema


# -- inference -------------------------------------------------------------------------------------
def test_infer_types_order_and_optionality() -> None:
    schema = infer_schema(SAMPLES, name="com.example.User", version=3)
    assert schema.type is SchemaType.STRUCT
    assert (schema.name, schema.version, schema.optional) == ("com.example.User", 3, False)
    assert [f.name for f in schema.fields] == [
        "id", "name", "active", "score", "created_at", "birthday", "address", "tags", "nothing",
        "empty", "items",
    ]  # fmt: skip
    assert _field(schema, "id") == Schema.OPTIONAL_INT64_SCHEMA
    assert _field(schema, "name") == Schema.OPTIONAL_STRING_SCHEMA
    assert _field(schema, "active") == Schema.OPTIONAL_BOOLEAN_SCHEMA
    assert _field(schema, "score") == Schema.OPTIONAL_FLOAT64_SCHEMA  # int and float mixed
    assert _field(schema, "created_at") == Timestamp.builder().optional().build()
    assert _field(schema, "birthday") == Date.builder().optional().build()
    assert _field(schema, "nothing") == Schema.OPTIONAL_STRING_SCHEMA
    address = _field(schema, "address")
    assert address.type is SchemaType.STRUCT
    assert address.optional
    assert [f.name for f in address.fields] == ["city", "zip", "floor"]
    assert _field(schema, "address.floor") == Schema.OPTIONAL_INT64_SCHEMA
    assert (
        _field(schema, "tags")
        == SchemaBuilder.array(Schema.OPTIONAL_STRING_SCHEMA).optional().build()
    )
    assert _field(schema, "empty").value_schema == Schema.OPTIONAL_STRING_SCHEMA
    item = _field(schema, "items").value_schema
    assert [(f.name, f.schema.type) for f in item.fields] == [
        ("sku", SchemaType.STRING), ("qty", SchemaType.INT64), ("price", SchemaType.FLOAT64),
    ]  # fmt: skip


def test_a_date_in_one_sample_and_not_in_another_stays_string() -> None:
    schema = infer_schema([{"d": "2024-05-01"}, {"d": "soon"}], name="s")
    assert _field(schema, "d") == Schema.OPTIONAL_STRING_SCHEMA
    mixed = infer_schema([{"d": "2024-05-01"}, {"d": "2024-05-01T10:00:00Z"}], name="s")
    assert _field(mixed, "d") == Schema.OPTIONAL_STRING_SCHEMA
    stamps = infer_schema([{"t": "2024-05-01T10:00:00Z"}, {"t": "2024-05-01 10:00"}], name="s")
    assert _field(stamps, "t").name == Timestamp.LOGICAL_NAME
    not_stamps = infer_schema(
        [{"t": "2024-05-01T10:00:00Z"}, {"t": "2024-13-01T10:00:00Z"}], name="s"
    )
    assert _field(not_stamps, "t") == Schema.OPTIONAL_STRING_SCHEMA


def test_required_fields_and_their_checks() -> None:
    schema = infer_schema(SAMPLES, name="u", required=("id", "address.city"))
    assert _field(schema, "id") == Schema.INT64_SCHEMA
    assert _field(schema, "address.city") == Schema.STRING_SCHEMA
    assert _field(schema, "address.zip").optional
    with pytest.raises(DataException, match='Required field "name" is missing or null') as info:
        infer_schema(SAMPLES, name="u", required=("name",))
    assert info.value.field == "name"
    with pytest.raises(DataException, match='Required field "birthday"'):
        infer_schema(SAMPLES, name="u", required=("birthday",))


def test_incompatible_sample_types_name_the_field() -> None:
    with pytest.raises(
        DataException, match=r'Field "a.b" has values of incompatible types: int, str'
    ):
        infer_schema([{"a": {"b": 1}}, {"a": {"b": "x"}}], name="s")
    with pytest.raises(DataException, match=r"not a JSON object"):
        infer_schema([[1, 2]], name="s")  # type: ignore[list-item]


def test_big_integers_and_empty_samples() -> None:
    schema = infer_schema([{"n": 2**70}, {"n": 1}], name="s")
    assert _field(schema, "n") == Decimal.builder(0).optional().build()
    assert JsonRecordMapper(schema).to_struct({"n": 2**70}).get("n") == decimal.Decimal(2**70)
    empty = infer_schema([], name="s")
    assert (empty.type, empty.fields, empty.name, empty.version) == (SchemaType.STRUCT, (), "s", 1)


# -- mapping ---------------------------------------------------------------------------------------
def test_to_struct_converts_values() -> None:
    mapper = JsonRecordMapper(infer_schema(SAMPLES, name="u"))
    first = mapper.to_struct(SAMPLES[0])
    first.validate()
    assert first.get("created_at") == dt.datetime(2024, 5, 1, 10, 0, tzinfo=_UTC)
    assert first.get("birthday") == dt.date(1990, 12, 10)
    assert first.get("score") == 1.0
    assert isinstance(first.get("score"), float)
    assert first.get("address").get("city") == "London"
    assert first.get("address").get("floor") is None
    assert first.get("tags") == ["a", "b"]
    second = mapper.to_struct(SAMPLES[1])
    assert second.get("created_at") == dt.datetime(2024, 5, 1, 10, 0, 0, 123000, tzinfo=_UTC)
    assert second.get("name") is None  # missing maps to null
    assert [i.get("sku") for i in second.get("items")] == ["x", "y"]
    assert isinstance(second.get("items")[0], Struct)


def test_mapping_errors_name_the_field_path_and_the_value() -> None:
    mapper = JsonRecordMapper(infer_schema(SAMPLES, name="u"))
    with pytest.raises(
        DataException, match=r"Field \"id\": 'abc' \(str\) does not fit INT64"
    ) as info:
        mapper.to_struct({"id": "abc"})
    assert info.value.field == "id"
    with pytest.raises(
        DataException, match=r'Field "address.floor": \'3rd\' \(str\) does not fit INT64'
    ):
        mapper.to_struct({"address": {"floor": "3rd"}})
    with pytest.raises(
        DataException, match=r'Field "items\[1\].qty": True \(bool\) does not fit INT64'
    ):
        mapper.to_struct({"items": [{"qty": 1}, {"qty": True}]})
    with pytest.raises(
        DataException, match=r'Field "created_at": \'yesterday\'.*does not fit Timestamp'
    ):
        mapper.to_struct({"created_at": "yesterday"})
    with pytest.raises(DataException, match=r'Field "address": \[1\] \(list\) does not fit STRUCT'):
        mapper.to_struct({"address": [1]})


def test_unknown_fields_error_ignore() -> None:
    schema = infer_schema(SAMPLES, name="u")
    with pytest.raises(
        DataException,
        match=r'Field "address.planet" of the record is not in the schema \(u version 1\)',
    ):
        JsonRecordMapper(schema).to_struct({"address": {"planet": "Mars"}})
    ignoring = JsonRecordMapper(schema, unknown_fields="ignore")
    assert ignoring.to_struct({"id": 5, "planet": "Mars"}).get("id") == 5
    assert ignoring.schema is schema


def test_declared_schema_with_every_conversion() -> None:
    declared = (
        SchemaBuilder.struct().name("com.example.Order").version(1)
        .field("id", Schema.INT32_SCHEMA)
        .field("total", Decimal.builder(2).build())
        .field("ratio", Schema.OPTIONAL_FLOAT32_SCHEMA)
        .field("at", Timestamp.SCHEMA)
        .field("day", Date.builder().optional().build())
        .field("time", Time.builder().optional().build())
        .field("blob", Schema.OPTIONAL_BYTES_SCHEMA)
        .field("attrs", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT64_SCHEMA).optional())
        .field("note", SchemaBuilder.string().optional().default_value("none"))
        .build()
    )  # fmt: skip
    mapper = JsonRecordMapper(declared)
    struct = mapper.to_struct(
        {"id": "12", "total": "10.5", "ratio": 1, "at": 1714557600000, "day": "2024-05-01",
         "time": "10:30:15.250", "blob": "aGk=", "attrs": {"a": 1}}
    )  # fmt: skip
    struct.validate()
    assert struct.get("id") == 12
    assert struct.get("total") == decimal.Decimal("10.50")
    assert struct.get("ratio") == 1.0
    assert struct.get("at") == dt.datetime(2024, 5, 1, 10, 0, tzinfo=_UTC)
    assert struct.get("day") == dt.date(2024, 5, 1)
    assert struct.get("time") == dt.time(10, 30, 15, 250000)
    assert struct.get("blob") == b"hi"
    assert struct.get("attrs") == {"a": 1}
    assert struct.get("note") == "none"  # the default
    with pytest.raises(DataException, match=r'Field "id" is required'):
        mapper.to_struct({"total": 1, "at": "2024-05-01T10:00:00Z"})
    with pytest.raises(DataException, match=r"'10.555'.*does not fit Decimal\(scale=2\)"):
        mapper.to_struct({"id": 1, "total": "10.555", "at": "2024-05-01T10:00:00Z"})
    with pytest.raises(DataException, match=r"3000000000.*does not fit INT32 \(out of range"):
        mapper.to_struct({"id": 3_000_000_000, "total": 1, "at": "2024-05-01T10:00:00Z"})
    with pytest.raises(DataException, match="not base64"):
        mapper.to_struct({"id": 1, "total": 1, "at": 0, "blob": "!!"})
    with pytest.raises(DataException, match="needs a STRUCT schema"):
        JsonRecordMapper(Schema.STRING_SCHEMA)


# -- evolution -------------------------------------------------------------------------------------
def test_evolution_appends_optional_fields_in_version_2() -> None:
    v1 = infer_schema(SAMPLES, name="com.example.User")
    mapper = JsonRecordMapper(v1, unknown_fields="evolve")
    old = mapper.to_struct(SAMPLES[0])
    assert mapper.schema is v1
    new = mapper.to_struct(
        {"id": 3, "nickname": "Al", "address": {"city": "Rome", "geo": {"lat": 1.5}}}
    )
    v2 = mapper.schema
    assert (v2.name, v2.version) == ("com.example.User", 2)
    assert [f.name for f in v2.fields] == [*(f.name for f in v1.fields), "nickname"]
    for f in v1.fields:
        if f.name != "address":
            assert v2.field(f.name) == f  # unchanged
    assert _field(v2, "nickname") == Schema.OPTIONAL_STRING_SCHEMA
    assert [f.name for f in _field(v2, "address").fields] == ["city", "zip", "floor", "geo"]
    assert _field(v2, "address.geo.lat") == Schema.OPTIONAL_FLOAT64_SCHEMA
    assert new.schema is v2
    assert new.get("nickname") == "Al"
    assert new.get("address").get("geo").get("lat") == 1.5
    # old records still map, with the new schema; their new fields are null
    again = mapper.to_struct(SAMPLES[0])
    assert again.schema is v2
    assert again.get("nickname") is None
    assert again.get("name") == old.get("name") == "Ada"
    assert mapper.evolve(SAMPLES[1]) is False
    assert mapper.evolve({"extra": [1]}) is True
    assert mapper.schema.version == 3


def test_evolution_of_array_elements_and_declared_schemas() -> None:
    declared = (
        SchemaBuilder.struct().name("d").field("id", Schema.INT64_SCHEMA).build()
    )  # no version
    mapper = JsonRecordMapper(declared)
    assert mapper.evolve({"id": 1, "lines": [{"sku": "a"}, {"sku": "b", "qty": 2}]})
    assert mapper.schema.version == 1
    assert _field(mapper.schema, "id") == Schema.INT64_SCHEMA  # required stays required
    assert mapper.evolve({"id": 1, "lines": [{"sku": "a", "qty": 1, "gift": True}]})
    element = _field(mapper.schema, "lines").value_schema
    assert [f.name for f in element.fields] == ["sku", "qty", "gift"]
    with pytest.raises(DataException, match='Field "nope" of the record is not in the schema'):
        mapper.to_struct(
            {"id": 1, "nope": 1}
        )  # evolution only when asked for: unknown_fields="error"


def test_incompatible_type_change_names_field_and_both_types() -> None:
    mapper = JsonRecordMapper(infer_schema(SAMPLES, name="u"), unknown_fields="evolve")
    with pytest.raises(
        DataException,
        match=r'Field "id" changed type incompatibly: the schema has INT64, the record has STRING',
    ) as info:
        mapper.to_struct({"id": "abc"})
    assert info.value.field == "id"
    with pytest.raises(
        DataException, match=r'"created_at".*schema has Timestamp, the record has Date'
    ):
        mapper.evolve({"created_at": "2024-05-01"})
    with pytest.raises(
        DataException, match=r'"address".*schema has STRUCT, the record has ARRAY<INT64>'
    ):
        mapper.evolve({"address": [1]})
    with pytest.raises(
        DataException, match=r'"address.city".*schema has STRING, the record has BOOLEAN'
    ):
        mapper.evolve({"address": {"city": False}, "brand_new": 1})
    assert mapper.schema.version == 1  # nothing changed by the failed evolutions
    assert mapper.to_struct({"score": 7}).get("score") == 7.0  # an int still fits FLOAT64
