"""The RBL suite: tasks.max changes, dynamic reconfiguration and sink partition rebalances.

A connector's work moves between tasks when an operator changes ``tasks.max``, when a source
finds a new input stream and asks for new task configs, and when a sink's partitions are
reassigned in a consumer group rebalance. Each check moves the work while records flow, and
every record must still arrive.

The sink checks watch the partitions come and go: they run a subclass of the connector, made in
the check and given to the check's worker as a plugin, whose task records every ``open``,
``close``, ``put`` and ``stop`` call.
"""

from __future__ import annotations

import contextlib
import threading
import uuid
from collections.abc import Collection, Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from cdk.api import SinkConnector, SinkRecord, SinkTask, TopicPartition
from cdk.runtime import EmbeddedWorker
from harness.certify._checks import CheckFailed, CheckNotVerified, check
from harness.certify._context import CheckContext, WorkerHandle
from harness.certify._rest import RestClient
from harness.certify.suites import _spark
from harness.certify.suites._faults import class_path
from harness.certify.suites._flows import BATCH, Flow, await_running, brief_status, call
from harness.certify.suites._spark import SPARK_NEEDS

__all__: list[str] = []


#: The most tasks a source check asks for (one per input stream, up to this).
MAX_SOURCE_TASKS = 4
#: The partitions of a sink check's topic, and the tasks it moves between.
SINK_PARTITIONS = 4
SINK_TASKS = 2
#: How long a tasks.max change may take to show the new number of tasks.
TASKS_TIMEOUT_S = 20.0
#: How long a rebalance (a consumer group join, about 3 s on Tansu) may take.
REBALANCE_TIMEOUT_S = 40.0
#: How long the sink tasks.max checks wait for the consumer group to assign the partitions to
#: the new tasks (see :class:`BrokerRebalanceError`).
ASSIGN_TIMEOUT_S = 30.0


class BrokerRebalanceError(RuntimeError):
    """The consumer group did not assign the partitions: the environment failed, not the sink.

    The runtime opens whatever partitions the group assigns, so no sink can cause this. Tansu
    0.6 wedges a group for good when its leader leaves while the group is re-forming (its
    ``Forming`` state keeps the departed leader, and every new member then waits for that
    leader's assignment). On such a broker the runtime's tasks leave a group one at a time
    (``sink.tasks.leave.mode=auto`` finds that Tansu needs it; ``Worker.stop_tasks``), which
    never leaves a group re-forming, so this now means the broker's group coordinator failed
    in some other way.
    """


# ---------------------------------------------------------------------------------------------
# Instrumented sinks.


@dataclass(frozen=True)
class _Call:
    """One call the runtime made on an instrumented sink task."""

    seq: int
    task: int  # the task instance, numbered in order of creation (#1 is the first)
    method: str  # open, close, put, stop
    partitions: frozenset[tuple[str, int]]
    offsets: tuple[tuple[int, int], ...] = ()  # put: the (partition, offset) of each record


class _CallLog:
    """The calls on every instance of an instrumented task class (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: list[_Call] = []
        self._instances = 0

    def new_instance(self) -> int:
        with self._lock:
            self._instances += 1
            return self._instances

    def add(
        self,
        task: int,
        method: str,
        partitions: Collection[tuple[str, int]],
        offsets: Sequence[tuple[int, int]] = (),
    ) -> None:
        with self._lock:
            self._calls.append(
                _Call(len(self._calls), task, method, frozenset(partitions), tuple(offsets))
            )

    def calls(self) -> list[_Call]:
        with self._lock:
            return list(self._calls)


def _parts(partitions: Collection[TopicPartition]) -> list[tuple[str, int]]:
    return [(p.topic, p.partition) for p in partitions]


def _instrument_task(base: type[SinkTask], log: _CallLog, name: str) -> type[SinkTask]:
    """A subclass of ``base`` named ``name`` that records open, close, put and stop in ``log``."""

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        base.__init__(self, *args, **kwargs)
        self._certify_task = log.new_instance()

    def open(self: Any, partitions: Collection[TopicPartition]) -> None:
        log.add(self._certify_task, "open", _parts(partitions))
        base.open(self, partitions)

    def close(self: Any, partitions: Collection[TopicPartition]) -> None:
        base.close(self, partitions)
        log.add(self._certify_task, "close", _parts(partitions))

    def put(self: Any, records: Sequence[SinkRecord]) -> None:
        if records:
            log.add(
                self._certify_task,
                "put",
                {(r.topic, r.kafka_partition or 0) for r in records},
                [(r.kafka_partition or 0, r.kafka_offset) for r in records],
            )
        base.put(self, records)

    def stop(self: Any) -> None:
        base.stop(self)
        log.add(self._certify_task, "stop", ())

    namespace = {
        "__init__": __init__,
        "open": open,
        "close": close,
        "put": put,
        "stop": stop,
        "__module__": __name__,
        "__qualname__": name,
    }
    made: type[SinkTask] = type(name, (base,), namespace)
    return made


@dataclass
class _Instrumented:
    """An instrumented subclass of a sink connector, with the log of its tasks' calls."""

    connector: type[SinkConnector]
    log: _CallLog

    @property
    def class_name(self) -> str:
        """What ``connector.class`` names it by."""
        return class_path(self.connector)


