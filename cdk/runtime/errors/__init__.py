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

The pieces live in private modules of this package: ``_context`` (stages and the processing
context), ``_config``, ``_metrics``, ``_reporters``, ``_retry_operator`` and
``_errant_reporter``; this package gathers their names.
"""

from __future__ import annotations

from cdk.runtime.errors._config import ErrorHandlingConfig
from cdk.runtime.errors._context import ConsumedRecord, ProcessingContext, Stage, class_name
from cdk.runtime.errors._errant_reporter import WorkerErrantRecordReporter
from cdk.runtime.errors._metrics import ErrorHandlingMetrics
from cdk.runtime.errors._reporters import DeadLetterQueueReporter, ErrorReporter, LogReporter
from cdk.runtime.errors._retry_operator import RetryWithToleranceOperator

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
