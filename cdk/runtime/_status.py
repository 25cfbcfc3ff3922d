"""Connector and task states, as Kafka Connect reports them, and the store that holds them.

A connector or task is in one :class:`State` at a time (``UNASSIGNED`` while it starts,
``RUNNING``, ``PAUSED``, ``STOPPED``, ``FAILED`` with the error's trace, ...). The
:class:`StatusStore` is what the worker writes those states into and what the herder and the
REST API read back.
"""

from __future__ import annotations

import enum
import threading
from dataclasses import dataclass

__all__ = ["ConnectorTaskId", "State", "Status", "StatusStore", "TargetState"]


class State(str, enum.Enum):
    """The state of a connector or task, with Kafka's names."""

    UNASSIGNED = "UNASSIGNED"
    RUNNING = "RUNNING"
    PAUSED = "PAUSED"
    STOPPED = "STOPPED"
    FAILED = "FAILED"
    DESTROYED = "DESTROYED"
    RESTARTING = "RESTARTING"

    def __str__(self) -> str:
        return self.value


class TargetState(str, enum.Enum):
    """The state the user asked a connector to be in (pause, resume, stop)."""

    STARTED = "STARTED"
    PAUSED = "PAUSED"
    STOPPED = "STOPPED"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, order=True)
class ConnectorTaskId:
    """Identifies a task: the connector's name and the task's number (from 0).

    Attributes:
        connector: the connector's name.
        task: the task's number.
    """

    connector: str
    task: int

    def __str__(self) -> str:
        return f"{self.connector}-{self.task}"


@dataclass
class Status:
    """The reported state of a connector or task.

    Attributes:
        state: the current state.
        worker_id: the worker running it (``host:port`` in standalone mode).
        trace: the full traceback text of the error when ``state`` is ``FAILED``.
    """

    state: State
    worker_id: str
    trace: str | None = None


class StatusStore:
    """Thread-safe, in-memory store of connector and task statuses."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._connectors: dict[str, Status] = {}
        self._tasks: dict[str, dict[int, Status]] = {}

    def put_connector(self, name: str, status: Status) -> None:
        """Record the status of connector ``name``."""
        with self._lock:
            self._connectors[name] = status

    def put_task(self, task_id: ConnectorTaskId, status: Status) -> None:
        """Record the status of a task."""
        with self._lock:
            self._tasks.setdefault(task_id.connector, {})[task_id.task] = status

    def connector(self, name: str) -> Status | None:
        """The status of connector ``name``, ``None`` when unknown."""
        with self._lock:
            return self._connectors.get(name)

    def task(self, task_id: ConnectorTaskId) -> Status | None:
        """The status of a task, ``None`` when unknown."""
        with self._lock:
            return self._tasks.get(task_id.connector, {}).get(task_id.task)

    def tasks(self, connector: str) -> dict[int, Status]:
        """The statuses of a connector's tasks by task number (a copy, sorted by number)."""
        with self._lock:
            return dict(sorted(self._tasks.get(connector, {}).items()))

    def connectors(self) -> set[str]:
        """The names of the connectors with a recorded status."""
        with self._lock:
            return set(self._connectors)

    def remove_connector(self, name: str) -> None:
        """Forget a connector's status and its tasks' statuses."""
        with self._lock:
            self._connectors.pop(name, None)
            self._tasks.pop(name, None)

    def remove_task(self, task_id: ConnectorTaskId) -> None:
        """Forget a task's status."""
        with self._lock:
            tasks = self._tasks.get(task_id.connector)
            if tasks is not None:
                tasks.pop(task_id.task, None)
                if not tasks:
                    del self._tasks[task_id.connector]
