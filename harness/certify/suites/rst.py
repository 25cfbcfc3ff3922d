"""The RST suite: restarts through REST, failed-task recovery, pause and resume, clean stop.

A connector survives REST restarts, a failed task recovers, pause really pauses, and ``stop()``
is prompt and leaves no thread behind.

Each worker check runs one connector on an embedded worker driven through its REST API, like an
operator would: records go in before and after the event (restart, failure, pause), and every
one of them must come out. The clean-stop check (RST-05) drives the connector in this process,
without a worker, to time each ``stop()`` and compare the threads before and after.

:class:`Flow` (records into a connector of either kind, and what came out) and the state waits
are shared with the RBL suite.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cdk.api import (
    OffsetAndMetadata,
    SinkConnector,
    SinkConnectorContext,
    SinkRecord,
    SinkTask,
    SinkTaskContext,
    SourceConnector,
    TopicPartition,
)
from harness._driver import Delivery
from harness.certify._checks import CheckFailed, check
from harness.certify._context import CheckContext, WorkerHandle
from harness.certify._probe import SourceProbe
from harness.certify._rest import RestResponse
from harness.certify.suites._faults import INJECTED, FailWhenFlagged, with_transform

__all__ = ["Flow", "await_running", "brief_status", "call", "trace_head"]

#: Records sent in each phase of a check (before and after the event).
BATCH = 40
#: How long records may take to arrive, and connectors and tasks to change state (read when
#: a check runs: the kit's tests shorten them where a broken connector fails at a deadline).
DELIVERY_TIMEOUT_S = 30.0
STATE_TIMEOUT_S = 45.0
#: How long RST-04 gives the tasks to report PAUSED, then watches for records while paused.
PAUSE_TIMEOUT_S = 20.0
PAUSE_WINDOW_S = 3.0
#: The most a ``stop()`` may take (RST-05), and how long threads get to end after it.
STOP_LIMIT_S = 5.0
STOP_WAIT_S = 15.0
THREAD_GRACE_S = 10.0


# ---------------------------------------------------------------------------------------------
# Shared with the RBL suite.


@dataclass
class Flow:
    """Records into a connector of either kind, and the ids that came out.

    A source flow writes records into the driver's input streams and reads the topics
    ``topic*``; a sink flow produces records to ``topic`` (created with ``partitions``
    partitions, records spread evenly) and reads the driver's stored ids.

    Attributes:
        ctx: the check's context.
        driver: the driver (source or sink).
        topic: the topic (prefix, for a source).
        partitions: the topic's partitions (sink).
        sent: every id sent so far, in order.
        positions: for a sink, the (partition, offset) each id was produced at.
        phases: each batch sent, with what it was sent for (named when records are missing).
    """

    ctx: CheckContext
    driver: Any
    topic: str
    partitions: int = 1
    sent: list[int] = field(default_factory=list)
    positions: dict[tuple[int, int], int] = field(default_factory=dict)
    phases: list[tuple[str, list[int]]] = field(default_factory=list)

    @classmethod
    def open(cls, ctx: CheckContext, driver: Any, *, partitions: int = 1) -> Flow:
        """A flow on a fresh topic (created with ``partitions`` partitions for a sink)."""
        topic = ctx.topic()
        if ctx.kind == "sink":
            ctx.create_topic(topic, partitions)
        return cls(ctx, driver, topic, partitions)

    @property
    def exactly_once(self) -> bool:
        """Whether the driver claims exactly-once delivery (then any duplicate fails)."""
        return bool(self.driver.delivery is Delivery.EXACTLY_ONCE)

    def config(self, *, tasks_max: int = 1, **overrides: str) -> dict[str, str]:
        """The connector config for this flow's topic."""
        return self.ctx.connector_config(self.driver, self.topic, tasks_max=tasks_max, **overrides)

    def send(self, count: int, phase: str, *, streams: int = 1, first_stream: int = 0) -> list[int]:
        """Send ``count`` fresh records and return their ids.

        A source's records are spread over ``streams`` input streams from ``first_stream`` on,
        a sink's over the topic's partitions. ``phase`` says when they were sent (``written
        while PAUSED``), to name the records that go missing.
        """
        ids = self.ctx.ids(count)
        if self.ctx.kind == "source":
            for index in range(streams):
                part = ids[index::streams]
                if part:
                    self.driver.write_records(part, stream=first_stream + index)
        else:
            for partition in range(self.partitions):
                part = ids[partition :: self.partitions]
                if not part:
                    continue
                where = self.ctx.produce(
                    self.topic,
                    self.ctx.sink_records(self.driver, part),
                    partition=partition if self.partitions > 1 else None,
                )
                for record_id, position in zip(part, where, strict=True):
                    self.positions[position] = record_id
        self.sent.extend(ids)
        self.phases.append((phase, ids))
        return ids

    def snapshot(self, *, wait: float = 0.0, more_than: int = 0) -> list[Hashable]:
        """The ids delivered so far (one entry per copy).

        For a source, reading stops once more than ``more_than`` records are read, or after
        ``wait`` seconds (plus a short idle time).
        """
        if self.ctx.kind == "sink":
            return list(self.driver.read_back())
        records = self.ctx.read_records(
            self.topic, min_records=more_than + 1, timeout=wait, idle=0.3
        )
        return self.ctx.source_ids(self.driver, records)

    def delivered(self, timeout: float | None = None) -> list[Hashable]:
        """The delivered ids once every sent id arrived, or what arrived by the deadline.

        ``timeout`` defaults to :data:`DELIVERY_TIMEOUT_S`.
        """
        deadline = time.monotonic() + (DELIVERY_TIMEOUT_S if timeout is None else timeout)
        wanted = set(self.sent)
        if self.ctx.kind == "sink":
            got: list[Hashable] = []

            def complete() -> bool:
                got[:] = self.driver.read_back()
                return wanted <= set(got)

            while not complete() and time.monotonic() < deadline:
                time.sleep(0.1)
            return got
        needed = len(self.sent)
        while True:
            remaining = max(deadline - time.monotonic(), 0.0)
            records = self.ctx.read_records(self.topic, min_records=needed, timeout=remaining)
            ids = self.ctx.source_ids(self.driver, records)
            missing = wanted - set(ids)
            if not missing or time.monotonic() >= deadline:
                return ids
            needed = len(ids) + len(missing)

    def expect_all(self, what: str, timeout: float | None = None) -> list[Hashable]:
        """Wait for every sent record; fail naming missing and unexpected ids.

        Duplicates fail only when the driver claims exactly-once delivery.
        """
        got = self.delivered(timeout)
        try:
            self.ctx.compare_ids(self.sent, got, what=what, allow_duplicates=not self.exactly_once)
        except CheckFailed as exc:
            missing = set(self.sent) - set(got)
            lost = [
                f"{len(missing & set(ids))} of the {len(ids)} records {phase}"
                for phase, ids in self.phases
                if missing & set(ids)
            ]
            if not lost:
                raise
            raise CheckFailed(
                exc.expected, f"{exc.actual}; missing: {', '.join(lost)}", exc.details
            ) from None
        return got


