"""Error handling for connector pipelines: retries, tolerance, error log and dead letter queue.

The Python spelling of Kafka Connect's ``runtime.errors`` package. A task runner executes each
step of a record's pipeline (converter, transformation, ...) through a
:class:`RetryWithToleranceOperator`, configured from the connector's ``errors.*`` keys
(:class:`ErrorHandlingConfig`):

- a :class:`~cdk.errors.RetriableException` is retried with exponential backoff (300 ms,
  doubling, capped at ``errors.retry.delay.max.ms``) while within ``errors.retry.timeout``
  (``-1``: forever); when the time is up the record is reported and skipped, as Kafka does;
- any other exception in the transformation and converter stages is tolerated with
  ``errors.tolerance=all`` (reported, the record skipped); with ``none``, or in other stages,
  the operator raises :class:`~cdk.errors.ConnectException` and the task fails.

Failures go to the reporters: :class:`LogReporter` (``errors.log.enable``) and, for sinks,
:class:`DeadLetterQueueReporter` (``errors.deadletterqueue.topic.name``), which writes the
original record's bytes to the dead letter queue with ``__connect.errors.*`` headers.
:class:`WorkerErrantRecordReporter` is what ``SinkTaskContext.errant_record_reporter()``
returns.
"""

from __future__ import annotations

import enum
import functools
import logging
import random
import sys
import threading
import time
import traceback
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, TypeVar

from cdk.api import (
    ErrantRecordReporter,
    SinkRecord,
    SinkTask,
    SourceRecord,
    TimestampType,
    TopicPartition,
)
from cdk.config import ConfigDef, Importance, Type
from cdk.config.validators import ValidString
from cdk.converters import Converter, HeaderConverter
from cdk.errors import ConnectException, DataException, RetriableException

__all__ = [
    "ConsumedRecord",
    "DeadLetterQueueReporter",
    "ErrorHandlingConfig",
    "ErrorHandlingMetrics",
    "ErrorReporter",
    "LogReporter",
    "ProcessingContext",
    "RetryWithToleranceOperator",
    "Stage",
    "WorkerErrantRecordReporter",
    "class_name",
]

log = logging.getLogger("cdk.runtime.errors")

T = TypeVar("T")

RETRY_TIMEOUT_CONFIG = "errors.retry.timeout"
RETRY_DELAY_MAX_CONFIG = "errors.retry.delay.max.ms"
TOLERANCE_CONFIG = "errors.tolerance"
LOG_ENABLE_CONFIG = "errors.log.enable"
LOG_INCLUDE_MESSAGES_CONFIG = "errors.log.include.messages"
DLQ_TOPIC_NAME_CONFIG = "errors.deadletterqueue.topic.name"
DLQ_TOPIC_REPLICATION_FACTOR_CONFIG = "errors.deadletterqueue.topic.replication.factor"
DLQ_CONTEXT_HEADERS_ENABLE_CONFIG = "errors.deadletterqueue.context.headers.enable"

HEADER_PREFIX = "__connect.errors."
ERROR_HEADER_ORIG_TOPIC = HEADER_PREFIX + "topic"
ERROR_HEADER_ORIG_PARTITION = HEADER_PREFIX + "partition"
ERROR_HEADER_ORIG_OFFSET = HEADER_PREFIX + "offset"
ERROR_HEADER_CONNECTOR_NAME = HEADER_PREFIX + "connector.name"
ERROR_HEADER_TASK_ID = HEADER_PREFIX + "task.id"
ERROR_HEADER_STAGE = HEADER_PREFIX + "stage"
ERROR_HEADER_EXECUTING_CLASS = HEADER_PREFIX + "class.name"
ERROR_HEADER_EXCEPTION = HEADER_PREFIX + "exception.class.name"
ERROR_HEADER_EXCEPTION_MESSAGE = HEADER_PREFIX + "exception.message"
ERROR_HEADER_EXCEPTION_STACK_TRACE = HEADER_PREFIX + "exception.stacktrace"


class Stage(enum.Enum):
    """The step of a record's pipeline an operation belongs to (Kafka's ``Stage``)."""

    TASK_START = "TASK_START"
    TASK_POLL = "TASK_POLL"
    TASK_PUT = "TASK_PUT"
    TRANSFORMATION = "TRANSFORMATION"
    KEY_CONVERTER = "KEY_CONVERTER"
    VALUE_CONVERTER = "VALUE_CONVERTER"
    HEADER_CONVERTER = "HEADER_CONVERTER"
    KAFKA_PRODUCE = "KAFKA_PRODUCE"
    KAFKA_CONSUME = "KAFKA_CONSUME"

    def __str__(self) -> str:
        return self.value


# Stages where errors.tolerance=all tolerates every exception; elsewhere only retriable ones.
_TOLERATE_ALL_STAGES = frozenset(
    {Stage.TRANSFORMATION, Stage.KEY_CONVERTER, Stage.VALUE_CONVERTER, Stage.HEADER_CONVERTER}
)


