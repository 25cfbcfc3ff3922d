from __future__ import annotations

import logging
import threading
import time
import uuid
from concurrent.futures import Future
from typing import Any

import pytest

from cdk.api import SinkRecord, SinkTask, SourceRecord, TimestampType
from cdk.converters import JsonConverter, SimpleHeaderConverter
from cdk.errors import ConfigException, ConnectException, DataException, RetriableException
from cdk.kafka import free_port
from cdk.runtime.errors import (
    ConsumedRecord,
    DeadLetterQueueReporter,
    ErrorHandlingConfig,
    ErrorReporter,
    LogReporter,
    ProcessingContext,
    RetryWithToleranceOperator,
    Stage,
    WorkerErrantRecordReporter,
    class_name,
)
from tests._wait import wait_until

# --------------------------------------------------------------------------------------------
# Broker: the session's embedded broker (tests/conftest.py).


@pytest.fixture
def bootstrap(kafka_bootstrap: str) -> str:
    return kafka_bootstrap


def _consume_all(bootstrap: str, topic: str, count: int, timeout: float = 20.0) -> list[Any]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"test-{uuid.uuid4().hex[:6]}",
            "enable.auto.commit": False,
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 500,
        }
    )
    try:
        consumer.assign([TopicPartition(topic, 0, -2)])
        messages: list[Any] = []
        deadline = time.monotonic() + timeout
        while len(messages) < count and time.monotonic() < deadline:
            for m in consumer.consume(num_messages=count, timeout=0.2):
                if m.error() is None:
                    messages.append(m)
        return messages
    finally:
        consumer.close()


# --------------------------------------------------------------------------------------------
# Helpers


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps_ms: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps_ms.append(round(seconds * 1000, 3))
        self.now += seconds


class RecordingReporter(ErrorReporter):
    def __init__(self) -> None:
        self.reports: list[tuple[Stage | None, type | None, BaseException | None]] = []
        self.closed = False

    def report(self, context: ProcessingContext) -> Future[None]:
        self.reports.append((context.stage, context.executing_class, context.error))
        future: Future[None] = Future()
        future.set_result(None)
        return future

    def close(self) -> None:
        self.closed = True


class Flaky:
    """Raises `error` for the first `failures` calls, then returns `result`."""

    def __init__(self, failures: int, error: type[Exception] = RetriableException) -> None:
        self.failures = failures
        self.error = error
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error(f"attempt {self.calls} failed")
        return "ok"


def operator(
    clock: FakeClock | None = None, reporters: list[ErrorReporter] | None = None, **props: str
) -> RetryWithToleranceOperator:
    config = ErrorHandlingConfig.from_props({k.replace("_", "."): v for k, v in props.items()})
    clock = clock or FakeClock()
    return RetryWithToleranceOperator(config, reporters or [], clock=clock, sleep=clock.sleep)


def _consumed(**changes: Any) -> ConsumedRecord:
    fields: dict[str, Any] = {
        "topic": "orders",
        "partition": 2,
        "offset": 41,
        "key": b"k1",
        "value": b'{"bad": ',
        "headers": [("h1", b"v1"), ("h2", None)],
        "timestamp": 1700000000000,
        "timestamp_type": TimestampType.CREATE_TIME,
    }
    fields.update(changes)
    return ConsumedRecord(**fields)


# --------------------------------------------------------------------------------------------
# Config


def test_config_defaults_are_kafkas() -> None:
    config = ErrorHandlingConfig.from_props({"name": "x", "tasks.max": "2"})
    assert config == ErrorHandlingConfig(
        tolerance_all=False,
        retry_timeout_ms=0,
        retry_delay_max_ms=60000,
        log_enable=False,
        log_include_messages=False,
        dlq_topic="",
        dlq_replication_factor=3,
        dlq_context_headers=False,
    )
    assert not config.enable_errant_record_reporter


def test_config_parses_every_key() -> None:
    config = ErrorHandlingConfig.from_props(
        {
            "errors.tolerance": "all",
            "errors.retry.timeout": "-1",
            "errors.retry.delay.max.ms": "5000",
            "errors.log.enable": "true",
            "errors.log.include.messages": "true",
            "errors.deadletterqueue.topic.name": " dlq ",
            "errors.deadletterqueue.topic.replication.factor": "1",
            "errors.deadletterqueue.context.headers.enable": "true",
        }
    )
    assert config == ErrorHandlingConfig(True, -1, 5000, True, True, "dlq", 1, True)
    assert config.enable_errant_record_reporter
    assert ErrorHandlingConfig.from_props(
        {"errors.deadletterqueue.topic.name": "d"}
    ).enable_errant_record_reporter


