"""SCH-05 to SCH-08: schema migration, for sources (evolved schemas) and sinks."""

from __future__ import annotations

from cdk.data import (
    Schema,
    SchemaAndValue,
)
from harness.certify._checks import CheckNotVerified, CheckSkipped, check
from harness.certify._context import CheckContext
from harness.certify.suites.sch._common import (
    _ADDED_FIELD,
    _BATCH,
    JSON,
    _describe,
    _fail_on,
    _field,
)
from harness.certify.suites.sch._schemas import (
    _incompatible,
    _key,
    _rebuild,
    _struct_schema,
    _value,
)
from harness.certify.suites.sch._sink import (
    _await_rejection,
    _require_stored,
    _sink_config,
    _sink_migration,
)
from harness.certify.suites.sch._source import (
    _collect,
    _evolved_problem,
    _label,
    _record_id,
    _schema_problem,
    _source_class,
    _source_config,
)

__all__: list[str] = []


@check(
    "SCH-05",
    "New records carry the evolved schema after a migration",
    capabilities=("evolve_schema()",),
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
        with ctx.probe(_source_class(ctx), _source_config(ctx, d)) as probe:
            first = _collect(probe, d, before)
            added = d.evolve_schema()
            d.write_records(after)
            second = _collect(probe, d, after)
    old = [r for r in first if _record_id(d, r) in set(before)]
    new = [r for r in first + second if _record_id(d, r) in set(after)]
    old_schema = old[-1].value_schema
    ctx.evidence("field added", added)
    ctx.evidence("records before the change", len(old))
    ctx.evidence("records after the change", len(new))
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
    capabilities=("read_values()",),
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
    RUNNING, and every field sent must be stored and equal the one sent (``read_values()``; the
    driver's ``unstored_fields`` excepted). The new field may be ignored (the result says so);
    a sink that stores it must store its value. Not verified without ``read_values()``.
    """
    ctx.require("read_values")
    with ctx.driver() as d:
        base = _struct_schema(d, "add")
        added = _ADDED_FIELD
        while base.field(added) is not None:  # a schema that has one already
            added += "_"
        fields = [(f.name, f.schema) for f in base.fields]
        newer = _rebuild(base, [*fields, (added, Schema.OPTIONAL_STRING_SCHEMA)], bump=1)
        _sink_migration(
            ctx,
            d,
            base,
            newer,
            f"one with the added optional field {added!r}",
            may_ignore={added: "allowed: a sink may ignore a field it does not know"},
        )


@check(
    "SCH-07",
    "The sink accepts an older schema without an optional field",
    capabilities=("read_values()",),
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
    must be stored as null (or its default) or not at all. Not verified without
    ``read_values()``, or when the driver's value schema has no optional field.
    """
    ctx.require("read_values")
    with ctx.driver() as d:
        base = _struct_schema(d, "drop")
        optional = [f for f in base.fields if f.schema.optional]
        if not optional:
            raise CheckNotVerified(
                f"the driver's value schema {_describe(base)} has no optional field to drop "
                f"(fields: {[f.name for f in base.fields]}): give value_schema() one"
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
                "values without a schema of its own, so no schema is incompatible with it",
                because="accepts-any-schema",
            )
        base = _struct_schema(d, "change")
        change = _incompatible(base)
        if change is None:
            raise CheckNotVerified(
                f"the driver's value schema {_describe(base)} has no field whose type can change "
                "and no required field other than id: give value_schema() one"
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
            ctx.evidence("incompatible change", change.text)
            ctx.evidence("records of the incompatible schema", len(bad_ids))
            _await_rejection(ctx, w, name, d, dlq, good_ids, len(bad_ids), change.text)
