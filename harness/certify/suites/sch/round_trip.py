"""SCH-01 to SCH-04, SCH-10, SCH-11: valid records and the converter round trips.

JSON (with and without schemas), Avro, Protobuf and JSON Schema.
"""

from __future__ import annotations

from harness.certify._checks import check
from harness.certify._context import CheckContext
from harness.certify.suites.sch._common import (
    _PROTOBUF_SETTINGS,
    _RECORDS,
    AVRO,
    JSON,
    JSON_SCHEMA,
    PROTOBUF,
    _fail_on,
)
from harness.certify.suites.sch._sink import _sink_round_trip, _sink_schemaless
from harness.certify.suites.sch._source import (
    _avro_converter,
    _emitted,
    _json_converter,
    _json_schema_converter,
    _label,
    _parts,
    _protobuf_converter,
    _schema_problem,
    _source_round_trip,
    _source_schemaless,
)

__all__: list[str] = []


@check(
    "SCH-01",
    "Every emitted record matches its key and value schemas",
    kinds=("source",),
    fix=(
        "Build keys and values with ``Struct(schema)`` on the schema the record declares, "
        "give every required field a value of its Python type (``int``, ``str``, ``bytes``, "
        "``decimal.Decimal``...), and call ``struct.validate()`` in your tests."
    ),
)
def emitted_records_match_schemas(ctx: CheckContext) -> None:
    """Every record the source emits has a key and a value valid for the schemas it declares.

    The harness writes records, polls the connector's task in-process and validates each key and
    value with ``cdk.data.validate_value`` (Kafka's ``ConnectSchema.validateValue``): the Python
    type of every field, required fields present, integers in range, a Struct built on the
    declared schema. A Struct emitted without a declared schema fails too. Such a record cannot
    be converted by any converter.
    """
    with ctx.driver() as d:
        records = _emitted(ctx, d, ctx.ids(_RECORDS))
    problems = []
    for index, record in enumerate(records):
        for part, schema, value in _parts(record):
            problem = _schema_problem(schema, value)
            if problem is not None:
                problems.append(f"{_label(d, record, index)} {part}: {problem}")
                break
    ctx.evidence("records validated", len(records))
    ctx.evidence("invalid records", len(problems))
    _fail_on(
        problems,
        len(records),
        "every emitted key and value to be valid for the schema the record declares",
    )


@check(
    "SCH-02",
    "JSON with schemas round trip keeps every value and logical type",
    capabilities=("expected_value() (source)", "read_values() (sink)"),
    fix=(
        "Use the logical types' Python values (``decimal.Decimal`` with the schema's scale, "
        "UTC ``datetime``, ``date``, ``time``) and FLOAT32 only for values that fit 32 bits; "
        "a sink must store each field so that it reads back as sent."
    ),
)
def json_round_trip(ctx: CheckContext) -> None:
    """Values survive the JsonConverter with schemas, logical types included.

    Source: every field of every emitted value must equal what the driver wrote
    (``expected_value()``); then every emitted key and value is written by a JsonConverter
    (``schemas.enable=true``) and read back, and the result must equal what was emitted
    (Decimal value and scale, Timestamp to the millisecond, Date, Time, bytes, FLOAT32 at 32
    bits). Sink: records sent with the JsonConverter (set in the connector config) must all be
    stored, with every field sent, each equal to the one sent (``read_values()``); only the
    fields the driver declares in ``unstored_fields`` may be missing, and the result names
    them with the reason. Not verified without ``expected_value()`` (source) or
    ``read_values()`` (sink).
    """
    if ctx.kind == "source":
        _source_round_trip(ctx, "JsonConverter", _json_converter)
    else:
        _sink_round_trip(ctx, JSON, {"schemas.enable": "true"}, "the JsonConverter with schemas")


