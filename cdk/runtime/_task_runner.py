"""What the source and sink task runners share: the task thread, its lifecycle and its statuses.

:class:`WorkerTask` is the base of :class:`~cdk.runtime._source_runner.WorkerSourceTask` and
:class:`~cdk.runtime._sink_runner.WorkerSinkTask`, as Kafka Connect's ``WorkerTask`` is of
``AbstractWorkerSourceTask`` and ``WorkerSinkTask``. It owns the task's thread (``start``,
``await_stop``, ``cancel``), the target state, the status reports (``RUNNING``, ``PAUSED``,
``FAILED`` with its trace, ``UNASSIGNED``) and the end of the task (closers); the subclasses bring
the Kafka client and the record loop. Nothing here runs per record.
"""

from __future__ import annotations

import functools
import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, TypedDict

from typing_extensions import NotRequired

from cdk.runtime._log_context import in_context
from cdk.runtime._status import ConnectorTaskId, State, Status, StatusStore, TargetState
from cdk.runtime.errors._context import ProcessingContext, Stage, stack_trace
from cdk.runtime.metrics._task_metrics import TaskKind, TaskMetrics

if TYPE_CHECKING:
    from cdk.converters import Converter, HeaderConverter
    from cdk.runtime.errors._retry_operator import RetryWithToleranceOperator
    from cdk.transforms import TransformationChain

__all__ = ["WorkerTask", "WorkerTaskArgs"]

#: One convert step redone under the error operator: its stage, the component (whose class is
#: reported), and the operation.
_ConvertStep = tuple[Stage, object, Callable[[], Any]]


class WorkerTaskArgs(TypedDict):
    """The keyword arguments every task runner takes (see :class:`WorkerTask`)."""

    worker_id: str
    status_store: StatusStore
    target: TargetState
    key_converter: Converter
    value_converter: Converter
    header_converter: HeaderConverter
    transformation_chain: TransformationChain[Any]
    operator: RetryWithToleranceOperator
    flush_interval_ms: NotRequired[int]
    flush_timeout_ms: NotRequired[int]
    closers: NotRequired[Sequence[Callable[[], None]]]
    topic_tracking: NotRequired[bool]
    metrics: NotRequired[TaskMetrics | None]