def _instrument(cls: type[SinkConnector]) -> _Instrumented:
    """A subclass of ``cls`` whose tasks record their calls; its name is unique to the check."""
    token = uuid.uuid4().hex[:8]
    log = _CallLog()
    lock = threading.Lock()
    tasks: dict[type, type[SinkTask]] = {}

    def task_class(self: Any) -> type[SinkTask]:
        real = cls.task_class(self)
        if not issubclass(real, SinkTask):
            raise TypeError(f"{cls.__name__}.task_class() returned {real!r}, not a SinkTask")
        with lock:
            if real not in tasks:
                tasks[real] = _instrument_task(real, log, f"Certify{token}{real.__name__}")
            return tasks[real]

    name = f"Certify{token}{cls.__name__}"
    connector: type[SinkConnector] = type(
        name, (cls,), {"task_class": task_class, "__module__": __name__, "__qualname__": name}
    )
    return _Instrumented(connector, log)


@contextlib.contextmanager
def _worker_with(ctx: CheckContext, plugin: type) -> Iterator[WorkerHandle]:
    """An embedded worker (REST on) that knows ``plugin``; stopped when the block ends."""
    worker = EmbeddedWorker(ctx.worker_properties(), rest=True, extra_plugins=[plugin])
    worker.start()
    try:
        assert worker.rest_url is not None
        yield WorkerHandle(worker, RestClient(worker.rest_url), ctx)
    finally:
        worker.stop()


def _owners(calls: Sequence[_Call]) -> dict[int, set[tuple[str, int]]]:
    """Each task's open partitions after ``calls`` (open adds, close removes, stop clears)."""
    out: dict[int, set[tuple[str, int]]] = {}
    for c in calls:
        current = out.setdefault(c.task, set())
        if c.method == "open":
            current |= c.partitions
        elif c.method == "close":
            current -= c.partitions
        elif c.method == "stop":
            current.clear()
    return {task: parts for task, parts in out.items() if parts}


def _handed(calls: Sequence[_Call]) -> set[tuple[int, int]]:
    return {position for c in calls if c.method == "put" for position in c.offsets}


def _describe(calls: Sequence[_Call], limit: int = 40) -> str:
    def one(c: _Call) -> str:
        parts = ",".join(str(p) for _, p in sorted(c.partitions))
        if c.method == "put":
            return f"#{c.task} put({len(c.offsets)} records of partitions {parts})"
        return f"#{c.task} {c.method}({parts})"

    shown = [one(c) for c in calls[-limit:]]
    more = f"… ({len(calls) - limit} earlier calls) " if len(calls) > limit else ""
    return more + "; ".join(shown)


def _violations(calls: Sequence[_Call]) -> list[str]:
    """Where the calls break the rules of partition ownership.

    A partition is open in at most one task at a time, records are put only to the task that
    has their partition open, and a task closes its partitions before it stops.
    """
    owner: dict[tuple[str, int], int] = {}
    problems: list[str] = []
    for c in calls:
        if c.method == "open":
            for p in sorted(c.partitions):
                if p in owner and owner[p] != c.task:
                    problems.append(
                        f"task #{c.task} opened partition {p[1]} while task #{owner[p]} still "
                        "had it open (its close() had not been called)"
                    )
                owner[p] = c.task
        elif c.method == "close":
            for p in sorted(c.partitions):
                if owner.get(p) != c.task:
                    problems.append(
                        f"task #{c.task} closed partition {p[1]}, which it did not have open"
                    )
                else:
                    del owner[p]
        elif c.method == "put":
            foreign = sorted(p for p in c.partitions if owner.get(p) != c.task)
            if foreign:
                problems.append(
                    f"task #{c.task} was given records of partitions {[p for _, p in foreign]}, "
                    "which it did not have open"
                )
        elif c.method == "stop":
            left = sorted(p for p, t in owner.items() if t == c.task)
            if left:
                problems.append(
                    f"task #{c.task} stopped with partitions {[p for _, p in left]} still open "
                    "(close() was not called for them)"
                )
            for p in left:
                del owner[p]
    return problems