def class_name(cls: type) -> str:
    """The dotted name of a class, through its public package when it re-exports it.

    ``cdk.converters._json.JsonConverter`` becomes ``cdk.converters.JsonConverter``; classes
    of other packages keep ``module.QualName``. This is what logs and DLQ headers show where
    Kafka shows ``Class.getName()``.
    """
    module = getattr(cls, "__module__", "") or ""
    qualname = getattr(cls, "__qualname__", getattr(cls, "__name__", repr(cls)))
    if module == "builtins":
        return str(qualname)
    parts = module.split(".")
    while len(parts) > 1 and any(p.startswith("_") for p in parts):
        parent = ".".join(parts[:-1])
        package = sys.modules.get(parent)
        if package is None or getattr(package, str(qualname), None) is not cls:
            break
        parts = parts[:-1]
    return f"{'.'.join(parts)}.{qualname}" if parts and parts[0] else str(qualname)


# --------------------------------------------------------------------------------------------
# Configuration


@functools.lru_cache(maxsize=1)
def _config_def() -> ConfigDef:
    return (
        ConfigDef()
        .define(RETRY_TIMEOUT_CONFIG, Type.LONG, 0, None, Importance.MEDIUM, "Retry timeout (ms).")
        .define(
            RETRY_DELAY_MAX_CONFIG, Type.LONG, 60000, None, Importance.MEDIUM, "Max delay (ms)."
        )
        .define(
            TOLERANCE_CONFIG,
            Type.STRING,
            "none",
            ValidString.in_("none", "all"),
            Importance.MEDIUM,
            "Error tolerance.",
        )
        .define(LOG_ENABLE_CONFIG, Type.BOOLEAN, False, None, Importance.MEDIUM, "Log errors.")
        .define(
            LOG_INCLUDE_MESSAGES_CONFIG,
            Type.BOOLEAN,
            False,
            None,
            Importance.MEDIUM,
            "Log records.",
        )
        .define(DLQ_TOPIC_NAME_CONFIG, Type.STRING, "", None, Importance.MEDIUM, "DLQ topic.")
        .define(
            DLQ_TOPIC_REPLICATION_FACTOR_CONFIG, Type.SHORT, 3, None, Importance.MEDIUM, "DLQ RF."
        )
        .define(
            DLQ_CONTEXT_HEADERS_ENABLE_CONFIG,
            Type.BOOLEAN,
            False,
            None,
            Importance.MEDIUM,
            "DLQ context headers.",
        )
    )


@dataclass(frozen=True)
class ErrorHandlingConfig:
    """A connector's ``errors.*`` settings, with Kafka's defaults.

    Attributes:
        tolerance_all: ``errors.tolerance=all`` (default ``none``).
        retry_timeout_ms: ``errors.retry.timeout`` (default 0: no retries; -1: forever).
        retry_delay_max_ms: ``errors.retry.delay.max.ms`` (default 60000).
        log_enable: ``errors.log.enable`` (default false).
        log_include_messages: ``errors.log.include.messages`` (default false).
        dlq_topic: ``errors.deadletterqueue.topic.name`` (default empty: no DLQ; sinks only).
        dlq_replication_factor: ``errors.deadletterqueue.topic.replication.factor`` (default 3).
        dlq_context_headers: ``errors.deadletterqueue.context.headers.enable`` (default false).
    """

    tolerance_all: bool = False
    retry_timeout_ms: int = 0
    retry_delay_max_ms: int = 60000
    log_enable: bool = False
    log_include_messages: bool = False
    dlq_topic: str = ""
    dlq_replication_factor: int = 3
    dlq_context_headers: bool = False

    @classmethod
    def from_props(cls, props: Mapping[str, Any]) -> ErrorHandlingConfig:
        """Parse the ``errors.*`` keys of a connector configuration (other keys are ignored).

        Raises:
            ConfigException: a value is invalid (Kafka's message, naming the key).
        """
        parsed = _config_def().parse({k: v for k, v in props.items() if k.startswith("errors.")})
        return cls(
            tolerance_all=parsed[TOLERANCE_CONFIG] == "all",
            retry_timeout_ms=int(parsed[RETRY_TIMEOUT_CONFIG]),
            retry_delay_max_ms=int(parsed[RETRY_DELAY_MAX_CONFIG]),
            log_enable=bool(parsed[LOG_ENABLE_CONFIG]),
            log_include_messages=bool(parsed[LOG_INCLUDE_MESSAGES_CONFIG]),
            dlq_topic=str(parsed[DLQ_TOPIC_NAME_CONFIG]).strip(),
            dlq_replication_factor=int(parsed[DLQ_TOPIC_REPLICATION_FACTOR_CONFIG]),
            dlq_context_headers=bool(parsed[DLQ_CONTEXT_HEADERS_ENABLE_CONFIG]),
        )

    @property
    def enable_errant_record_reporter(self) -> bool:
        """Whether sink tasks get an errant record reporter (a DLQ topic or the error log)."""
        return bool(self.dlq_topic) or self.log_enable


