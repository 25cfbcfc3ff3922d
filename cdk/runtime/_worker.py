"""The worker: runs connectors and their tasks, reporting their states.

:class:`Worker` is the part of Kafka Connect's ``Worker`` that the herder drives: it instantiates
connectors through :class:`~cdk.runtime.Plugins`, starts them with their contexts, asks them for
task configs, and builds each task's pipeline (converters, SMTs, error handling, Kafka clients,
offset storage) before running it on its own thread (:class:`WorkerSourceTask` /
:class:`WorkerSinkTask`). Connector errors never propagate to the herder: they become ``FAILED``
statuses with the error's trace in the :class:`StatusStore`.

As in Kafka, nothing a connector does can hold up the caller beyond a timeout: each connector's
``initialize``/``start``/``stop`` run in order on the connector's own daemon thread
(``cdk-connector-<name>``); stopping a connector waits for it at most
:attr:`Worker.connector_stop_timeout_s` (Kafka's 5 s) and then abandons it with an ERROR log;
stopping tasks only signals them and waits at most ``task.shutdown.graceful.timeout.ms`` for all
of them together before cancelling the ones still running.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import logging
import queue
import threading
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from cdk.api import Connector, SinkConnector, SinkTask, SourceConnector, SourceTask, Task
from cdk.errors import ConfigException, ConnectException, NotFoundException
from cdk.runtime._contexts import (
    WorkerSinkConnectorContext,
    WorkerSourceConnectorContext,
    WorkerSourceTaskContext,
)
from cdk.runtime._eos_source_runner import ExactlyOnceWorkerSourceTask, WorkerTransactionContext
from cdk.runtime._exactly_once import (
    TRANSACTION_BOUNDARY_INTERVAL_CONFIG,
    TransactionBoundary,
    transaction_boundary,
)
from cdk.runtime._leave_order import LeaveDecision, decide_leave_mode
from cdk.runtime._log_context import connector_context, in_context
from cdk.runtime._sink_runner import WorkerSinkTask, consumer_group_id
from cdk.runtime._source_runner import TopicCreation, WorkerSourceTask
from cdk.runtime._status import ConnectorTaskId, State, Status, StatusStore, TargetState
from cdk.runtime.errors._config import ErrorHandlingConfig
from cdk.runtime.errors._context import stack_trace
from cdk.runtime.errors._errant_reporter import WorkerErrantRecordReporter
from cdk.runtime.errors._metrics import ErrorHandlingMetrics
from cdk.runtime.errors._reporters import DeadLetterQueueReporter, ErrorReporter, LogReporter
from cdk.runtime.errors._retry_operator import RetryWithToleranceOperator
from cdk.runtime.metrics._registry import ConnectMetrics, ConnectorMetricsInfo
from cdk.runtime.storage._kafka_offset_store import KafkaOffsetBackingStore
from cdk.runtime.storage._offset_storage import OffsetStorageReaderImpl, OffsetStorageWriter

if TYPE_CHECKING:
    from cdk.converters import Converter, HeaderConverter
    from cdk.runtime._worker_config import WorkerConfig
    from cdk.runtime.isolation._plugins import Plugins
    from cdk.runtime.storage._offset_store import OffsetBackingStore

__all__ = ["ConnectorListener", "Worker"]

log = logging.getLogger("cdk.runtime.worker")

TASK_CLASS_CONFIG = "task.class"
TOPICS_CONFIG = "topics"
TOPICS_REGEX_CONFIG = "topics.regex"
_DEFAULT_HEADER_CONVERTER = "cdk.converters.SimpleHeaderConverter"

#: How long stopping connectors waits for their ``stop()`` (Kafka's graceful connector shutdown).
CONNECTOR_STOP_TIMEOUT_S = 5.0

ConnectorType = Literal["source", "sink"]
_Runner = WorkerSourceTask | WorkerSinkTask
#: How long the remaining tasks of a sink get to finish a rebalance before the next one leaves.
REJOIN_TIMEOUT_S = 15.0


class ConnectorListener(Protocol):
    """What the herder offers the worker for a connector's context calls."""

    def request_task_reconfiguration(self, connector: str) -> None:
        """The connector asked for its task configs to be regenerated."""
        ...

    def raise_error(self, connector: str, error: BaseException) -> None:
        """The connector reported an unrecoverable error."""
        ...