def _await_split(
    ctx: CheckContext,
    w: WorkerHandle,
    name: str,
    log: _CallLog,
    *,
    partitions: set[tuple[str, int]],
    tasks: int,
    old: set[int],
    when: str,
    timeout: float | None = None,
) -> dict[int, set[tuple[str, int]]]:
    """Wait until ``tasks`` new task instances have ``partitions`` open between them.

    Raises:
        BrokerRebalanceError: the consumer group never gave them the partitions (an
            environment failure: the runtime opens what the group assigns, whatever the sink).
    """

    def split() -> dict[int, set[tuple[str, int]]] | None:
        owners = _owners(log.calls())
        if old & set(owners) or len(owners) != tasks:
            return None
        opened = [p for parts in owners.values() for p in parts]
        return owners if set(opened) == partitions and len(opened) == len(partitions) else None

    try:
        owners = ctx.wait_for(
            split,
            REBALANCE_TIMEOUT_S if timeout is None else timeout,
            expected=f"{when}, each of the {len(partitions)} partitions open in exactly one of "
            f"the {tasks} new task{'s' if tasks > 1 else ''} (disjoint assignments covering the "
            "topic)",
            actual=lambda: (
                f"the open partitions are {_brief_owners(_owners(log.calls()))}; "
                f"the task calls were: {_describe(log.calls())}; "
                f"status {brief_status(w.status(name))}"
            ),
        )
        ctx.evidence(f"partitions open {when}", _brief_owners(owners))
        return owners
    except CheckFailed as exc:
        raise BrokerRebalanceError(
            f"the consumer group did not give the partitions to the new tasks {when}, so the "
            f"check cannot judge the sink (the runtime opens whatever the group assigns): "
            f"{exc.actual}. The broker's group coordinator did not complete the rebalance; "
            "check the broker's logs, or certify against another Kafka (--kafka)"
        ) from None


def _brief_owners(owners: dict[int, set[tuple[str, int]]]) -> str:
    if not owners:
        return "none"
    return ", ".join(
        f"task #{task}: {sorted(p for _, p in parts)}" for task, parts in sorted(owners.items())
    )


# ---------------------------------------------------------------------------------------------
# Checks.


def _source_streams(ctx: CheckContext) -> int:
    """How many input streams a source check uses; not verified when the driver has one."""
    streams = ctx.source_streams()
    if streams < 2:
        raise CheckNotVerified(
            f"the driver {ctx.driver_class.__name__} declares {streams} input stream: changing "
            "tasks.max needs work to split across tasks (a driver with streams > 1); the "
            "connector is not verified here (declare the streams the external system can "
            "hold, or waive the check with the reason there can be only one)"
        )
    return min(streams, MAX_SOURCE_TASKS)


def _change_source_tasks(ctx: CheckContext, before: int, after: int, streams: int) -> None:
    """Run a source with ``tasks.max=before``, change it to ``after``; every record arrives."""
    change = f"tasks.max {before} -> {after}"
    with ctx.driver() as d, ctx.worker() as w:
        flow = Flow.open(ctx, d)
        config = flow.config(tasks_max=before)
        name = ctx.unique("rbl")
        flow.send(BATCH, f"written with tasks.max={before}", streams=streams)
        w.create(name, config)
        await_running(w, name, when=f"with tasks.max={before}")
        flow.expect_all(f"the records written with tasks.max={before}")
        call(w, "PUT", f"/connectors/{name}/config", {**config, "tasks.max": str(after)})
        ctx.evidence_config({**config, "tasks.max": str(after)})
        await_running(
            w,
            name,
            tasks=after,
            when=f"after {change}",
            timeout=TASKS_TIMEOUT_S,
            why=f"the {streams} input streams give work to {after} task"
            f"{'s' if after > 1 else ''}: task_configs(max_tasks) must split the streams across "
            "up to max_tasks tasks",
        )
        flow.send(BATCH, f"written after {change}", streams=streams)
        flow.expect_all(f"every record of every input stream, written before and after {change}")