# --------------------------------------------------------------------------------------------
# Context


@dataclass
class ConsumedRecord:
    """The raw Kafka record a sink pipeline was processing (what goes to the DLQ).

    Attributes:
        topic: the topic it was read from.
        partition: its partition.
        offset: its offset.
        key: the raw key bytes.
        value: the raw value bytes.
        headers: the raw headers in order.
        timestamp: its timestamp in ms, if any.
        timestamp_type: what the timestamp means.
    """

    topic: str
    partition: int
    offset: int
    key: bytes | None = None
    value: bytes | None = None
    headers: list[tuple[str, bytes | None]] = field(default_factory=list)
    timestamp: int | None = None
    timestamp_type: TimestampType = TimestampType.NO_TIMESTAMP_TYPE

    @property
    def topic_partition(self) -> TopicPartition:
        """The record's topic and partition."""
        return TopicPartition(self.topic, self.partition)

    @classmethod
    def from_message(cls, message: Any) -> ConsumedRecord:
        """Capture a ``confluent_kafka.Message`` read by a sink consumer."""
        ts_type, ts = message.timestamp()
        timestamp_type = {
            1: TimestampType.CREATE_TIME,
            2: TimestampType.LOG_APPEND_TIME,
        }.get(ts_type, TimestampType.NO_TIMESTAMP_TYPE)
        return cls(
            topic=message.topic(),
            partition=message.partition(),
            offset=message.offset(),
            key=message.key(),
            value=message.value(),
            headers=list(message.headers() or []),
            timestamp=ts if timestamp_type is not TimestampType.NO_TIMESTAMP_TYPE else None,
            timestamp_type=timestamp_type,
        )


class ProcessingContext:
    """What the pipeline of one record is doing, and how it failed (if it did).

    Create one per record: ``ProcessingContext(consumed=...)`` for a sink, or
    ``ProcessingContext(source_record=...)`` for a source.

    Attributes:
        consumed: the raw record consumed from Kafka (sinks).
        source_record: the record as the source task returned it (sources).
        stage: the stage executing now (or when it failed).
        executing_class: the class running that stage.
        error: the error that failed the record, if any.
        attempt: how many attempts the current stage took.
    """

    def __init__(
        self,
        consumed: ConsumedRecord | None = None,
        source_record: SourceRecord | None = None,
    ) -> None:
        self.consumed = consumed
        self.source_record = source_record
        self.stage: Stage | None = None
        self.executing_class: type | None = None
        self.error: BaseException | None = None
        self.attempt = 0

    @property
    def failed(self) -> bool:
        """Whether an error was recorded for this record."""
        return self.error is not None

    def to_string(self, include_messages: bool = False) -> str:
        """Kafka's description: ``Executing stage 'X' with class 'Y'[, where ...].``."""
        stage = self.stage.name if self.stage is not None else "null"
        klass = class_name(self.executing_class) if self.executing_class is not None else "null"
        text = f"Executing stage '{stage}' with class '{klass}'"
        if include_messages and self.source_record is not None:
            text += f", where source record is = {self.source_record!r}"
        elif include_messages and self.consumed is not None:
            msg = self.consumed
            text += (
                f", where consumed record is {{topic='{msg.topic}', partition={msg.partition}, "
                f"offset={msg.offset}"
            )
            if msg.timestamp_type in (TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME):
                text += f", timestamp={msg.timestamp}, timestampType={msg.timestamp_type}"
            text += "}"
        return text + "."

    def __str__(self) -> str:
        return self.to_string(False)

    def __repr__(self) -> str:
        return f"ProcessingContext({self.to_string(False)!r}, error={self.error!r})"


# --------------------------------------------------------------------------------------------
# Metrics


class ErrorHandlingMetrics:
    """Counters of a task's error handling (Kafka's ``task-error-metrics`` group). Thread-safe."""

    _FIELDS = (
        "total_record_failures",
        "total_records_skipped",
        "total_record_errors",
        "total_retries",
        "total_errors_logged",
        "deadletterqueue_produce_requests",
        "deadletterqueue_produce_failures",
    )

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts = dict.fromkeys(self._FIELDS, 0)
        self.last_error_timestamp: int | None = None

    def increment(self, name: str, by: int = 1) -> None:
        """Add ``by`` to counter ``name``."""
        with self._lock:
            self._counts[name] += by

    def record_error_timestamp(self) -> None:
        """Remember the wall-clock time (ms) of the latest failure."""
        self.last_error_timestamp = int(time.time() * 1000)

    def __getattr__(self, name: str) -> int:
        counts = self.__dict__.get("_counts")
        if counts is not None and name in counts:
            return int(counts[name])
        raise AttributeError(name)

    def snapshot(self) -> dict[str, int]:
        """Every counter's current value."""
        with self._lock:
            return dict(self._counts)

    def __repr__(self) -> str:
        return f"ErrorHandlingMetrics({self.snapshot()})"


