"""The assignments topic: who leads, which worker runs which task, and the workers' heartbeats.

Kafka Connect's workers agree on assignments through the group protocol's own messages; the
kit's drivers and workers cannot add a protocol to the clients they use, so they keep that
traffic in a compacted topic of their own (``assignment.storage.topic``, one partition). A Java
worker never reads it: the config, offset and status topics keep Kafka Connect 3.9's formats.

The records (JSON values, string keys):

- ``leader``: the driver that leads, its REST URL (where the others forward writes) and its
  epoch, written when it takes the lead and renewed every heartbeat interval (its lease, see
  :mod:`._leader`), and once more, resigned, when it stops;
- ``assignment``: the whole assignment, versioned: worker id -> the tasks it runs, each with
  the task-config generation and the restart count it runs at;
- ``worker-<id>``: a worker's heartbeat: alive (what it runs, which assignment version it
  applied) or stopped;
- ``driver-<id>``: a driver that stopped; its workers stop too.

The leader writes ``leader`` and ``assignment`` in transactions (``transactional.id``
``connect-cluster-<group.id>``, as Kafka's leader writes the config topic when exactly-once
source support is on), so a deposed leader that wakes up is fenced by the broker and nothing it
writes is read; the workers write heartbeats with a plain producer. Everyone reads committed
records only.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cdk.errors import ConnectException
from cdk.runtime.distributed._assignor import AssignedTask
from cdk.runtime.util._kafka_log import KafkaBasedLog, LogRecord, LogWriter

__all__ = [
    "AssignmentLog",
    "AssignmentRecord",
    "Heartbeat",
    "LeaderRecord",
    "decode_tasks",
    "encode_tasks",
]

log = logging.getLogger("cdk.runtime.distributed")

LEADER_KEY = "leader"
ASSIGNMENT_KEY = "assignment"
WORKER_PREFIX = "worker-"
DRIVER_PREFIX = "driver-"


@dataclass(frozen=True)
class LeaderRecord:
    """The driver that leads.

    Attributes:
        driver: its id.
        url: its REST API's URL (``None`` without one).
        epoch: one more than the epoch of the leader before it.
        resigned: True when the leader stopped (a standby takes over at once).
        seen: when this process read the record (monotonic seconds; not written).
    """

    driver: str
    url: str | None
    epoch: int
    resigned: bool = False
    seen: float = field(default=0.0, compare=False)


@dataclass(frozen=True)
class AssignmentRecord:
    """One published assignment.

    Attributes:
        leader: the driver that computed it.
        epoch: that leader's epoch.
        version: increases with each assignment a leader publishes.
        workers: worker id -> the tasks it runs.
    """

    leader: str
    epoch: int
    version: int
    workers: Mapping[str, frozenset[AssignedTask]]

    def tasks_of(self, worker: str) -> frozenset[AssignedTask]:
        """What ``worker`` is to run."""
        return self.workers.get(worker, frozenset())


@dataclass(frozen=True)
class Heartbeat:
    """A worker's report.

    Attributes:
        worker: its id.
        driver: the driver whose host runs it.
        alive: False once it stopped.
        version: the assignment version it applied last (-1: none yet).
        tasks: what it runs (failed tasks included).
        seen: when this process read the heartbeat (monotonic seconds; not written).
    """

    worker: str
    driver: str
    alive: bool
    version: int
    tasks: frozenset[AssignedTask] = frozenset()
    seen: float = field(default=0.0, compare=False)


def encode_tasks(tasks: Iterable[AssignedTask]) -> list[list[Any]]:
    """Tasks as JSON: ``[connector, task, generation, restart]`` each, sorted."""
    return [[t.connector, t.task, t.generation, t.restart] for t in sorted(tasks)]


def decode_tasks(raw: Iterable[Any]) -> frozenset[AssignedTask]:
    """The tasks of :func:`encode_tasks`."""
    return frozenset(AssignedTask(str(c), int(n), int(g), int(r)) for c, n, g, r in raw)


def _dumps(value: Mapping[str, Any]) -> bytes:
    return json.dumps(value, separators=(",", ":"), sort_keys=True).encode("utf-8")


class AssignmentLog:
    """Reads and writes the assignments topic.

    Args:
        topic: ``assignment.storage.topic``.
        bootstrap_servers: the cluster.
        client_overrides: extra librdkafka settings (security and the like).
        replication_factor: when the topic is created.
        create: create the topic when missing (the drivers do; workers only follow it).
        on_change: called (from the reading thread) after records were read.
        timeout_s: how long one write or read to the end may take.
    """

    def __init__(
        self,
        topic: str,
        bootstrap_servers: str,
        client_overrides: Mapping[str, Any] | None = None,
        *,
        replication_factor: int = 3,
        create: bool = True,
        on_change: Callable[[], None] | None = None,
        timeout_s: float = 30.0,
    ) -> None:
        self.topic = topic
        self._on_change = on_change
        self._lock = threading.Lock()
        self._leader: LeaderRecord | None = None
        self._assignment: AssignmentRecord | None = None
        self._heartbeats: dict[str, Heartbeat] = {}
        self._stopped_drivers: set[str] = set()
        self._log = KafkaBasedLog(
            topic,
            bootstrap_servers,
            self._apply,
            client_overrides,
            partitions=1,
            replication_factor=replication_factor,
            purpose="assignment storage",
            timeout_s=timeout_s,
            create=create,
            transactional_writes=True,  # the leader's: a marker after each renewal
        )

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Create the topic if missing and read it from the beginning."""
        self._log.start()

    def stop(self) -> None:
        """Close the clients."""
        self._log.stop()

    def use_writer(self, writer: LogWriter | None) -> None:
        """Write through ``writer`` (the leader's transactions); ``None``: a plain producer."""
        self._log.use_writer(writer)

    # ------------------------------------------------------------------ reading
    def read_to_end(self) -> None:
        """Read everything written so far."""
        self._log.read_to_end()
        self._changed()

    def poll(self, timeout_s: float) -> bool:
        """Read what arrives within ``timeout_s``; whether anything did."""
        got = self._log.poll(timeout_s) > 0
        if got:
            self._changed()
        return got

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change()

    @property
    def leader(self) -> LeaderRecord | None:
        """The leader record read last."""
        with self._lock:
            return self._leader

    @property
    def assignment(self) -> AssignmentRecord | None:
        """The assignment read last."""
        with self._lock:
            return self._assignment

    def heartbeats(self) -> dict[str, Heartbeat]:
        """The last heartbeat of each worker (stopped ones included)."""
        with self._lock:
            return dict(self._heartbeats)

    def driver_stopped(self, driver: str) -> bool:
        """Whether ``driver`` wrote that it stopped (since it last started)."""
        with self._lock:
            return driver in self._stopped_drivers

    def _apply(self, record: LogRecord) -> None:
        raw_key, value, _partition, offset = record
        key = (raw_key or b"").decode("utf-8", errors="replace")
        try:
            data = json.loads(value) if value is not None else None
            with self._lock:
                self._apply_decoded(key, data)
        except (ValueError, KeyError, TypeError) as e:
            log.error("Discarding malformed assignments record %s at offset %d: %s", key, offset, e)

    def _apply_decoded(self, key: str, data: Any) -> None:
        if key == LEADER_KEY and data is not None:
            self._leader = LeaderRecord(
                str(data["driver"]),
                data.get("url"),
                int(data["epoch"]),
                bool(data.get("resigned", False)),
                seen=time.monotonic(),
            )
        elif key == ASSIGNMENT_KEY and data is not None:
            self._assignment = AssignmentRecord(
                leader=str(data["leader"]),
                epoch=int(data["epoch"]),
                version=int(data["version"]),
                workers={str(w): decode_tasks(t) for w, t in data["workers"].items()},
            )
        elif key.startswith(WORKER_PREFIX):
            worker = key[len(WORKER_PREFIX) :]
            if data is None:
                self._heartbeats.pop(worker, None)
                return
            self._heartbeats[worker] = Heartbeat(
                worker=worker,
                driver=str(data["driver"]),
                alive=bool(data["alive"]),
                version=int(data["version"]),
                tasks=decode_tasks(data.get("tasks", ())),
                seen=time.monotonic(),
            )
        elif key.startswith(DRIVER_PREFIX):
            driver = key[len(DRIVER_PREFIX) :]
            if data is not None and data.get("state") == "stopped":
                self._stopped_drivers.add(driver)
            else:
                self._stopped_drivers.discard(driver)
        else:
            log.debug("Ignoring assignments record %s", key)

    # ------------------------------------------------------------------ writing
    def _send(self, records: list[tuple[str, Mapping[str, Any] | None]]) -> None:
        encoded = [(k.encode("utf-8"), None if v is None else _dumps(v)) for k, v in records]
        try:
            self._log.send(encoded)
        except ConnectException:
            raise
        except Exception as e:
            raise ConnectException(
                f"Could not write to the assignments topic {self.topic}: {e}"
            ) from e

    def publish_leader(self, record: LeaderRecord) -> None:
        """Write that ``record.driver`` leads (the leader's transaction)."""
        self._send(
            [(LEADER_KEY, {"driver": record.driver, "url": record.url, "epoch": record.epoch})]
        )

    def publish_assignment(self, record: AssignmentRecord) -> None:
        """Write an assignment (the leader's transaction)."""
        self._send(
            [
                (
                    ASSIGNMENT_KEY,
                    {
                        "leader": record.leader,
                        "epoch": record.epoch,
                        "version": record.version,
                        "workers": {w: encode_tasks(t) for w, t in sorted(record.workers.items())},
                    },
                )
            ]
        )

    def publish_driver(self, driver: str, *, stopped: bool) -> None:
        """Write that ``driver`` started (clears an old stop) or stopped (its workers stop)."""
        self._send([(DRIVER_PREFIX + driver, {"state": "stopped" if stopped else "running"})])

    def __repr__(self) -> str:
        return f"AssignmentLog(topic={self.topic!r})"


class HeartbeatSender:
    """A worker's heartbeats: a plain producer to the assignments topic.

    Args:
        topic: the assignments topic.
        producer_config: librdkafka settings (``bootstrap.servers`` and security).
    """

    def __init__(self, topic: str, producer_config: Mapping[str, Any]) -> None:
        from cdk.kafka import new_producer

        self.topic = topic
        self._producer = new_producer({**producer_config, "acks": "all", "linger.ms": 0})

    def send(self, beat: Heartbeat, timeout_s: float = 10.0) -> None:
        """Write ``beat`` and wait for the broker's acknowledgement."""
        value = _dumps(
            {
                "driver": beat.driver,
                "alive": beat.alive,
                "version": beat.version,
                "tasks": encode_tasks(beat.tasks),
            }
        )
        self._producer.produce(self.topic, key=(WORKER_PREFIX + beat.worker).encode(), value=value)
        self._producer.flush(timeout_s)

    def close(self) -> None:
        """Flush and drop the producer."""
        self._producer.flush(5.0)