def brief_status(status: Mapping[str, Any]) -> str:
    """A connector status in one line: ``connector RUNNING; task 0 FAILED, task 1 RUNNING``."""
    if not status:
        return "no status (the connector is not there)"
    tasks = ", ".join(f"task {t['id']} {t['state']}" for t in status.get("tasks", []))
    return f"connector {status['connector']['state']}" + (f"; {tasks}" if tasks else "; no tasks")


def trace_head(trace: str | None) -> str:
    """A trace in one line: its exception and message, and where it was raised.

    Python traces end with the exception (``cdk.errors.ConnectException: ...``); Java-style
    traces start with it.
    """
    if not trace:
        return "no trace"
    lines = [line.rstrip() for line in trace.strip().splitlines() if line.strip()]
    if not lines[0].startswith("Traceback"):
        return " | ".join(line.strip() for line in lines[:4])
    last_frame = max((i for i, line in enumerate(lines) if line.startswith(" ")), default=0)
    message = " ".join(line.strip() for line in lines[last_frame + 1 :])
    frames = [line.strip() for line in lines if line.lstrip().startswith("File ")]
    where = f" (raised at {frames[-1]})" if frames else ""
    return (message[:600] or lines[-1]) + where


def _failures(status: Mapping[str, Any]) -> list[tuple[str, str | None]]:
    out: list[tuple[str, str | None]] = []
    if status and status["connector"]["state"] == "FAILED":
        out.append(("the connector", status["connector"].get("trace")))
    for task in status.get("tasks", []) if status else []:
        if task["state"] == "FAILED":
            out.append((f"task {task['id']}", task.get("trace")))
    return out