# --------------------------------------------------------------------------------------------
# Futures


def _completed() -> Future[None]:
    future: Future[None] = Future()
    future.set_result(None)
    return future


def _combine(futures: Sequence[Future[None]]) -> Future[None]:
    """A future done when all of ``futures`` are; failed with the first failure."""
    if len(futures) == 1:
        return futures[0]
    pending = [f for f in futures if not f.done() or f.exception() is not None]
    if not pending:
        return _completed()
    combined: Future[None] = Future()
    lock = threading.Lock()
    remaining = [len(pending)]

    def on_done(done: Future[None]) -> None:
        with lock:
            remaining[0] -= 1
            finished = remaining[0] == 0
            error = None if done.cancelled() else done.exception()
            if combined.done():
                return
            if error is not None:
                combined.set_exception(error)
            elif finished:
                combined.set_result(None)

    for f in pending:
        f.add_done_callback(on_done)
    return combined


# --------------------------------------------------------------------------------------------
# Reporters


class ErrorReporter(ABC):
    """Receives every failed record's :class:`ProcessingContext`."""

    @abstractmethod
    def report(self, context: ProcessingContext) -> Future[None]:
        """Report a failure; the future is done when the report is persisted."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release the reporter's resources."""


class LogReporter(ErrorReporter):
    """Logs failures at ERROR with the exception (``errors.log.enable``).

    The message is Kafka's: ``Error encountered in task <connector>-<task>. Executing stage
    '<STAGE>' with class '<class>'.``, and with ``errors.log.include.messages=true`` the record's
    coordinates (sinks) or the record itself (sources).

    Args:
        connector: the connector name.
        task_id: the task number.
        config: the connector's error handling settings.
        metrics: counters to update.
        logger: where to log (defaults to this module's logger).
    """

    def __init__(
        self,
        connector: str,
        task_id: int,
        config: ErrorHandlingConfig,
        metrics: ErrorHandlingMetrics | None = None,
        logger: logging.Logger | None = None,
    ) -> None:
        self.connector = connector
        self.task_id = task_id
        self.config = config
        self.metrics = metrics or ErrorHandlingMetrics()
        self._log = logger or log

    def message(self, context: ProcessingContext) -> str:
        """The text logged for ``context``."""
        return (
            f"Error encountered in task {self.connector}-{self.task_id}. "
            f"{context.to_string(self.config.log_include_messages)}"
        )

    def report(self, context: ProcessingContext) -> Future[None]:
        """Log the failure when logging is enabled; the future is already done."""
        if not self.config.log_enable or not context.failed:
            return _completed()
        error = context.error
        self._log.error(
            self.message(context),
            exc_info=(type(error), error, error.__traceback__) if error is not None else None,
        )
        self.metrics.increment("total_errors_logged")
        return _completed()


def _utf8(value: str | None) -> bytes | None:
    return None if value is None else value.encode("utf-8")


def _exception_message(error: BaseException) -> str | None:
    """Like Java's ``getMessage()``: ``None`` when the exception carries no message."""
    if not error.args:
        return None
    return str(error)


