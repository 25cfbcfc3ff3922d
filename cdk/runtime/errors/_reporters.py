"""Where failed records are reported: the error log and the dead letter queue.

:class:`LogReporter` logs failures (``errors.log.enable``); :class:`DeadLetterQueueReporter`
writes the original bytes of a sink's failed record to ``errors.deadletterqueue.topic.name``,
with the ``__connect.errors.*`` context headers when enabled.
"""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Mapping
from concurrent.futures import Future
from typing import Any

from cdk.errors import ConnectException
from cdk.runtime._log_context import in_context
from cdk.runtime.errors._config import ErrorHandlingConfig
from cdk.runtime.errors._context import ProcessingContext, class_name, stack_trace
from cdk.runtime.errors._metrics import ErrorHandlingMetrics
from cdk.runtime.util._futures import completed_future
from cdk.runtime.util._topics import ensure_topic

__all__ = ["DeadLetterQueueReporter", "ErrorReporter", "LogReporter"]

log = logging.getLogger("cdk.runtime.errors")

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
            return completed_future()
        error = context.error
        self._log.error(
            self.message(context),
            exc_info=(type(error), error, error.__traceback__) if error is not None else None,
        )
        self.metrics.increment("total_errors_logged")
        return completed_future()


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
                target=in_context(self.connector, self.task_id, self._poll_loop),
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
            headers.append((ERROR_HEADER_EXCEPTION_STACK_TRACE, _utf8(stack_trace(error))))
        return headers

    def report(self, context: ProcessingContext) -> Future[None]:
        """Produce the original record to the DLQ; the future completes on the broker's ack."""
        if not self.topic:
            return completed_future()
        self.metrics.increment("deadletterqueue_produce_requests")
        original = context.consumed
        if original is None:
            self.metrics.increment("deadletterqueue_produce_failures")
            return completed_future()
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