def await_running(
    w: WorkerHandle,
    name: str,
    *,
    when: str,
    tasks: int | None = None,
    timeout: float | None = None,
    why: str = "",
) -> dict[str, Any]:
    """Wait until the connector and its tasks (``tasks`` of them, if given) are RUNNING.

    Fails at once when the connector or a task is FAILED, with its exception; ``when`` says at
    which step (``after POST /connectors/c/restart``), ``why`` adds to what is expected.
    ``timeout`` defaults to :data:`STATE_TIMEOUT_S`.
    """
    count = "" if tasks is None else f" ({tasks} task{'s' if tasks != 1 else ''})"
    expected = f"connector {name} and its tasks{count} to be RUNNING {when}" + (
        f" ({why})" if why else ""
    )

    def reached() -> dict[str, Any] | None:
        status = w.status(name)
        failed = _failures(status)
        if failed:
            who, trace = failed[0]
            raise CheckFailed(
                expected,
                f"{who} FAILED ({brief_status(status)}): {trace_head(trace)}",
                details=trace,
            )
        if not status or status["connector"]["state"] != "RUNNING":
            return None
        states = [t["state"] for t in status.get("tasks", [])]
        if not states or any(s != "RUNNING" for s in states):
            return None
        if tasks is not None and len(states) != tasks:
            return None
        return status

    return w.ctx.wait_for(
        reached,
        STATE_TIMEOUT_S if timeout is None else timeout,
        expected=expected,
        actual=lambda: f"the status is {brief_status(w.status(name))}",
    )


def call(w: WorkerHandle, method: str, path: str, body: Any = None) -> RestResponse:
    """Send a REST request an operator would; fail unless the worker accepts it (2xx)."""
    answer = w.rest.request(method, path, body)
    if not 200 <= answer.status < 300:
        raise CheckFailed(
            f"the worker to accept {method} {path}",
            f"it answered {answer.status}: {answer.text[:300]}",
        )
    return answer


# ---------------------------------------------------------------------------------------------
# Checks.


def _run_connector(
    ctx: CheckContext,
    w: WorkerHandle,
    flow: Flow,
    config: Mapping[str, str],
    event: str,
) -> str:
    """Create the connector, wait for RUNNING and a first batch; return the connector's name."""
    name = ctx.unique("rst")
    flow.send(BATCH, f"written before {event}")
    w.create(name, config)
    await_running(w, name, when="after it was created", tasks=None)
    flow.expect_all(f"the records written before {event}")
    return name


@check(
    "RST-01",
    "The connector restarts through the REST API without loss",
    fix=(
        "Make ``start()`` work on a fresh instance with nothing left over from a previous one "
        "(release every resource in ``stop()``), and resume from the committed offsets as for "
        "OFF-01."
    ),
)
def connector_restart(ctx: CheckContext) -> None:
    """The connector restarts through the REST API without loss.

    Records flow, ``POST /connectors/{name}/restart`` restarts the connector (a new instance,
    ``start()`` called again in the same process), it is RUNNING again, and every record written
    before and after the restart is delivered (duplicates only for at-least-once connectors).
    """
    with ctx.driver() as d, ctx.worker() as w:
        flow = Flow.open(ctx, d)
        name = _run_connector(ctx, w, flow, flow.config(), "the restart")
        call(w, "POST", f"/connectors/{name}/restart")
        await_running(w, name, when=f"after POST /connectors/{name}/restart")
        flow.send(BATCH, "written after the restart")
        flow.expect_all("every record written before and after the connector restart")


@check(
    "RST-02",
    "A task restarts through the REST API without loss",
    fix=(
        "Release everything in the task's ``stop()`` (connections, files, threads) and resume "
        "from the committed offsets in ``start()``."
    ),
)
def task_restart(ctx: CheckContext) -> None:
    """A task restarts through the REST API without loss.

    Records flow, ``POST /connectors/{name}/tasks/0/restart`` stops task 0 (a clean stop) and
    starts a new instance of it from the committed offsets; it is RUNNING again, and every record
    written before and after the restart is delivered.
    """
    with ctx.driver() as d, ctx.worker() as w:
        flow = Flow.open(ctx, d)
        name = _run_connector(ctx, w, flow, flow.config(), "the task restart")
        call(w, "POST", f"/connectors/{name}/tasks/0/restart")
        await_running(w, name, when=f"after POST /connectors/{name}/tasks/0/restart")
        flow.send(BATCH, "written after the task restart")
        flow.expect_all("every record written before and after the task restart")


