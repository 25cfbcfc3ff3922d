"""Connector and task states, as Kafka Connect reports them, and the store that holds them.

A connector or task is in one :class:`State` at a time (``UNASSIGNED`` while it starts,
``RUNNING``, ``PAUSED``, ``STOPPED``, ``FAILED`` with the error's trace, ...). The
:class:`StatusStore` is what the worker writes those states into and what the herder and the
REST API read back. It also holds each connector's active topics (KIP-558, :class:`ActiveTopics`):
the topics its tasks produced to or consumed from, for ``GET /connectors/{name}/topics``.
"""

from __future__ import annotations

import enum
import threading
import time
from collections.abc import KeysView
from dataclasses import dataclass

__all__ = [
    "ActiveTopics",
    "ConnectorTaskId",
    "State",
    "Status",
    "StatusStore",
    "TargetState",
    "TopicStatus",
]


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


@dataclass(frozen=True)
class TopicStatus:
    """A topic a connector's task used (Kafka's ``TopicStatus``).

    Attributes:
        topic: the topic's name.
        task: the id of the task that used it first.
        discover_timestamp: when it was first used, in milliseconds since the epoch.
    """

    topic: str
    task: ConnectorTaskId
    discover_timestamp: int


class ActiveTopics:
    """The topics one connector's tasks actually used (KIP-558).

    Source tasks record the topics Kafka acknowledged records for, sink tasks the topics of
    the records they consumed. A task checks :attr:`names` (a live view, no lock, no call)
    for each record and calls :meth:`record` only for a topic that is not in it, so tracking
    costs a set lookup per record. :meth:`clear` empties the set in place (reset, deletion):
    the tasks see the change through the same view and record their topics again.
    """

    __slots__ = ("_lock", "_topics", "connector")

    def __init__(self, connector: str) -> None:
        self.connector = connector
        self._lock = threading.Lock()
        self._topics: dict[str, TopicStatus] = {}

    @property
    def names(self) -> KeysView[str]:
        """The topic names as a live, read-only view: ``topic in names`` is the per-record check."""
        return self._topics.keys()

    def record(self, topic: str, task: ConnectorTaskId) -> None:
        """Record that ``task`` used ``topic`` (kept with its first use only)."""
        with self._lock:
            if topic not in self._topics:
                self._topics[topic] = TopicStatus(topic, task, int(time.time() * 1000))

    def topics(self) -> list[str]:
        """The topic names, sorted."""
        with self._lock:
            return sorted(self._topics)

    def statuses(self) -> list[TopicStatus]:
        """The recorded topics with the task that first used each and when, by topic name."""
        with self._lock:
            return [self._topics[name] for name in sorted(self._topics)]

    def clear(self) -> None:
        """Forget every topic (``PUT /connectors/{name}/topics/reset``, connector deletion)."""
        with self._lock:
            self._topics.clear()

    def __repr__(self) -> str:
        return f"ActiveTopics({self.connector!r}, {self.topics()!r})"


class StatusStore:
    """Thread-safe, in-memory store of connector and task statuses and active topics."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._connectors: dict[str, Status] = {}
        self._tasks: dict[str, dict[int, Status]] = {}
        self._topics: dict[str, ActiveTopics] = {}

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

    def remove_connector_status(self, name: str) -> None:
        """Forget a connector's own status only (its tasks' statuses stay)."""
        with self._lock:
            self._connectors.pop(name, None)

    def remove_connector(self, name: str) -> None:
        """Forget a connector's status, its tasks' statuses and its active topics."""
        with self._lock:
            self._connectors.pop(name, None)
            self._tasks.pop(name, None)
            topics = self._topics.get(name)
        if topics is not None:
            topics.clear()  # in place: a task still holding the view sees it

    def topics(self, connector: str) -> list[str]:
        """The sorted active topics of ``connector`` (none for an unknown connector)."""
        with self._lock:
            topics = self._topics.get(connector)
        return [] if topics is None else topics.topics()

    def reset_topics(self, connector: str) -> None:
        """Forget the active topics of ``connector``; its tasks record them again as used."""
        with self._lock:
            topics = self._topics.get(connector)
        if topics is not None:
            topics.clear()

    def active_topics(self, connector: str) -> ActiveTopics:
        """The active topics of ``connector`` (one object per name, created on first use)."""
        with self._lock:
            topics = self._topics.get(connector)
            if topics is None:
                topics = self._topics[connector] = self._new_active_topics(connector)
            return topics

    def _new_active_topics(self, connector: str) -> ActiveTopics:
        """The :class:`ActiveTopics` of a connector seen for the first time (a subclass hook)."""
        return ActiveTopics(connector)

    def remove_task(self, task_id: ConnectorTaskId) -> None:
        """Forget a task's status."""
        with self._lock:
            tasks = self._tasks.get(task_id.connector)
            if tasks is not None:
                tasks.pop(task_id.task, None)
                if not tasks:
                    del self._tasks[task_id.connector]
