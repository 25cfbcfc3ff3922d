"""Sink flows of the SCH suite: the connector on a worker, what it stores, what it rejects."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from cdk.data import (
    Field,
    Schema,
    SchemaAndValue,
    SchemaType,
    Struct,
)
from harness._driver import Delivery, SinkDriver
from harness.certify._checks import CheckFailed
from harness.certify._context import CheckContext, WorkerHandle
from harness.certify.suites.err import connector_error, describe_chain
from harness.certify.suites.sch._common import (
    _BATCH,
    _RECORDS,
    _REJECT_TIMEOUT,
    _SCHEMALESS,
    _SINK_TIMEOUT,
    JSON,
    _brief,
    _error,
    _fail_on,
    _is_struct,
    _sample,
)
from harness.certify.suites.sch._schemas import _key, _value
from harness.certify.suites.sch._values import _canon, _difference

__all__: list[str] = []


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