@check(
    "RST-03",
    "A failed task reports its trace and recovers with a restart, without loss",
    fix=(
        "After a restart resume from the committed offsets, not from where the failed task "
        "had read to, so that records it did not finish are read again."
    ),
)
def failed_task_recovery(ctx: CheckContext) -> None:
    """A failed task reports its trace and recovers with a restart, without loss.

    A harness SMT (``FailWhenFlagged``) makes the task fail on the next records: the task must
    reach FAILED with the failure's trace. Then, with the failure gone,
    ``POST /connectors/{name}/restart?onlyFailed=true&includeTasks=true`` restarts it: it is
    RUNNING again and every record - those before, at and after the failure - is delivered (the
    records the failed task did not finish are read again, not skipped).
    """
    flag = ctx.workdir / f"fail-{uuid.uuid4().hex[:8]}.flag"
    with ctx.driver() as d, ctx.worker() as w:
        flow = Flow.open(ctx, d)
        config = with_transform(
            flow.config(), "certifyfail", FailWhenFlagged, {"flag.file": str(flag)}
        )
        name = _run_connector(ctx, w, flow, config, "the failure")
        flag.touch()
        try:
            flow.send(BATCH, "written when the task failed")
            status = _await_failed_task(w, name)
        finally:
            flag.unlink(missing_ok=True)
        failed = [t for t in status["tasks"] if t["state"] == "FAILED"]
        trace = failed[0].get("trace") or ""
        if INJECTED not in trace:
            raise CheckFailed(
                "the failed task's status to carry the trace of the failure (the injected "
                "ConnectException)",
                f"task {failed[0]['id']} is FAILED with {trace_head(trace)}",
                details=trace or None,
            )
        path = f"/connectors/{name}/restart?onlyFailed=true&includeTasks=true"
        call(w, "POST", path)
        await_running(w, name, when=f"after POST {path}")
        flow.send(BATCH, "written after the recovery")
        flow.expect_all("every record written before, at and after the task failure")


def _await_failed_task(w: WorkerHandle, name: str) -> dict[str, Any]:
    def failed() -> dict[str, Any] | None:
        status = w.status(name)
        if any(t["state"] == "FAILED" for t in status.get("tasks", [])):
            return status
        return None

    return w.ctx.wait_for(
        failed,
        STATE_TIMEOUT_S,
        expected="the task to reach FAILED when a transformation of its records raises a "
        "ConnectException",
        actual=lambda: f"the status is {brief_status(w.status(name))}",
    )


@check(
    "RST-04",
    "Nothing flows while the connector is paused; resume delivers everything",
    fix=(
        "Return from ``poll()`` and ``put()`` within a second or so even when there is "
        "nothing to do (wait on the external system with a timeout), so that the worker can "
        "pause the task."
    ),
)
def pause_resume(ctx: CheckContext) -> None:
    """Nothing flows while the connector is paused; resume delivers everything.

    After ``PUT /connectors/{name}/pause`` the connector and its tasks report PAUSED (a task that
    blocks in ``poll()``/``put()`` cannot be paused), records written while paused do not arrive
    during a few seconds' watch, and after ``PUT .../resume`` every record is delivered.
    """
    with ctx.driver() as d, ctx.worker() as w:
        flow = Flow.open(ctx, d)
        name = _run_connector(ctx, w, flow, flow.config(), "the pause")
        call(w, "PUT", f"/connectors/{name}/pause")
        _await_paused(w, name)
        before = len(flow.snapshot())
        paused_ids = set(flow.send(BATCH, "written while PAUSED"))
        leaked = _watch(flow, paused_ids, before)
        if leaked:
            raise CheckFailed(
                "no record written while the connector is PAUSED to be delivered before it is "
                "resumed",
                f"{len(leaked)} of the {len(paused_ids)} records written while PAUSED were "
                f"delivered within {PAUSE_WINDOW_S:g}s (ids {sorted(leaked, key=repr)[:10]}), "
                f"with the connector and its tasks reporting PAUSED "
                f"({brief_status(w.status(name))})",
            )
        call(w, "PUT", f"/connectors/{name}/resume")
        await_running(w, name, when=f"after PUT /connectors/{name}/resume")
        flow.expect_all("every record written before and during the pause, after the resume")