@pytest.mark.parametrize(
    ("key", "value", "text"),
    [
        (
            "errors.tolerance",
            "sometimes",
            "Invalid value sometimes for configuration errors.tolerance: "
            "String must be one of: none, all",
        ),
        ("errors.retry.timeout", "soon", "Invalid value soon for configuration errors.retry"),
        ("errors.log.enable", "maybe", "Invalid value maybe for configuration errors.log.enable"),
    ],
)
def test_config_rejects_invalid_values(key: str, value: str, text: str) -> None:
    with pytest.raises(ConfigException) as info:
        ErrorHandlingConfig.from_props({key: value})
    assert str(info.value).startswith(text)


def test_stage_names() -> None:
    assert [s.name for s in Stage] == [
        "TASK_START",
        "TASK_POLL",
        "TASK_PUT",
        "TRANSFORMATION",
        "KEY_CONVERTER",
        "VALUE_CONVERTER",
        "HEADER_CONVERTER",
        "KAFKA_PRODUCE",
        "KAFKA_CONSUME",
    ]


def test_class_name_prefers_the_public_package() -> None:
    assert class_name(JsonConverter) == "cdk.converters.JsonConverter"
    assert class_name(SinkTask) == "cdk.api.SinkTask"
    assert class_name(ValueError) == "ValueError"
    assert class_name(RetriableException) == "cdk.errors.RetriableException"
    assert class_name(Flaky) == f"{__name__}.Flaky"


# --------------------------------------------------------------------------------------------
# Operator: retries


def test_success_returns_the_result() -> None:
    op = operator()
    context = ProcessingContext()
    assert op.execute(lambda: 5, Stage.VALUE_CONVERTER, JsonConverter, context) == 5
    assert not op.failed()
    assert not context.failed
    assert context.attempt == 1


def test_retriable_exception_is_retried_with_exponential_backoff() -> None:
    clock = FakeClock()
    op = operator(clock, errors_retry_timeout="100000")
    flaky = Flaky(3)
    context = ProcessingContext()
    assert op.execute(flaky, Stage.TASK_PUT, SinkTask, context) == "ok"
    assert clock.sleeps_ms == [300, 600, 1200]
    assert context.attempt == 4
    assert op.metrics.total_retries == 3
    assert op.metrics.total_record_failures == 3
    assert not op.failed()


def test_backoff_is_capped_by_the_retry_deadline_then_the_record_is_skipped() -> None:
    clock = FakeClock()
    reporter = RecordingReporter()
    op = operator(clock, [reporter], errors_retry_timeout="1000", errors_tolerance="all")
    flaky = Flaky(100)
    context = ProcessingContext()
    assert op.execute(flaky, Stage.KEY_CONVERTER, JsonConverter, context) is None
    assert clock.sleeps_ms == [300, 600, 100]
    assert flaky.calls == 4
    assert op.failed()
    assert isinstance(context.error, RetriableException)
    assert reporter.reports == [(Stage.KEY_CONVERTER, JsonConverter, context.error)]
    assert op.metrics.total_records_skipped == 1


def test_running_out_of_retries_fails_under_tolerance_none() -> None:
    # Kafka 3.9 skips the record here even with tolerance none (silent loss); we fail instead.
    clock = FakeClock()
    reporter = RecordingReporter()
    op = operator(clock, [reporter], errors_retry_timeout="1000")
    flaky = Flaky(100)
    context = ProcessingContext()
    with pytest.raises(ConnectException, match="Tolerance exceeded in error handler") as info:
        op.execute(flaky, Stage.KEY_CONVERTER, JsonConverter, context)
    assert isinstance(info.value.__cause__, RetriableException)
    assert flaky.calls == 4
    assert op.metrics.total_records_skipped == 0
    assert reporter.reports == [(Stage.KEY_CONVERTER, JsonConverter, context.error)]


def test_no_retries_by_default() -> None:
    clock = FakeClock()
    op = operator(clock)
    flaky = Flaky(1)
    with pytest.raises(ConnectException, match="Tolerance exceeded"):
        op.execute(flaky, Stage.TASK_PUT, SinkTask, ProcessingContext())
    assert flaky.calls == 1
    assert clock.sleeps_ms == []


