"""The ERR suite: retriable errors, fatal errors, and errors.tolerance with the dead letter queue.

- ERR-01 makes the external system unavailable for a few seconds (the driver's ``outage()``):
  a correct connector raises :class:`cdk.RetriableException` (or retries by itself), keeps its
  task running and delivers every record once the system is back.
- ERR-02 breaks the external system for good (``break_external_system()``): a correct connector
  fails its task, soon, with a ConnectException-family error that says what went wrong, instead
  of hanging, swallowing the error or dying with a raw Python exception.
- ERR-03 runs with ``errors.tolerance=all``: poison records (unconvertible bytes for a sink, a
  failing harness transformation for a source) are skipped, a sink's go to the dead letter queue
  with the ``__connect.errors.*`` context headers, and every other record is delivered.
- ERR-04 and ERR-05 (:mod:`.broker`) stall the Kafka broker mid-stream: a source and a sink
  must lose nothing and recover without a restart.
"""

from __future__ import annotations

import builtins
import re
import sys
import time
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cdk.runtime
from cdk.converters import JsonConverter
from cdk.errors import ConnectException
from cdk.kafka import consumer_config, list_topics, new_consumer
from harness._driver import Delivery
from harness.certify._checks import CheckFailed, check
from harness.certify._context import CheckContext, WorkerHandle
from harness.certify.suites._faults import FailOnIds, with_transform

__all__ = [
    "TracedError",
    "connector_error",
    "describe_chain",
    "fatal_error",
    "parse_trace",
    "retriable_error",
    "tolerance",
]

#: The longest outage ERR-01 makes (shorter once the connector has shown it retries).
OUTAGE_MAX_S = 6.0
#: How long the outage goes on after the connector's first retriable error (one more retry).
OUTAGE_AFTER_RETRY_S = 1.0
#: How long records may take to arrive (after an outage, or in the first place).
DELIVERY_S = 30.0
#: How long a broken external system may take to fail the task (ERR-02).
FAIL_S = 30.0
#: How long the task must stay RUNNING once the records of ERR-03 were delivered.
STAY_RUNNING_S = 1.0
#: How long the dead letter queue may take to receive the poison records.
DLQ_S = 30.0
#: How long nothing more may arrive in the dead letter queue before it is judged complete.
DLQ_IDLE_S = 1.0

#: What the runtime's log says when a task's poll()/put() raised a RetriableException.
_RETRIABLE_SIGNAL = "RetriableException"

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
    "ERR-01",
    "A transient outage is retried without losing records",
    capabilities=("outage()",),
    fix=(
        "Raise ``RetriableException`` for transient failures (timeouts, refused connections) "
        "so that the runtime retries, and keep the records that could not be written: "
        "``put()`` gets the batch again, and ``poll()`` must return unsent records again."
    ),
)
def retriable_error(ctx: CheckContext) -> None:
    """During a transient outage the task keeps running and, afterwards, delivers every record.

    Records flow first; then the driver makes the external system unavailable (``outage()``)
    and more records are written (source) or produced (sink). The outage lasts until the
    runtime logged the connector's RetriableException plus one second, at most 6 s. After it,
    every record must arrive (duplicates only for an at-least-once connector) and no task may
    have FAILED: a connector that raises a plain ConnectException for a transient error, or
    loses the records it could not write, fails this check. Required for every connector that
    talks to an external system: not verified when the driver has no ``outage()``; not
    applicable only when the driver declares ``external_system = False``.
    """
    ctx.require_external_system()
    ctx.require("outage")
    with ctx.driver() as d, ctx.worker() as w:
        flow = _Flow(ctx, d, w)
        before = ctx.ids(30)
        flow.send(before)
        flow.create()
        flow.wait_delivered(before, "before the outage")
        mark = len(ctx.log_lines)
        during = ctx.ids(30)
        outage = time.monotonic()
        with d.outage():
            flow.send(during)
            retried = _outage_window(ctx, flow, mark)
        ctx.evidence("outage lasted (s)", round(time.monotonic() - outage, 1))
        ctx.evidence("RetriableException logged", retried)
        delivered = flow.wait_delivered(
            before + during,
            "after the outage",
            hint="" if retried else " (the runtime logged no RetriableException during it)",
        )
        ctx.compare_ids(
            before + during,
            delivered,
            what="the records written before and during the outage",
            allow_duplicates=d.delivery is not Delivery.EXACTLY_ONCE,
        )
        flow.raise_if_failed("after the outage")