def _change_sink_tasks(ctx: CheckContext, before: int, after: int) -> None:
    """Run a sink with ``tasks.max=before`` on a 4-partition topic, change it to ``after``."""
    connector_class = ctx.connector_class
    if not issubclass(connector_class, SinkConnector):
        raise CheckFailed(
            "the sink driver's connector to be a SinkConnector",
            f"{connector_class.__qualname__} is not a SinkConnector",
        )
    _sink_tasks_scenario(ctx, connector_class, before, after)


def _sink_tasks_scenario(
    ctx: CheckContext, connector_class: type[SinkConnector], before: int, after: int
) -> None:
    change = f"tasks.max {before} -> {after}"
    made = _instrument(connector_class)
    with ctx.driver() as d, _worker_with(ctx, made.connector) as w:
        flow = Flow.open(ctx, d, partitions=SINK_PARTITIONS)
        everything = {(flow.topic, p) for p in range(SINK_PARTITIONS)}
        config = {**flow.config(tasks_max=before), "connector.class": made.class_name}
        name = ctx.unique("rbl")
        flow.send(BATCH, f"written with tasks.max={before}")
        w.create(name, config)
        await_running(w, name, when=f"with tasks.max={before}")
        flow.expect_all(f"the records written with tasks.max={before}")
        old = {c.task for c in made.log.calls()}
        call(w, "PUT", f"/connectors/{name}/config", {**config, "tasks.max": str(after)})
        ctx.evidence_config({**config, "tasks.max": str(after)})
        await_running(
            w,
            name,
            tasks=after,
            when=f"after {change}",
            timeout=TASKS_TIMEOUT_S,
            why=f"the {SINK_PARTITIONS} partitions give work to {after} task"
            f"{'s' if after > 1 else ''}: task_configs(max_tasks) must return max_tasks "
            "configs",
        )
        _await_split(
            ctx,
            w,
            name,
            made.log,
            partitions=everything,
            tasks=after,
            old=old,
            when=f"after {change}",
            timeout=ASSIGN_TIMEOUT_S,
        )
        flow.send(BATCH, f"written after {change}")
        try:
            flow.expect_all(f"every record, written before and after {change}")
        except CheckFailed as exc:
            raise _explain_loss(exc, flow, flow.snapshot(), made.log.calls()) from None


@check(
    "RBL-01",
    "Raising tasks.max runs more tasks without loss",
    capabilities=("streams > 1 (source)",),
    fix=(
        "Split the work over ``max_tasks`` in ``task_configs`` (``group_partitions`` does "
        "it), and let each task read only the streams in its config, each from its stored "
        "offset."
    ),
)
def tasks_max_up(ctx: CheckContext) -> None:
    """Raising tasks.max runs more tasks without loss.

    A source with several input streams starts with ``tasks.max=1`` and goes to one task per
    stream (up to 4); a sink on a 4-partition topic goes from 1 to 2 tasks, which share the
    partitions. The new number of tasks must be RUNNING, and every record written before and
    after the change is delivered (duplicates only for at-least-once connectors). Not verified for
    sources with one input stream.
    """
    if ctx.kind == "source":
        streams = _source_streams(ctx)
        _change_source_tasks(ctx, 1, streams, streams)
    else:
        _change_sink_tasks(ctx, 1, SINK_TASKS)


@check(
    "RBL-02",
    "Lowering tasks.max keeps every input covered, without loss",
    capabilities=("streams > 1 (source)",),
    fix=(
        "Make ``task_configs(1)`` give the single task every stream; a task resumes every "
        "stream it gets from that stream's stored offset."
    ),
)
def tasks_max_down(ctx: CheckContext) -> None:
    """Lowering tasks.max keeps every input covered, without loss.

    A source with several input streams starts with one task per stream (up to 4) and goes to
    ``tasks.max=1``; a sink on a 4-partition topic goes from 2 tasks to 1, which gets every
    partition. One task must run, and every record of every stream or partition, written
    before and after the change, is delivered. Not verified for sources with one input stream.
    """
    if ctx.kind == "source":
        streams = _source_streams(ctx)
        _change_source_tasks(ctx, streams, 1, streams)
    else:
        _change_sink_tasks(ctx, SINK_TASKS, 1)