def test_delays_above_the_max_are_randomized_below_it() -> None:
    clock = FakeClock()
    op = operator(clock, errors_retry_timeout="-1", errors_retry_delay_max_ms="1000")
    assert op.execute(Flaky(12), Stage.TASK_PUT, SinkTask, ProcessingContext()) == "ok"
    assert clock.sleeps_ms[:2] == [300, 600]
    assert len(clock.sleeps_ms) == 12
    assert all(0 <= d < 1000 for d in clock.sleeps_ms[2:])


def test_stop_event_ends_retrying() -> None:
    stop = threading.Event()
    config = ErrorHandlingConfig.from_props({"errors.retry.timeout": "-1"})
    op = RetryWithToleranceOperator(config, stop_event=stop)
    flaky = Flaky(1000)
    context = ProcessingContext()

    def stop_soon() -> None:
        wait_until(lambda: flaky.calls >= 2, timeout=10, message="a retry")
        op.trigger_stop()  # interrupts the 600 ms backoff after the second attempt

    stopper = threading.Thread(target=stop_soon, name="test-stopper")
    stopper.start()
    started = time.monotonic()
    with pytest.raises(ConnectException, match="Tolerance exceeded"):
        op.execute(flaky, Stage.TASK_PUT, SinkTask, context)
    stopper.join()
    assert time.monotonic() - started < 5  # the 300 ms+ waits were interrupted
    assert stop.is_set()
    assert isinstance(context.error, RetriableException)


# --------------------------------------------------------------------------------------------
# Operator: tolerance


@pytest.mark.parametrize(
    "stage",
    [Stage.TRANSFORMATION, Stage.KEY_CONVERTER, Stage.VALUE_CONVERTER, Stage.HEADER_CONVERTER],
)
def test_tolerance_all_skips_any_error_in_converters_and_transformations(stage: Stage) -> None:
    reporter = RecordingReporter()
    op = operator(None, [reporter], errors_tolerance="all")
    context = ProcessingContext(consumed=_consumed())
    assert op.execute(Flaky(1, ValueError), stage, JsonConverter, context) is None
    assert op.failed()
    assert isinstance(context.error, ValueError)
    assert reporter.reports == [(stage, JsonConverter, context.error)]
    assert op.metrics.total_records_skipped == 1
    # The next record starts clean.
    assert op.execute(lambda: 1, stage, JsonConverter, ProcessingContext()) == 1
    assert not op.failed()


def test_tolerance_none_fails_on_the_first_error() -> None:
    reporter = RecordingReporter()
    op = operator(None, [reporter])
    context = ProcessingContext()
    with pytest.raises(ConnectException, match="Tolerance exceeded in error handler") as info:
        op.execute(Flaky(1, ValueError), Stage.VALUE_CONVERTER, JsonConverter, context)
    assert isinstance(info.value.__cause__, ValueError)
    assert len(reporter.reports) == 1  # reported before failing, as Kafka


def test_other_stages_do_not_tolerate_non_retriable_errors() -> None:
    op = operator(None, errors_tolerance="all")
    with pytest.raises(ConnectException, match="Unhandled exception in error handler") as info:
        op.execute(Flaky(1, KeyError), Stage.TASK_PUT, SinkTask, ProcessingContext())
    assert isinstance(info.value.__cause__, KeyError)


def test_a_failed_context_skips_later_stages() -> None:
    op = operator(None, errors_tolerance="all")
    context = ProcessingContext()
    op.execute(Flaky(1, ValueError), Stage.KEY_CONVERTER, JsonConverter, context)
    called = []
    assert op.execute(lambda: called.append(1), Stage.TRANSFORMATION, object, context) is None
    assert called == []
    assert op.failed()
    assert context.stage is Stage.TRANSFORMATION


def test_execute_failed_reports_and_respects_tolerance() -> None:
    reporter = RecordingReporter()
    op = operator(None, [reporter], errors_tolerance="all")
    error = DataException("bad")
    future = op.execute_failed(ProcessingContext(), Stage.TASK_PUT, SinkTask, error)
    assert future.result(timeout=1) is None
    assert reporter.reports == [(Stage.TASK_PUT, SinkTask, error)]

    strict = operator(None, [reporter])
    with pytest.raises(ConnectException, match="Tolerance exceeded") as info:
        strict.execute_failed(ProcessingContext(), Stage.TASK_PUT, SinkTask, error)
    assert info.value.__cause__ is error
    assert len(reporter.reports) == 2


def test_execute_failed_for_a_source_record_says_so() -> None:
    op = operator(None)
    context = ProcessingContext(source_record=SourceRecord(None, None, "t"))
    with pytest.raises(ConnectException, match="Tolerance exceeded in Source Worker error handler"):
        op.execute_failed(context, Stage.KAFKA_PRODUCE, SourceRecord, RuntimeError("send"))


