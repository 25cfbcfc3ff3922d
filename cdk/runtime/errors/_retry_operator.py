"""The retry and tolerance operator that runs each step of a record's pipeline.

A :class:`~cdk.errors.RetriableException` is retried with exponential backoff (300 ms,
doubling, capped at ``errors.retry.delay.max.ms``) while within ``errors.retry.timeout``
(``-1``: forever); any other exception in the transformation and converter stages is tolerated
with ``errors.tolerance=all`` (reported, the record skipped); with ``none``, or in other stages,
the operator raises :class:`~cdk.errors.ConnectException` and the task fails.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import TypeVar

from cdk.errors import ConnectException, RetriableException
from cdk.runtime.errors._config import ErrorHandlingConfig
from cdk.runtime.errors._context import ProcessingContext, Stage
from cdk.runtime.errors._metrics import ErrorHandlingMetrics
from cdk.runtime.errors._reporters import ErrorReporter
from cdk.runtime.util._futures import combine_futures, completed_future

__all__ = ["RetryWithToleranceOperator"]

log = logging.getLogger("cdk.runtime.errors")

T = TypeVar("T")

# Stages where errors.tolerance=all tolerates every exception; elsewhere only retriable ones.
_TOLERATE_ALL_STAGES = frozenset(
    {Stage.TRANSFORMATION, Stage.KEY_CONVERTER, Stage.VALUE_CONVERTER, Stage.HEADER_CONVERTER}
)


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
            return completed_future()
        return combine_futures(futures)

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