@check(
    "RBL-03",
    "A new input stream is picked up while running",
    capabilities=("detects_new_streams", "streams > 1"),
    kinds=("source",),
    fix=(
        "Watch the external system for new streams (e.g. a thread started in the connector's "
        "``start()``) and call ``self.context.request_task_reconfiguration()`` when one "
        "appears; ``task_configs`` must then include it."
    ),
)
def new_stream(ctx: CheckContext) -> None:
    """A new input stream is picked up while running.

    For sources whose driver says they detect new streams: the connector runs on one input
    stream, then a second stream is created; the connector must notice it and call
    ``context.request_task_reconfiguration()`` so that its records are delivered too, without
    a restart. Not verified unless the driver declares ``detects_new_streams`` and several
    streams.
    """
    driver_class = ctx.driver_class
    if not getattr(driver_class, "detects_new_streams", False):
        raise CheckNotVerified(
            f"the driver {driver_class.__name__} does not declare detects_new_streams: whether "
            "the connector notices input streams created while it runs is not verified "
            "(declare it, or waive the check with the reason new streams cannot appear)"
        )
    streams = _source_streams(ctx)
    with ctx.driver() as d, ctx.worker() as w:
        flow = Flow.open(ctx, d)
        name = ctx.unique("rbl")
        flow.send(BATCH, "written to stream 0 before the connector started")
        w.create(name, flow.config(tasks_max=streams))
        await_running(w, name, when="after it was created")
        flow.expect_all("the records of the input stream that existed at the start")
        flow.send(BATCH, "written to stream 1, created while the connector ran", first_stream=1)
        flow.expect_all(
            "the records of an input stream created while the connector runs (the connector "
            "notices it and calls context.request_task_reconfiguration())"
        )
        await_running(w, name, when="after the new input stream was picked up")


@check(
    "RBL-04",
    "A sink rebalance closes and reopens every partition, without loss",
    kinds=("sink",),
    fix=(
        "Keep the sink's state per ``TopicPartition``: create it in ``open()``, write the "
        "buffered records of exactly the partitions given to ``close()`` and drop their state "
        "there."
    ),
)
def sink_rebalance(ctx: CheckContext) -> None:
    """A sink rebalance closes and reopens every partition, without loss.

    The check runs a subclass of the connector whose task records each ``open``, ``close``,
    ``put`` and ``stop`` call. One task consumes a 4-partition topic; then tasks.max goes to 2.
    The first task must close every partition it had before it stops, each partition must end
    up open in exactly one of the new tasks (the two assignments disjoint and together
    complete), records are put only to the task that has their partition open, and every
    record - those the first task was given and those written after the rebalance - is
    delivered: what a task was given for a partition it then closed must not be lost.
    """
    connector_class = ctx.connector_class
    if not issubclass(connector_class, SinkConnector):
        raise CheckFailed(
            "the sink driver's connector to be a SinkConnector",
            f"{connector_class.__qualname__} is not a SinkConnector",
        )
    made = _instrument(connector_class)
    with ctx.driver() as d, _worker_with(ctx, made.connector) as w:
        log = made.log
        flow = Flow.open(ctx, d, partitions=SINK_PARTITIONS)
        everything = {(flow.topic, p) for p in range(SINK_PARTITIONS)}
        config = {**flow.config(tasks_max=1), "connector.class": made.class_name}
        name = ctx.unique("rbl")
        flow.send(2 * BATCH, "written before the rebalance")
        first = set(flow.positions)
        w.create(name, config)
        await_running(w, name, tasks=1, when="after it was created")
        _await_split(
            ctx, w, name, log, partitions=everything, tasks=1, old=set(), when="at the start"
        )
        ctx.wait_for(
            lambda: first <= _handed(log.calls()),
            REBALANCE_TIMEOUT_S,
            expected=f"the only task to be given (put) the {len(first)} records written",
            actual=lambda: f"the task calls were: {_describe(log.calls())}",
        )
        old = {c.task for c in log.calls()}
        change = f"tasks.max 1 -> {SINK_TASKS}"
        call(w, "PUT", f"/connectors/{name}/config", {**config, "tasks.max": str(SINK_TASKS)})
        ctx.evidence_config({**config, "tasks.max": str(SINK_TASKS)})
        await_running(w, name, tasks=SINK_TASKS, when=f"after {change}")
        _await_split(
            ctx,
            w,
            name,
            log,
            partitions=everything,
            tasks=SINK_TASKS,
            old=old,
            when=f"after {change}",
        )
        flow.send(2 * BATCH, "written after the rebalance")
        try:
            flow.expect_all("every record, across the rebalance")
        except CheckFailed as exc:
            raise _explain_loss(exc, flow, flow.snapshot(), log.calls()) from None
        calls = log.calls()
    problems = _violations(calls)
    ctx.evidence(
        "task calls", {m: sum(1 for c in calls if c.method == m) for m in ("open", "put", "close")}
    )
    ctx.evidence("protocol violations", len(problems))
    if problems:
        shown = "; ".join(problems[:5])
        raise CheckFailed(
            "each partition open in one task at a time (close() before another task opens it), "
            "records put only to the task that has their partition open, and every partition "
            "closed before its task stops",
            shown + (f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""),
            details=f"task calls: {_describe(calls, limit=200)}",
        )