def test_close_closes_every_reporter() -> None:
    class Broken(RecordingReporter):
        def close(self) -> None:
            raise RuntimeError("nope")

    good = RecordingReporter()
    op = operator(None, [Broken(), good])
    with pytest.raises(ConnectException, match="Failed to close all reporters"):
        op.close()
    assert good.closed


# --------------------------------------------------------------------------------------------
# Log reporter


def _failed_context(**kwargs: Any) -> ProcessingContext:
    context = ProcessingContext(**kwargs)
    context.stage = Stage.VALUE_CONVERTER
    context.executing_class = JsonConverter
    try:
        raise DataException("Converting byte[] to Kafka Connect data failed")
    except DataException as e:
        context.error = e
    return context


def test_log_reporter_message_without_record(caplog: pytest.LogCaptureFixture) -> None:
    config = ErrorHandlingConfig(log_enable=True)
    reporter = LogReporter("my-sink", 3, config)
    with caplog.at_level(logging.ERROR, logger="cdk.runtime.errors"):
        assert reporter.report(_failed_context(consumed=_consumed())).done()
    assert caplog.messages == [
        "Error encountered in task my-sink-3. Executing stage 'VALUE_CONVERTER' with class "
        "'cdk.converters.JsonConverter'."
    ]
    assert caplog.records[0].exc_info is not None
    assert reporter.metrics.total_errors_logged == 1


def test_log_reporter_includes_consumed_record_coordinates() -> None:
    reporter = LogReporter(
        "my-sink", 0, ErrorHandlingConfig(log_enable=True, log_include_messages=True)
    )
    assert reporter.message(_failed_context(consumed=_consumed())) == (
        "Error encountered in task my-sink-0. Executing stage 'VALUE_CONVERTER' with class "
        "'cdk.converters.JsonConverter', where consumed record is {topic='orders', partition=2, "
        "offset=41, timestamp=1700000000000, timestampType=CreateTime}."
    )
    no_ts = _consumed(timestamp=None, timestamp_type=TimestampType.NO_TIMESTAMP_TYPE)
    assert reporter.message(_failed_context(consumed=no_ts)).endswith(
        "where consumed record is {topic='orders', partition=2, offset=41}."
    )


def test_log_reporter_includes_source_record() -> None:
    reporter = LogReporter(
        "src", 1, ErrorHandlingConfig(log_enable=True, log_include_messages=True)
    )
    record = SourceRecord({"f": "a"}, {"pos": 1}, "topic", value="v")
    message = reporter.message(_failed_context(source_record=record))
    assert message.startswith(
        "Error encountered in task src-1. Executing stage 'VALUE_CONVERTER' with class "
        "'cdk.converters.JsonConverter', where source record is = SourceRecord{source_partition="
    )
    assert message.endswith(".")


def test_log_reporter_disabled_logs_nothing(caplog: pytest.LogCaptureFixture) -> None:
    reporter = LogReporter("c", 0, ErrorHandlingConfig(log_enable=False))
    with caplog.at_level(logging.DEBUG, logger="cdk.runtime.errors"):
        assert reporter.report(_failed_context()).done()
    assert caplog.records == []


def test_operator_with_log_reporter_logs_tolerated_errors(caplog: pytest.LogCaptureFixture) -> None:
    config = ErrorHandlingConfig(tolerance_all=True, log_enable=True)
    op = RetryWithToleranceOperator(config, [LogReporter("c", 0, config)])
    with caplog.at_level(logging.ERROR, logger="cdk.runtime.errors"):
        op.execute(Flaky(1, ValueError), Stage.TRANSFORMATION, Flaky, ProcessingContext())
    assert caplog.messages == [
        f"Error encountered in task c-0. Executing stage 'TRANSFORMATION' with class "
        f"'{__name__}.Flaky'."
    ]


# --------------------------------------------------------------------------------------------
# Dead letter queue (real broker)


def _dlq_config(
    topic: str, headers: bool = True, tolerance_all: bool = True
) -> ErrorHandlingConfig:
    return ErrorHandlingConfig(
        tolerance_all=tolerance_all,
        dlq_topic=topic,
        dlq_replication_factor=3,
        dlq_context_headers=headers,
    )


