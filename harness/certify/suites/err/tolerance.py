"""ERR-03: ``errors.tolerance=all`` skips poison records, a sink's to the dead letter queue."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from cdk.kafka import consumer_config, list_topics, new_consumer
from harness._driver import Delivery
from harness.certify._checks import CheckFailed, check
from harness.certify._context import CheckContext, WorkerHandle, read_holes_again
from harness.certify.suites._faults import FailOnIds, with_transform
from harness.certify.suites.err._common import RecordFlow, json_converter

__all__ = ["DLQ_HEADERS", "tolerance"]

#: How long the task must stay RUNNING once the records of ERR-03 were delivered.
STAY_RUNNING_S = 1.0
#: How long the dead letter queue may take to receive the poison records.
DLQ_S = 30.0
#: How long nothing more may arrive in the dead letter queue before it is judged complete.
DLQ_IDLE_S = 1.0
#: The context headers a dead letter queue record carries (context.headers.enable=true).
DLQ_HEADERS = (
    "__connect.errors.topic",
    "__connect.errors.partition",
    "__connect.errors.offset",
    "__connect.errors.connector.name",
    "__connect.errors.task.id",
    "__connect.errors.stage",
    "__connect.errors.class.name",
    "__connect.errors.exception.class.name",
    "__connect.errors.exception.message",
    "__connect.errors.exception.stacktrace",
)


@check(
    "ERR-03",
    "errors.tolerance=all skips poison records and delivers the rest",
    fix=(
        "Raise ``DataException`` for a record that cannot be handled, or report it with "
        "``self.context.errant_record_reporter()`` in a sink, and go on with the rest of the "
        "batch: one bad record must not fail the task or drop its neighbours."
    ),
)
def tolerance(ctx: CheckContext) -> None:
    """With ``errors.tolerance=all``, poison records are skipped and every other one delivered.

    Sink: 60 records are produced to the topic, every tenth of them unconvertible bytes (not
    JSON). The dead letter queue (``errors.deadletterqueue.topic.name``, with
    ``errors.deadletterqueue.context.headers.enable=true``) must receive exactly the poison
    records, each with the ``__connect.errors.*`` headers naming its topic, partition and
    offset; every good record must be stored and the task stay RUNNING. Source: 60 records are
    written and a harness transformation (``FailOnIds``) fails every tenth; every other record
    must arrive in Kafka and the task stay RUNNING. A connector that fails its task, stalls or
    loses good records around the skipped ones fails this check.
    """
    with ctx.driver() as d, ctx.worker() as w:
        if ctx.kind == "sink":
            _tolerance_sink(ctx, d, w)
        else:
            _tolerance_source(ctx, d, w)


def _tolerance_sink(ctx: CheckContext, d: Any, w: WorkerHandle) -> None:
    topic = ctx.create_topic(ctx.topic())
    dlq = ctx.unique("dlq")
    name = ctx.unique("err")
    ids = ctx.ids(60)
    poison_ids = ids[4::10]
    good = [i for i in ids if i not in set(poison_ids)]
    key_conv, value_conv = json_converter(is_key=True), json_converter(is_key=False)
    payload: list[tuple[bytes | None, bytes | None]] = []
    poison_values: dict[bytes, int] = {}
    for (key, value), record_id in zip(ctx.sink_records(d, ids), ids, strict=True):
        key_bytes = key_conv.from_connect_data(topic, key.schema, key.value)
        if record_id in poison_ids:
            raw = f"poison record {record_id}: {{not json".encode()
            poison_values[raw] = record_id
            payload.append((key_bytes, raw))
        else:
            good_bytes = value_conv.from_connect_data(topic, value.schema, value.value)
            payload.append((key_bytes, good_bytes))
    coordinates = ctx.produce_raw(topic, payload)
    poison_at = {raw: coordinates[ids.index(record_id)] for raw, record_id in poison_values.items()}
    config = ctx.connector_config(
        d,
        topic,
        errors_tolerance="all",
        errors_log_enable="true",
        errors_deadletterqueue_topic_name=dlq,
        errors_deadletterqueue_topic_replication_factor="1",
        errors_deadletterqueue_context_headers_enable="true",
    )
    flow = RecordFlow(ctx, d, w, topic=topic, name=name)
    flow.create(config)
    expected = (
        "with errors.tolerance=all, the poison records skipped and the good ones delivered "
        "while the task keeps running"
    )
    stored = flow.wait_delivered(good, "around the poison records", expected=expected)
    ctx.compare_ids(
        good,
        stored,
        what=f"the {len(good)} good records around {len(poison_ids)} poison ones",
        allow_duplicates=d.delivery is not Delivery.EXACTLY_ONCE,
    )
    messages = _read_dlq(ctx, dlq, len(poison_values))
    ctx.evidence("poison records", len(poison_values))
    ctx.evidence("records in the dead letter queue", len(messages))
    _check_dlq(messages, poison_values, poison_at, topic=topic, dlq=dlq, name=name)
    flow.stays_running(STAY_RUNNING_S, "after the poison records", expected=expected)


def _tolerance_source(ctx: CheckContext, d: Any, w: WorkerHandle) -> None:
    ids = ctx.ids(60)
    poison = ids[4::10]
    good = [i for i in ids if i not in set(poison)]
    flow = RecordFlow(ctx, d, w)
    flow.send(ids)
    config = with_transform(
        ctx.connector_config(d, flow.topic, errors_tolerance="all", errors_log_enable="true"),
        "certifyPoison",
        FailOnIds,
        {"ids": ",".join(str(i) for i in poison)},
    )
    flow.create(config)
    ctx.evidence("poison records", len(poison))
    expected = (
        f"with errors.tolerance=all, the {len(poison)} records the harness transformation "
        f"fails (ids {poison}) skipped and the {len(good)} others delivered while the task "
        "keeps running"
    )
    delivered = flow.wait_delivered(good, "around the poison records", expected=expected)
    leaked = sorted({i for i in delivered if i in set(poison)}, key=repr)
    if leaked:
        raise RuntimeError(
            f"the harness transformation FailOnIds did not find the ids of records {leaked} "
            "(it looks for a field 'id' of the value, an integer key, or the last number of a "
            "text value), so they were not failed"
        )
    ctx.compare_ids(
        good,
        delivered,
        what=f"the {len(good)} good records around {len(poison)} poison ones",
        allow_duplicates=d.delivery is not Delivery.EXACTLY_ONCE,
    )
    flow.stays_running(STAY_RUNNING_S, "after the poison records", expected=expected)


def _check_dlq(
    messages: Sequence[Any],
    poison: Mapping[bytes, int],
    coordinates: Mapping[bytes, tuple[int, int]],
    *,
    topic: str,
    dlq: str,
    name: str,
) -> None:
    expected = (
        f"the dead letter queue {dlq} to hold exactly the {len(poison)} poison records, each "
        "with the __connect.errors.* context headers"
    )
    values = [m.value() for m in messages]
    missing = sorted(poison[v] for v in set(poison) - set(values))
    extra = [v for v in values if v not in poison]
    counts = {v: values.count(v) for v in set(values) if v in poison}
    twice = sorted(poison[v] for v, n in counts.items() if n > 1)
    problems = []
    if missing:
        problems.append(f"poison records {missing} are missing")
    if extra:
        problems.append(f"{len(extra)} other records are there (e.g. {extra[0]!r:.120})")
    if twice:
        problems.append(f"poison records {twice} are there more than once")
    if problems:
        raise CheckFailed(expected, f"it has {len(messages)} records: " + "; ".join(problems))
    for message in messages:
        headers = dict(message.headers() or ())
        record_id = poison[message.value()]
        absent = [h for h in DLQ_HEADERS if h not in headers]
        partition, offset = coordinates[message.value()]
        wrong = [
            f"{header} is {_text(headers.get(header))!r}, not {want!r}"
            for header, want in (
                ("__connect.errors.topic", topic),
                ("__connect.errors.partition", str(partition)),
                ("__connect.errors.offset", str(offset)),
                ("__connect.errors.connector.name", name),
            )
            if header in headers and _text(headers.get(header)) != want
        ]
        if absent or wrong:
            raise CheckFailed(
                expected,
                f"the record of poison id {record_id} "
                + "; ".join(
                    ([f"lacks headers {absent}"] if absent else []) + wrong,
                ),
            )


def _text(value: bytes | str | None) -> str | None:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def _read_dlq(ctx: CheckContext, dlq: str, count: int) -> list[Any]:
    """The raw records of the dead letter queue: once ``count`` arrived and 1 s passed idle.

    Returns what arrived by the deadline otherwise (the caller compares).
    """
    from confluent_kafka import OFFSET_BEGINNING, TopicPartition

    deadline = time.monotonic() + DLQ_S
    config = consumer_config(
        ctx.bootstrap_servers, overrides={"fetch.wait.max.ms": 50, **ctx.kafka_config}
    )
    consumer = new_consumer(config)
    messages: list[Any] = []
    holes_checked = -1
    try:
        while dlq not in list_topics(ctx.admin_config):
            if time.monotonic() >= deadline:
                return messages
            time.sleep(0.2)  # polling the topic list
        meta = consumer.list_topics(dlq, timeout=10).topics.get(dlq)
        partitions = len(meta.partitions) if meta is not None and meta.partitions else 1
        consumer.assign([TopicPartition(dlq, p, OFFSET_BEGINNING) for p in range(partitions)])
        last_new = time.monotonic()
        while True:
            now = time.monotonic()
            if len(messages) >= count and now - last_new >= DLQ_IDLE_S:
                return messages
            if holes_checked != len(messages) and now - last_new >= DLQ_IDLE_S:
                holes_checked = len(messages)  # a fetch may have skipped what is missing
                messages.extend(read_holes_again(config, messages))
            if now >= deadline:
                return messages
            for msg in consumer.consume(100, timeout=0.1):
                if msg.error() is None:
                    messages.append(msg)
                    last_new = time.monotonic()
    finally:
        consumer.close()
