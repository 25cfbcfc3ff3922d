"""What the ERR checks share: a connector under test with its records, and small helpers."""

from __future__ import annotations

import time
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from cdk.converters import JsonConverter
from harness.certify._checks import CheckFailed
from harness.certify._context import CheckContext, WorkerHandle
from harness.certify.suites.err._traces import (
    describe_chain,
)

__all__ = ["DELIVERY_S", "RecordFlow", "json_converter", "sample"]

#: How long records may take to arrive (after an outage, or in the first place).
DELIVERY_S = 30.0


class RecordFlow:
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
                    f"(missing ids {sample(missing)}); the status is "
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


def sample(items: Sequence[Any], limit: int = 10) -> str:
    shown = ", ".join(repr(i) for i in items[:limit])
    return shown + (f", … ({len(items) - limit} more)" if len(items) > limit else "")


def json_converter(*, is_key: bool) -> JsonConverter:
    converter = JsonConverter()
    converter.configure({"schemas.enable": "true"}, is_key)
    return converter