def test_dlq_reporter_creates_topic_and_writes_original_record_with_context_headers(
    bootstrap: str,
) -> None:
    from confluent_kafka.admin import AdminClient

    topic = f"dlq-{uuid.uuid4().hex[:8]}"
    config = _dlq_config(topic)
    reporter = DeadLetterQueueReporter.create(
        config, "my-sink", 7, {"bootstrap.servers": bootstrap}
    )
    try:
        metadata = AdminClient({"bootstrap.servers": bootstrap}).list_topics(
            topic=topic, timeout=10
        )
        assert len(metadata.topics[topic].partitions) == 1  # RF 3 capped to the one broker
        context = _failed_context(consumed=_consumed())
        reporter.report(context).result(timeout=20)
        context_no_message = ProcessingContext(consumed=_consumed(key=None, headers=[]))
        context_no_message.stage = Stage.TASK_PUT
        context_no_message.executing_class = SinkTask
        context_no_message.error = RuntimeError()
        reporter.report(context_no_message).result(timeout=20)
    finally:
        reporter.close()

    first, second = _consume_all(bootstrap, topic, 2)
    assert first.key() == b"k1"
    assert first.value() == b'{"bad": '
    assert first.timestamp() == (1, 1700000000000)
    headers = first.headers()
    assert headers[:2] == [("h1", b"v1"), ("h2", None)]
    context_headers = dict(headers[2:])
    trace = context_headers.pop("__connect.errors.exception.stacktrace")
    assert context_headers == {
        "__connect.errors.topic": b"orders",
        "__connect.errors.partition": b"2",
        "__connect.errors.offset": b"41",
        "__connect.errors.connector.name": b"my-sink",
        "__connect.errors.task.id": b"7",
        "__connect.errors.stage": b"VALUE_CONVERTER",
        "__connect.errors.class.name": b"cdk.converters.JsonConverter",
        "__connect.errors.exception.class.name": b"cdk.errors.DataException",
        "__connect.errors.exception.message": b"Converting byte[] to Kafka Connect data failed",
    }
    assert trace is not None
    assert trace.startswith(b"Traceback (most recent call last)")
    assert trace.endswith(b"DataException: Converting byte[] to Kafka Connect data failed\n")

    assert second.key() is None
    second_headers = dict(second.headers())
    assert second_headers["__connect.errors.exception.class.name"] == b"RuntimeError"
    assert second_headers["__connect.errors.exception.message"] is None
    assert second_headers["__connect.errors.class.name"] == b"cdk.api.SinkTask"
    assert reporter.metrics.deadletterqueue_produce_requests == 2
    assert reporter.metrics.deadletterqueue_produce_failures == 0


def test_dlq_reporter_without_context_headers_and_for_source_records(bootstrap: str) -> None:
    topic = f"dlq-{uuid.uuid4().hex[:8]}"
    reporter = DeadLetterQueueReporter.create(
        _dlq_config(topic, headers=False), "c", 0, {"bootstrap.servers": bootstrap}
    )
    try:
        source = _failed_context(source_record=SourceRecord(None, None, "t", value="v"))
        assert reporter.report(source).done()  # only sink records go to the DLQ
        reporter.report(_failed_context(consumed=_consumed(timestamp=None))).result(timeout=20)
    finally:
        reporter.close()
    (message,) = _consume_all(bootstrap, topic, 1)
    assert message.headers() == [("h1", b"v1"), ("h2", None)]
    assert reporter.metrics.deadletterqueue_produce_failures == 1  # the source record


def test_dlq_reporter_without_topic_does_nothing() -> None:
    class NoProducer:
        def __getattr__(self, name: str) -> Any:
            raise AssertionError(f"producer used: {name}")

    reporter = DeadLetterQueueReporter(NoProducer(), ErrorHandlingConfig(), "c", 0)
    assert reporter.report(_failed_context(consumed=_consumed())).done()


def test_dlq_create_fails_clearly_without_a_broker() -> None:
    config = _dlq_config("dlq")
    with pytest.raises(
        ConnectException, match="Could not initialize dead letter queue with topic=dlq"
    ):
        DeadLetterQueueReporter.create(
            config,
            "c",
            0,
            {"bootstrap.servers": f"127.0.0.1:{free_port()}", "socket.timeout.ms": 1000},
            timeout_s=1.0,
        )


# --------------------------------------------------------------------------------------------
# Errant record reporter (real broker)