def _await_paused(w: WorkerHandle, name: str) -> None:
    def paused() -> bool:
        status = w.status(name)
        if _failures(status):
            who, trace = _failures(status)[0]
            raise CheckFailed(
                f"connector {name} and its tasks to be PAUSED after PUT /connectors/{name}/pause",
                f"{who} FAILED: {trace_head(trace)}",
                details=trace,
            )
        states = [t["state"] for t in status.get("tasks", [])]
        return bool(
            status
            and status["connector"]["state"] == "PAUSED"
            and states
            and all(s == "PAUSED" for s in states)
        )

    w.ctx.wait_for(
        paused,
        PAUSE_TIMEOUT_S,
        expected=f"connector {name} and its tasks to be PAUSED after PUT /connectors/{name}/pause "
        "(the worker pauses a task between two poll()/put() calls, so a task must return from "
        "them within about a second)",
        actual=lambda: f"the status is still {brief_status(w.status(name))}",
    )


def _watch(flow: Flow, paused_ids: set[int], before: int) -> set[Hashable]:
    """Watch the output for ``PAUSE_WINDOW_S``; return the paused ids seen (stop early)."""
    deadline = time.monotonic() + PAUSE_WINDOW_S
    seen = before
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return set()
        ids = flow.snapshot(wait=remaining, more_than=seen)
        leaked: set[Hashable] = set(ids) & set(paused_ids)
        if leaked:
            return leaked
        seen = max(seen, len(ids))
        if flow.ctx.kind == "sink":
            time.sleep(min(0.1, max(deadline - time.monotonic(), 0)))


# ---------------------------------------------------------------------------------------------
# RST-05: stop() timing and threads, without a worker.


@check(
    "RST-05",
    "stop() returns promptly and leaves no thread behind",
    fix=(
        "In ``stop()`` set a ``threading.Event`` the task's threads watch, close connections "
        "so that blocked calls return, and join the threads it started; never block "
        "``stop()`` on a slow call."
    ),
)
def clean_stop(ctx: CheckContext) -> None:
    """stop() returns promptly and leaves no thread behind.

    The connector and its tasks run in this process (no worker): records go through them, then
    each task's ``stop()`` (called from another thread, as the worker does) and the connector's
    ``stop()`` must return within 5 s, and every thread they started must end within 10 s after
    (compared with the threads that existed before; leftovers are named).
    """
    with ctx.driver() as d:
        before = {t.ident for t in threading.enumerate()}
        if ctx.kind == "source":
            durations = _run_source_and_stop(ctx, d)
        else:
            durations = _run_sink_and_stop(ctx, d)
        slow = {who: took for who, took in durations.items() if took is None or took > STOP_LIMIT_S}
        leftover = _leftover_threads(before)
    problems = []
    for who, took in slow.items():
        if took is None:
            problems.append(f"{who} stop() did not return within {STOP_WAIT_S:g}s")
        else:
            problems.append(f"{who} stop() took {took:.1f}s")
    if leftover:
        shown = ", ".join(
            f"{t.name!r} ({'daemon' if t.daemon else 'non-daemon'})" for t in leftover
        )
        problems.append(
            f"{len(leftover)} thread(s) started by the connector still run "
            f"{THREAD_GRACE_S:g}s after stop(): {shown}"
        )
    if problems:
        timings = ", ".join(
            f"{who} {'>' + format(STOP_WAIT_S, 'g') if t is None else format(t, '.2f')}s"
            for who, t in durations.items()
        )
        raise CheckFailed(
            f"every stop() to return within {STOP_LIMIT_S:g}s and every thread the connector "
            "started to end",
            "; ".join(problems),
            details=f"stop() durations: {timings}",
        )


def _timed_stop(who: str, fn: Callable[[], None]) -> float | None:
    """Call ``fn`` on another thread; the seconds it took, None if it did not return in time.

    Raises:
        CheckFailed: ``fn`` raised.
    """
    errors: list[BaseException] = []

    def call() -> None:
        try:
            fn()
        except BaseException as exc:  # noqa: BLE001 - reported as the check's failure
            errors.append(exc)

    thread = threading.Thread(target=call, name=f"certify-rst05-stop-{who}", daemon=True)
    start = time.monotonic()
    thread.start()
    thread.join(STOP_WAIT_S)
    took = time.monotonic() - start
    if thread.is_alive():
        return None
    if errors:
        raise CheckFailed(
            f"{who} stop() to return normally",
            f"it raised {type(errors[0]).__name__}: {errors[0]}",
        )
    return took


