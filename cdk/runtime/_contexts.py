"""The contexts the worker hands connectors and tasks (``self.context``).

:class:`WorkerSourceConnectorContext` / :class:`WorkerSinkConnectorContext` forward
``request_task_reconfiguration`` and ``raise_error`` to the herder; :class:`WorkerSourceTaskContext`
gives source tasks their offset reader; :class:`WorkerSinkTaskContext` records what a sink task
asks for (offset resets, a retry timeout, paused partitions, a commit) for its runner to apply.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Protocol

from cdk.api import (
    ErrantRecordReporter,
    OffsetStorageReader,
    SinkConnectorContext,
    SinkTaskContext,
    SourceConnectorContext,
    SourceTaskContext,
    TopicPartition,
    TransactionContext,
)
from cdk.errors import ConnectException, IllegalWorkerStateException

__all__ = [
    "SinkTaskOwner",
    "WorkerSinkConnectorContext",
    "WorkerSinkTaskContext",
    "WorkerSourceConnectorContext",
    "WorkerSourceTaskContext",
]


class _ConnectorCallbacks:
    """What both connector contexts share: forwarding to the worker/herder callbacks."""

    def __init__(
        self,
        name: str,
        on_reconfigure: Callable[[], None],
        on_error: Callable[[BaseException], None],
    ) -> None:
        self._name = name
        self._on_reconfigure = on_reconfigure
        self._on_error = on_error

    def _request_task_reconfiguration(self) -> None:
        self._on_reconfigure()

    def _raise_error(self, error: BaseException) -> None:
        if not isinstance(error, BaseException):
            raise ConnectException(
                f"Connector {self._name}: raise_error() expects an exception, got {error!r}"
            )
        self._on_error(error)


class WorkerSourceConnectorContext(SourceConnectorContext):
    """A running source connector's context.

    Args:
        name: the connector's name.
        on_reconfigure: called for ``request_task_reconfiguration()``.
        on_error: called with the error for ``raise_error(error)``.
        offset_reader: the connector's committed source offsets.
    """

    def __init__(
        self,
        name: str,
        on_reconfigure: Callable[[], None],
        on_error: Callable[[BaseException], None],
        offset_reader: OffsetStorageReader,
    ) -> None:
        self._callbacks = _ConnectorCallbacks(name, on_reconfigure, on_error)
        self._offset_reader = offset_reader

    def request_task_reconfiguration(self) -> None:
        """Ask the herder to regenerate the task configs."""
        self._callbacks._request_task_reconfiguration()

    def raise_error(self, error: BaseException) -> None:
        """Fail the connector with ``error``."""
        self._callbacks._raise_error(error)

    @property
    def offset_storage_reader(self) -> OffsetStorageReader:
        """The committed source offsets of this connector."""
        return self._offset_reader


class WorkerSinkConnectorContext(SinkConnectorContext):
    """A running sink connector's context.

    Args:
        name: the connector's name.
        on_reconfigure: called for ``request_task_reconfiguration()``.
        on_error: called with the error for ``raise_error(error)``.
    """

    def __init__(
        self,
        name: str,
        on_reconfigure: Callable[[], None],
        on_error: Callable[[BaseException], None],
    ) -> None:
        self._callbacks = _ConnectorCallbacks(name, on_reconfigure, on_error)

    def request_task_reconfiguration(self) -> None:
        """Ask the herder to regenerate the task configs."""
        self._callbacks._request_task_reconfiguration()

    def raise_error(self, error: BaseException) -> None:
        """Fail the connector with ``error``."""
        self._callbacks._raise_error(error)


class WorkerSourceTaskContext(SourceTaskContext):
    """A running source task's context: its configs and its connector's offset reader."""

    def __init__(
        self,
        configs: Mapping[str, str],
        offset_reader: OffsetStorageReader,
        transaction_context: TransactionContext | None = None,
    ) -> None:
        self._configs = dict(configs)
        self._offset_reader = offset_reader
        self._transaction_context = transaction_context

    def configs(self) -> dict[str, str]:
        """The task's configuration."""
        return dict(self._configs)

    @property
    def offset_storage_reader(self) -> OffsetStorageReader:
        """The connector's committed source offsets."""
        return self._offset_reader

    @property
    def transaction_context(self) -> TransactionContext | None:
        """The task's transaction context (exactly-once with ``transaction.boundary=connector``)."""
        return self._transaction_context


class SinkTaskOwner(Protocol):
    """What a :class:`WorkerSinkTaskContext` needs from the sink runner that owns it."""

    def assigned_partitions(self) -> set[TopicPartition]:
        """The partitions currently assigned to the task's consumer."""
        ...

    def consumer_paused_by_worker(self) -> bool:
        """Whether the runner holds every partition paused (connector paused or redelivery)."""
        ...

    def pause_consumer(self, partitions: set[TopicPartition]) -> None:
        """Pause fetching from ``partitions`` on the consumer."""
        ...

    def resume_consumer(self, partitions: set[TopicPartition]) -> None:
        """Resume fetching from ``partitions`` on the consumer."""
        ...