def _sink_record(**changes: Any) -> SinkRecord:
    fields: dict[str, Any] = {
        "topic": "orders",
        "kafka_partition": 2,
        "key_schema": None,
        "key": "k1",
        "value_schema": None,
        "value": {"a": 1},
        "kafka_offset": 41,
        "timestamp": 1700000000000,
        "timestamp_type": TimestampType.CREATE_TIME,
    }
    fields.update(changes)
    return SinkRecord(**fields)


def _converters() -> tuple[JsonConverter, JsonConverter, SimpleHeaderConverter]:
    key, value = JsonConverter(), JsonConverter()
    key.configure({"schemas.enable": False}, True)
    value.configure({"schemas.enable": False}, False)
    return key, value, SimpleHeaderConverter()


def test_errant_record_reporter_sends_raw_or_serialized_records(bootstrap: str) -> None:
    topic = f"dlq-{uuid.uuid4().hex[:8]}"
    config = _dlq_config(topic)
    dlq = DeadLetterQueueReporter.create(config, "sink", 1, {"bootstrap.servers": bootstrap})
    op = RetryWithToleranceOperator(config, [dlq])
    delivered = _sink_record()
    created = _sink_record(value={"made": "up"}, headers=None)
    created.headers.add_string("h", "v")
    raw = {id(delivered): _consumed()}
    errant = WorkerErrantRecordReporter(op, *_converters(), raw_record_for=lambda r: raw.get(id(r)))
    try:
        f1 = errant.report(delivered, ValueError("cannot write"))
        f2 = errant.report(created, ValueError("cannot write either"))
        assert errant.pending() == 2
        errant.await_futures(timeout_s=20)
        assert f1.done()
        assert f2.done()
        assert errant.pending() == 0
    finally:
        op.close()

    first, second = _consume_all(bootstrap, topic, 2)
    assert first.value() == b'{"bad": '  # the original bytes
    assert dict(first.headers())["__connect.errors.stage"] == b"TASK_PUT"
    assert dict(first.headers())["__connect.errors.class.name"] == b"cdk.api.SinkTask"
    assert second.key() == b'"k1"'
    assert second.value() == b'{"made":"up"}'
    assert second.headers()[0] == ("h", b"v")
    assert dict(second.headers())["__connect.errors.exception.message"] == b"cannot write either"


def test_errant_record_reporter_with_tolerance_none_reports_then_fails(bootstrap: str) -> None:
    topic = f"dlq-{uuid.uuid4().hex[:8]}"
    config = _dlq_config(topic, tolerance_all=False)
    dlq = DeadLetterQueueReporter.create(config, "sink", 0, {"bootstrap.servers": bootstrap})
    op = RetryWithToleranceOperator(config, [dlq])
    errant = WorkerErrantRecordReporter(op, *_converters())
    try:
        with pytest.raises(ConnectException, match="Tolerance exceeded in error handler"):
            errant.report(_sink_record(), ValueError("bad"))
    finally:
        op.close()  # flushes the DLQ producer
    assert len(_consume_all(bootstrap, topic, 1)) == 1


def test_errant_record_reporter_futures_per_partition() -> None:
    class Pending(ErrorReporter):
        def __init__(self) -> None:
            self.futures: list[Future[None]] = []

        def report(self, context: ProcessingContext) -> Future[None]:
            future: Future[None] = Future()
            self.futures.append(future)
            return future

    pending = Pending()
    op = RetryWithToleranceOperator(ErrorHandlingConfig(tolerance_all=True), [pending])
    errant = WorkerErrantRecordReporter(op, *_converters())
    errant.report(_sink_record(kafka_partition=0), ValueError("x"))
    errant.report(_sink_record(kafka_partition=1), ValueError("y"))
    from cdk.api import TopicPartition

    with pytest.raises(ConnectException, match="Timed out"):
        errant.await_futures([TopicPartition("orders", 0)], timeout_s=0.01)
    pending.futures[1].set_exception(RuntimeError("dlq down"))
    with pytest.raises(ConnectException, match="dlq down"):
        errant.await_futures([TopicPartition("orders", 1)])
    errant.report(_sink_record(kafka_partition=0), ValueError("z"))
    errant.cancel_futures()
    assert errant.pending() == 0
    errant.await_futures(timeout_s=0)


def test_errant_record_reporter_without_converters_needs_bytes() -> None:
    op = RetryWithToleranceOperator(ErrorHandlingConfig(tolerance_all=True), [RecordingReporter()])
    errant = WorkerErrantRecordReporter(op)
    assert errant.report(_sink_record(key=b"k", value=b"v"), ValueError("x")).done()
    with pytest.raises(DataException, match="without a converter"):
        errant.report(_sink_record(), ValueError("x"))
