"""The errant record reporter sink tasks get from ``context.errant_record_reporter()``."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection
from concurrent.futures import Future
from typing import Any

from cdk.api import (
    ErrantRecordReporter,
    SinkRecord,
    SinkTask,
    TopicPartition,
)
from cdk.converters import Converter, HeaderConverter
from cdk.errors import ConnectException, DataException
from cdk.runtime.errors._context import ConsumedRecord, ProcessingContext, Stage
from cdk.runtime.errors._retry_operator import RetryWithToleranceOperator

__all__ = ["WorkerErrantRecordReporter"]

log = logging.getLogger("cdk.runtime.errors")


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