class DeadLetterQueueReporter(ErrorReporter):
    """Writes the original consumed record of a failed sink pipeline to the dead letter queue.

    The key, value, headers and timestamp of the raw record are produced unchanged to
    ``errors.deadletterqueue.topic.name``. With ``errors.deadletterqueue.context.headers.enable``
    the ``__connect.errors.*`` headers are added, as UTF-8 text: the original ``topic``,
    ``partition`` and ``offset``, ``connector.name``, ``task.id``, ``stage``, ``class.name``
    and, with an error, ``exception.class.name``, ``exception.message`` (absent message: null
    header value) and ``exception.stacktrace``. Only records consumed by sinks are written.

    The reporter owns the producer from then on: it polls it for delivery reports and flushes
    it on :meth:`close`.

    Args:
        producer: a ``confluent_kafka.Producer`` for the DLQ's cluster.
        config: the connector's error handling settings.
        connector: the connector name.
        task_id: the task number.
        metrics: counters to update.
    """

    DLQ_NUM_DESIRED_PARTITIONS = 1

    def __init__(
        self,
        producer: Any,
        config: ErrorHandlingConfig,
        connector: str,
        task_id: int,
        metrics: ErrorHandlingMetrics | None = None,
    ) -> None:
        self._producer = producer
        self.config = config
        self.topic = config.dlq_topic.strip()
        self.connector = connector
        self.task_id = task_id
        self.metrics = metrics or ErrorHandlingMetrics()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._poller: threading.Thread | None = None

    @classmethod
    def create(
        cls,
        config: ErrorHandlingConfig,
        connector: str,
        task_id: int,
        producer_config: Mapping[str, Any],
        admin_config: Mapping[str, Any] | None = None,
        metrics: ErrorHandlingMetrics | None = None,
        timeout_s: float = 30.0,
    ) -> DeadLetterQueueReporter:
        """Create the DLQ topic if missing, then a producer and the reporter.

        The topic gets one partition and ``errors.deadletterqueue.topic.replication.factor``
        replicas, capped to the number of brokers.

        Args:
            config: the connector's error handling settings (``dlq_topic`` must be set).
            connector: the connector name.
            task_id: the task number.
            producer_config: librdkafka settings for the DLQ producer (``bootstrap.servers``...).
            admin_config: librdkafka settings for the admin client (defaults to the producer's).
            metrics: counters to update.
            timeout_s: how long topic creation may take.

        Raises:
            ConnectException: ``Could not initialize dead letter queue with topic=<topic>``.
        """
        from cdk.kafka import new_admin, new_producer
        from cdk.runtime._offsets import ensure_topic

        topic = config.dlq_topic.strip()
        if not topic:
            raise ConnectException("No dead letter queue topic is configured")
        try:
            admin = new_admin(dict(admin_config if admin_config is not None else producer_config))
            ensure_topic(
                admin,
                topic,
                partitions=cls.DLQ_NUM_DESIRED_PARTITIONS,
                replication_factor=config.dlq_replication_factor,
                timeout_s=timeout_s,
                purpose="the dead letter queue",
            )
        except ConnectException as e:
            raise ConnectException(
                f"Could not initialize dead letter queue with topic={topic}: {e}"
            ) from e
        return cls(new_producer(dict(producer_config)), config, connector, task_id, metrics)

    def _ensure_poller(self) -> None:
        with self._lock:
            if self._poller is not None or self._stop.is_set():
                return
            self._poller = threading.Thread(
                target=self._poll_loop,
                name=f"cdk-dlq-{self.connector}-{self.task_id}",
                daemon=True,
            )
            self._poller.start()

    def _poll_loop(self) -> None:
        while not self._stop.is_set():
            self._producer.poll(0.1)

    def context_headers(self, context: ProcessingContext) -> list[tuple[str, bytes | None]]:
        """The ``__connect.errors.*`` headers for ``context``."""
        headers: list[tuple[str, bytes | None]] = []
        if context.consumed is not None:
            headers.append((ERROR_HEADER_ORIG_TOPIC, _utf8(context.consumed.topic)))
            headers.append((ERROR_HEADER_ORIG_PARTITION, _utf8(str(context.consumed.partition))))
            headers.append((ERROR_HEADER_ORIG_OFFSET, _utf8(str(context.consumed.offset))))
        headers.append((ERROR_HEADER_CONNECTOR_NAME, _utf8(self.connector)))
        headers.append((ERROR_HEADER_TASK_ID, _utf8(str(self.task_id))))
        stage = context.stage.name if context.stage is not None else "null"
        headers.append((ERROR_HEADER_STAGE, _utf8(stage)))
        klass = class_name(context.executing_class) if context.executing_class else "null"
        headers.append((ERROR_HEADER_EXECUTING_CLASS, _utf8(klass)))
        error = context.error
        if error is not None:
            headers.append((ERROR_HEADER_EXCEPTION, _utf8(class_name(type(error)))))
            headers.append((ERROR_HEADER_EXCEPTION_MESSAGE, _utf8(_exception_message(error))))
            trace = "".join(traceback.format_exception(type(error), error, error.__traceback__))
            headers.append((ERROR_HEADER_EXCEPTION_STACK_TRACE, _utf8(trace)))
        return headers

    def report(self, context: ProcessingContext) -> Future[None]:
        """Produce the original record to the DLQ; the future completes on the broker's ack."""
        if not self.topic:
            return _completed()
        self.metrics.increment("deadletterqueue_produce_requests")
        original = context.consumed
        if original is None:
            self.metrics.increment("deadletterqueue_produce_failures")
            return _completed()
        headers = list(original.headers)
        if self.config.dlq_context_headers:
            headers.extend(self.context_headers(context))
        future: Future[None] = Future()
        future.set_running_or_notify_cancel()

        def on_delivery(err: Any, _msg: Any) -> None:
            if err is None:
                future.set_result(None)
                return
            log.error(
                "Could not produce message to dead letter queue. topic=%s: %s", self.topic, err
            )
            self.metrics.increment("deadletterqueue_produce_failures")
            future.set_exception(
                ConnectException(
                    f"Could not produce message to dead letter queue {self.topic}: {err}"
                )
            )

        kwargs: dict[str, Any] = {
            "key": original.key,
            "value": original.value,
            "headers": headers,
            "on_delivery": on_delivery,
        }
        if original.timestamp is not None and original.timestamp >= 0:
            kwargs["timestamp"] = original.timestamp
        self._ensure_poller()
        try:
            while True:
                try:
                    self._producer.produce(self.topic, **kwargs)
                    break
                except BufferError:
                    self._producer.poll(0.1)
        except Exception as e:  # noqa: BLE001 - KafkaException, bad arguments
            log.error("Could not produce message to dead letter queue. topic=%s", self.topic)
            self.metrics.increment("deadletterqueue_produce_failures")
            future.set_exception(
                ConnectException(
                    f"Could not produce message to dead letter queue {self.topic}: {e}"
                )
            )
        return future

    def flush(self, timeout_s: float = 30.0) -> int:
        """Wait for every produced DLQ record to be acknowledged; returns how many are left."""
        return int(self._producer.flush(timeout_s))

    def close(self) -> None:
        """Stop polling and flush the producer."""
        self._stop.set()
        poller = self._poller
        if poller is not None:
            poller.join()
        left = self._producer.flush(30.0)
        if left:
            log.warning("%d records were not written to the dead letter queue %s", left, self.topic)