@check(
    "SCH-03",
    "Schemaless JSON is handled: plain data, or a clear rejection",
    capabilities=("read_values() (sink)",),
    fix=(
        "A source's values must be representable as plain JSON. A sink that needs schemas "
        "raises a ``DataException`` saying so for a record without one, before writing "
        "anything, instead of a raw Python error."
    ),
)
def schemaless_json(ctx: CheckContext) -> None:
    """Data without schemas (JsonConverter, ``schemas.enable=false``) is handled cleanly.

    Source: every emitted key and value written without its schema must read back as its plain
    data (structs as maps, Decimal as a number, Timestamp/Date/Time as epoch numbers, bytes as
    base64); a value plain JSON cannot carry fails. Sink: schemaless records are either all
    stored (every field sent stored, but the driver's ``unstored_fields``; those plain JSON
    keeps exactly equal to the ones sent: ``read_values()``, not verified without), or the task
    fails with a ConnectException-family error that has a message (e.g. a DataException saying
    the sink needs schemas), having written nothing wrong. A raw Python error (TypeError,
    AttributeError...) fails the check.
    """
    if ctx.kind == "source":
        _source_schemaless(ctx)
    else:
        _sink_schemaless(ctx)


@check(
    "SCH-04",
    "Avro round trip keeps every value and logical type",
    capabilities=("expected_value() (source)", "read_values() (sink)"),
    fix=(
        "As for SCH-02: declare schemas Avro can carry (named structs, logical types with "
        "their parameters) and emit values that match them; a sink stores what the "
        "``AvroConverter`` gives it."
    ),
)
def avro_round_trip(ctx: CheckContext) -> None:
    """Values survive the AvroConverter (a Schema Registry ``mock://`` scope of its own).

    The comparisons of SCH-02 with ``io.confluent.connect.avro.AvroConverter``: emitted source
    values must equal what the driver wrote, and through the converter and back be unchanged
    (records without schemas are left out: Avro needs one); sink records sent in Avro must all
    be stored with every field sent. Not verified without the values, as SCH-02.
    """
    url = f"mock://{ctx.unique('certify-registry')}"
    if ctx.kind == "source":
        _source_round_trip(ctx, "AvroConverter", lambda is_key: _avro_converter(url, is_key))
    else:
        _sink_round_trip(ctx, AVRO, {"schema.registry.url": url}, "the AvroConverter")


@check(
    "SCH-10",
    "Protobuf round trip keeps every value and logical type",
    capabilities=("expected_value() (source)", "read_values() (sink)"),
    fix=(
        "As for SCH-04: declare schemas Protobuf can carry (a struct or a primitive at the "
        "root, no array nested in an array) and emit values that match them; a sink stores "
        "what the ``ProtobufConverter`` gives it (every field optional, as Confluent's)."
    ),
)
def protobuf_round_trip(ctx: CheckContext) -> None:
    """Values survive the ProtobufConverter (a Schema Registry ``mock://`` scope of its own).

    The comparisons of SCH-04 with ``io.confluent.connect.protobuf.ProtobufConverter``
    (``optional.for.nullables=true``, so a null optional field stays null): emitted source
    values must equal what the driver wrote, and through the converter and back be unchanged
    (records without schemas are left out); sink records sent in Protobuf must all be stored
    with every field sent. Not verified without the values, as SCH-02.
    """
    url = f"mock://{ctx.unique('certify-registry')}"
    settings = {"schema.registry.url": url, **_PROTOBUF_SETTINGS}
    if ctx.kind == "source":
        _source_round_trip(
            ctx,
            "ProtobufConverter",
            lambda is_key: _protobuf_converter(url, _PROTOBUF_SETTINGS, is_key),
        )
    else:
        _sink_round_trip(ctx, PROTOBUF, settings, "the ProtobufConverter")


@check(
    "SCH-11",
    "JSON Schema round trip keeps every value and logical type",
    capabilities=("expected_value() (source)", "read_values() (sink)"),
    fix=(
        "As for SCH-04: declare schemas and emit values that match them; a sink stores what "
        "the ``JsonSchemaConverter`` gives it."
    ),
)
def json_schema_round_trip(ctx: CheckContext) -> None:
    """Values survive the JsonSchemaConverter (a Schema Registry ``mock://`` scope of its own).

    The comparisons of SCH-04 with ``io.confluent.connect.json.JsonSchemaConverter``: emitted
    source values must equal what the driver wrote, and through the converter and back be
    unchanged (records without schemas are left out); sink records sent in JSON Schema must all
    be stored with every field sent. Not verified without the values, as SCH-02.
    """
    url = f"mock://{ctx.unique('certify-registry')}"
    if ctx.kind == "source":
        _source_round_trip(
            ctx, "JsonSchemaConverter", lambda is_key: _json_schema_converter(url, is_key)
        )
    else:
        _sink_round_trip(ctx, JSON_SCHEMA, {"schema.registry.url": url}, "the JsonSchemaConverter")