class WorkerTask(ABC):
    """Runs one task on its own thread: the lifecycle shared by source and sink task runners.

    The thread runs :meth:`_run`: it waits while the task is created ``PAUSED``, then calls
    :meth:`_initialize_and_start` and :meth:`_execute` (the subclass's loop) and finally
    :meth:`_close`. Any exception fails the task with its stack trace.

    Subclasses set ``self.task``, the task instance, and take the keyword arguments below as
    ``**common: Unpack[WorkerTaskArgs]``.

    Args:
        task_id: the task's id.
        task_props: the task's configuration (given to ``start``).
        worker_id: written into the statuses.
        status_store: where the task's state is reported.
        target: the initial target state.
        key_converter: converter for record keys.
        value_converter: converter for record values.
        header_converter: converter for header values.
        transformation_chain: the connector's SMT chain.
        operator: the retry/tolerance operator of the connector.
        flush_interval_ms: ``offset.flush.interval.ms``.
        flush_timeout_ms: ``offset.flush.timeout.ms``.
        closers: called (errors logged) when the task ends: converters, SMTs, reporters, ...
        topic_tracking: record the topics the task uses in the status store's
            :class:`~cdk.runtime._status.ActiveTopics` (``topic.tracking.enable``).
        metrics: the task's metrics in the worker's registry (a private set when None).
    """

    #: The subclass's logger (the runner's messages keep their logger name).
    _log: ClassVar[logging.Logger]
    #: ``"source"`` or ``"sink"``: which task metrics group the runner keeps.
    _kind: ClassVar[TaskKind]

    def __init__(
        self,
        task_id: ConnectorTaskId,
        task_props: Mapping[str, str],
        *,
        worker_id: str,
        status_store: StatusStore,
        target: TargetState,
        key_converter: Converter,
        value_converter: Converter,
        header_converter: HeaderConverter,
        transformation_chain: TransformationChain[Any],
        operator: RetryWithToleranceOperator,
        flush_interval_ms: int = 60000,
        flush_timeout_ms: int = 5000,
        closers: Sequence[Callable[[], None]] = (),
        topic_tracking: bool = True,
        metrics: TaskMetrics | None = None,
    ) -> None:
        self.id = task_id
        #: The task's metrics (Kafka's task, source/sink task and error metric groups).
        self.metrics = (
            metrics if metrics is not None else TaskMetrics(task_id, self._kind, operator.metrics)
        )
        self._task_props = dict(task_props)
        self._worker_id = worker_id
        self._status_store = status_store
        self._target = target
        self._key_converter = key_converter
        self._value_converter = value_converter
        self._header_converter = header_converter
        self._chain = transformation_chain
        self._operator = operator
        self._flush_interval_s = max(flush_interval_ms, 0) / 1000.0
        self._flush_timeout_s = max(flush_timeout_ms, 0) / 1000.0
        self._closers = list(closers)
        self._active_topics = (
            status_store.active_topics(task_id.connector) if topic_tracking else None
        )
        #: The names of the connector's active topics (a live view; None without tracking): the
        #: record loops call :meth:`_record_active_topic` only for a topic not in it.
        self._active_topic_names = (
            self._active_topics.names if self._active_topics is not None else None
        )

        self._lock = threading.Lock()
        self._stopping = False
        self._cancelled = False
        # whether task.start() returned: only then is the task stopped when it ends
        self._task_started = False
        self._thread = threading.Thread(
            target=in_context(task_id.connector, task_id.task, self._run),
            name=f"cdk-task-{task_id.connector}-{task_id.task}",
            daemon=True,
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}{{id={self.id}}}"

    def _record_active_topic(self, topic: str) -> None:
        """Record a topic the task used (KIP-558); the caller checked it was not recorded."""
        if self._active_topics is not None:
            self._active_topics.record(topic, self.id)

    # -- control (any thread) --------------------------------------------------------------------
    @property
    def thread(self) -> threading.Thread:
        """The task's thread."""
        return self._thread

    def start(self) -> None:
        """Start the task's thread."""
        self._thread.start()

    def set_target_state(self, target: TargetState) -> None:
        """Pause (``PAUSED``) or resume (``STARTED``) the task."""
        self._target = target
        self._wake_up()

    @abstractmethod
    def stop(self) -> None:
        """Ask the task to stop; returns at once (the task thread stops the task)."""

    def await_stop(self, timeout_s: float | None) -> bool:
        """Wait for the task's thread to end; whether it ended within ``timeout_s``."""
        if not self._thread.ident:
            return True
        self._thread.join(timeout_s)
        return not self._thread.is_alive()

    def cancel(self) -> None:
        """Give up on a task that did not stop in time: it reports and commits nothing more."""
        self._cancelled = True
        self.stop()

    @abstractmethod
    def _wake_up(self) -> None:
        """Make the task thread look at its target state and stop flag without delay."""

    # -- the task thread -------------------------------------------------------------------------
    def _run(self) -> None:
        failed = False
        try:
            if self._target is TargetState.PAUSED:
                self._report(State.PAUSED)
                if not self._await_unpause():
                    return
            if not self._initialize_and_start():
                return
            self._report(State.RUNNING)
            self._execute()
        except BaseException as exc:  # noqa: BLE001 - any error fails the task with its trace
            failed = True
            self._fail(exc)
        finally:
            self._close(failed)

    @abstractmethod
    def _await_unpause(self) -> bool:
        """Wait while the task is created ``PAUSED``; whether to go on (False: stopping)."""

    @abstractmethod
    def _initialize_and_start(self) -> bool:
        """Create the Kafka client, initialize and start the task; whether to run its loop."""

    @abstractmethod
    def _execute(self) -> None:
        """The task's loop, until it is stopped."""

    # -- error-tolerant pipeline steps (only for records whose fast path raised) -----------------
    def _convert_tolerant_steps(
        self, steps: Sequence[_ConvertStep], context: ProcessingContext
    ) -> list[Any] | None:
        """Run convert steps in order under the operator; None once one fails (tolerated)."""
        operator = self._operator
        results = []
        for stage, component, operation in steps:
            results.append(operator.execute(operation, stage, type(component), context))
            if operator.failed():
                return None
        return results

    def _transform_tolerant(self, record: Any, context: ProcessingContext) -> Any:
        """Apply the SMT chain under the operator; None when the record is dropped."""
        operator = self._operator
        for stage in self._chain:
            record = operator.execute(
                functools.partial(stage.apply, record),
                Stage.TRANSFORMATION,
                type(stage.transformation),
                context,
            )
            if record is None:
                return None
        return record

    # -- status and cleanup ----------------------------------------------------------------------
    def _report(self, state: State, trace: str | None = None) -> None:
        if not self._cancelled:
            self.metrics.task.record_state(state)
            self._status_store.put_task(self.id, Status(state, self._worker_id, trace))

    def _fail(self, exc: BaseException) -> None:
        trace = stack_trace(exc)
        self._log_failure(exc)
        self._report(State.FAILED, trace)

    def _log_failure(self, exc: BaseException) -> None:
        self._log.error(
            "%s Task threw an uncaught and unrecoverable exception. Task is being killed and "
            "will not recover until manually restarted",
            self,
            exc_info=exc,
        )

    def _close(self, failed: bool) -> None:
        """End the task (on its thread): the subclass's part, the closers, ``UNASSIGNED``."""
        self._release()
        log = self._log
        for closer in self._closers:
            try:
                closer()
            except Exception:
                log.exception("%s failed to close a resource", self)
        if not failed:
            self._report(State.UNASSIGNED)

    @abstractmethod
    def _release(self) -> None:
        """Commit what is left (unless cancelled), stop the task and close the Kafka client."""