# --------------------------------------------------------------------------------------------
# The operator


class RetryWithToleranceOperator:
    """Runs pipeline operations with retries and error tolerance (Kafka's operator).

    Thread-safe. Each record has its own :class:`ProcessingContext`; once a record failed, later
    :meth:`execute` calls for the same context return ``None`` without running.

    Args:
        config: the connector's error handling settings.
        reporters: where failures are reported.
        stop_event: set when the task stops; it interrupts backoff waits.
        metrics: counters to update.
        clock: monotonic time in seconds (tests inject a fake clock).
        sleep: wait this many seconds (tests inject one); by default waits on ``stop_event``.
    """

    RETRIES_DELAY_MIN_MS = 300

    def __init__(
        self,
        config: ErrorHandlingConfig,
        reporters: Sequence[ErrorReporter] = (),
        stop_event: threading.Event | None = None,
        *,
        metrics: ErrorHandlingMetrics | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        self.config = config
        self.reporters: list[ErrorReporter] = list(reporters)
        self.stop_event = stop_event if stop_event is not None else threading.Event()
        self.metrics = metrics or ErrorHandlingMetrics()
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.RLock()
        self._total_failures = 0
        self._local = threading.local()

    # -- tolerance

    @property
    def tolerance_all(self) -> bool:
        """Whether ``errors.tolerance=all``."""
        return self.config.tolerance_all

    @property
    def total_failures(self) -> int:
        """How many operations failed so far."""
        with self._lock:
            return self._total_failures

    def within_tolerance_limits(self) -> bool:
        """Whether the failures so far are tolerated (always with ``all``; none with ``none``)."""
        with self._lock:
            return self.config.tolerance_all or self._total_failures == 0

    def _mark_as_failed(self) -> None:
        with self._lock:
            self._total_failures += 1
        self.metrics.record_error_timestamp()

    def failed(self) -> bool:
        """Whether the last :meth:`execute` on this thread ended in a tolerated failure."""
        return bool(getattr(self._local, "failed", False))

    # -- reporting

    def report(self, context: ProcessingContext) -> Future[None]:
        """Send ``context`` to every reporter; the future is done when all have persisted it."""
        with self._lock:
            reporters = list(self.reporters)
        futures: list[Future[None]] = []
        for reporter in reporters:
            try:
                futures.append(reporter.report(context))
            except Exception as e:
                log.exception("Error reporter %s failed", type(reporter).__name__)
                failed: Future[None] = Future()
                failed.set_exception(e)
                futures.append(failed)
        if not futures:
            return _completed()
        return _combine(futures)

    # -- execution

    def execute_failed(
        self,
        context: ProcessingContext,
        stage: Stage,
        executing_class: type,
        error: BaseException,
    ) -> Future[None]:
        """Record a failure that happened outside :meth:`execute` and report it.

        Returns:
            A future done when every reporter has persisted the failure.

        Raises:
            ConnectException: ``Tolerance exceeded in error handler`` (for a source record:
                ``... in Source Worker error handler``) with ``errors.tolerance=none``, after
                reporting.
        """
        self._mark_as_failed()
        context.stage = stage
        context.executing_class = executing_class
        context.error = error
        self.metrics.increment("total_record_failures")
        future = self.report(context)
        if not self.within_tolerance_limits():
            self.metrics.increment("total_record_errors")
            where = " Source Worker" if context.source_record is not None else ""
            raise ConnectException(f"Tolerance exceeded in{where} error handler") from error
        return future

    def execute(
        self,
        op: Callable[[], T],
        stage: Stage,
        executing_class: type,
        context: ProcessingContext,
    ) -> T | None:
        """Run ``op``, retrying and tolerating failures as configured.

        Returns:
            The operation's result, or ``None`` when the record failed and is to be skipped
            (then :meth:`failed` is true and ``context.error`` holds the error).

        Raises:
            ConnectException: ``Unhandled exception in error handler`` when the stage does not
                tolerate this kind of exception, ``Tolerance exceeded in error handler`` when
                ``errors.tolerance=none``; the cause is the operation's error.
        """
        self._local.failed = False
        context.stage = stage
        context.executing_class = executing_class
        if context.failed:
            log.debug("ProcessingContext is already in failed state. Ignoring requested operation.")
            self._local.failed = True
            return None
        try:
            return self._exec_and_handle_error(op, stage, context)
        finally:
            if context.error is not None:
                self._local.failed = True
                self.metrics.increment("total_record_errors")
                self.report(context)

    def _exec_and_handle_error(
        self, op: Callable[[], T], stage: Stage, context: ProcessingContext
    ) -> T | None:
        try:
            result = self._exec_and_retry(op, context)
        except Exception as e:
            self.metrics.increment("total_record_failures")
            self._mark_as_failed()
            context.error = e
            tolerable = stage in _TOLERATE_ALL_STAGES or isinstance(e, RetriableException)
            if not tolerable:
                raise ConnectException("Unhandled exception in error handler") from e
            if not self.within_tolerance_limits():
                raise ConnectException("Tolerance exceeded in error handler") from e
            self.metrics.increment("total_records_skipped")
            return None
        if context.failed:
            # Retries ran out (or the task is stopping). Kafka 3.9 skips the record even under
            # errors.tolerance=none, which silently loses it; we skip only when tolerance allows.
            self._mark_as_failed()
            if not self.config.tolerance_all:
                raise ConnectException("Tolerance exceeded in error handler") from context.error
            self.metrics.increment("total_records_skipped")
        return result

    def _exec_and_retry(self, op: Callable[[], T], context: ProcessingContext) -> T | None:
        attempt = 0
        start_ms = self._clock() * 1000.0
        timeout = self.config.retry_timeout_ms
        deadline_ms = start_ms + timeout if timeout >= 0 else float("inf")
        while True:
            attempt += 1
            context.attempt = attempt
            try:
                return op()
            except RetriableException as e:
                log.debug(
                    "Caught a retriable exception while executing %s operation with %s",
                    context.stage,
                    context.executing_class,
                )
                self.metrics.increment("total_record_failures")
                if self._clock() * 1000.0 < deadline_ms:
                    self._backoff(attempt, deadline_ms)
                    self.metrics.increment("total_retries")
                else:
                    context.error = e
                    return None
                if self.stop_event.is_set():
                    log.debug("Shutdown has been scheduled. Marking operation as failed.")
                    context.error = e
                    return None

    def _backoff(self, attempt: int, deadline_ms: float) -> None:
        num_retry = min(attempt - 1, 40)
        delay = float(self.RETRIES_DELAY_MIN_MS << num_retry)
        max_delay = self.config.retry_delay_max_ms
        if delay > max_delay:
            delay = float(random.randrange(max_delay)) if max_delay > 0 else 0.0
        now = self._clock() * 1000.0
        if delay + now > deadline_ms:
            delay = max(0.0, deadline_ms - now)
        log.debug("Sleeping for up to %s millis", delay)
        if self._sleep is not None:
            self._sleep(delay / 1000.0)
        else:
            self.stop_event.wait(delay / 1000.0)

    def trigger_stop(self) -> None:
        """Stop retrying: backoff waits end now and retrying operations fail."""
        self.stop_event.set()

    def close(self) -> None:
        """Close every reporter.

        Raises:
            ConnectException: ``Failed to close all reporters`` (the first failure as cause).
        """
        with self._lock:
            reporters, self.reporters = self.reporters, []
        first: BaseException | None = None
        for reporter in reporters:
            try:
                reporter.close()
            except Exception as e:
                log.exception("Failed to close error reporter %s", type(reporter).__name__)
                first = first or e
        if first is not None:
            raise ConnectException("Failed to close all reporters") from first

    def __repr__(self) -> str:
        return (
            f"RetryWithToleranceOperator(errorRetryTimeout={self.config.retry_timeout_ms}, "
            f"errorMaxDelayInMillis={self.config.retry_delay_max_ms}, "
            f"errorToleranceType={'ALL' if self.config.tolerance_all else 'NONE'}, "
            f"totalFailures={self.total_failures})"
        )


# --------------------------------------------------------------------------------------------
# Errant record reporter


class WorkerErrantRecordReporter(ErrantRecordReporter):
    """The errant record reporter given to sink tasks (``context.errant_record_reporter()``).

    A reported record goes to the operator's reporters as a ``TASK_PUT`` failure. The DLQ gets
    the *original* consumed bytes when ``raw_record_for`` finds them (the sink runner keeps the
    raw record of each delivered :class:`~cdk.api.SinkRecord`); otherwise the record as the task
    reported it is serialized with the task's converters, as Kafka does for records the task
    created itself.

    Args:
        operator: the task's operator (its reporters and tolerance).
        key_converter: the task's key converter.
        value_converter: the task's value converter.
        header_converter: the task's header converter.
        raw_record_for: returns the raw record a delivered sink record came from, or ``None``.
        executing_class: the class named in reports (Kafka: ``SinkTask``).
    """

    def __init__(
        self,
        operator: RetryWithToleranceOperator,
        key_converter: Converter | None = None,
        value_converter: Converter | None = None,
        header_converter: HeaderConverter | None = None,
        *,
        raw_record_for: Callable[[SinkRecord], ConsumedRecord | None] | None = None,
        executing_class: type = SinkTask,
    ) -> None:
        self.operator = operator
        self.key_converter = key_converter
        self.value_converter = value_converter
        self.header_converter = header_converter
        self.raw_record_for = raw_record_for
        self.executing_class = executing_class
        self._lock = threading.Lock()
        self._futures: dict[TopicPartition, list[Future[None]]] = {}

    def _serialize(self, record: SinkRecord) -> ConsumedRecord:
        topic = record.topic
        key = _convert(self.key_converter, topic, record.key_schema, record.key, "key")
        value = _convert(self.value_converter, topic, record.value_schema, record.value, "value")
        headers: list[tuple[str, bytes | None]] = []
        for header in record.headers:
            if self.header_converter is not None:
                raw = self.header_converter.from_connect_header(
                    topic, header.key, header.schema, header.value
                )
            elif header.value is None or isinstance(header.value, bytes):
                raw = header.value
            else:
                raw = str(header.value).encode("utf-8")
            headers.append((header.key, raw))
        partition = record.kafka_partition if record.kafka_partition is not None else -1
        return ConsumedRecord(
            topic=topic,
            partition=partition,
            offset=record.kafka_offset,
            key=key,
            value=value,
            headers=headers,
            timestamp=record.timestamp,
            timestamp_type=record.timestamp_type,
        )

    def report(self, record: SinkRecord, error: BaseException) -> Future[None]:
        """Report ``record`` as failed with ``error``.

        Returns:
            A future done when the failure is persisted (e.g. the DLQ acknowledged it).

        Raises:
            ConnectException: ``Tolerance exceeded in error handler`` with
                ``errors.tolerance=none`` (the task then fails).
        """
        raw = self.raw_record_for(record) if self.raw_record_for is not None else None
        if raw is None:
            raw = self._serialize(record)
        context = ProcessingContext(consumed=raw)
        future = self.operator.execute_failed(context, Stage.TASK_PUT, self.executing_class, error)
        if not future.done() or future.exception() is not None:
            with self._lock:
                self._futures.setdefault(raw.topic_partition, []).append(future)
        return future

    def await_futures(
        self,
        partitions: Collection[TopicPartition] | None = None,
        timeout_s: float | None = None,
    ) -> None:
        """Wait for the reports of ``partitions`` (all by default) to be persisted.

        Called before sink offsets are committed, so no reported record is lost.

        Raises:
            ConnectException: a report failed, or did not finish within ``timeout_s``.
        """
        futures = self._take(partitions)
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        for future in futures:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                future.result(timeout=remaining)
            except TimeoutError as e:
                raise ConnectException("Timed out waiting for errant records to be reported") from e
            except Exception as e:
                log.error(
                    "Encountered an error while awaiting an errant record future's completion."
                )
                raise ConnectException(f"Failed to report an errant record: {e}") from e

    def cancel_futures(self, partitions: Collection[TopicPartition] | None = None) -> None:
        """Stop tracking the reports of ``partitions`` (all by default), e.g. on revocation."""
        self._take(partitions)

    def _take(self, partitions: Collection[TopicPartition] | None) -> list[Future[None]]:
        with self._lock:
            if partitions is None:
                taken = [f for fs in self._futures.values() for f in fs]
                self._futures.clear()
                return taken
            taken = []
            for tp in partitions:
                taken.extend(self._futures.pop(tp, []))
            return taken

    def pending(self) -> int:
        """How many tracked reports there are (done or not)."""
        with self._lock:
            return sum(len(fs) for fs in self._futures.values())


def _convert(
    converter: Converter | None, topic: str, schema: Any, value: Any, what: str
) -> bytes | None:
    if converter is not None:
        return converter.from_connect_data(topic, schema, value)
    if value is None or isinstance(value, bytes):
        return value
    raise DataException(
        f"Cannot serialize the record {what} for the errant record report without a converter"
    )
