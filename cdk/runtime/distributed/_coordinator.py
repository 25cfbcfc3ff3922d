"""The leader's side of the assignment: live workers, wanted tasks, published assignments.

The leading driver's herder calls :meth:`Coordinator.rebalance` after each change of the config
topic and on every heartbeat interval. It works out what should run (every task of every
connector that is not ``STOPPED``, at its committed generation and restart count), which workers
are alive (a heartbeat read less than ``session.timeout.ms`` ago, from a driver that has not
stopped), runs :func:`~cdk.runtime.distributed._assignor.assign` and publishes the result when it
changed. A task that no live worker can take is ``UNASSIGNED`` with the reason.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from cdk.runtime._status import ConnectorTaskId, State, Status, TargetState
from cdk.runtime.distributed._assignments import AssignmentLog, AssignmentRecord, LeaderRecord
from cdk.runtime.distributed._assignor import AssignedTask, Assignment, assign
from cdk.runtime.storage._config_store import KafkaConfigBackingStore
from cdk.runtime.storage._status_store import KafkaStatusBackingStore

__all__ = ["Coordinator"]

log = logging.getLogger("cdk.runtime.distributed")

NO_WORKER = (
    "No worker of the cluster is alive to run this task: the drivers' workers start with "
    "their Spark executors; it runs as soon as one heartbeats"
)


class Coordinator:
    """Publishes the assignments while its driver leads.

    Args:
        config_store: the config topic (what should run).
        assignments: the assignments topic (heartbeats in, assignments out).
        status: the status topic (``UNASSIGNED`` for tasks no worker can take).
        driver_id: the leading driver's id.
        session_timeout_s: a worker whose last heartbeat is older is gone.
        fence_zombies: with exactly-once sources, called for a connector whose new task
            configs were committed since its last task-count record: fences the previous
            generation's producers; whether its tasks may be assigned.
    """

    def __init__(
        self,
        config_store: KafkaConfigBackingStore,
        assignments: AssignmentLog,
        status: KafkaStatusBackingStore,
        *,
        driver_id: str,
        session_timeout_s: float,
        fence_zombies: Callable[[str], bool] | None = None,
    ) -> None:
        self._configs = config_store
        self._fence_zombies = fence_zombies
        self._assignments = assignments
        self._status = status
        self.driver_id = driver_id
        self.session_timeout_s = session_timeout_s
        self._lock = threading.Lock()
        self._epoch = 0
        self._version = 0
        self._published: Assignment = {}
        self._restarts: dict[ConnectorTaskId, int] = {}
        self._unplaced: frozenset[AssignedTask] = frozenset()
        self._leading = False

    @property
    def epoch(self) -> int:
        """This leader's epoch (0 before it took the lead)."""
        return self._epoch

    def take_lead(self, url: str | None) -> int:
        """Take over the published assignment and write the leader record; the new epoch.

        Raises:
            FencedException: another driver took the lead meanwhile.
        """
        self._assignments.read_to_end()
        previous = self._assignments.leader
        current = self._assignments.assignment
        epoch = (previous.epoch if previous is not None else 0) + 1
        self._assignments.publish_leader(LeaderRecord(self.driver_id, url, epoch))
        with self._lock:
            self._epoch = epoch
            self._version = current.version if current is not None else 0
            self._published = (
                {w: frozenset(t) for w, t in current.workers.items()} if current else {}
            )
            # the restart counts in force carry over, so running tasks are not restarted
            self._restarts = {t.id: t.restart for tasks in self._published.values() for t in tasks}
            self._leading = True
        return epoch

    def renew(self, url: str | None) -> None:
        """Renew the lease: the leader record again, same epoch.

        Raises:
            FencedException: another driver took the lead meanwhile.
        """
        self._assignments.publish_leader(LeaderRecord(self.driver_id, url, self._epoch))

    def resign(self, url: str | None) -> None:
        """Write that this leader stops, so that a standby takes over at once."""
        with self._lock:
            self._leading = False
        self._assignments.publish_leader(
            LeaderRecord(self.driver_id, url, self._epoch, resigned=True)
        )

    def stand_down(self) -> None:
        """Stop publishing."""
        with self._lock:
            self._leading = False

    def restart(self, tasks: Iterable[ConnectorTaskId]) -> None:
        """Have the workers restart ``tasks`` (at the next :meth:`rebalance`)."""
        with self._lock:
            for task in tasks:
                self._restarts[task] = self._restarts.get(task, 0) + 1

    def forget(self, connector: str) -> None:
        """Drop what is kept about a deleted connector."""
        with self._lock:
            self._restarts = {t: r for t, r in self._restarts.items() if t.connector != connector}

    def live(self) -> dict[str, frozenset[AssignedTask]]:
        """Each live worker with what it reports to run."""
        now = time.monotonic()
        return {
            worker: beat.tasks
            for worker, beat in self._assignments.heartbeats().items()
            if beat.alive
            and now - beat.seen <= self.session_timeout_s
            and not self._assignments.driver_stopped(beat.driver)
        }

    def live_workers(self) -> dict[str, dict[str, Any]]:
        """The live workers for the REST API and logs: driver, tasks, last heartbeat's age."""
        now = time.monotonic()
        beats = self._assignments.heartbeats()
        return {
            worker: {
                "driver": beats[worker].driver,
                "tasks": sorted(str(t.id) for t in tasks),
                "heartbeat_age_s": round(now - beats[worker].seen, 3),
            }
            for worker, tasks in self.live().items()
        }

    def wanted(self, live: dict[str, frozenset[AssignedTask]] | None = None) -> set[AssignedTask]:
        """Every task that should run now (``live``: what the live workers run)."""
        snapshot = self._configs.snapshot()
        running = {t for tasks in (live or {}).values() for t in tasks}
        with self._lock:
            restarts = dict(self._restarts)
        out: set[AssignedTask] = set()
        fence = self._fence_zombies
        for connector in snapshot.connectors():
            if snapshot.target_state(connector) is TargetState.STOPPED:
                continue
            if connector in snapshot.inconsistent or connector not in snapshot.generations:
                continue
            if fence is not None and connector in snapshot.pending_fencing:
                # no task of the new generation starts before the old generation stopped (its
                # tasks commit on the way) and the leader fenced its producers
                current = snapshot.generations[connector]
                if any(t.connector == connector and t.generation != current for t in running):
                    continue
                if not fence(connector):
                    continue
            generation = snapshot.generations[connector]
            for number in range(len(snapshot.task_configs.get(connector, ()))):
                task_id = ConnectorTaskId(connector, number)
                out.add(AssignedTask(connector, number, generation, restarts.get(task_id, 0)))
        return out

    def rebalance(self) -> AssignmentRecord | None:
        """Publish the next assignment if it differs from the last; the record published.

        Raises:
            FencedException: another driver leads now.
            ConnectException: the assignments topic cannot be written.
        """
        with self._lock:
            if not self._leading:
                return None
            published = dict(self._published)
        live = self.live()
        wanted = self.wanted(live)
        gone = sorted(w for w, tasks in published.items() if w not in live and tasks)
        nxt = assign(wanted, published, live)
        placed = {t for tasks in nxt.values() for t in tasks}
        unplaced = frozenset(t for t in wanted if t not in placed)
        if not live and unplaced != self._unplaced:
            for task in sorted(unplaced):
                self._status.put_task(
                    task.id, Status(State.UNASSIGNED, self.driver_id, NO_WORKER), task.generation
                )
        self._unplaced = unplaced
        if nxt == published:
            return None
        for worker in gone:
            log.warning(
                "Worker %s is gone (no heartbeat for %.0f s): its tasks %s go to the others",
                worker,
                self.session_timeout_s,
                ", ".join(str(t) for t in sorted(published[worker])),
            )
        with self._lock:
            record = AssignmentRecord(self.driver_id, self._epoch, self._version + 1, nxt)
        self._assignments.publish_assignment(record)
        with self._lock:
            self._version = record.version
            self._published = dict(nxt)
        log.info(
            "Assignment %d: %s",
            record.version,
            "; ".join(
                f"{w}: {', '.join(str(t) for t in sorted(ts)) or '-'}"
                for w, ts in sorted(nxt.items())
            )
            or "no live worker",
        )
        return record
