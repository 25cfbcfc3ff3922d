"""OFF-13: a source that declares exactly-once support delivers each record once across crashes.

The connector runs with ``exactly.once.support=required`` on a distributed worker with
``exactly.once.source.support=enabled`` (no Spark: the driver and its one worker share a
process, :mod:`harness.certify._eos_worker`), which writes its records and offsets in Kafka
transactions. The process is killed with ``kill -9`` twice while records are being written and
restarted each time; a ``read_committed`` reader must then find every record exactly once.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Hashable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from cdk import ExactlyOnceSupport
from harness._driver import SourceDriver
from harness.certify._checks import CheckFailed, CheckSkipped, check
from harness.certify._committed import UnsupportedFetch, read_committed
from harness.certify._context import JSON_CONVERTER, CheckContext, DecodedRecord
from harness.certify._rest import RestClient
from harness.certify.suites.off._common import _BATCH
from harness.certify.suites.off._sources import _source_class, _write

__all__: list[str] = []

#: How long the records may take to be delivered after the last restart.
_DELIVERY_S = 90.0
#: The crashes, each after this many more records were delivered.
_KILLS = 2


@check(
    "OFF-13",
    "Exactly-once: each record once across crashes (sources that declare it)",
    kinds=("source",),
    exclusive="kafka",
    fix=(
        "Declare ``exactly_once_support`` SUPPORTED only if a task resumed from the last "
        "committed offset emits exactly the records after it: give each record the offset of "
        "that record itself (never a position read ahead), never two records the same offset, "
        "and with ``transaction.boundary=connector`` commit the transaction through "
        "``self.context.transaction_context``."
    ),
)
def source_exactly_once(ctx: CheckContext) -> None:
    """Each record once, read ``read_committed``, across two ``kill -9`` of the worker.

    Applies to a source connector whose ``exactly_once_support(config)`` answers SUPPORTED.
    Records are written steadily; the connector runs with ``exactly.once.support=required`` on
    a distributed worker with exactly-once enabled, in a process of its own, killed with SIGKILL
    twice once some records were delivered, restarted each time on the same Kafka topics. After
    the last restart every record written must be read once by a ``read_committed`` reader
    (the harness hides aborted transactions itself where the broker does not, as the embedded
    one); a ``read_uncommitted`` reader's extra copies are fine. A connector that declares
    exactly-once support and cannot run with it (refused, or its task fails) fails the check.
    """
    cls = _source_class(ctx)
    name = ctx.unique("off13")
    topic = ctx.topic()
    with ctx.driver() as d:
        config = {**ctx.connector_config(d, topic), "exactly.once.support": "required"}
        declared = _declared(cls, config)
        if declared is not ExactlyOnceSupport.SUPPORTED:
            raise CheckSkipped(
                f"{ctx.connector_class_name}.exactly_once_support() answers {declared!r} "
                "for the example config",
                because="no-exactly-once",
            )
        props = _properties(ctx)
        ctx.evidence_config(config)
        written = _write(ctx, d, _BATCH // 2)
        with contextlib.ExitStack() as held:
            # each worker's process starts (imports, makes its driver) while the one before
            # runs, and starts its driver only when its turn comes: one driver at a time
            following = held.enter_context(_held_worker(ctx, props, f"{name}-1"))
            for crash in range(1, _KILLS + 1):
                with _worker(ctx, following) as worker:
                    label = f"{name}-{crash + 1}" if crash < _KILLS else f"{name}-last"
                    following = held.enter_context(_held_worker(ctx, props, label))
                    if crash == 1:
                        _create(ctx, worker, name, config)
                    _wait_running(ctx, worker, name)
                    more = _write(ctx, d, _BATCH // 2)
                    written += more
                    # some of the new records committed, the rest still on their way
                    _await_committed(ctx, d, topic, written[: len(written) - len(more) // 2])
                    worker.kill()
                ctx.evidence(f"kill -9 number {crash}", "after records were committed, mid-stream")
                written += _write(ctx, d, _BATCH // 4)  # written while no worker runs
            with _worker(ctx, following) as worker:
                _wait_running(ctx, worker, name)
                got = _await_committed(ctx, d, topic, written, timeout=_DELIVERY_S, fail=False)
                worker.stop()
        ctx.compare_ids(
            written,
            got,
            what=f"read read_committed after {_KILLS} kill -9 of the exactly-once worker "
            f"and a restart each time ({len(written)} records written)",
        )


def _declared(cls: type[Any], config: Mapping[str, str]) -> Any:
    try:
        return cls().exactly_once_support(dict(config))
    except Exception as exc:  # noqa: BLE001 - the connector's own error is reported
        raise CheckFailed(
            "exactly_once_support(config) to answer",
            f"it raised {type(exc).__name__}: {exc}",
        ) from None


def _properties(ctx: CheckContext) -> dict[str, str]:
    group = ctx.unique("eos")
    return {
        **{k: v for k, v in ctx.worker_properties().items() if k != "offset.storage.file.filename"},
        "group.id": group,
        "config.storage.topic": f"{group}-configs",
        "offset.storage.topic": f"{group}-offsets",
        "status.storage.topic": f"{group}-status",
        "config.storage.replication.factor": "1",
        "offset.storage.replication.factor": "1",
        "status.storage.replication.factor": "1",
        "offset.storage.partitions": "5",
        "status.storage.partitions": "1",
        "key.converter": JSON_CONVERTER,
        "value.converter": JSON_CONVERTER,
        "exactly.once.source.support": "enabled",
        "session.timeout.ms": "2500",
        "heartbeat.interval.ms": "500",
    }


class _Worker:
    def __init__(self, proc: subprocess.Popen[str], rest: RestClient, log: Path) -> None:
        self.proc = proc
        self.rest = rest
        self.log = log

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(30)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.kill()

    def tail(self) -> str:
        try:
            text = self.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-15:])


@contextlib.contextmanager
def _held_worker(ctx: CheckContext, props: Mapping[str, str], label: str) -> Iterator[_Worker]:
    """A worker process that made its driver and waits to start it (killed on exit)."""
    path = ctx.workdir / f"{label}.json"
    path.write_text(json.dumps(dict(props)), encoding="utf-8")
    log = ctx.workdir / f"{label}.log"
    env = dict(os.environ)
    roots = [str(p) for p in ctx.project.import_roots] + [
        p for p in sys.path if p and Path(p).is_dir()
    ]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(roots))
    cls = ctx.connector_class
    with log.open("w", encoding="utf-8") as err:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "harness.certify._eos_worker",
                str(path),
                f"{cls.__module__}:{cls.__qualname__}",
                "--hold",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            env=env,
        )
    worker = _Worker(proc, RestClient("http://127.0.0.1"), log)
    try:
        yield worker
    finally:
        worker.kill()
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


@contextlib.contextmanager
def _worker(ctx: CheckContext, worker: _Worker) -> Iterator[_Worker]:
    """Start the driver of a held worker; kill it on exit."""
    proc = worker.proc
    assert proc.stdin is not None
    assert proc.stdout is not None
    try:
        line = proc.stdout.readline()  # the process prints HELD, or ends
        if line.startswith("HELD"):
            with contextlib.suppress(OSError):  # it ended: it prints nothing more
                proc.stdin.write("go\n")
                proc.stdin.flush()
            line = proc.stdout.readline()  # then READY, or ends
        if not line.startswith("READY "):
            raise CheckFailed(
                "the exactly-once worker to start",
                f"it printed {line.strip()!r}: {worker.tail()}",
            )
        worker.rest = RestClient(line.split()[1])
        yield worker
    finally:
        worker.kill()


def _create(ctx: CheckContext, worker: _Worker, name: str, config: Mapping[str, str]) -> None:
    answer = worker.rest.post("/connectors", {"name": name, "config": dict(config)})
    if answer.status != 201:
        raise CheckFailed(
            "the connector, which declares exactly-once support, to be created with "
            "exactly.once.support=required on a worker with exactly-once enabled",
            f"POST /connectors answered {answer.status}: {answer.text[:500]}",
        )


def _wait_running(ctx: CheckContext, worker: _Worker, name: str) -> None:
    def running() -> bool:
        answer = worker.rest.get(f"/connectors/{name}/status")
        if answer.status != 200:
            return False
        status = answer.json
        for task in status.get("tasks", []):
            if task.get("state") == "FAILED":
                raise CheckFailed(
                    "the connector's tasks to run with exactly-once support",
                    f"task {task.get('id')} FAILED: {str(task.get('trace'))[:800]}",
                )
        tasks = status.get("tasks", [])
        return bool(tasks) and all(t.get("state") == "RUNNING" for t in tasks)

    ctx.wait_for(
        running,
        60,
        expected="the connector and its tasks to be RUNNING with exactly-once support",
        actual=lambda: f"they are not; the worker's log ends: {worker.tail()}",
    )


def committed_records(ctx: CheckContext, prefix: str) -> list[DecodedRecord]:
    """The topics named ``prefix...`` read as a Kafka ``read_committed`` consumer reads them."""
    if not ctx.kafka_config:
        from cdk.kafka import new_admin

        admin = new_admin(ctx.admin_config)
        metadata = admin.list_topics(timeout=10)
        brokers = {b.id: (str(b.host), int(b.port)) for b in metadata.brokers.values()}
        try:
            messages = [
                message
                for name, meta in sorted(metadata.topics.items())
                if name.startswith(prefix)
                for partition, info in sorted(meta.partitions.items())
                for message in read_committed(*brokers[info.leader], name, partition)
            ]
            return [ctx._decode(m) for m in messages]
        except (UnsupportedFetch, KeyError, OSError):
            pass
    return ctx.read_records(prefix, idle=1.0, timeout=15.0)  # librdkafka: read_committed


def _await_committed(
    ctx: CheckContext,
    d: SourceDriver,
    topic: str,
    ids: Sequence[Hashable],
    timeout: float = 30.0,
    *,
    fail: bool = True,
) -> list[Hashable]:
    """The ids read ``read_committed`` once all of ``ids`` are in (at the deadline, if not).

    Raises:
        CheckFailed: ``fail`` and some are still missing at the deadline (they are named).
    """
    wanted = set(ids)
    seen: list[Hashable] = []

    def arrived() -> bool:
        seen[:] = ctx.source_ids(d, committed_records(ctx, topic))
        return wanted <= set(seen)

    if not fail:
        with contextlib.suppress(CheckFailed):
            ctx.wait_for(arrived, timeout, expected="", actual=str, interval=0.5)
        return seen
    ctx.wait_for(
        arrived,
        timeout,
        expected=f"the {len(wanted)} records to be committed to {topic}",
        actual=lambda: (
            f"{len(wanted - set(seen))} of them are missing (ids {_ids(wanted - set(seen))})"
        ),
        interval=0.5,
    )
    return seen


def _ids(ids: set[Hashable]) -> str:
    def order(value: Hashable) -> tuple[int, float, str]:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return (0, float(value), "")
        return (1, 0.0, str(value))

    shown = sorted(ids, key=order)
    return ", ".join(str(i) for i in shown[:10]) + (" ..." if len(shown) > 10 else "")