def _explain_loss(
    exc: CheckFailed, flow: Flow, got: Sequence[Hashable], calls: Sequence[_Call]
) -> CheckFailed:
    """``exc`` (records missing) with which task was given each missing record."""
    missing = set(flow.sent) - set(got)
    by_task: dict[int, set[int]] = {}
    closed_by: dict[int, set[int]] = {}
    for c in calls:
        if c.method == "put":
            for position in c.offsets:
                record_id = flow.positions.get(position)
                if record_id is not None and record_id in missing:
                    by_task.setdefault(c.task, set()).add(record_id)
        elif c.method == "close":
            closed_by.setdefault(c.task, set()).update(p for _, p in c.partitions)
    notes = []
    for task, ids in sorted(by_task.items()):
        closed = sorted(closed_by.get(task, set()))
        note = f"{len(ids)} of the missing records were put() to task #{task}"
        if closed:
            note += (
                f", which then closed partitions {closed} without making them durable (close() "
                "must write what the task holds for its partitions, or pre_commit() must not "
                "report their offsets)"
            )
        notes.append(note)
    never = missing - {i for ids in by_task.values() for i in ids}
    if never:
        notes.append(f"{len(never)} of the missing records were never put() to any task")
    if not notes:
        return exc
    return CheckFailed(exc.expected, f"{exc.actual}. {'; '.join(notes)}", exc.details)


# ---------------------------------------------------------------------------------------------
# The distributed runtime (bodies in _spark, with the other distributed checks).


@check(
    "RBL-05",
    "Tasks of a lost Spark worker run again when a worker rejoins, without loss",
    needs=SPARK_NEEDS,
    exclusive=True,
    capabilities=("streams > 1 (source)",),
    fix=(
        "Let a task start again anywhere at any time: no lock, file or claim held by a task "
        "that died may keep its successor from starting."
    ),
)
def worker_leaves_and_rejoins(ctx: CheckContext) -> None:
    """Two tasks on two Spark workers: one worker leaves, then joins again.

    The connector runs with 2 tasks, one per Spark worker (a source on 2 input streams, a
    sink on a 2-partition topic). The worker of task 0 is killed: with the only other slot busy,
    Spark cannot run task 0 until a worker rejoins, while task 1 keeps delivering. The worker
    is started again: task 0 must be RUNNING again (on a new executor) and every record,
    written before, during and after the loss, is delivered.
    """
    _spark.worker_leaves_and_rejoins(ctx)


@check(
    "RBL-06",
    "tasks.max 1 -> 2 -> 1 in distributed mode, without loss",
    needs=SPARK_NEEDS,
    exclusive=True,
    capabilities=("streams > 1 (source)",),
    fix=(
        "Split the work over ``max_tasks`` in ``task_configs`` and let each task resume "
        "every stream it gets from that stream's stored offset (as RBL-01 and RBL-02)."
    ),
)
def tasks_max_distributed(ctx: CheckContext) -> None:
    """Changing tasks.max on a distributed driver starts a new generation of Spark tasks.

    The connector starts with ``tasks.max=1`` (a source on 2 input streams, a sink on a
    2-partition topic), goes to 2 and back to 1. After each change, the new number of tasks
    must be RUNNING on the cluster and every record written so far delivered.
    """
    _spark.tasks_max_distributed(ctx)