class WorkerSinkTaskContext(SinkTaskContext):
    """A running sink task's context; its runner applies the requests at the next poll.

    Args:
        configs: the task's configuration.
        owner: the sink runner (assignment and consumer pause/resume).
        errant_reporter: the reporter for bad records, or None when neither a dead letter queue
            nor ``errors.log.enable`` is configured.
    """

    def __init__(
        self,
        configs: Mapping[str, str],
        owner: SinkTaskOwner,
        errant_reporter: ErrantRecordReporter | None = None,
    ) -> None:
        self._configs = dict(configs)
        self._owner = owner
        self._errant_reporter = errant_reporter
        self._lock = threading.Lock()
        self._offsets: dict[TopicPartition, int] = {}
        self._timeout_ms = -1
        self._paused: set[TopicPartition] = set()
        self._commit_requested = False

    def configs(self) -> dict[str, str]:
        """The task's configuration."""
        return dict(self._configs)

    def offset(
        self, target: Mapping[TopicPartition, int] | TopicPartition, offset: int | None = None, /
    ) -> None:
        """Consume from these offsets at the next poll (``{tp: offset}`` or ``(tp, offset)``)."""
        if isinstance(target, TopicPartition):
            if offset is None or isinstance(offset, bool) or not isinstance(offset, int):
                raise ConnectException(
                    f"SinkTaskContext.offset({target}, ...) needs an int offset, got {offset!r}"
                )
            updates = {target: offset}
        elif isinstance(target, Mapping):
            if offset is not None:
                raise ConnectException(
                    "SinkTaskContext.offset(offsets) takes a single map of partition to offset"
                )
            updates = {}
            for tp, value in target.items():
                if not isinstance(tp, TopicPartition):
                    raise ConnectException(
                        f"SinkTaskContext.offset: {tp!r} is not a TopicPartition"
                    )
                if isinstance(value, bool) or not isinstance(value, int):
                    raise ConnectException(
                        f"SinkTaskContext.offset: offset for {tp} must be an int, got {value!r}"
                    )
                updates[tp] = value
        else:
            raise ConnectException(
                "SinkTaskContext.offset expects a {TopicPartition: offset} map or "
                f"(TopicPartition, offset), got {target!r}"
            )
        with self._lock:
            self._offsets.update(updates)

    def take_offsets(self) -> dict[TopicPartition, int]:
        """The offset resets requested since the last call (runner side; clears them)."""
        with self._lock:
            offsets, self._offsets = self._offsets, {}
        return offsets

    def has_offsets(self) -> bool:
        """Whether offset resets are pending (runner side)."""
        return bool(self._offsets)

    def timeout(self, timeout_ms: int) -> None:
        """Wait ``timeout_ms`` before redelivering after a RetriableException."""
        if isinstance(timeout_ms, bool) or not isinstance(timeout_ms, int):
            raise ConnectException(f"SinkTaskContext.timeout expects int ms, got {timeout_ms!r}")
        self._timeout_ms = timeout_ms

    def take_timeout_ms(self) -> int:
        """The timeout the task set (-1 when none) and reset it (runner side)."""
        timeout, self._timeout_ms = self._timeout_ms, -1
        return timeout

    def assignment(self) -> set[TopicPartition]:
        """The partitions currently assigned to this task."""
        return set(self._owner.assigned_partitions())

    def pause(self, *partitions: TopicPartition) -> None:
        """Stop fetching from these assigned partitions until :meth:`resume`."""
        tps = self._checked(partitions, "pause")
        with self._lock:
            self._paused.update(tps)
        if self._owner.consumer_paused_by_worker():
            return  # applied (or kept) when the worker resumes the consumer
        self._owner.pause_consumer(tps)

    def resume(self, *partitions: TopicPartition) -> None:
        """Fetch again from partitions paused with :meth:`pause`."""
        tps = self._checked(partitions, "resume")
        with self._lock:
            self._paused.difference_update(tps)
        if self._owner.consumer_paused_by_worker():
            return
        self._owner.resume_consumer(tps)

    def paused_partitions(self) -> set[TopicPartition]:
        """The partitions the task paused (runner side)."""
        with self._lock:
            return set(self._paused)

    def retain_paused(self, assigned: set[TopicPartition]) -> set[TopicPartition]:
        """Forget paused partitions no longer assigned; return those still paused."""
        with self._lock:
            self._paused &= assigned
            return set(self._paused)

    def request_commit(self) -> None:
        """Ask for an offset commit at the next opportunity."""
        self._commit_requested = True

    def take_commit_request(self) -> bool:
        """Whether a commit was requested, clearing the request (runner side)."""
        requested, self._commit_requested = self._commit_requested, False
        return requested

    def is_commit_requested(self) -> bool:
        """Whether a commit was requested (runner side; does not clear it)."""
        return self._commit_requested

    def errant_record_reporter(self) -> ErrantRecordReporter | None:
        """The reporter for bad records, or None when no DLQ or error log is configured."""
        return self._errant_reporter

    def _checked(self, partitions: tuple[TopicPartition, ...], action: str) -> set[TopicPartition]:
        tps = set(partitions)
        for tp in tps:
            if not isinstance(tp, TopicPartition):
                raise ConnectException(f"SinkTaskContext.{action}: {tp!r} is not a TopicPartition")
        assigned = self._owner.assigned_partitions()
        if not tps <= assigned:
            missing = ", ".join(str(tp) for tp in sorted(tps - assigned))
            raise IllegalWorkerStateException(
                f"SinkTasks can not {action} partitions that are not currently assigned to "
                f"them: {missing}"
            )
        return tps
