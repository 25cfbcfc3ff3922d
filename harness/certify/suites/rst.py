"""The RST suite: restarts through REST, failed-task recovery, pause and resume, clean stop.

A connector survives REST restarts, a failed task recovers, pause really pauses, and ``stop()``
is prompt and leaves no thread behind.

Each worker check runs one connector on an embedded worker driven through its REST API, like an
operator would: records go in before and after the event (restart, failure, pause), and every
one of them must come out. The clean-stop check (RST-05) drives the connector in this process,
without a worker, to time each ``stop()`` and compare the threads before and after.

The flows (records into a connector of either kind, and what came out) and the state waits
come from :mod:`harness.certify.suites._flows`, shared with the RBL suite.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Hashable, Mapping
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
from harness.certify._checks import CheckFailed, check
from harness.certify._context import CheckContext, WorkerHandle
from harness.certify._probe import acknowledges
from harness.certify.suites import _flows, _spark
from harness.certify.suites._faults import INJECTED, FailWhenFlagged, with_transform
from harness.certify.suites._flows import (
    BATCH,
    Flow,
    await_running,
    brief_status,
    call,
    failures,
    trace_head,
)
from harness.certify.suites._spark import SPARK_NEEDS

__all__: list[str] = []

#: How long RST-04 gives the tasks to report PAUSED, then watches for records while paused.
PAUSE_TIMEOUT_S = 20.0
PAUSE_WINDOW_S = 3.0
#: The most a ``stop()`` may take (RST-05), and how long threads get to end after it.
STOP_LIMIT_S = 5.0
STOP_WAIT_S = 15.0
THREAD_GRACE_S = 10.0


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
        ctx.evidence("failed task's trace", trace_head(trace))
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
        _flows.STATE_TIMEOUT_S,
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
        ctx.evidence("written while PAUSED", len(paused_ids))
        ctx.evidence(f"delivered while PAUSED (watched {PAUSE_WINDOW_S:g} s)", len(leaked))
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
        if failures(status):
            who, trace = failures(status)[0]
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
    each task's ``stop()`` (called as the worker does: from another thread, or on the thread
    that polled for a task that overrides ``commit_record`` or ``commit``) and the connector's
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
    ctx.evidence(
        "stop() took (s)",
        {who: None if took is None else round(took, 3) for who, took in durations.items()},
    )
    ctx.evidence("threads left running", [t.name for t in leftover])
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
    probe = ctx.probe(connector_class, config, max_tasks=streams)
    task_class = connector_class().task_class()
    if acknowledges(task_class):
        # the worker stops such a task on its own thread once its polls ended: so does this
        durations = _poll_and_stop_on_one_thread(probe, len(ids))
    else:
        _poll_written(probe, len(ids))
        tasks, probe.tasks = probe.tasks, []
        durations = {}
        for index, task in enumerate(tasks):
            durations[f"task {index}"] = _timed_stop(f"task {index}", task.stop)
    connector, probe.connector = probe.connector, None
    if connector is not None:
        durations["connector"] = _timed_stop("connector", connector.stop)
    return durations


def _poll_written(probe: Any, count: int) -> None:
    """Start the probe and poll the records written, on the calling thread.

    Raises:
        CheckFailed: the connector raised, or emitted nothing (the probe is stopped).
    """
    try:
        probe.start()
        records = probe.poll(count=count, timeout=30.0)
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
            f"they emitted nothing in 30s ({count} records written)",
        )


def _poll_and_stop_on_one_thread(probe: Any, count: int) -> dict[str, float | None]:
    """Poll, then stop every task, all on one thread of the harness (the task's thread)."""
    durations: dict[str, float | None] = {}
    failure: list[BaseException] = []
    stopping: dict[str, float] = {}

    def run() -> None:
        try:
            _poll_written(probe, count)
            tasks, probe.tasks = probe.tasks, []
            for index, task in enumerate(tasks):
                who = f"task {index}"
                durations[who] = None
                stopping[who] = time.monotonic()
                task.stop()
                durations[who] = time.monotonic() - stopping[who]
        except BaseException as exc:  # noqa: BLE001 - reported on the check's thread
            failure.append(exc)

    thread = threading.Thread(target=run, name="certify-rst05-task", daemon=True)
    thread.start()
    thread.join(60.0 + STOP_WAIT_S)
    if failure:
        if isinstance(failure[0], CheckFailed):
            raise failure[0]
        raise CheckFailed(
            "every task stop() to return normally",
            f"it raised {type(failure[0]).__name__}: {failure[0]}",
        )
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
    ctx.evidence_config(config)
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
        ctx.evidence("put", len(records))
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


# ---------------------------------------------------------------------------------------------
# The distributed runtime (bodies in _spark, with the other distributed checks).


@check(
    "RST-06",
    "A restarted distributed driver recovers the target state, tasks and offsets",
    needs=SPARK_NEEDS,
    exclusive=True,
    fix=(
        "Resume each stream strictly after its stored offset in ``start()`` (sources) and "
        "commit only what is stored (sinks); the worker stores both in Kafka topics, which "
        "is all a restarted driver has."
    ),
)
def driver_restart(ctx: CheckContext) -> None:
    """A distributed driver restarted from its Kafka topics brings the connector back as it was.

    The connector runs in distributed mode; its records are delivered, then it is paused and
    the driver is stopped cleanly. A new driver with the same worker properties must show the
    connector PAUSED with the same number of tasks (target state and task configs read back
    from the config topic); resumed, it delivers the records written meanwhile, resuming from
    the offsets stored before the stop: nothing is lost and, after a clean stop, nothing is
    delivered twice.
    """
    _spark.driver_restart(ctx)