@check(
    "ERR-02",
    "A fatal error fails the task with a clear ConnectException",
    capabilities=("break_external_system()",),
    fix=(
        'Raise a ``ConnectException`` (``raise ConnectException("...") from exc``) for a '
        "failure that will not go away; do not swallow it or retry it forever."
    ),
)
def fatal_error(ctx: CheckContext) -> None:
    """When the external system breaks for good, the task fails with a ConnectException.

    Records flow first; then the driver breaks the external system (``break_external_system()``)
    and more records are produced (sink; a source's are written just before the break). Within
    30 s a task must be FAILED with a trace whose error, raised by the connector, is a
    ConnectException (or a subclass: DataException...) with a message. A connector that
    swallows the error and stays RUNNING, keeps retrying a permanent failure, or fails with a
    raw Python exception (``sqlite3.DatabaseError``, ``KeyError``...) fails this check. Not
    verified when the driver has no ``break_external_system()``; not applicable only when the
    driver declares ``external_system = False``.
    """
    ctx.require_external_system()
    ctx.require("break_external_system")
    with ctx.driver() as d, ctx.worker() as w:
        flow = _Flow(ctx, d, w)
        before = ctx.ids(20)
        flow.send(before)
        flow.create()
        flow.wait_delivered(before, "before the break")
        mark = len(ctx.log_lines)
        after = ctx.ids(20)
        if ctx.kind == "source":
            flow.send(after)
            d.break_external_system()
        else:
            d.break_external_system()
            flow.send(after)
        broken = time.monotonic()
        expected = (
            f"the task to be FAILED within {FAIL_S:g}s of the external system breaking, with "
            "a ConnectException-family error that says what went wrong"
        )
        failed = ctx.wait_for(
            flow.failed_task,
            FAIL_S,
            expected=expected,
            actual=lambda: f"the status is {flow.brief_status()}{_logged_errors(ctx, mark)}",
            interval=0.2,
        )
        trace = str(failed.get("trace") or "")
        ctx.evidence("task FAILED after (s)", round(time.monotonic() - broken, 1))
        ctx.evidence("error chain", describe_chain(trace) if trace.strip() else None)
        if not trace.strip():
            raise CheckFailed(expected, f"task {failed.get('id')} is FAILED without a trace")
        verdict = connector_error(trace)
        if verdict is None:
            chain = describe_chain(trace)
            raise CheckFailed(
                expected,
                f"task {failed.get('id')} FAILED with {chain}, which is not a ConnectException "
                "(wrap the error: raise ConnectException('what failed') from exc)",
                details=trace,
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


# ---------------------------------------------------------------------------------------------
# ERR-01: the outage's measurement window.


def _outage_window(ctx: CheckContext, flow: _Flow, mark: int) -> bool:
    """Keep the outage on until the connector retried (plus a second) or at most 6 s.

    A bounded measurement window, not a synchronisation wait. Returns whether the runtime
    logged a RetriableException; fails the check as soon as a task is FAILED.
    """
    start = time.monotonic()
    seen: float | None = None
    while True:
        flow.raise_if_failed(
            "during the outage",
            expected="a transient outage to be retried: the task keeps running (a "
            "RetriableException, not a ConnectException) and delivers every record afterwards",
        )
        now = time.monotonic()
        if seen is None and any(_RETRIABLE_SIGNAL in line for line in ctx.log_lines[mark:]):
            seen = now
        if seen is not None and now - seen >= OUTAGE_AFTER_RETRY_S:
            return True
        if now - start >= OUTAGE_MAX_S:
            return seen is not None
        time.sleep(0.1)  # the sampling period of the window


# ---------------------------------------------------------------------------------------------
# ERR-02: judging a FAILED task's trace.


@dataclass(frozen=True)
class TracedError:
    """One exception of a Python traceback text (the chain's causes come first).

    Attributes:
        name: the exception's class as printed (``cdk.errors.ConnectException``).
        message: its message (empty when it has none).
        raised_in: the file of the frame that raised it, or None when it was never raised.
    """

    name: str
    message: str
    raised_in: str | None


_CHAIN_SEPARATORS = (
    "The above exception was the direct cause of the following exception:",
    "During handling of the above exception, another exception occurred:",
)
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line \d+')
_HEADER = re.compile(r"^(?P<name>[A-Za-z_][\w.]*)(?::\s?(?P<message>.*))?$")


def parse_trace(trace: str) -> list[TracedError]:
    """The exceptions of a traceback text, innermost cause first, the raised one last."""
    segments: list[list[str]] = [[]]
    for line in trace.splitlines():
        if line.strip() in _CHAIN_SEPARATORS:
            segments.append([])
        else:
            segments[-1].append(line)
    out: list[TracedError] = []
    for lines in segments:
        found = _parse_segment(lines)
        if found is not None:
            out.append(found)
    return out


def _parse_segment(lines: Sequence[str]) -> TracedError | None:
    raised_in: str | None = None
    body_start = 0
    for index, line in enumerate(lines):
        frame = _FRAME.match(line)
        if frame is not None:
            raised_in = frame["file"]
            body_start = index + 1
    for index in range(body_start, len(lines)):
        line = lines[index]
        if not line.strip() or line[0].isspace() or line.startswith("Traceback ("):
            continue
        header = _HEADER.match(line)
        if header is None:
            continue
        rest = [extra for extra in lines[index + 1 :] if extra.strip()]
        message = "\n".join([header["message"] or "", *rest]).strip()
        return TracedError(header["name"], message, raised_in)
    return None


def _resolve(name: str) -> type | None:
    """The exception class a trace names, if its module is loaded (nothing is imported)."""
    parts = name.split(".")
    if len(parts) == 1:
        builtin = getattr(builtins, name, None)
        return builtin if isinstance(builtin, type) else None
    for cut in range(len(parts) - 1, 0, -1):
        module = sys.modules.get(".".join(parts[:cut]))
        if module is None:
            continue
        target: Any = module
        for attr in parts[cut:]:
            target = getattr(target, attr, None)
        if isinstance(target, type):
            return target
    return None


def _is_connect_error(name: str) -> bool:
    cls = _resolve(name)
    if cls is not None:
        return issubclass(cls, ConnectException)
    # A class that is not loaded here: judge by the kit's names.
    from cdk import errors

    return name.rsplit(".", 1)[-1] in errors.__all__


def _raised_by_runtime(error: TracedError) -> bool:
    if error.raised_in is None:
        return False
    runtime = Path(cdk.runtime.__file__).resolve().parent
    try:
        return Path(error.raised_in).resolve().is_relative_to(runtime)
    except OSError:
        return False


def connector_error(trace: str) -> TracedError | None:
    """The ConnectException-family error with a message that the connector raised, or None.

    Exceptions the runtime raised itself (it wraps a sink's errors in a ConnectException of its
    own) do not count: what counts is what the connector's code raised.
    """
    for error in reversed(parse_trace(trace)):
        if _raised_by_runtime(error):
            continue
        if _is_connect_error(error.name) and error.message:
            return error
    return None


def describe_chain(trace: str) -> str:
    """The connector's exceptions in a trace, outermost first (``a.B: msg`` caused by ...)."""
    errors = [e for e in reversed(parse_trace(trace)) if not _raised_by_runtime(e)]
    if not errors:
        errors = list(reversed(parse_trace(trace)))
    if not errors:
        return "an unreadable trace"
    return ", caused by ".join(
        f"{e.name}" + (f": {_first_line(e.message)}" if e.message else " (no message)")
        for e in errors[:3]
    )


def _first_line(text: str, limit: int = 200) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _logged_errors(ctx: CheckContext, mark: int) -> str:
    errors = [
        line.splitlines()[0] for line in ctx.log_lines[mark:] if line.startswith(("ERROR", "WARN"))
    ]
    if not errors:
        return ""
    return (
        f"; the log has {len(errors)} error/warning lines since the break, e.g. "
        f"{_first_line(errors[0])!r} (the error was logged, not raised?)"
    )


# ---------------------------------------------------------------------------------------------
# ERR-03.


def _tolerance_sink(ctx: CheckContext, d: Any, w: WorkerHandle) -> None:
    topic = ctx.create_topic(ctx.topic())
    dlq = ctx.unique("dlq")
    name = ctx.unique("err")
    ids = ctx.ids(60)
    poison_ids = ids[4::10]
    good = [i for i in ids if i not in set(poison_ids)]
    key_conv, value_conv = _json(is_key=True), _json(is_key=False)
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
    flow = _Flow(ctx, d, w, topic=topic, name=name)
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
    flow = _Flow(ctx, d, w)
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


# ---------------------------------------------------------------------------------------------
# Records in and out, for both kinds.


class _Flow:
    """A connector under test with its records: writes or produces, and waits for them."""

    def __init__(
        self,
        ctx: CheckContext,
        driver: Any,
        worker: WorkerHandle,
        *,
        topic: str | None = None,
        name: str | None = None,
    ) -> None:
        self.ctx = ctx
        self.driver = driver
        self.worker = worker
        self.name = name or ctx.unique("err")
        if topic is None:
            topic = ctx.topic() if ctx.kind == "source" else ctx.create_topic(ctx.topic())
        self.topic = topic

    def create(self, config: Mapping[str, str] | None = None) -> None:
        """Create the connector (the example config unless given) and wait until RUNNING."""
        if config is None:
            config = self.ctx.connector_config(self.driver, self.topic)
        self.worker.create(self.name, config)

        def started() -> bool:
            status = self.worker.status(self.name)
            states = [t.get("state") for t in status.get("tasks", [])]
            return (
                bool(status)
                and status["connector"]["state"] == "RUNNING"
                and bool(states)
                and all(s in ("RUNNING", "FAILED") for s in states)
            )

        self.ctx.wait_for(
            started,
            DELIVERY_S,
            expected=f"connector {self.name} and its tasks to start",
            actual=lambda: f"the status is {self.brief_status()}",
            interval=0.2,
        )

    def send(self, ids: Sequence[int]) -> None:
        """Write the records into the source system, or produce them to the sink's topic."""
        if self.ctx.kind == "source":
            self.driver.write_records(ids)
        else:
            self.ctx.produce(self.topic, self.ctx.sink_records(self.driver, ids))

    def wait_delivered(
        self,
        ids: Sequence[int],
        when: str,
        *,
        expected: str | None = None,
        hint: str = "",
    ) -> list[Hashable]:
        """Wait until every record of ``ids`` arrived; return every delivered id.

        Fails the check when a task is FAILED, or at the deadline with what arrived.
        """
        want = set(ids)
        expected = expected or f"every record to be delivered {when}, the task running"
        deadline = time.monotonic() + DELIVERY_S
        delivered: list[Hashable] = []
        while True:
            delivered = self._delivered(len(ids), deadline)
            if want <= set(delivered):
                return delivered
            self.raise_if_failed(when, expected=expected)
            if time.monotonic() >= deadline:
                missing = sorted(want - set(delivered), key=repr)
                raise CheckFailed(
                    expected,
                    f"after {DELIVERY_S:g}s {len(want) - len(missing)} of {len(want)} arrived "
                    f"(missing ids {_sample(missing)}); the status is "
                    f"{self.brief_status()}{hint}",
                )

    def _delivered(self, count: int, deadline: float) -> list[Hashable]:
        if self.ctx.kind == "sink":
            time.sleep(0.2)  # the sampling period of the external system
            return list(self.driver.read_back())
        remaining = max(0.5, min(5.0, deadline - time.monotonic()))
        records = self.ctx.read_records(self.topic, min_records=count, timeout=remaining, idle=0.5)
        return self.ctx.source_ids(self.driver, records)

    def failed_task(self) -> dict[str, Any] | None:
        """The first FAILED task's status, or None."""
        for task in self.worker.status(self.name).get("tasks", []):
            if task.get("state") == "FAILED":
                return dict(task)
        return None

    def raise_if_failed(self, when: str, *, expected: str | None = None) -> None:
        """Fail the check if a task is FAILED, with its trace."""
        failed = self.failed_task()
        if failed is None:
            return
        trace = str(failed.get("trace") or "")
        raise CheckFailed(
            expected or "the task to keep running",
            f"task {failed.get('id')} FAILED {when}: {describe_chain(trace)}",
            details=trace or None,
        )

    def stays_running(self, seconds: float, when: str, *, expected: str) -> None:
        """Watch the tasks for ``seconds`` (a measurement window); fail if one is FAILED."""
        end = time.monotonic() + seconds
        while True:
            self.raise_if_failed(when, expected=expected)
            if time.monotonic() >= end:
                return
            time.sleep(0.2)  # the sampling period of the window

    def brief_status(self) -> str:
        """The connector's and tasks' states in a few words."""
        status = self.worker.status(self.name)
        if not status:
            return "not found"
        tasks = ", ".join(f"task {t['id']} {t['state']}" for t in status.get("tasks", []))
        return f"connector {status['connector']['state']}" + (f"; {tasks}" if tasks else "")


def _sample(items: Sequence[Any], limit: int = 10) -> str:
    shown = ", ".join(repr(i) for i in items[:limit])
    return shown + (f", … ({len(items) - limit} more)" if len(items) > limit else "")


def _json(*, is_key: bool) -> JsonConverter:
    converter = JsonConverter()
    converter.configure({"schemas.enable": "true"}, is_key)
    return converter


def _read_dlq(ctx: CheckContext, dlq: str, count: int) -> list[Any]:
    """The raw records of the dead letter queue: once ``count`` arrived and 1 s passed idle.

    Returns what arrived by the deadline otherwise (the caller compares).
    """
    from confluent_kafka import OFFSET_BEGINNING, TopicPartition

    deadline = time.monotonic() + DLQ_S
    consumer = new_consumer(
        consumer_config(ctx.bootstrap_servers, overrides={"fetch.wait.max.ms": 50})
    )
    messages: list[Any] = []
    try:
        while dlq not in list_topics(ctx.bootstrap_servers):
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
            if now >= deadline:
                return messages
            for msg in consumer.consume(100, timeout=0.1):
                if msg.error() is None:
                    messages.append(msg)
                    last_new = time.monotonic()
    finally:
        consumer.close()
