"""The SCH suite: valid records, converter round trips, schemaless data and schema migration.

Source checks drive the connector in-process with :class:`~harness.certify.SourceProbe`, so they
see the exact :class:`~cdk.SourceRecord` objects (schemas and values) and put them through the
converters themselves. Sink checks run the connector on an embedded worker with the converter
under test set in the connector config, produce records encoded by the same converter, and
compare what the driver reads back (ids, and the stored fields when the driver implements
``read_values``) with what was sent.

Values are compared exactly: a Decimal must keep its value and its scale, a Timestamp its instant
to the millisecond (a naive datetime is UTC, as in :mod:`cdk.data`), bytes every byte, a FLOAT32
its 32-bit value. A failure names the record id and the first field that differs.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import math
import struct
import time
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cdk.api import SourceConnector, SourceRecord
from cdk.converters import AvroConverter, Converter, JsonConverter
from cdk.data import (
    Date,
    Decimal,
    Field,
    Schema,
    SchemaAndValue,
    SchemaBuilder,
    SchemaType,
    Struct,
    Time,
    Timestamp,
    validate_value,
)
from cdk.errors import ConnectException
from harness._driver import Delivery, SinkDriver, SourceDriver
from harness.certify._checks import CheckFailed, CheckSkipped, check
from harness.certify._context import CheckContext, WorkerHandle
from harness.certify._probe import SourceProbe
from harness.certify.suites.err import connector_error, describe_chain

__all__: list[str] = []

JSON = "org.apache.kafka.connect.json.JsonConverter"
AVRO = "io.confluent.connect.avro.AvroConverter"

#: Records per source check and per sink round trip.
_RECORDS = 40
#: Records per batch of the sink migration checks (two batches each).
_BATCH = 15
#: How long a source may take to emit what was written, and a sink to store it (or fail).
_SOURCE_TIMEOUT = 30.0
_SINK_TIMEOUT = 45.0
#: How long a batch of an incompatible schema may stay neither rejected nor stored.
_REJECT_TIMEOUT = 30.0
#: The field the newer-schema check adds.
_ADDED_FIELD = "certify_added"
#: JSON without schemas: decimals as numbers, so the plain data reads naturally.
_SCHEMALESS = {"schemas.enable": "false", "decimal.format": "NUMERIC"}


# =============================================================================================
# The checks


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
    _fail_on(
        problems,
        len(records),
        "every emitted key and value to be valid for the schema the record declares",
    )


@check(
    "SCH-02",
    "JSON with schemas round trip keeps every value and logical type",
    fix=(
        "Use the logical types' Python values (``decimal.Decimal`` with the schema's scale, "
        "UTC ``datetime``, ``date``, ``time``) and FLOAT32 only for values that fit 32 bits; "
        "a sink must store each field so that it reads back as sent."
    ),
)
def json_round_trip(ctx: CheckContext) -> None:
    """Values survive the JsonConverter with schemas, logical types included.

    Source: every emitted key and value is written by a JsonConverter (``schemas.enable=true``)
    and read back; the result must equal what was emitted (Decimal value and scale, Timestamp to
    the millisecond, Date, Time, bytes, FLOAT32 at 32 bits). Sink: records sent with the
    JsonConverter (set in the connector config) must all be stored and, when the driver has
    ``read_values``, every stored field must equal the one sent.
    """
    if ctx.kind == "source":
        _source_round_trip(ctx, "JsonConverter", _json_converter)
    else:
        _sink_round_trip(ctx, JSON, {"schemas.enable": "true"}, "the JsonConverter with schemas")


@check(
    "SCH-03",
    "Schemaless JSON is handled: plain data, or a clear rejection",
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
    stored (stored fields that plain JSON keeps exactly must equal those sent), or the task
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
    fix=(
        "As for SCH-02: declare schemas Avro can carry (named structs, logical types with "
        "their parameters) and emit values that match them; a sink stores what the "
        "``AvroConverter`` gives it."
    ),
)
def avro_round_trip(ctx: CheckContext) -> None:
    """Values survive the AvroConverter (a Schema Registry ``mock://`` scope of its own).

    The comparisons of SCH-02 with ``io.confluent.connect.avro.AvroConverter``: emitted source
    values through the converter and back must be unchanged (records without schemas are left
    out: Avro needs one); sink records sent in Avro must all be stored with the values sent.
    """
    url = f"mock://{ctx.unique('certify-registry')}"
    if ctx.kind == "source":
        _source_round_trip(ctx, "AvroConverter", lambda is_key: _avro_converter(url, is_key))
    else:
        _sink_round_trip(ctx, AVRO, {"schema.registry.url": url}, "the AvroConverter")


@check(
    "SCH-05",
    "New records carry the evolved schema after a migration",
    kinds=("source",),
    fix=(
        "Re-read the external system's schema when it may have changed (each poll, or when a "
        "row does not fit the cached schema) instead of caching it for the task's lifetime; "
        "add new columns as optional fields."
    ),
)
def source_schema_migration(ctx: CheckContext) -> None:
    """After the external system's schema gains an optional field, new records carry it.

    The harness writes records and reads them, has the driver add an optional field
    (``evolve_schema``), writes more records and reads them. Records emitted before the change
    keep the old schema; every record written after it must have a value schema with the new
    field, optional, every old field unchanged (same name and type), and a valid value. A
    connector that keeps a cached schema emits the new records without the field and fails.
    """
    ctx.require("evolve_schema")
    with ctx.driver() as d:
        before, after = ctx.ids(_BATCH), ctx.ids(_BATCH)
        d.write_records(before)
        with SourceProbe(_source_class(ctx), _source_config(ctx, d)) as probe:
            first = _collect(probe, d, before)
            added = d.evolve_schema()
            d.write_records(after)
            second = _collect(probe, d, after)
    old = [r for r in first if _record_id(d, r) in set(before)]
    new = [r for r in first + second if _record_id(d, r) in set(after)]
    old_schema = old[-1].value_schema
    problems = [
        f"{_label(d, r, i)}, emitted before the change, already has field {added!r}"
        for i, r in enumerate(old)
        if _field(r.value_schema, added) is not None
    ]
    for index, record in enumerate(new):
        problem = _evolved_problem(record.value_schema, old_schema, added) or _schema_problem(
            record.value_schema, record.value
        )
        if problem is not None:
            problems.append(f"{_label(d, record, index)}: {problem}")
    _fail_on(
        problems,
        len(old) + len(new),
        f"the records written after evolve_schema() added the optional field {added!r} to "
        "carry it in their value schema, the old fields unchanged",
    )


@check(
    "SCH-06",
    "The sink accepts a newer schema with an added optional field",
    kinds=("sink",),
    fix=(
        "When a record has an optional field the sink does not know, evolve what it stores "
        "(add the column) or ignore the field; do not fail the task."
    ),
)
def sink_accepts_newer_schema(ctx: CheckContext) -> None:
    """Records of a newer, compatible schema (one optional field added) are stored.

    The harness sends records of the driver's value schema, then records of that schema plus an
    optional STRING field. Every record of both batches must be stored, the task must stay
    RUNNING, and the stored fields (``read_values``, when the driver has it) must equal those
    sent; a sink that stores the new field must store its value.
    """
    with ctx.driver() as d:
        base = _struct_schema(d, "add")
        if base.field(_ADDED_FIELD) is not None:
            raise CheckSkipped(f"the value schema already has a field {_ADDED_FIELD!r}")
        fields = [(f.name, f.schema) for f in base.fields]
        newer = _rebuild(base, [*fields, (_ADDED_FIELD, Schema.OPTIONAL_STRING_SCHEMA)], bump=1)
        _sink_migration(ctx, d, base, newer, f"one with the added optional field {_ADDED_FIELD!r}")


@check(
    "SCH-07",
    "The sink accepts an older schema without an optional field",
    kinds=("sink",),
    fix=(
        "Store a missing optional field as null (or its default); do not require every field "
        "that the stored table has."
    ),
)
def sink_accepts_older_schema(ctx: CheckContext) -> None:
    """Records of an older, compatible schema (without the last optional field) are stored.

    The harness sends records of the driver's value schema, then records of that schema without
    its last optional field, as a producer not upgraded yet would. Every record must be stored,
    the task must stay RUNNING, the stored fields must equal those sent, and the dropped field
    must be stored as null (or its default) or not at all.
    """
    with ctx.driver() as d:
        base = _struct_schema(d, "drop")
        optional = [f for f in base.fields if f.schema.optional]
        if not optional:
            raise CheckSkipped(
                f"the value schema {_describe(base)} has no optional field to drop "
                f"(fields: {[f.name for f in base.fields]})"
            )
        gone = optional[-1]
        older = _rebuild(base, [(f.name, f.schema) for f in base.fields if f is not gone])
        _sink_migration(ctx, d, base, older, f"one without the optional field {gone.name!r}", gone)


@check(
    "SCH-08",
    "The sink rejects records of an incompatible schema",
    kinds=("sink",),
    fix=(
        "Compare each record's schema with what the sink stores and raise a ``DataException`` "
        "on an incompatible change (the runtime fails the task, or sends the record to the "
        "dead letter queue under ``errors.tolerance=all``); never coerce or store it."
    ),
)
def sink_rejects_incompatible_schema(ctx: CheckContext) -> None:
    """Records whose schema is incompatible with what the sink stores are not written.

    The harness sends records of the driver's value schema, then records where a field's type
    changed (``id`` INT64 becomes STRING ``"x<id>"``, else another required field becomes a
    STRING) or, when no field can change type, a required field is missing. The dead letter
    queue is configured (``errors.tolerance=all``). A correct sink fails its task with a
    ConnectException (e.g. a DataException) or reports the records to the dead letter queue;
    either way none of them may appear in what the driver reads back. Not applicable to sinks
    that accept any schema.
    """
    with ctx.driver() as d:
        if d.accepts_any_schema:
            raise CheckSkipped(
                f"the driver {type(d).__name__} declares accepts_any_schema: the sink stores "
                "values without a schema of its own, so no schema is incompatible with it"
            )
        base = _struct_schema(d, "change")
        change = _incompatible(base)
        if change is None:
            raise CheckSkipped(
                f"the value schema {_describe(base)} has no field whose type can change and no "
                "required field other than id"
            )
        with ctx.worker() as w:
            topic = ctx.create_topic(ctx.topic())
            dlq = ctx.unique("certify-dlq")
            good_ids, bad_ids = ctx.ids(_BATCH), ctx.ids(_BATCH)
            ctx.produce(topic, ctx.sink_records(d, good_ids, base))
            name, config = _sink_config(
                ctx,
                d,
                topic,
                JSON,
                {"schemas.enable": "true"},
                **{
                    "errors.tolerance": "all",
                    "errors.deadletterqueue.topic.name": dlq,
                    "errors.deadletterqueue.topic.replication.factor": "1",
                    "errors.deadletterqueue.context.headers.enable": "true",
                },
            )
            w.create(name, config)
            _require_stored(ctx, w, name, d, good_ids, "records of its own value schema")
            bad = [
                (_key(d, i), SchemaAndValue(change.schema, change.value(_value(d, i, base))))
                for i in bad_ids
            ]
            ctx.produce(topic, bad)
            _await_rejection(ctx, w, name, d, dlq, good_ids, len(bad_ids), change.text)


# =============================================================================================
# Sources: the connector in-process


def _source_round_trip(
    ctx: CheckContext, converter_name: str, make: Callable[[bool], Converter]
) -> None:
    """Emitted keys and values through ``make``'s converters and back must be unchanged."""
    with ctx.driver() as d:
        records = _emitted(ctx, d, ctx.ids(_RECORDS))
    converters = {"key": make(True), "value": make(False)}
    avro = converter_name == "AvroConverter"
    problems, compared = [], 0
    for index, record in enumerate(records):
        parts = list(_parts(record))
        if avro and any(schema is None and value is not None for _, schema, value in parts):
            continue  # schemaless: Avro needs a schema
        compared += 1
        for part, schema, value in parts:
            problem: str | None
            try:
                data = converters[part].from_connect_data(record.topic, schema, value)
                back = converters[part].to_connect_data(record.topic, data).value
            except Exception as exc:  # noqa: BLE001 - a converter refusing the record is the finding
                problem = f"the {converter_name} cannot convert the {part}: {_error(exc)}"
            else:
                problem = _difference(_canon(schema, value), _canon(schema, back), part)
            if problem is not None:
                problems.append(f"{_label(d, record, index)}: {problem}")
                break
    if not compared:
        raise CheckSkipped(
            f"the source emits schemaless records only: the {converter_name} needs schemas"
        )
    _fail_on(
        problems,
        compared,
        f"every emitted key and value to come back unchanged through the {converter_name} "
        "(Decimal value and scale, Timestamp to the millisecond, bytes exactly)",
    )


def _source_schemaless(ctx: CheckContext) -> None:
    """Emitted records through a JsonConverter without schemas give their plain data."""
    with ctx.driver() as d:
        records = _emitted(ctx, d, ctx.ids(_RECORDS))
    converters = {part: JsonConverter() for part in ("key", "value")}
    for part, converter in converters.items():
        converter.configure(_SCHEMALESS, part == "key")
    problems = []
    for index, record in enumerate(records):
        for part, schema, value in _parts(record):
            problem: str | None
            try:
                data = converters[part].from_connect_data(record.topic, schema, value)
                back = converters[part].to_connect_data(record.topic, data).value
            except Exception as exc:  # noqa: BLE001 - a converter refusing the record is the finding
                problem = f"the JsonConverter without schemas cannot convert the {part}: " + (
                    _error(exc)
                )
            else:
                problem = _difference(_canon_json(schema, value), _canon(None, back), part)
            if problem is not None:
                problems.append(f"{_label(d, record, index)}: {problem}")
                break
    _fail_on(
        problems,
        len(records),
        "every emitted key and value to read back from JSON without schemas as its plain data "
        "(structs as maps, Decimal as a number, Timestamp/Date/Time as epoch numbers, bytes as "
        "base64)",
    )


def _evolved_problem(schema: Schema | None, old: Schema | None, added: str) -> str | None:
    if schema is None or not _is_struct(schema):
        return f"the value schema is {_describe(schema)}, not a STRUCT that can carry {added!r}"
    names = [f.name for f in schema.fields]
    new = schema.field(added)
    if new is None:
        return f"the value schema has no field {added!r} (its fields: {names})"
    if not new.schema.optional:
        return f"the new field {added!r} is required; a field added to existing data is optional"
    for before in old.fields if old is not None and _is_struct(old) else ():
        now = schema.field(before.name)
        if now is None:
            return f"the old field {before.name!r} is gone (fields now: {names})"
        if now.schema != before.schema:
            return (
                f"the old field {before.name!r} changed from {_describe(before.schema)} to "
                f"{_describe(now.schema)}"
            )
    return None


def _source_class(ctx: CheckContext) -> type[SourceConnector]:
    cls = ctx.connector_class
    if not issubclass(cls, SourceConnector):
        raise CheckFailed("the driver's connector to be a SourceConnector", f"{cls} is not")
    return cls


def _source_config(ctx: CheckContext, d: SourceDriver) -> dict[str, str]:
    return {"name": ctx.unique("sch"), **ctx.connector_config(d, ctx.topic())}


def _emitted(ctx: CheckContext, d: SourceDriver, ids: Sequence[int]) -> list[SourceRecord]:
    """Write ``ids``, then poll the connector in-process until it emitted all of them."""
    d.write_records(ids)
    with SourceProbe(_source_class(ctx), _source_config(ctx, d)) as probe:
        return _collect(probe, d, ids)


def _collect(probe: SourceProbe, d: SourceDriver, ids: Sequence[int]) -> list[SourceRecord]:
    """Poll until every id in ``ids`` was emitted; fail at the deadline with what is missing."""
    wanted, seen = set(ids), set[Hashable]()
    records: list[SourceRecord] = []
    deadline = time.monotonic() + _SOURCE_TIMEOUT
    while not wanted <= seen:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise CheckFailed(
                f"the source to emit the {len(ids)} records written",
                f"after {_SOURCE_TIMEOUT:g}s it emitted {len(records)} records, "
                f"{len(wanted & seen)} of the ids written (missing "
                f"{_sample(sorted(wanted - seen))})",
            )
        for record in probe.poll(idle=0.5, timeout=min(remaining, 5.0)):
            records.append(record)
            seen.add(_record_id(d, record))
    return records


def _record_id(d: SourceDriver, record: SourceRecord) -> Hashable:
    try:
        return d.record_id(record.key, record.value)
    except Exception:  # noqa: BLE001 - a record without an id is named by its position instead
        return None


def _label(d: SourceDriver, record: SourceRecord, index: int) -> str:
    found = _record_id(d, record)
    return f"record id {found!r}" if found is not None else f"record #{index + 1} ({record.topic})"


def _parts(record: SourceRecord) -> Iterable[tuple[str, Schema | None, Any]]:
    yield "key", record.key_schema, record.key
    yield "value", record.value_schema, record.value


def _schema_problem(schema: Schema | None, value: Any) -> str | None:
    """Why ``value`` is not valid for ``schema`` (None when it is)."""
    if schema is None:
        if isinstance(value, Struct):
            return f"a Struct of schema {_describe(value.schema)}, but the record declares none"
        return None
    try:
        validate_value(schema, value)
    except ConnectException as exc:
        return f"{exc} (schema {_describe(schema)}, value {value!r:.200})"
    return None


def _json_converter(is_key: bool) -> Converter:
    converter = JsonConverter()
    converter.configure({"schemas.enable": "true"}, is_key)
    return converter


def _avro_converter(url: str, is_key: bool) -> Converter:
    converter = AvroConverter()
    converter.configure({"schema.registry.url": url}, is_key)
    return converter


# =============================================================================================
# Sinks: the connector on a worker


def _sink_round_trip(
    ctx: CheckContext, converter: str, settings: Mapping[str, str], what: str
) -> None:
    with ctx.driver() as d, ctx.worker() as w:
        topic = ctx.create_topic(ctx.topic())
        ids = ctx.ids(_RECORDS)
        sent = ctx.sink_records(d, ids)
        ctx.produce(topic, sent, converter=converter, converter_config=settings)
        name, config = _sink_config(ctx, d, topic, converter, settings)
        w.create(name, config)
        _require_stored(ctx, w, name, d, ids, f"records sent with {what}")
        _compare_ids(ctx, d, ids, f"records sent with {what}")
        _compare_values(d, {i: value for i, (_, value) in zip(ids, sent, strict=True)})


def _sink_schemaless(ctx: CheckContext) -> None:
    what = "records without schemas (JsonConverter, schemas.enable=false)"
    with ctx.driver() as d, ctx.worker() as w:
        topic = ctx.create_topic(ctx.topic())
        ids = ctx.ids(_RECORDS)
        sent = ctx.sink_records(d, ids)
        ctx.produce(topic, sent, converter=JSON, converter_config=_SCHEMALESS)
        name, config = _sink_config(ctx, d, topic, JSON, {"schemas.enable": "false"})
        w.create(name, config)
        trace = _await_stored(ctx, w, name, d, ids, what)
        values = {i: value for i, (_, value) in zip(ids, sent, strict=True)}
        if trace is None:
            _compare_ids(ctx, d, ids, what)
            _compare_values(d, values, schemaless=True)
            return
        expected = (
            f"{what} to be stored, or rejected with a ConnectException (e.g. a DataException) "
            "that says what is wrong, writing nothing wrong"
        )
        problem = _rejection_problem(trace)
        if problem is not None:
            raise CheckFailed(expected, problem, details=trace)
        wrong = [i for i in _read_back(d, "after the task failed") if i not in values]
        if wrong:
            raise CheckFailed(
                expected,
                f"it stored {len(wrong)} rows that are not among the ids sent (e.g. "
                f"{_sample(wrong)}) before failing with {describe_chain(trace)}",
            )
        _compare_values(d, values, schemaless=True, only_stored=True)


def _sink_migration(
    ctx: CheckContext,
    d: SinkDriver,
    base: Schema,
    second: Schema,
    what: str,
    gone: Field | None = None,
) -> None:
    """Send a batch of ``base`` records, then one of ``second``: both must be stored."""
    with ctx.worker() as w:
        topic = ctx.create_topic(ctx.topic())
        first_ids, second_ids = ctx.ids(_BATCH), ctx.ids(_BATCH)
        first = ctx.sink_records(d, first_ids, base)
        ctx.produce(topic, first)
        name, config = _sink_config(ctx, d, topic, JSON, {"schemas.enable": "true"})
        w.create(name, config)
        _require_stored(ctx, w, name, d, first_ids, "records of its own value schema")
        later = [(_key(d, i), SchemaAndValue(second, _value(d, i, second))) for i in second_ids]
        ctx.produce(topic, later)
        every = first_ids + second_ids
        _require_stored(ctx, w, name, d, every, f"records whose value schema changed to {what}")
        _compare_ids(ctx, d, every, f"records before and after the change to {what}")
        sent = {i: value for i, (_, value) in zip(every, first + later, strict=True)}
        _compare_values(d, sent, gone=dict.fromkeys(second_ids, gone) if gone else None)


def _sink_config(
    ctx: CheckContext,
    d: SinkDriver,
    topic: str,
    converter: str,
    settings: Mapping[str, str],
    **extra: str,
) -> tuple[str, dict[str, str]]:
    """A connector name, and its config with ``converter`` for keys and values."""
    config = ctx.connector_config(d, topic)
    for side in ("key", "value"):
        config[f"{side}.converter"] = converter
        config.update({f"{side}.converter.{k}": v for k, v in settings.items()})
    config.update(extra)
    return ctx.unique("sch"), config


def _await_stored(
    ctx: CheckContext, w: WorkerHandle, name: str, d: SinkDriver, ids: Sequence[int], what: str
) -> str | None:
    """Wait until every id is stored (None) or a task failed (its trace)."""
    wanted = set(ids)
    seen: dict[str, Any] = {"stored": set(), "status": {}}

    def settled() -> tuple[str] | None:
        seen["status"] = w.status(name)
        trace = _failed_trace(seen["status"])
        if trace is not None:
            return (trace,)
        seen["stored"] = set(_read_back(d, f"while waiting for the {what}"))
        return ("",) if wanted <= seen["stored"] else None

    def actual() -> str:
        missing = sorted(wanted - seen["stored"])
        return (
            f"{len(wanted) - len(missing)} of the {len(wanted)} records are stored (missing ids "
            f"{_sample(missing)}); {_brief(seen['status'])}"
        )

    (trace,) = ctx.wait_for(
        settled,
        _SINK_TIMEOUT,
        expected=f"the sink to store the {len(ids)} {what}",
        actual=actual,
        interval=0.3,
    )
    return trace or None


def _require_stored(
    ctx: CheckContext, w: WorkerHandle, name: str, d: SinkDriver, ids: Sequence[int], what: str
) -> None:
    trace = _await_stored(ctx, w, name, d, ids, what)
    if trace is not None:
        raise CheckFailed(
            f"the sink to store the {len(ids)} {what}",
            f"the task failed: {describe_chain(trace)}",
            details=trace,
        )


def _await_rejection(
    ctx: CheckContext,
    w: WorkerHandle,
    name: str,
    d: SinkDriver,
    dlq: str,
    good_ids: Sequence[int],
    bad_count: int,
    change: str,
) -> None:
    """Wait until the incompatible records are rejected (task FAILED or DLQ) or stored."""
    good = set(good_ids)
    seen: dict[str, Any] = {"status": {}, "dlq": 0}
    expected = (
        f"the {bad_count} records with {change} to be rejected (the task FAILED with a "
        "ConnectException, or the records in the dead letter queue) and none of them stored"
    )

    def wrong_rows() -> list[Hashable]:
        stored = _read_back(d, f"after the records with {change} were sent", expected=expected)
        return [i for i in stored if i not in good]

    def settled() -> str | None:
        seen["status"] = w.status(name)
        if wrong_rows():
            return "stored"
        if _failed_trace(seen["status"]) is not None:
            return "failed"
        seen["dlq"] = len(ctx.read_records(dlq, min_records=bad_count, timeout=1, idle=0.3))
        return "dlq" if seen["dlq"] >= bad_count else None

    outcome = ctx.wait_for(
        settled,
        _REJECT_TIMEOUT,
        expected=expected,
        actual=lambda: (
            f"they were neither rejected nor stored (silently dropped?): "
            f"{_brief(seen['status'])}; {seen['dlq']} in the dead letter queue"
        ),
        interval=0.3,
    )
    if outcome == "failed":
        trace = _failed_trace(seen["status"]) or ""
        problem = _rejection_problem(trace)
        if problem is not None:
            raise CheckFailed(expected, problem, details=trace)
    wrong = wrong_rows()
    if wrong:
        raise CheckFailed(
            expected,
            f"the sink stored {len(wrong)} rows of them (ids {_sample(wrong)}); "
            f"{_brief(w.status(name))}",
        )


def _read_back(d: SinkDriver, when: str, *, expected: str | None = None) -> list[Hashable]:
    try:
        return list(d.read_back())
    except Exception as exc:  # noqa: BLE001 - the sink wrote what its own driver cannot read
        raise CheckFailed(
            expected or "the sink to store only data its driver can read back",
            f"read_back() failed {when}: {_error(exc)} (the sink stored data that does not fit "
            "its own format)",
        ) from None


def _compare_ids(ctx: CheckContext, d: SinkDriver, ids: Sequence[int], what: str) -> None:
    ctx.compare_ids(
        ids,
        _read_back(d, "after the records were stored"),
        what=what,
        allow_duplicates=d.delivery is not Delivery.EXACTLY_ONCE,
    )


def _compare_values(
    d: SinkDriver,
    sent: Mapping[int, SchemaAndValue],
    *,
    schemaless: bool = False,
    only_stored: bool = False,
    gone: Mapping[int, Field | None] | None = None,
) -> None:
    """Compare the stored fields (when the driver has ``read_values``) with those sent."""
    try:
        stored = d.read_values()
    except NotImplementedError:
        return  # the ids were compared; the driver does not expose the values
    problems = []
    for record_id, value in sent.items():
        row = stored.get(record_id, stored.get(str(record_id)))
        if row is None:
            problem: str | None = None if only_stored else "not in read_values()"
        else:
            problem = _row_problem(value, row, schemaless, (gone or {}).get(record_id))
        if problem is not None:
            problems.append(f"record id {record_id}: {problem}")
    _fail_on(
        problems,
        len(sent),
        "every stored field to equal the value sent (Decimal value and scale, Timestamp to the "
        "millisecond, bytes exactly)",
    )


#: The types whose values JSON without schemas keeps exactly.
_PLAIN_TYPES = frozenset(
    {
        SchemaType.INT8,
        SchemaType.INT16,
        SchemaType.INT32,
        SchemaType.INT64,
        SchemaType.FLOAT64,
        SchemaType.BOOLEAN,
        SchemaType.STRING,
    }
)


def _row_problem(
    sent: SchemaAndValue, row: Mapping[str, Any], schemaless: bool, gone: Field | None
) -> str | None:
    schema, value = sent.schema, sent.value
    if schema is None or not _is_struct(schema) or not isinstance(value, Struct):
        return None  # a non-struct value has no fields to compare with a row's
    for f in schema.fields:
        if f.name not in row:
            continue  # a field the sink does not store
        if schemaless and (f.schema.name is not None or f.schema.type not in _PLAIN_TYPES):
            continue  # JSON without schemas does not keep its type
        expected = _canon(f.schema, value.get(f.name))
        problem = _difference(expected, _canon(f.schema, row[f.name]), f.name, "stored")
        if problem is not None:
            return problem
    if gone is None or row.get(gone.name) is None:
        return None
    if _canon(gone.schema, row[gone.name]) == _canon(gone.schema, None):
        return None  # its default
    return (
        f"{gone.name}: not in the record's schema, but {row[gone.name]!r:.200} is stored "
        "(expected null, its default, or no column)"
    )


# =============================================================================================
# Task failures


def _failed_trace(status: Mapping[str, Any]) -> str | None:
    """The trace of the failed connector or of its first failed task (None: none failed)."""
    connector = status.get("connector", {}) if status else {}
    if connector.get("state") == "FAILED":
        return str(connector.get("trace") or "the connector FAILED without a trace")
    for task in status.get("tasks", []) if status else []:
        if task.get("state") == "FAILED":
            return str(task.get("trace") or f"task {task.get('id')} FAILED without a trace")
    return None


def _rejection_problem(trace: str) -> str | None:
    """Why a task failure is not a clean rejection (a ConnectException with a message), or None."""
    if connector_error(trace) is not None:
        return None
    return (
        f"the task failed with {describe_chain(trace)}: a raw Python error, not a "
        "ConnectException-family error with a message"
    )


# =============================================================================================
# Sink schemas and values derived from the driver's


def _struct_schema(d: SinkDriver, verb: str) -> Schema:
    schema = d.value_schema()
    if not _is_struct(schema):
        raise CheckSkipped(
            f"the driver's value schema is {_describe(schema)}, not a STRUCT: there is no field "
            f"to {verb}"
        )
    return schema


def _rebuild(base: Schema, fields: Sequence[tuple[str, Schema]], *, bump: int = 0) -> Schema:
    """A struct schema like ``base`` (name, version, doc) with ``fields``."""
    builder = SchemaBuilder.struct()
    if base.name is not None:
        builder.name(base.name)
    if base.version is not None:
        builder.version(base.version + bump)
    if base.doc is not None:
        builder.doc(base.doc)
    if base.optional:
        builder.optional()
    for name, schema in fields:
        builder.field(name, schema)
    return builder.build()


def _key(d: SinkDriver, record_id: int) -> SchemaAndValue:
    return SchemaAndValue(d.key_schema(), d.key(record_id))


def _value(d: SinkDriver, record_id: int, schema: Schema) -> Struct:
    """The driver's value in ``schema``, or its value in its own schema mapped onto ``schema``."""
    try:
        value = d.value(record_id, schema)
    except Exception:  # noqa: BLE001 - a driver that only knows its own schema
        value = None
    if isinstance(value, Struct) and value.schema == schema:
        return value
    own = d.value(record_id, d.value_schema())
    out = Struct(schema)
    for f in schema.fields:
        if own.schema.field(f.name) is not None:
            out.put(f.name, own.get(f.name))
        elif f.schema.type is SchemaType.STRING:
            out.put(f.name, f"{f.name}-{record_id}")
    return out


@dataclass(frozen=True)
class _Change:
    """An incompatible variant of a schema and how to make its values."""

    schema: Schema
    text: str
    value: Callable[[Struct], Struct]


_INTEGERS = frozenset({SchemaType.INT8, SchemaType.INT16, SchemaType.INT32, SchemaType.INT64})


def _incompatible(base: Schema) -> _Change | None:
    """``base`` with a field's type changed to STRING (``id`` first), else a required field gone."""
    candidates = sorted(
        (
            f
            for f in base.fields
            if f.schema.name is None
            and f.schema.type.is_primitive
            and f.schema.type is not SchemaType.STRING
            and not f.schema.optional
        ),
        key=lambda f: f.name != "id" or f.schema.type not in _INTEGERS,
    )
    if candidates:
        changed = candidates[0]
        retyped = _rebuild(
            base,
            [(f.name, Schema.STRING_SCHEMA if f is changed else f.schema) for f in base.fields],
        )

        def as_string(value: Struct) -> Struct:
            out = Struct(retyped)
            for f in retyped.fields:
                original = value.get(f.name)
                out.put(f.name, f"x{original}" if f.name == changed.name else original)
            return out

        return _Change(
            retyped,
            f"field {changed.name!r} changed from {_describe(changed.schema)} to STRING "
            '("x<value>")',
            as_string,
        )
    required = [f for f in base.fields if not f.schema.optional and f.name != "id"]
    if not required:
        return None
    gone = required[0]
    smaller = _rebuild(base, [(f.name, f.schema) for f in base.fields if f is not gone])

    def without(value: Struct) -> Struct:
        out = Struct(smaller)
        for f in smaller.fields:
            out.put(f.name, value.get(f.name))
        return out

    return _Change(smaller, f"the required field {gone.name!r} missing", without)


# =============================================================================================
# Comparing values: both sides reduced to nested dicts and lists of atoms


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
        return _Atom(("float", "nan" if math.isnan(number) else number), repr(value))
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


def _difference(sent: Any, got: Any, path: str, verb: str = "got back") -> str | None:
    """The first difference between two reduced values, naming the field; None if equal."""
    if isinstance(sent, dict) and isinstance(got, dict):
        for key, item in sent.items():
            inner = f"{path}.{key}"
            if key not in got:
                return f"{inner}: sent {_text(item)}, {verb} nothing (the field is missing)"
            found = _difference(item, got[key], inner, verb)
            if found is not None:
                return found
        extra = sorted(set(got) - set(sent))
        return f"{path}: {verb} fields that were not sent: {extra}" if extra else None
    if isinstance(sent, list) and isinstance(got, list):
        if len(sent) != len(got):
            return f"{path}: sent {len(sent)} elements, {verb} {len(got)}"
        for index, (a, b) in enumerate(zip(sent, got, strict=True)):
            found = _difference(a, b, f"{path}[{index}]", verb)
            if found is not None:
                return found
        return None
    if sent is None and got is None:
        return None
    if isinstance(sent, _Atom) and sent.matches(got):
        return None
    return f"{path}: sent {_text(sent)}, {verb} {_text(got)}"


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


# =============================================================================================
# Wording


def _fail_on(problems: Sequence[str], total: int, expected: str) -> None:
    if problems:
        raise CheckFailed(
            expected,
            f"{len(problems)} of {total} records do not; the first: {problems[0]}",
            details="\n".join(problems[:50]),
        )


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _is_struct(schema: Schema | None) -> bool:
    return schema is not None and schema.type is SchemaType.STRUCT


def _field(schema: Schema | None, name: str) -> Field | None:
    return schema.field(name) if schema is not None and _is_struct(schema) else None


def _describe(schema: Schema | None) -> str:
    if schema is None:
        return "no schema"
    if schema.name == Decimal.LOGICAL_NAME:
        return f"Decimal(scale={schema.parameters.get(Decimal.SCALE_FIELD, '?')})"
    if schema.name in (Timestamp.LOGICAL_NAME, Date.LOGICAL_NAME, Time.LOGICAL_NAME):
        return str(schema.name).rsplit(".", 1)[-1]
    named = f" {schema.name}" if schema.name else ""
    return f"{'optional ' if schema.optional else ''}{schema.type.name}{named}"


def _sample(items: Sequence[Any], limit: int = 10) -> str:
    shown = ", ".join(repr(i) for i in items[:limit])
    return shown + (f", … ({len(items) - limit} more)" if len(items) > limit else "")


def _brief(status: Mapping[str, Any]) -> str:
    if not status:
        return "the connector is not found"
    tasks = ", ".join(f"task {t.get('id')} {t.get('state')}" for t in status.get("tasks", []))
    state = status.get("connector", {}).get("state")
    return f"connector {state}; {tasks or 'no tasks'}"
