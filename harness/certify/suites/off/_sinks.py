"""Sink flows of the OFF suite: producing records, waiting for them, auditing commits."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence

from cdk.api import SinkConnector, SinkRecord, SinkTask
from cdk.runtime import EmbeddedWorker
from harness._driver import SinkDriver
from harness.certify._checks import CheckFailed
from harness.certify._context import CheckContext, WorkerHandle
from harness.certify._rest import RestClient
from harness.certify.suites.off._common import _DELIVERY_TIMEOUT, _fail_on_failed_task, _ids

__all__: list[str] = []


class _Produced:
    """The records the harness produced to a sink's topic, by id and by Kafka position."""

    def __init__(self, ctx: CheckContext, d: SinkDriver, topic: str) -> None:
        self.ctx = ctx
        self.d = d
        self.topic = topic
        self.ids: list[int] = []
        self.positions: dict[tuple[int, int], int] = {}

    def produce(self, count: int) -> list[int]:
        ids = self.ctx.ids(count)
        acks = self.ctx.produce(self.topic, self.ctx.sink_records(self.d, ids))
        for id_, position in zip(ids, acks, strict=True):
            self.positions[position] = id_
        self.ids += ids
        return ids

    def end_offsets(self) -> dict[int, int]:
        return _end_offsets(self.positions)


def _end_offsets(positions: Mapping[tuple[int, int], int]) -> dict[int, int]:
    ends: dict[int, int] = {}
    for partition, offset in positions:
        ends[partition] = max(ends.get(partition, 0), offset + 1)
    return ends


def _wait_sink(
    ctx: CheckContext,
    d: SinkDriver,
    name: str,
    topic: str,
    sent: _Produced,
    ids: Sequence[int],
    rest: RestClient,
) -> None:
    """Wait until the sink stored ``ids``, or its group committed everything produced so far.

    The second case lets a sink that writes late (on stop) through; the check then compares
    what is stored after a clean stop. A failed task fails the check at once.
    """
    group = f"connect-{name}"
    wanted = set(ids)
    ends = sent.end_offsets()

    def done() -> bool:
        if wanted <= set(d.read_back()):
            return True
        _fail_on_failed_task(rest, name, f"the sink to store the {len(wanted)} records produced")
        committed = ctx.committed_offsets(group, topic)
        return all(committed.get(p, -1) >= end for p, end in ends.items())

    ctx.wait_for(
        done,
        _DELIVERY_TIMEOUT,
        expected=f"the sink to store the {len(wanted)} records produced",
        actual=lambda: (
            f"it stored {len(wanted & set(d.read_back()))} of them and the group "
            f"{group} committed {ctx.committed_offsets(group, topic)} (end offsets {ends})"
        ),
        interval=0.3,
    )


class _CommitAudit:
    """Samples committed offsets, then the stored ids; fails on a record committed unstored."""

    def __init__(
        self,
        ctx: CheckContext,
        d: SinkDriver,
        group: str,
        topic: str,
        positions: Mapping[tuple[int, int], int],
    ) -> None:
        self.ctx = ctx
        self.d = d
        self.group = group
        self.topic = topic
        self.positions = positions
        self.last: dict[int, int] = {}
        self.samples = 0

    def sample(self) -> bool:
        """One sample (always False, to be usable in a wait predicate).

        Raises:
            CheckFailed: a committed offset covers a record the external system lacks.
        """
        committed = self.ctx.committed_offsets(self.group, self.topic)
        stored = set(self.d.read_back())  # read after the commit: it must include it
        self.last = committed
        self.samples += 1
        for partition, offset in sorted(committed.items()):
            below = [
                id_
                for (p, o), id_ in sorted(self.positions.items())
                if p == partition and o < offset
            ]
            missing = [id_ for id_ in below if id_ not in stored]
            if missing:
                raise CheckFailed(
                    "offsets to be committed only for records the sink has made durable "
                    "(every record below a committed offset is in the external system)",
                    f"the group {self.group} committed offset {offset} on partition "
                    f"{partition} of {self.topic}, but {len(missing)} of the {len(below)} "
                    f"records below it are not stored (ids {_ids(missing)}; {len(stored)} "
                    "stored): a crash now would lose them",
                )
        return False

    def reached(self, ends: Mapping[int, int]) -> bool:
        return bool(ends) and all(self.last.get(p, -1) >= end for p, end in ends.items())


@contextlib.contextmanager
def _recording_worker(
    ctx: CheckContext,
) -> Iterator[tuple[WorkerHandle, list[tuple[str, int, int]], str]]:
    """An embedded worker with a subclass of the sink connector that records what put() got.

    Yields the worker, the (topic, partition, offset) of every record its tasks' put() accepted,
    and the subclass's class name for ``connector.class``. The worker loads task classes by
    name, so both subclasses live in this module's namespace while the block runs.
    """
    base = ctx.connector_class
    if not issubclass(base, SinkConnector):
        raise CheckFailed("a sink connector", f"{ctx.connector_class_name} is not one")
    base_task = base().task_class()
    if not issubclass(base_task, SinkTask):
        raise CheckFailed(
            "the sink connector's task_class() to be a SinkTask", f"it is {base_task!r}"
        )
    puts: list[tuple[str, int, int]] = []

    def put(self: SinkTask, records: Sequence[SinkRecord]) -> None:
        base_task.put(self, records)
        puts.extend((r.topic, r.kafka_partition or 0, r.kafka_offset) for r in records)

    def task_class(self: SinkConnector) -> type[SinkTask]:
        return recording_task

    suffix = ctx.unique("").replace("-", "_")
    task_name = f"_OffRecordingTask{suffix}"
    connector_name = f"_OffRecordingConnector{suffix}"
    recording_task: type[SinkTask] = type(
        task_name, (base_task,), {"put": put, "__module__": __name__, "__qualname__": task_name}
    )
    recording: type[SinkConnector] = type(
        connector_name,
        (base,),
        {"task_class": task_class, "__module__": __name__, "__qualname__": connector_name},
    )
    namespace = globals()
    namespace[task_name] = recording_task
    namespace[connector_name] = recording
    try:
        worker = EmbeddedWorker(ctx.worker_properties(), rest=True, extra_plugins=[recording])
        worker.start()
        try:
            assert worker.rest_url is not None
            rest = RestClient(worker.rest_url)
            yield WorkerHandle(worker, rest, ctx), puts, f"{__name__}.{connector_name}"
        finally:
            worker.stop()
    finally:
        namespace.pop(task_name, None)
        namespace.pop(connector_name, None)
