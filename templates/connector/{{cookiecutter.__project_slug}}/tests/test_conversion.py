"""Record conversion: the external system's data to Connect data and back."""

from __future__ import annotations
{% if cookiecutter.kind != 'source' %}
import datetime as dt
import decimal
{% endif %}
import pytest
from cdk import (
    DataException,
{%- if cookiecutter.kind != 'source' %}
    Date,
    Decimal,
{%- endif %}
    Schema,
{%- if cookiecutter.kind != 'source' %}
    SchemaBuilder,
    Struct,
{%- endif %}
{%- if cookiecutter.kind != 'source' %}
    Time,
    Timestamp,
{%- endif %}
)

from {{ cookiecutter.package_name }}._jsonl import (
{%- if cookiecutter.kind != 'sink' %}
    InferredSchema,
{%- endif %}
{%- if cookiecutter.kind != 'source' %}
    from_json,
    merged_schema,
{%- endif %}
    parse_line,
{%- if cookiecutter.kind != 'source' %}
    schema_from_json,
    schema_to_json,
    to_json,
{%- endif %}
)


def test_a_line_that_is_not_a_json_object_names_where_it_is() -> None:
    with pytest.raises(DataException, match=r"in\.jsonl:3: not valid JSON"):
        parse_line(b"{not json\n", "in.jsonl:3")
    with pytest.raises(DataException, match="expected a JSON object, found list"):
        parse_line(b"[1, 2]\n", "in.jsonl:4")
{%- if cookiecutter.kind != 'sink' %}


def test_inferred_schema_types_and_values() -> None:
    schema = InferredSchema("demo.orders")
    line = {"id": 1, "item": "tea", "price": 4.2, "paid": True, "tags": ["a"], "gone": None}
    schema.observe(line)
    value = schema.to_struct(line, "orders.jsonl:1")
    assert [f.name for f in value.schema.fields] == ["id", "item", "price", "paid", "tags"]
    assert value.schema.field("id").schema == Schema.OPTIONAL_INT64_SCHEMA  # type: ignore[union-attr]
    assert value.get("price") == 4.2
    assert value.get("tags") == '["a"]'
    value.validate()


def test_a_new_field_makes_a_new_schema_version_with_the_old_fields_unchanged() -> None:
    schema = InferredSchema("demo.orders")
    assert schema.observe({"id": 1}) is True  # the first schema
    first = schema.schema
    assert schema.observe({"id": 2}) is False
    assert schema.observe({"id": 2, "note": "x"}) is True
    second = schema.schema
    assert (first.version, second.version) == (1, 2)
    assert second.field("id") == first.field("id")
    assert second.field("note").schema.optional  # type: ignore[union-attr]


def test_an_integer_is_accepted_where_a_float_was_seen() -> None:
    schema = InferredSchema("demo.orders")
    schema.observe({"price": 1.5})
    assert schema.to_struct({"price": 2}, "x:1").get("price") == 2.0


def test_a_value_of_another_type_names_file_line_and_field() -> None:
    schema = InferredSchema("demo.orders")
    schema.observe({"id": 1})
    with pytest.raises(DataException, match=r"orders\.jsonl:2, field 'id': expected a int64"):
        schema.to_struct({"id": "one"}, "orders.jsonl:2")
{%- endif %}
{%- if cookiecutter.kind != 'source' %}


def _every_type() -> Schema:
    return (
        SchemaBuilder.struct()
        .name("demo.Everything")
        .version(1)
        .field("id", Schema.INT64_SCHEMA)
        .field("small", Schema.OPTIONAL_INT8_SCHEMA)
        .field("ratio", Schema.OPTIONAL_FLOAT32_SCHEMA)
        .field("name", Schema.STRING_SCHEMA)
        .field("flag", Schema.OPTIONAL_BOOLEAN_SCHEMA)
        .field("blob", Schema.OPTIONAL_BYTES_SCHEMA)
        .field("amount", Decimal.builder(2).optional().build())
        .field("at", Timestamp.builder().optional().build())
        .field("day", Date.builder().optional().build())
        .field("clock", Time.builder().optional().build())
        .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).optional().build())
        .field("attrs", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).optional())
        .field(
            "inner",
            SchemaBuilder.struct().field("x", Schema.OPTIONAL_STRING_SCHEMA).optional().build(),
        )
        .build()
    )


def test_every_type_round_trips_exactly_through_json() -> None:
    schema = _every_type()
    inner_schema = schema.field("inner").schema  # type: ignore[union-attr]
    value = (
        Struct(schema)
        .put("id", 7)
        .put("small", -3)
        .put("ratio", 0.5)
        .put("name", "tea ☕")
        .put("flag", True)
        .put("blob", b"\x00\xff")
        .put("amount", decimal.Decimal("12.30"))
        .put("at", dt.datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=dt.timezone.utc))
        .put("day", dt.date(2026, 1, 2))
        .put("clock", dt.time(3, 4, 5, 678000))
        .put("tags", ["a", "b"])
        .put("attrs", {"k": 1})
        .put("inner", Struct(inner_schema).put("x", "y"))
    )
    encoded = to_json(schema, value)
    assert encoded["amount"] == "12.30"
    assert encoded["at"] == "2026-01-02T03:04:05.678Z"
    back = from_json(schema, encoded)
    assert back == value
    assert back.get("amount").as_tuple().exponent == -2  # the scale is kept


def test_schemas_round_trip_through_their_json_form() -> None:
    schema = _every_type()
    assert schema_from_json(schema_to_json(schema)) == schema


def _struct(*fields: tuple[str, Schema], version: int = 1) -> Schema:
    builder = SchemaBuilder.struct().name("demo.Row").version(version)
    for name, field_schema in fields:
        builder.field(name, field_schema)
    return builder.build()


ID = ("id", Schema.INT64_SCHEMA)
NOTE = ("note", Schema.OPTIONAL_STRING_SCHEMA)


def test_a_new_file_takes_the_record_schema() -> None:
    record = _struct(ID)
    assert merged_schema(None, record, add_fields=True) == record


def test_an_added_optional_field_extends_the_file_schema() -> None:
    merged = merged_schema(_struct(ID), _struct(ID, NOTE, version=2), add_fields=True)
    assert [f.name for f in merged.fields] == ["id", "note"]
    assert merged.version == 2


def test_an_added_field_is_refused_when_evolution_is_off() -> None:
    with pytest.raises(DataException, match=r"schema\.evolution=none"):
        merged_schema(_struct(ID), _struct(ID, NOTE), add_fields=False)


def test_an_older_schema_keeps_the_file_schema() -> None:
    current = _struct(ID, NOTE)
    assert merged_schema(current, _struct(ID), add_fields=True) == current


def test_a_changed_type_is_refused_naming_the_field() -> None:
    changed = _struct(("id", Schema.STRING_SCHEMA))
    with pytest.raises(DataException, match="field 'id' changed type from INT64 to STRING"):
        merged_schema(_struct(ID), changed, add_fields=True)


def test_a_missing_required_field_is_refused() -> None:
    with pytest.raises(DataException, match="field 'id' is required by the file but missing"):
        merged_schema(_struct(ID, NOTE), _struct(NOTE), add_fields=True)
{%- endif %}
