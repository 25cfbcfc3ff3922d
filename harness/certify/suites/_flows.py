"""Flows shared by the worker suites: records into a connector and the state waits.

:class:`Flow` sends records into a connector of either kind (a source's input streams, a
sink's topic) and reads what came out; :func:`await_running` waits for a connector and its
tasks to be RUNNING, failing at once with a task's exception; :func:`call` sends a REST request
an operator would. The RST and RBL suites drive their connectors with them.
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

from harness._driver import Delivery
from harness.certify._checks import CheckFailed
from harness.certify._context import CheckContext, WorkerHandle
from harness.certify._rest import RestResponse

__all__ = [
    "BATCH",
    "DELIVERY_TIMEOUT_S",
    "STATE_TIMEOUT_S",
    "Flow",
    "await_running",
    "brief_status",
    "call",
    "failures",
    "trace_head",
]

BATCH = 40
#: How long records may take to arrive, and connectors and tasks to change state (read when
#: a check runs: the kit's tests shorten them where a broken connector fails at a deadline).
DELIVERY_TIMEOUT_S = 30.0
STATE_TIMEOUT_S = 45.0


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


def failures(status: Mapping[str, Any]) -> list[tuple[str, str | None]]:
    """What is FAILED in a connector status (the connector, its tasks), with each trace."""
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
    settled_s: float | None = None,
) -> dict[str, Any]:
    """Wait until the connector and its tasks (``tasks`` of them, if given) are RUNNING.

    Fails at once when the connector or a task is FAILED, with its exception; ``when`` says at
    which step (``after POST /connectors/c/restart``), ``why`` adds to what is expected.
    ``timeout`` defaults to :data:`STATE_TIMEOUT_S`. With ``settled_s``, it also fails once
    everything has been RUNNING with another number of tasks for that long (the connector
    settled there: waiting out the timeout would only delay the verdict). The wait's time is
    recorded as evidence.
    """
    start = time.monotonic()
    other_count_since: list[float] = []  # since when all has run at another task count
    count = "" if tasks is None else f" ({tasks} task{'s' if tasks != 1 else ''})"
    expected = f"connector {name} and its tasks{count} to be RUNNING {when}" + (
        f" ({why})" if why else ""
    )

    def reached() -> dict[str, Any] | None:
        status = w.status(name)
        failed = failures(status)
        if failed:
            who, trace = failed[0]
            raise CheckFailed(
                expected,
                f"{who} FAILED ({brief_status(status)}): {trace_head(trace)}",
                details=trace,
            )
        states = [t["state"] for t in (status or {}).get("tasks", [])]
        if (
            not status
            or status["connector"]["state"] != "RUNNING"
            or not states
            or any(s != "RUNNING" for s in states)
        ):
            other_count_since.clear()  # not settled: something is still changing
            return None
        if tasks is not None and len(states) != tasks:
            now = time.monotonic()
            if not other_count_since:
                other_count_since.append(now)
            elif settled_s is not None and now - other_count_since[0] >= settled_s:
                raise CheckFailed(
                    expected,
                    f"it settled at {len(states)} RUNNING task(s) for {settled_s:g}s "
                    f"({brief_status(status)})",
                )
            return None
        other_count_since.clear()
        return status

    status = w.ctx.wait_for(
        reached,
        STATE_TIMEOUT_S if timeout is None else timeout,
        expected=expected,
        actual=lambda: f"the status is {brief_status(w.status(name))}",
    )
    w.ctx.evidence(f"time to RUNNING {when} (s)", round(time.monotonic() - start, 2))
    return status


def call(w: WorkerHandle, method: str, path: str, body: Any = None) -> RestResponse:
    """Send a REST request an operator would; fail unless the worker accepts it (2xx)."""
    answer = w.rest.request(method, path, body)
    if not 200 <= answer.status < 300:
        raise CheckFailed(
            f"the worker to accept {method} {path}",
            f"it answered {answer.status}: {answer.text[:300]}",
        )
    return answer