def _run_source_and_stop(ctx: CheckContext, d: Any) -> dict[str, float | None]:
    connector_class = ctx.connector_class
    assert issubclass(connector_class, SourceConnector)
    streams = max(1, min(int(d.streams), 2))
    ids = ctx.ids(BATCH)
    for stream in range(streams):
        d.write_records(ids[stream::streams], stream=stream)
    config = {"name": ctx.unique("rst"), **ctx.connector_config(d, ctx.topic(), tasks_max=streams)}
    probe = SourceProbe(connector_class, config, max_tasks=streams)
    try:
        probe.start()
        records = probe.poll(count=len(ids), timeout=30.0)
    except Exception as exc:  # noqa: BLE001 - the connector's failure, reported as such
        probe.stop()
        raise CheckFailed(
            "the connector and its tasks to start and emit the records written",
            f"it raised {type(exc).__name__}: {exc}",
        ) from None
    if not records:
        probe.stop()
        raise CheckFailed(
            "the tasks to emit the records written before stopping them",
            f"they emitted nothing in 30s ({len(ids)} records written)",
        )
    tasks, probe.tasks = probe.tasks, []
    connector, probe.connector = probe.connector, None
    durations: dict[str, float | None] = {}
    for index, task in enumerate(tasks):
        durations[f"task {index}"] = _timed_stop(f"task {index}", task.stop)
    if connector is not None:
        durations["connector"] = _timed_stop("connector", connector.stop)
    return durations


class _SinkConnectorContext(SinkConnectorContext):
    def __init__(self) -> None:
        self.errors: list[BaseException] = []

    def request_task_reconfiguration(self) -> None:
        """Ignored: the check runs the task configs it asked for once."""

    def raise_error(self, error: BaseException) -> None:
        self.errors.append(error)


class _SinkTaskContext(SinkTaskContext):
    def __init__(self, configs: dict[str, str], assignment: set[TopicPartition]) -> None:
        self._configs = configs
        self._assignment = assignment

    def configs(self) -> dict[str, str]:
        return dict(self._configs)

    def offset(self, target: Any, offset: int | None = None, /) -> None:
        """Ignored: the check hands the records over once, from offset 0."""

    def timeout(self, timeout_ms: int) -> None:
        """Ignored: a retriable failure fails the check."""

    def assignment(self) -> set[TopicPartition]:
        return set(self._assignment)

    def pause(self, *partitions: TopicPartition) -> None:
        """Ignored."""

    def resume(self, *partitions: TopicPartition) -> None:
        """Ignored."""

    def request_commit(self) -> None:
        """Ignored: the check commits once, after its batch."""

    def errant_record_reporter(self) -> None:
        return None


def _run_sink_and_stop(ctx: CheckContext, d: Any) -> dict[str, float | None]:
    connector_class = ctx.connector_class
    assert issubclass(connector_class, SinkConnector)
    topic = ctx.topic()
    config = {"name": ctx.unique("rst"), **ctx.connector_config(d, topic)}
    partition = TopicPartition(topic, 0)
    data = ctx.sink_records(d, ctx.ids(BATCH))
    records = [
        SinkRecord(topic, 0, key.schema, key.value, value.schema, value.value, offset)
        for offset, (key, value) in enumerate(data)
    ]
    connector = connector_class()
    task: SinkTask | None = None
    step = "start the connector"
    try:
        connector.initialize(_SinkConnectorContext())
        connector.start(dict(config))
        step = "generate the task configs"
        task_config = dict(connector.task_configs(1)[0])
        step = "start the task"
        made = connector.task_class()()
        assert isinstance(made, SinkTask)
        task = made
        task.initialize(_SinkTaskContext(task_config, {partition}))
        task.start(task_config)
        step = "open the partition"
        task.open([partition])
        step = "put the records"
        task.put(records)
        step = "commit (pre_commit, which flushes)"
        task.pre_commit({partition: OffsetAndMetadata(len(records))})
        step = "close the partition"
        task.close([partition])
    except Exception as exc:  # noqa: BLE001 - the connector's failure, reported as such
        if task is not None:
            _timed_stop("task 0", task.stop)
        _timed_stop("connector", connector.stop)
        raise CheckFailed(
            "the sink to take records directly: start, open, put, pre_commit, close",
            f"it raised {type(exc).__name__} when asked to {step}: {exc}",
        ) from None
    return {
        "task 0": _timed_stop("task 0", task.stop),
        "connector": _timed_stop("connector", connector.stop),
    }


def _leftover_threads(before: set[int | None]) -> list[threading.Thread]:
    """The threads started since ``before`` that are still alive after a grace period."""

    def alive() -> list[threading.Thread]:
        return [
            t
            for t in threading.enumerate()
            if t.ident not in before and t.is_alive() and not t.name.startswith("certify-")
        ]

    deadline = time.monotonic() + THREAD_GRACE_S
    while True:
        left = alive()
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.1)