def _class_path(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _done_future() -> concurrent.futures.Future[None]:
    future: concurrent.futures.Future[None] = concurrent.futures.Future()
    future.set_result(None)
    return future


class _ConnectorThread:
    """Runs one connector's lifecycle calls in order on its own daemon thread.

    A connector whose ``start()`` or ``stop()`` never returns keeps only this thread busy; the
    worker and the herder wait for it with timeouts and move on.
    """

    def __init__(self, name: str) -> None:
        self._queue: queue.SimpleQueue[
            tuple[Callable[[], None], concurrent.futures.Future[None]] | None
        ] = queue.SimpleQueue()
        self._closed = False
        self._thread = threading.Thread(
            target=in_context(name, None, self._run), name=f"cdk-connector-{name}", daemon=True
        )
        self._thread.start()

    def submit(self, fn: Callable[[], None]) -> concurrent.futures.Future[None]:
        """Queue ``fn``; the future completes when it has run (after everything queued before)."""
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        if self._closed:
            future.set_result(None)
        else:
            self._queue.put((fn, future))
        return future

    def close(self) -> None:
        """End the thread once the calls queued so far have run."""
        self._closed = True
        self._queue.put(None)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            fn, future = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                fn()
            except BaseException as exc:  # noqa: BLE001 - handed to the waiter
                future.set_exception(exc)
            else:
                future.set_result(None)


@dataclass
class _ConnectorEntry:
    name: str
    props: dict[str, str]
    listener: ConnectorListener
    connector: Connector | None = None
    kind: ConnectorType | None = None
    started: bool = False  # connector.start() returned and stop() not called
    failed: bool = False
    removed: bool = False  # stop_connector was called: it reports nothing more
    target: TargetState = TargetState.STARTED
    offset_reader: OffsetStorageReaderImpl | None = None
    thread: _ConnectorThread | None = field(default=None, repr=False)
    version: str | None = None  # what connector.version() returned (for connector-metrics)


class Worker:
    """Runs connectors and tasks in this process.

    Args:
        config: the worker configuration.
        plugins: plugin discovery (connectors, converters, ...).
        offset_store: where source offsets are kept (started by :meth:`start`).
        status: where connector and task states are reported.
        worker_id: this worker's id in statuses (``host:port``).
    """

    def __init__(
        self,
        config: WorkerConfig,
        plugins: Plugins,
        offset_store: OffsetBackingStore,
        status: StatusStore,
        *,
        worker_id: str,
    ) -> None:
        self.config = config
        self.plugins = plugins
        self.offset_store = offset_store
        self.status = status
        self.worker_id = worker_id
        self._lock = threading.RLock()
        self._connectors: dict[str, _ConnectorEntry] = {}
        self._tasks: dict[ConnectorTaskId, _Runner] = {}
        self._started = False
        #: How long stopping connectors waits for their ``stop()`` calls (all together).
        self.connector_stop_timeout_s = CONNECTOR_STOP_TIMEOUT_S
        self._leave: LeaveDecision | None = None  # sink.tasks.leave.mode, decided when needed
        #: Kafka Connect's worker, connector and task metrics of this worker.
        self.metrics = ConnectMetrics(config.metrics_window_ms, config.metrics_num_samples)
        self.metrics.bind_worker(self._connector_metrics_infos, status)

    def __repr__(self) -> str:
        return f"Worker(id={self.worker_id!r})"

    # -- lifecycle -------------------------------------------------------------------------------
    def start(self) -> None:
        """Start the worker (and its offset store)."""
        log.info("Worker %s starting", self.worker_id)
        self.offset_store.start()
        self._started = True

    def stop(self) -> None:
        """Stop every task (gracefully, committing offsets), every connector, the offset store."""
        if not self._started:
            return
        log.info("Worker %s stopping", self.worker_id)
        self.stop_tasks(self.task_ids())
        self.stop_connectors(sorted(self.connector_names()))
        self.offset_store.stop()
        self._started = False
        log.info("Worker %s stopped", self.worker_id)

    # -- connectors ------------------------------------------------------------------------------
    def connector_names(self) -> set[str]:
        """The connectors this worker holds (running, paused, stopped or failed)."""
        with self._lock:
            return set(self._connectors)

    def is_running(self, name: str) -> bool:
        """Whether connector ``name`` is started (not paused, stopped or failed)."""
        with self._lock:
            entry = self._connectors.get(name)
        return entry is not None and entry.started and not entry.failed

    def connector_type(self, name: str) -> ConnectorType:
        """``"source"`` or ``"sink"`` for a connector this worker holds.

        Raises:
            NotFoundException: the connector is unknown or could not be instantiated.
        """
        entry = self._entry(name)
        if entry.kind is None:
            raise NotFoundException(f"Connector {name} could not be instantiated")
        return entry.kind

    def connector_type_of(self, props: Mapping[str, str]) -> ConnectorType:
        """``"source"`` or ``"sink"`` for the connector class in ``props``.

        Raises:
            ConfigException: ``connector.class`` is missing or not a connector.
        """
        class_name = props.get("connector.class")
        if not class_name:
            raise ConfigException(
                'Missing required configuration "connector.class" which has no default value.'
            )
        cls = self.plugins.connector_class(class_name)
        return "sink" if issubclass(cls, SinkConnector) else "source"

    def start_connector(
        self,
        name: str,
        props: dict[str, str],
        listener: ConnectorListener,
        target: TargetState,
        *,
        wait: bool = True,
    ) -> concurrent.futures.Future[None]:
        """Instantiate a connector and start it on its thread (logging as ``[name|worker]``).

        Returns:
            A future completed once the connector has started (or failed).
        """
        with connector_context(name):
            return self._start_connector(name, props, listener, target, wait=wait)

    def _start_connector(
        self,
        name: str,
        props: dict[str, str],
        listener: ConnectorListener,
        target: TargetState,
        *,
        wait: bool = True,
    ) -> concurrent.futures.Future[None]:
        """Instantiate a connector, then initialize and (unless STOPPED) start it on its thread.

        Errors of the connector are reported as a FAILED status with the trace; they are not
        raised.

        Args:
            name: the connector's name.
            props: its configuration (variables resolved).
            listener: receives the connector's context calls (the herder).
            target: the state to bring it to.
            wait: wait until the connector reached ``target`` (or failed); the herder passes
                False and follows the returned future, so that a ``start()`` that hangs holds
                up nothing but the connector's own thread.

        Returns:
            A future completed once the connector reached ``target`` or failed.

        Raises:
            ConnectException: a connector with this name is already held by the worker.
        """
        entry = _ConnectorEntry(name, dict(props), listener, target=target)
        with self._lock:
            if name in self._connectors:
                raise ConnectException(f"Connector with name {name} already exists")
            self._connectors[name] = entry
        self.status.put_connector(name, Status(State.UNASSIGNED, self.worker_id))
        try:
            connector = self.plugins.new_connector(props.get("connector.class", ""))
            entry.connector = connector
            if isinstance(connector, SinkConnector):
                entry.kind = "sink"
                context: Any = WorkerSinkConnectorContext(
                    name,
                    lambda: self._request_reconfiguration(entry),
                    lambda error: self._connector_error(entry, error),
                )
            elif isinstance(connector, SourceConnector):
                entry.kind = "source"
                entry.offset_reader = OffsetStorageReaderImpl(self.offset_store, name)
                context = WorkerSourceConnectorContext(
                    name,
                    lambda: self._request_reconfiguration(entry),
                    lambda error: self._connector_error(entry, error),
                    entry.offset_reader,
                )
            else:  # pragma: no cover - Plugins only returns connectors
                raise ConnectException(f"{type(connector).__name__} is not a connector")
        except Exception as exc:  # noqa: BLE001 - connector errors become a FAILED status
            self.metrics.record_connector_startup(success=False)
            self._connector_failed(entry, exc, "Failed to create connector")
            return _done_future()
        self.metrics.record_connector_startup(success=True)
        log.info("Creating connector %s of type %s", name, props.get("connector.class"))
        entry.thread = _ConnectorThread(name)
        future = entry.thread.submit(lambda: self._initialize(entry, context, target))
        if wait:
            future.result()
        return future

    def _initialize(self, entry: _ConnectorEntry, context: Any, target: TargetState) -> None:
        """On the connector's thread: ``initialize`` then the transition to ``target``."""
        assert entry.connector is not None
        if entry.removed:
            return
        try:
            entry.connector.initialize(context)
        except Exception as exc:  # noqa: BLE001 - connector errors become a FAILED status
            self._connector_failed(entry, exc, "Failed to initialize connector")
            return
        try:
            entry.version = str(entry.connector.version())
        except Exception as exc:  # noqa: BLE001 - only the metric goes without it
            log.warning("Connector %s: version() raised %r", entry.name, exc)
        self._transition(entry, target)

    def _transition(self, entry: _ConnectorEntry, target: TargetState) -> None:
        """On the connector's thread: start or stop the connector and report its new state.

        As Kafka's ``WorkerConnector``, a connector has no paused state of its own: PAUSED (like
        STOPPED) calls ``stop()`` on a started connector, and STARTED calls ``start()`` again on
        the same instance (no new ``initialize``). A ``stop()`` that raises while pausing fails
        the connector; while stopping it is logged and the connector is STOPPED all the same.
        """
        entry.target = target
        if entry.failed or entry.connector is None or entry.removed:
            return
        if target is TargetState.STARTED:
            if not entry.started:
                try:
                    entry.connector.start(dict(entry.props))
                except Exception as exc:  # noqa: BLE001 - connector errors become a FAILED status
                    self._connector_failed(entry, exc, "Failed to start connector")
                    return
                entry.started = True
                log.info("Connector %s started", entry.name)
            self._report(entry, Status(State.RUNNING, self.worker_id))
            return
        paused = target is TargetState.PAUSED
        if entry.started:
            error = self._call_connector_stop(entry)
            if error is not None and paused:
                self._connector_failed(entry, error, "Error while pausing connector")
                return
            log.info("Connector %s %s", entry.name, "paused" if paused else "stopped")
        self._report(entry, Status(State.PAUSED if paused else State.STOPPED, self.worker_id))

    def _report(self, entry: _ConnectorEntry, status: Status) -> None:
        """Record a connector's state unless it was stopped (or replaced) meanwhile."""
        with self._lock:
            if self._connectors.get(entry.name) is entry and not entry.removed:
                self.status.put_connector(entry.name, status)

    def _call_connector_stop(self, entry: _ConnectorEntry) -> Exception | None:
        """Call the connector's ``stop()``; log and return what it raised (None if nothing)."""
        entry.started = False
        assert entry.connector is not None
        try:
            entry.connector.stop()
        except Exception as exc:  # logged here; the caller decides what follows
            log.error("Error while shutting down connector %s", entry.name, exc_info=exc)
            return exc
        return None

    def _connector_failed(self, entry: _ConnectorEntry, exc: BaseException, what: str) -> None:
        log.error("%s %s", what, entry.name, exc_info=exc)
        entry.failed = True
        self._report(entry, Status(State.FAILED, self.worker_id, stack_trace(exc)))

    def _request_reconfiguration(self, entry: _ConnectorEntry) -> None:
        entry.listener.request_task_reconfiguration(entry.name)

    def _connector_error(self, entry: _ConnectorEntry, error: BaseException) -> None:
        self._connector_failed(entry, error, "Connector raised an error")
        try:
            entry.listener.raise_error(entry.name, error)
        except Exception:
            log.exception("The herder failed to handle the error of connector %s", entry.name)

    def connector_task_configs(self, name: str, props: dict[str, str]) -> list[dict[str, str]]:
        """The connector's task configs for ``tasks.max``, with ``task.class`` (and sink topics).

        Raises:
            NotFoundException: the connector is not held by this worker.
            ConnectException: the connector is not running, or ``task_configs`` failed (the
                connector is then FAILED), or it returned more configs than ``tasks.max`` with
                ``tasks.max.enforce=true``.
        """
        entry = self._entry(name)
        connector = entry.connector
        if connector is None or not entry.started or entry.failed:
            raise ConnectException(f"Connector {name} is not running")
        raw_max = props.get("tasks.max", "1")
        try:
            max_tasks = int(str(raw_max).strip())
        except ValueError:
            raise ConfigException("tasks.max", raw_max, "Not a number of type INT") from None
        if max_tasks < 1:
            raise ConfigException("tasks.max", raw_max, "Value must be at least 1")
        try:
            configs = connector.task_configs(max_tasks)
            task_class = connector.task_class()
            if configs is None or not isinstance(configs, list):
                raise ConnectException(
                    f"Connector {name}: task_configs() must return a list of dicts, "
                    f"got {type(configs).__name__}"
                )
            enforce = str(props.get("tasks.max.enforce", "true")).strip().lower() != "false"
            if len(configs) > max_tasks:
                message = (
                    f"The connector {name} has generated {len(configs)} tasks, which is greater "
                    f"than {max_tasks}, the maximum number of tasks it is configured to create. "
                )
                if enforce:
                    raise ConnectException(
                        message + "This behaviour should be considered a bug and should be "
                        "reported to the maintainers of the connector."
                    )
                log.warning(message + "tasks.max.enforce is false: running them all.")
        except Exception as exc:
            self._connector_failed(entry, exc, "Failed to generate task configs of connector")
            raise ConnectException(f"Connector {name} failed to generate task configs") from exc
        if isinstance(task_class, type):
            self.plugins.remember(task_class)
        result: list[dict[str, str]] = []
        raw_configs: list[Any] = list(configs)
        for index, task_config in enumerate(raw_configs):
            if not isinstance(task_config, Mapping):
                error = ConnectException(
                    f"Connector {name}: task config {index} is a {type(task_config).__name__}, "
                    "not a dict"
                )
                self._connector_failed(entry, error, "Invalid task configs of connector")
                raise error
            config = {str(k): str(v) for k, v in task_config.items()}
            config[TASK_CLASS_CONFIG] = _class_path(task_class)
            if entry.kind == "sink":
                for key in (TOPICS_CONFIG, TOPICS_REGEX_CONFIG):
                    if props.get(key):
                        config[key] = props[key]
            result.append(config)
        return result

    def stop_connector(self, name: str) -> None:
        """Stop a connector and forget it (its tasks are stopped separately by the herder).

        Waits at most :attr:`connector_stop_timeout_s` for the connector's ``stop()``.
        """
        self.stop_connectors([name])

    def stop_connectors(self, names: Iterable[str]) -> None:
        """Stop connectors and forget them, waiting at most :attr:`connector_stop_timeout_s`.

        Every connector is asked to stop first (on its own thread); then the worker waits for
        them all together. A connector still busy then (its ``start()`` or ``stop()`` hangs) is
        abandoned with an ERROR log, as Kafka does: its thread ends whenever the call returns.
        """
        entries: list[_ConnectorEntry] = []
        with self._lock:
            for name in names:
                entry = self._connectors.pop(name, None)
                if entry is not None:
                    entry.removed = True
                    entries.append(entry)
        pending: list[tuple[_ConnectorEntry, concurrent.futures.Future[None]]] = []
        for entry in entries:
            with connector_context(entry.name):
                log.info("Stopping connector %s", entry.name)
            if entry.thread is None:
                self._shutdown(entry)
                continue
            pending.append((entry, entry.thread.submit(functools.partial(self._shutdown, entry))))
            entry.thread.close()
        deadline = time.monotonic() + self.connector_stop_timeout_s
        for entry, future in pending:
            try:
                future.result(max(deadline - time.monotonic(), 0.0))
            except concurrent.futures.TimeoutError:
                log.error(
                    "Connector '%s' failed to properly shut down within %.0f ms, has become "
                    "unresponsive, and may be consuming external resources. Correct the "
                    "configuration for this connector or remove the connector. After fixing the "
                    "connector, it may be necessary to restart this worker to release any "
                    "consumed resources.",
                    entry.name,
                    self.connector_stop_timeout_s * 1000,
                )
                if entry.offset_reader is not None:
                    with contextlib.suppress(Exception):
                        entry.offset_reader.close()
            except Exception:
                log.exception("Failed to stop connector %s", entry.name)
        for entry in entries:
            current = self.status.connector(entry.name)
            with self._lock:
                if entry.name in self._connectors:  # started again meanwhile
                    continue
                if current is None or current.state is not State.FAILED:
                    self.status.put_connector(entry.name, Status(State.UNASSIGNED, self.worker_id))

    def _shutdown(self, entry: _ConnectorEntry) -> None:
        """On the connector's thread: ``stop()`` it (if started) and close its offset reader."""
        if entry.started:
            self._call_connector_stop(entry)
        if entry.offset_reader is not None:
            entry.offset_reader.close()

    def set_target_state(
        self, name: str, target: TargetState, *, wait: bool = True
    ) -> concurrent.futures.Future[None]:
        """Pause, resume or stop a connector and pause/resume its tasks.

        PAUSED calls the connector's ``stop()`` and pauses its tasks; STARTED calls its
        ``start()`` again and resumes them (the herder then updates the task configs, as Kafka).
        STOPPED stops the connector and its tasks (their statuses are removed); STARTED after
        STOPPED starts the connector again (the herder then starts its tasks).

        Args:
            name: the connector.
            target: the new target state.
            wait: wait (at most :attr:`connector_stop_timeout_s`) for the connector's
                transition, which runs on its own thread.

        Returns:
            A future completed once the connector made the transition.
        """
        entry = self._entry(name)
        ids = {tid for tid in self.task_ids() if tid.connector == name}
        if target is TargetState.STOPPED:
            self.stop_tasks(ids)
            for tid in ids:
                self.status.remove_task(tid)
        else:
            with self._lock:
                runners = [self._tasks[t] for t in ids if t in self._tasks]
            for runner in runners:
                runner.set_target_state(target)
        if entry.thread is None:  # failed at creation
            entry.target = target
            return _done_future()
        future = entry.thread.submit(lambda: self._transition(entry, target))
        if wait:
            try:
                future.result(self.connector_stop_timeout_s)
            except concurrent.futures.TimeoutError:
                log.error(
                    "Connector %s did not complete its transition to %s within %.0f ms",
                    name,
                    target.value,
                    self.connector_stop_timeout_s * 1000,
                )
        return future

    def set_tasks_target_state(self, connector: str, target: TargetState) -> None:
        """Pause or resume the tasks of ``connector`` this worker runs (not the connector).

        Where tasks run apart from their connector (the executors of distributed mode), a
        target state reaches them this way.
        """
        with self._lock:
            runners = [r for tid, r in self._tasks.items() if tid.connector == connector]
        for runner in runners:
            runner.set_target_state(target)

    def _connector_metrics_infos(self) -> list[ConnectorMetricsInfo]:
        """What ``connector-metrics`` reports of each connector (read at scrape time)."""
        with self._lock:
            entries = list(self._connectors.values())
        return [
            ConnectorMetricsInfo(
                e.name,
                e.kind,
                _class_path(type(e.connector))
                if e.connector is not None
                else str(e.props.get("connector.class", "")),
                e.version,
            )
            for e in entries
        ]

    def _entry(self, name: str) -> _ConnectorEntry:
        with self._lock:
            entry = self._connectors.get(name)
        if entry is None:
            raise NotFoundException(f"Connector {name} not found")
        return entry

    # -- tasks -----------------------------------------------------------------------------------
    def task_ids(self) -> set[ConnectorTaskId]:
        """The tasks this worker runs."""
        with self._lock:
            return set(self._tasks)

    def task_thread(self, task_id: ConnectorTaskId) -> threading.Thread | None:
        """The thread of a running task (for tests)."""
        runner = self.task_runner(task_id)
        return None if runner is None else runner.thread

    def task_runner(self, task_id: ConnectorTaskId) -> WorkerSourceTask | WorkerSinkTask | None:
        """The runner of a task this worker holds, ``None`` when it holds none."""
        with self._lock:
            return self._tasks.get(task_id)

    def start_task(
        self,
        task_id: ConnectorTaskId,
        connector_props: dict[str, str],
        task_props: dict[str, str],
        target: TargetState,
    ) -> None:
        """Build a task's pipeline and start it on its own thread (logging as the task).

        Raises:
            ConnectException: the task is already running on this worker.
        """
        with connector_context(task_id.connector, task_id.task):
            self._start_task(task_id, connector_props, task_props, target)

    def _start_task(
        self,
        task_id: ConnectorTaskId,
        connector_props: dict[str, str],
        task_props: dict[str, str],
        target: TargetState,
    ) -> None:
        """Build a task's pipeline and start it on its own thread.

        Build errors (unknown classes, bad converter or SMT settings, client config) are
        reported as a FAILED status with the trace, not raised.

        Raises:
            ConnectException: the task is already running on this worker.
        """
        with self._lock:
            if task_id in self._tasks:
                raise ConnectException(f"Task already exists in this worker: {task_id}")
        log.info("Creating task %s", task_id)
        self.status.put_task(task_id, Status(State.UNASSIGNED, self.worker_id))
        closers: list[Callable[[], None]] = []
        try:
            runner = self._build_task(task_id, connector_props, task_props, target, closers)
        except Exception as exc:
            log.error("Failed to start task %s", task_id, exc_info=exc)
            self.metrics.record_task_startup(success=False)
            self.metrics.remove_task(task_id)
            for closer in reversed(closers):
                try:
                    closer()
                except Exception:
                    log.exception("Failed to release a resource of task %s", task_id)
            self.status.put_task(task_id, Status(State.FAILED, self.worker_id, stack_trace(exc)))
            return
        with self._lock:
            if task_id in self._tasks:  # started concurrently
                raise ConnectException(f"Task already exists in this worker: {task_id}")
            self._tasks[task_id] = runner
        self.metrics.record_task_startup(success=True)
        runner.start()

    def _build_task(
        self,
        task_id: ConnectorTaskId,
        connector_props: Mapping[str, str],
        task_props: Mapping[str, str],
        target: TargetState,
        closers: list[Callable[[], None]],
    ) -> _Runner:
        from cdk.runtime._connector_config import ConnectorConfig

        class_name = task_props.get(TASK_CLASS_CONFIG)
        if not class_name:
            raise ConnectException(f"Task {task_id} has no '{TASK_CLASS_CONFIG}' in its config")
        task_class = self.plugins.load(class_name)
        if not (isinstance(task_class, type) and issubclass(task_class, (SourceTask, SinkTask))):
            raise ConnectException(
                f"Tasks must be a subclass of either SourceTask or SinkTask: {class_name}"
            )
        kind: ConnectorType = "sink" if issubclass(task_class, SinkTask) else "source"
        connector_config = ConnectorConfig(connector_props, plugins=self.plugins, kind=kind)
        try:
            task: Task = task_class()
        except Exception as exc:
            raise ConnectException(f"Failed to create task {class_name}: {exc}") from exc

        key_converter = self._converter(connector_props, "key.converter", True)
        closers.append(key_converter.close)
        value_converter = self._converter(connector_props, "value.converter", False)
        closers.append(value_converter.close)
        header_converter = self._header_converter(connector_props)
        closers.append(header_converter.close)
        chain = connector_config.transformation_chain()
        closers.append(chain.close)

        errors = ErrorHandlingConfig.from_props(connector_props)
        error_metrics = ErrorHandlingMetrics()  # one set for the operator and its reporters
        reporters: list[ErrorReporter] = []
        if errors.log_enable:
            reporters.append(LogReporter(task_id.connector, task_id.task, errors, error_metrics))
        producer_config = {
            **self.config.producer_props(),
            **self.config.client_overrides(connector_props, "producer"),
        }
        admin_config = {
            **self.config.admin_props(),
            **self.config.client_overrides(connector_props, "admin"),
        }
        if kind == "sink" and errors.dlq_topic:
            reporters.append(
                DeadLetterQueueReporter.create(
                    errors,
                    task_id.connector,
                    task_id.task,
                    producer_config=producer_config,
                    admin_config=admin_config,
                    metrics=error_metrics,
                )
            )
        operator = RetryWithToleranceOperator(errors, reporters, metrics=error_metrics)
        closers.append(operator.close)
        common: dict[str, Any] = {
            "worker_id": self.worker_id,
            "status_store": self.status,
            "target": target,
            "key_converter": key_converter,
            "value_converter": value_converter,
            "header_converter": header_converter,
            "transformation_chain": chain,
            "operator": operator,
            "flush_interval_ms": self.config.offset_flush_interval_ms,
            "flush_timeout_ms": self.config.offset_flush_timeout_ms,
            "closers": list(reversed(closers)),
            "topic_tracking": self.config.topic_tracking_enabled,
            "metrics": self.metrics.task_metrics(task_id, kind, error_metrics),
        }
        if kind == "source":
            assert isinstance(task, SourceTask)
            reader = OffsetStorageReaderImpl(self.offset_store, task_id.connector)
            common["closers"].append(reader.close)
            topic_creation = TopicCreation.from_props(
                connector_props, enabled=self._topic_creation_enabled()
            )
            transactional_id = self.config.source_transactional_id(task_id.connector, task_id.task)
            if transactional_id is not None:
                return self._exactly_once_task(
                    task_id,
                    task,
                    task_props,
                    connector_props,
                    reader,
                    transactional_id,
                    producer_config=producer_config,
                    offset_writer=OffsetStorageWriter(self.offset_store, task_id.connector),
                    admin_config=admin_config,
                    topic_creation=topic_creation,
                    **common,
                )
            return WorkerSourceTask(
                task_id,
                task,
                task_props,
                WorkerSourceTaskContext(task_props, reader),
                producer_config=producer_config,
                offset_writer=OffsetStorageWriter(self.offset_store, task_id.connector),
                admin_config=admin_config,
                topic_creation=topic_creation,
                **common,
            )
        assert isinstance(task, SinkTask)
        consumer_config = {
            **self.config.consumer_props(consumer_group_id(task_id.connector)),
            **self.config.client_overrides(connector_props, "consumer"),
        }
        errant: WorkerErrantRecordReporter | None = None
        if errors.enable_errant_record_reporter:
            errant = WorkerErrantRecordReporter(
                operator, key_converter, value_converter, header_converter
            )
        runner = WorkerSinkTask(
            task_id,
            task,
            task_props,
            consumer_config=consumer_config,
            errant_reporter=errant,
            **common,
        )
        if errant is not None:
            errant.raw_record_for = runner.raw_record_for
        runner.join_before_leave = self.sink_tasks_leave_sequentially
        return runner

    def _exactly_once_task(
        self,
        task_id: ConnectorTaskId,
        task: SourceTask,
        task_props: Mapping[str, str],
        connector_props: Mapping[str, str],
        reader: OffsetStorageReaderImpl,
        transactional_id: str,
        **kwargs: Any,
    ) -> WorkerSourceTask:
        """A source task's exactly-once runner (``exactly.once.source.support=enabled``)."""
        store = self.offset_store
        if not isinstance(store, KafkaOffsetBackingStore):
            raise ConnectException(
                f"Exactly-once source tasks need their offsets in a Kafka topic; {store!r} is not"
            )
        boundary = transaction_boundary(connector_props)
        raw_interval = connector_props.get(TRANSACTION_BOUNDARY_INTERVAL_CONFIG)
        interval_ms: int | None = None
        if raw_interval not in (None, ""):
            try:
                interval_ms = int(str(raw_interval).strip())
            except ValueError:
                raise ConfigException(
                    TRANSACTION_BOUNDARY_INTERVAL_CONFIG, raw_interval, "Not a number of type LONG"
                ) from None
            if interval_ms < 0:
                raise ConfigException(
                    TRANSACTION_BOUNDARY_INTERVAL_CONFIG, raw_interval, "Value must be at least 0"
                )
        context = WorkerTransactionContext() if boundary == TransactionBoundary.CONNECTOR else None
        log.info(
            "Task %s runs exactly once: transactional.id %s, transaction.boundary %s",
            task_id,
            transactional_id,
            boundary,
        )
        return ExactlyOnceWorkerSourceTask(
            task_id,
            task,
            task_props,
            WorkerSourceTaskContext(task_props, reader, context),
            transactional_id=transactional_id,
            offsets_topic=store.topic,
            boundary=boundary,
            boundary_interval_ms=interval_ms,
            transaction_context=context,
            **kwargs,
        )

    def _topic_creation_enabled(self) -> bool:
        try:
            return bool(self.config.get_boolean("topic.creation.enable"))
        except Exception:  # noqa: BLE001 - an older worker config without the key
            return True

    def _converter(self, connector_props: Mapping[str, str], key: str, is_key: bool) -> Converter:
        """The connector's converter if it sets ``key``, else the worker's (Kafka's rules)."""
        class_name: Any = connector_props.get(key)
        if class_name:
            configs = _with_prefix(connector_props, key + ".")
        else:
            class_name = self.config.get(key)
            configs = self.config.originals_with_prefix(key + ".")
        if not class_name:
            raise ConfigException(f'Missing required configuration "{key}" which has no default')
        try:
            return self.plugins.new_converter(class_name, configs, is_key)
        except ConfigException:
            raise
        except Exception as exc:
            raise ConnectException(f"Failed to create the {key} {class_name}: {exc}") from exc

    def _header_converter(self, connector_props: Mapping[str, str]) -> HeaderConverter:
        key = "header.converter"
        class_name: Any = connector_props.get(key)
        if class_name:
            configs = _with_prefix(connector_props, key + ".")
        else:
            class_name = self.config.get(key) or _DEFAULT_HEADER_CONVERTER
            configs = self.config.originals_with_prefix(key + ".")
        return self.plugins.new_header_converter(class_name, configs)

    def stop_tasks(self, ids: Collection[ConnectorTaskId], timeout_s: float | None = None) -> None:
        """Stop tasks gracefully: each commits its offsets; wait up to the graceful timeout.

        Every task is asked to stop at once, except where the broker needs the tasks of one
        sink to leave their consumer group one at a time (``sink.tasks.leave.mode``, see
        :meth:`sink_tasks_leave_sequentially`): then, after one has left, the group's
        remaining tasks finish the rebalance it causes (for up to :data:`REJOIN_TIMEOUT_S`)
        before the next one leaves. A group whose members all leave during one rebalance can be
        left with a leader that is gone on such a broker (the embedded Tansu keeps it, and the
        next task to join never gets partitions); leaving one by one always leaves a formed
        group. Source tasks, and the first task of each sink, are asked to stop at once.

        Args:
            ids: the tasks to stop (unknown ids are ignored).
            timeout_s: how long each task gets to stop once asked;
                ``task.shutdown.graceful.timeout.ms`` when None. A task still running then is
                cancelled (it commits and reports nothing more).
        """
        with self._lock:
            runners = [(tid, self._tasks[tid]) for tid in ids if tid in self._tasks]
        if not runners:
            return
        if timeout_s is None:
            timeout_s = self.config.task_shutdown_timeout_ms / 1000.0
        waves = _leave_waves(runners)
        if len(waves) > 1 and not self.sink_tasks_leave_sequentially():
            waves = [runners]
        for number, wave in enumerate(waves):
            left = {r.group_id for _, r in wave if isinstance(r, WorkerSinkTask)}
            staying = {
                r: r.assignments
                for later in waves[number + 1 :]
                for _, r in later
                if isinstance(r, WorkerSinkTask) and r.group_id in left
            }
            self._stop_wave(wave, timeout_s)
            _await_rejoin(staying)

    def sink_tasks_leave_sequentially(self) -> bool:
        """Whether the tasks of one sink leave their consumer group one at a time.

        ``sink.tasks.leave.mode`` decides; with ``auto`` the cluster is asked the first time
        several tasks of one sink stop together, and its answer is kept (a cluster that could
        not be asked gets the one-at-a-time order, and is asked again next time).
        """
        with self._lock:
            decision = self._leave
        if decision is None:
            decision = decide_leave_mode(
                self.config.sink_tasks_leave_mode, self.config.admin_props()
            )
            if decision.final:
                with self._lock:
                    self._leave = decision
            log.info(
                "The tasks of a sink leave their consumer group %s: %s",
                "one at a time" if decision.sequential else "together",
                decision.reason,
            )
        return decision.sequential

    def _stop_wave(self, wave: list[tuple[ConnectorTaskId, _Runner]], timeout_s: float) -> None:
        for tid, runner in wave:
            with connector_context(tid.connector, tid.task):
                log.info("Stopping task %s", tid)
            runner.stop()  # only signals: the task's thread stops it and commits
        deadline = time.monotonic() + timeout_s
        for tid, runner in wave:
            if not runner.await_stop(max(deadline - time.monotonic(), 0.0)):
                log.error(
                    "Graceful stop of task %s failed: its thread did not end within %.0f ms; "
                    "cancelling it (its producer is closed and its thread abandoned)",
                    tid,
                    timeout_s * 1000,
                )
                runner.cancel()
            with self._lock:
                if self._tasks.get(tid) is runner:
                    del self._tasks[tid]
                    self.metrics.remove_task(tid, runner.metrics)


def _await_rejoin(staying: dict[WorkerSinkTask, int]) -> None:
    """Wait until each sink task that stays has finished a rebalance after its mark."""
    waiting = list(staying)
    deadline = time.monotonic() + REJOIN_TIMEOUT_S
    while waiting and time.monotonic() < deadline:
        waiting = [r for r in waiting if not r.rejoined_since(staying[r])]
        if waiting:
            time.sleep(0.02)
    if waiting:
        log.warning(
            "Tasks %s did not finish their consumer group's rebalance within %.0f s; "
            "stopping them anyway",
            ", ".join(str(r.id) for r in waiting),
            REJOIN_TIMEOUT_S,
        )


def _leave_waves(
    runners: list[tuple[ConnectorTaskId, _Runner]],
) -> list[list[tuple[ConnectorTaskId, _Runner]]]:
    """Split the tasks to stop into waves with at most one task of each sink's group."""
    waves: list[list[tuple[ConnectorTaskId, _Runner]]] = [[]]
    per_group: dict[str, int] = {}
    for tid, runner in runners:
        if not isinstance(runner, WorkerSinkTask):
            waves[0].append((tid, runner))
            continue
        number = per_group.get(runner.group_id, 0)
        per_group[runner.group_id] = number + 1
        while len(waves) <= number:
            waves.append([])
        waves[number].append((tid, runner))
    return waves


def _with_prefix(props: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    return {k[len(prefix) :]: v for k, v in props.items() if k.startswith(prefix)}
