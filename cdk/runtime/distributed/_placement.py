"""Where a distributed herder's tasks run: the contract between the herder and Spark.

The distributed herder (in the driver) owns connectors, their configs and target states, and the
config and status topics. It does not run tasks: it hands each connector *generation* (one
committed set of task configs) to a :class:`TaskPlacement`, which runs the tasks elsewhere; the
Spark placement (:mod:`cdk.spark`) runs one Spark job per generation, one Spark task per task
config, each running the same source/sink runner as standalone mode on an executor.

How a generation ends reaches the running tasks through Kafka, never through a sleep:

- a newer ``commit-<name>`` record in the config topic (new task configs: reconfiguration,
  ``tasks.max`` change, ``request_task_reconfiguration``, a task restart);
- a ``target-state-<name>`` of ``STOPPED`` (Kafka also commits an empty task set), or a
  ``connector-<name>`` tombstone (delete);
- a ``status-connector-<name>`` record of ``UNASSIGNED`` written by the herder's worker id after
  the generation started (the herder stopping the connector: driver shutdown). Its
  ``generation`` field is the connector's current generation, so a task can tell without
  timing: it ends on an ``UNASSIGNED`` connector status whose generation is at least its own.
  The herder writes no other ``UNASSIGNED`` connector status (the driver's :class:`Worker`
  writes through :class:`~cdk.runtime.storage._status_store.DriverStatusView`, which drops them),
  and a restarted herder re-commits the recovered task configs, so the recovered generation
  is later than the ``UNASSIGNED`` its predecessor wrote.

``PAUSED``/``STARTED`` target states pause and resume the running tasks in place. Tasks report
their own statuses (``RUNNING``, ``PAUSED``, ``FAILED`` with the trace, ``UNASSIGNED`` on a clean
exit) into the status topic with their executor as ``worker_id``; the herder reads them back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from cdk.runtime._status import ConnectorTaskId, TargetState

__all__ = ["PlacementListener", "TaskGeneration", "TaskPlacement"]


@dataclass(frozen=True)
class TaskGeneration:
    """One committed set of a connector's task configs, to be run.

    Attributes:
        connector: the connector's name.
        generation: the config-topic offset of the generation's ``commit-<name>`` record;
            strictly increasing per connector. A task of this generation ends when it reads a
            ``commit-<name>`` record at a later offset.
        connector_config: the connector config as stored in the config topic (config-provider
            placeholders unresolved: the executor resolves them).
        task_configs: the task configs as stored in the config topic, task ``i`` at index ``i``.
        target_state: the target state when the generation launches.
        tasks: the task numbers to run (all of them unless only some are restarted).
    """

    connector: str
    generation: int
    connector_config: Mapping[str, str]
    task_configs: tuple[Mapping[str, str], ...]
    target_state: TargetState
    tasks: tuple[int, ...] = field(default=())

    def task_ids(self) -> list[ConnectorTaskId]:
        """The ids of the tasks to run."""
        numbers = self.tasks or tuple(range(len(self.task_configs)))
        return [ConnectorTaskId(self.connector, n) for n in numbers]


class PlacementListener(Protocol):
    """What the placement tells the herder (called from the placement's threads)."""

    def generation_ended(
        self, connector: str, generation: int, failures: Mapping[int, str]
    ) -> None:
        """A generation's job ended.

        ``failures`` maps task numbers to the trace of tasks the placement could not keep
        running (Spark's retries exhausted, job cancelled after the graceful timeout); the
        herder records them as ``FAILED``.
        """


class TaskPlacement(Protocol):
    """Runs connector generations somewhere (the Spark placement: a Spark job each)."""

    def start(self, listener: PlacementListener) -> None:
        """Get ready to launch (start the SparkSession)."""

    def launch(self, generation: TaskGeneration) -> None:
        """Start running the generation's tasks and return at once."""

    def await_end(self, connector: str, timeout_s: float) -> bool:
        """Wait for the connector's running generations to end.

        The herder calls it after writing what ends them; what still runs after ``timeout_s``
        is cancelled (Spark: its job group).

        Returns:
            ``True`` when everything ended by itself in time.
        """

    def slots(self) -> int | None:
        """How many tasks can run at once (Spark: executor cores), ``None`` when unknown."""

    def close(self, timeout_s: float) -> None:
        """Wait up to ``timeout_s`` for running generations to end, cancel the rest, stop."""
