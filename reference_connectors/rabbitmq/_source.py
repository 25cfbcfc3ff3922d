"""RabbitMQSourceConnector: queue messages become records, acknowledged once Kafka has them.

A task consumes its queues (``basic.consume`` with ``rabbitmq.prefetch.count`` unacknowledged
messages at most) on one connection and one channel, owned by the thread that calls
:meth:`RabbitMQSourceTask.poll`. A message is acknowledged to RabbitMQ (``basic.ack`` of its
delivery tag) only in :meth:`RabbitMQSourceTask.commit_record`: once Kafka acknowledged its
record, or once the record was dropped by a transformation or skipped by
``errors.tolerance=all`` (metadata ``None``: it will never reach Kafka, and must not be
redelivered forever). Anything not acknowledged when the connection closes (a crash, a lost
connection, a stop) is redelivered by RabbitMQ, so delivery is at least once.

Delivery tags belong to a channel: after a reconnect the tags of the old channel are never
acknowledged (RabbitMQ has already requeued those messages and redelivers them).

Records carry no source partition or offset: a queue has no position to resume from (what
was not acknowledged comes back by itself), so there is nothing to store in Kafka's offsets.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

import pika
import pika.exceptions
import pika.spec
from pika.adapters.blocking_connection import BlockingChannel
from typing_extensions import override

from cdk import (
    NO_DEFAULT,
    Config,
    ConfigDef,
    ConfigException,
    ConfigValue,
    ConnectException,
    DataException,
    Headers,
    Importance,
    RecordMetadata,
    RetriableException,
    Schema,
    SourceConnector,
    SourceRecord,
    SourceTask,
    Type,
)
from cdk.config import AbstractConfig, validators
from reference_connectors.rabbitmq._connection import (
    NOT_FOUND,
    VERSION,
    ConnectionSettings,
    check_broker,
    close_quietly,
    define_connection,
    describe,
    failure,
    reporting_missing,
)

__all__ = ["SOURCE_CONFIG_DEF", "RabbitMQSourceConnector", "RabbitMQSourceTask"]

log = logging.getLogger(__name__)

QUEUE = "rabbitmq.queue"
TOPIC = "kafka.topic"
PREFETCH_COUNT = "rabbitmq.prefetch.count"
BATCH_SIZE = "rabbitmq.batch.size"
POLL_TIMEOUT_MS = "rabbitmq.poll.timeout.ms"
VALUE_FORMAT = "rabbitmq.value.format"
BACKOFF_MS = "rabbitmq.retry.backoff.ms"
BACKOFF_MAX_MS = "rabbitmq.retry.backoff.max.ms"

#: The record headers the source sets.
HEADER_QUEUE = "rabbitmq.queue"
HEADER_EXCHANGE = "rabbitmq.exchange"
HEADER_ROUTING_KEY = "rabbitmq.routing.key"
HEADER_MESSAGE_ID = "rabbitmq.message.id"
HEADER_REDELIVERED = "rabbitmq.redelivered"

_KEY_SCHEMA = Schema.OPTIONAL_STRING_SCHEMA


class _NonEmptyList(validators.Validator):
    def ensure_valid(self, name: str, value: Any) -> None:
        if not isinstance(value, list) or not value:
            raise ConfigException(name, value, "name at least one queue")
        for item in value:
            if not isinstance(item, str) or not item.strip():
                raise ConfigException(name, value, "a queue name cannot be empty")

    def __str__(self) -> str:
        return "a non-empty list of queue names"


SOURCE_CONFIG_DEF = define_connection(ConfigDef())
SOURCE_CONFIG_DEF.define(
    QUEUE,
    Type.LIST,
    NO_DEFAULT,
    _NonEmptyList(),
    Importance.HIGH,
    "The queues to consume (they must exist). The tasks divide the queues between them: at "
    "most one task per queue.",
    group="RabbitMQ",
    order_in_group=1,
).define(
    TOPIC,
    Type.STRING,
    NO_DEFAULT,
    validators.NonEmptyStringWithoutControlChars(),
    Importance.HIGH,
    "The Kafka topic every message is written to.",
    group="RabbitMQ",
    order_in_group=2,
).define(
    PREFETCH_COUNT,
    Type.INT,
    1000,
    validators.Range.between(0, 65535),
    Importance.MEDIUM,
    "How many unacknowledged messages RabbitMQ hands a task at most (basic.qos; 0: no "
    "limit). A message stays unacknowledged until Kafka acknowledged its record, so this "
    "bounds the records in flight.",
    group="RabbitMQ",
    order_in_group=3,
).define(
    BATCH_SIZE,
    Type.INT,
    500,
    validators.Range.at_least(1),
    Importance.LOW,
    "The most records one poll returns.",
    group="RabbitMQ",
    order_in_group=4,
).define(
    POLL_TIMEOUT_MS,
    Type.INT,
    500,
    validators.Range.between(1, 1000),
    Importance.LOW,
    "How long a poll waits for a message when none is buffered.",
    group="RabbitMQ",
    order_in_group=5,
).define(
    VALUE_FORMAT,
    Type.STRING,
    "bytes",
    validators.ValidString.of("bytes", "string"),
    Importance.MEDIUM,
    "The record value: ``bytes`` (the body as it is, BYTES) or ``string`` (the body decoded "
    "as UTF-8, STRING; a body that is not UTF-8 fails the task and stays in the queue).",
    group="RabbitMQ",
    order_in_group=6,
).define(
    BACKOFF_MS,
    Type.INT,
    100,
    validators.Range.between(1, 600_000),
    Importance.LOW,
    "How long to wait before the first reconnection attempt after the connection was lost; "
    "doubled after each failed attempt.",
    group="RabbitMQ",
    order_in_group=7,
).define(
    BACKOFF_MAX_MS,
    Type.INT,
    10_000,
    validators.Range.between(1, 3_600_000),
    Importance.LOW,
    "The longest wait between two reconnection attempts.",
    group="RabbitMQ",
    order_in_group=8,
)


def _parse(props: dict[str, str]) -> AbstractConfig:
    config = AbstractConfig(SOURCE_CONFIG_DEF, props)  # raises ConfigException naming the key
    if config.get_int(BACKOFF_MAX_MS) < config.get_int(BACKOFF_MS):
        raise ConfigException(
            BACKOFF_MAX_MS,
            config.get_int(BACKOFF_MAX_MS),
            f"must be at least {BACKOFF_MS} ({config.get_int(BACKOFF_MS)})",
        )
    return config


class RabbitMQSourceConnector(SourceConnector):
    """Copies the messages of RabbitMQ queues to a Kafka topic; a task per queue at most."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}
        self._queues: list[str] = []

    @override
    def version(self) -> str:
        return VERSION

    @override
    def config(self) -> ConfigDef:
        return SOURCE_CONFIG_DEF

    @override
    def start(self, props: dict[str, str]) -> None:
        config = _parse(props)
        self._props = dict(props)
        self._queues = [q.strip() for q in config.get_list(QUEUE)]

    @override
    def task_class(self) -> type[SourceTask]:
        return RabbitMQSourceTask

    @override
    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        count = max(1, min(max_tasks, len(self._queues)))
        shares: list[list[str]] = [[] for _ in range(count)]
        for i, queue in enumerate(self._queues):
            shares[i % count].append(queue)
        return [{**self._props, QUEUE: ",".join(share)} for share in shares]

    @override
    def stop(self) -> None:
        """Nothing to release: the tasks own their connections."""

    @override
    def validate(self, props: dict[str, str]) -> Config:
        return check_broker(super().validate(props), "the queues", _check_queues)


def _check_queues(
    connection: pika.BlockingConnection,
    settings: ConnectionSettings,
    by_name: dict[str, ConfigValue],
) -> None:
    """Report the queues that do not exist (each on a channel of its own: a miss closes it)."""
    for queue in by_name[QUEUE].value:
        with reporting_missing(by_name[QUEUE], f"queue {queue!r}", settings):
            channel = connection.channel()
            channel.queue_declare(queue.strip(), passive=True)
            channel.close()


@dataclass(frozen=True)
class Delivery:
    """A message RabbitMQ delivered to the task, not acknowledged yet.

    Attributes:
        generation: the task's connection it came on (its delivery tag is that channel's).
        queue: the queue it came from.
        method: the delivery (``delivery_tag``, ``exchange``, ``routing_key``, ``redelivered``).
        properties: its AMQP properties (``message_id``, ``timestamp``...).
        body: its body.
    """

    generation: int
    queue: str
    method: pika.spec.Basic.Deliver
    properties: pika.spec.BasicProperties
    body: bytes


class RabbitMQSourceTask(SourceTask):
    """Consumes its queues; acknowledges each message in :meth:`commit_record`.

    Thread use: the connection is opened by :meth:`poll` and used only by the thread that
    calls it (also :meth:`commit_record`, which the runtime calls on that thread). :meth:`stop`
    closes the connection when called on that thread (after the final flush); from another
    thread (a cancelled task) it only asks the connection's thread to wind down, through
    pika's ``add_callback_threadsafe``: the consumers are cancelled, the buffered messages
    requeued, and the connection closed once nothing polled awaits its acknowledgement.
    """

    def __init__(self) -> None:
        self._stopping = threading.Event()
        self._settings: ConnectionSettings | None = None
        self._queues: list[str] = []
        self._topic = ""
        self._prefetch = 1000
        self._batch_size = 500
        self._poll_timeout = 0.5
        self._as_string = False
        self._backoff_initial = 0.1
        self._backoff_max = 10.0
        self._backoff = 0.1
        self._retry_at = 0.0
        self._name = "cdk-rabbitmq-source"
        self._connection: pika.BlockingConnection | None = None
        self._channel: BlockingChannel | None = None
        self._owner: int | None = None
        self._generation = 0
        self._consumers: dict[str, str] = {}  # consumer tag -> queue
        self._cancelled: list[str] = []  # queues whose consumer the broker cancelled
        self._buffer: deque[Delivery] = deque()
        # polled records awaiting commit_record: id(record) -> (record, delivery)
        self._unacked: dict[int, tuple[SourceRecord, Delivery]] = {}
        self._wound_down = False

    @override
    def version(self) -> str:
        return VERSION

    @override
    def start(self, props: dict[str, str]) -> None:
        config = _parse(props)
        self._settings = ConnectionSettings.from_config(config)
        self._queues = [q.strip() for q in config.get_list(QUEUE)]
        self._topic = config.get_string(TOPIC)
        self._prefetch = config.get_int(PREFETCH_COUNT)
        self._batch_size = config.get_int(BATCH_SIZE)
        self._poll_timeout = config.get_int(POLL_TIMEOUT_MS) / 1000
        self._as_string = config.get_string(VALUE_FORMAT) == "string"
        self._backoff_initial = config.get_int(BACKOFF_MS) / 1000
        self._backoff_max = config.get_int(BACKOFF_MAX_MS) / 1000
        self._backoff = self._backoff_initial
        self._name = f"cdk-rabbitmq-source {props.get('name', '')}".strip()
        log.info("Consuming %s from %s into %s", self._queues, self._settings, self._topic)

    # ------------------------------------------------------------------ connection
    def _open(self) -> None:
        assert self._settings is not None
        settings = self._settings
        try:
            connection = settings.connect(self._name)
        except RetriableException:
            self._schedule_retry()  # unreachable: the next attempt after the backoff
            raise
        self._generation += 1
        self._owner = threading.get_ident()
        self._connection = connection
        self._buffer.clear()
        self._cancelled.clear()
        self._consumers.clear()
        self._wound_down = False
        try:
            channel = connection.channel()
            channel.basic_qos(prefetch_count=self._prefetch)
            channel.add_on_cancel_callback(self._on_cancel)
            self._channel = channel
            for queue in self._queues:
                self._consume(channel, queue)
        except Exception as exc:
            self._drop_connection()
            raise self._failure(exc, "subscribing to the queues") from exc
        self._backoff = self._backoff_initial
        log.info("Connected to %s; consuming %s", settings, self._queues)

    def _consume(self, channel: BlockingChannel, queue: str) -> None:
        generation = self._generation

        def on_message(
            _channel: BlockingChannel,
            method: pika.spec.Basic.Deliver,
            properties: pika.spec.BasicProperties,
            body: bytes,
        ) -> None:
            self._buffer.append(Delivery(generation, queue, method, properties, body))

        tag = channel.basic_consume(queue, on_message, auto_ack=False)
        self._consumers[tag] = queue

    def _on_cancel(self, method: Any) -> None:
        queue = self._consumers.pop(getattr(method.method, "consumer_tag", ""), None)
        if queue is not None:
            self._cancelled.append(queue)

    def _resubscribe_cancelled(self) -> None:
        """The broker cancelled a consumer: the queue was deleted (fatal) or moved (resubscribe)."""
        assert self._channel is not None
        while self._cancelled:
            queue = self._cancelled.pop()
            try:
                self._channel.queue_declare(queue, passive=True)
            except pika.exceptions.ChannelClosedByBroker as exc:
                if exc.reply_code == NOT_FOUND:
                    raise ConnectException(
                        f"queue {queue!r} was deleted from {self._settings} while the task "
                        f"consumed it (RabbitMQ cancelled the consumer)"
                    ) from exc
                raise
            log.warning("RabbitMQ cancelled the consumer of queue %r; subscribing again", queue)
            self._consume(self._channel, queue)

    def _failure(self, exc: BaseException, doing: str) -> ConnectException:
        """The exception to raise for ``exc``: fatal, or retriable (the connection is dropped)."""
        missing = f"a queue of {self._queues}"
        return failure(exc, doing, self._settings, missing, retrying=" (reconnecting)")

    def _drop_connection(self) -> None:
        """Forget the connection (its unacknowledged messages are redelivered) and back off."""
        self._close()
        self._schedule_retry()

    def _schedule_retry(self) -> None:
        """The next connection attempt after the backoff, doubled for the one after."""
        self._retry_at = time.monotonic() + self._backoff
        self._backoff = min(self._backoff * 2, self._backoff_max)

    # ------------------------------------------------------------------ polling
    @override
    def poll(self) -> list[SourceRecord] | None:
        if self._stopping.is_set():
            self._wind_down()
            return None
        if self._connection is None:
            wait = self._retry_at - time.monotonic()
            if wait > 0:
                self._stopping.wait(min(wait, 1.0))
                return None
            self._open()
        assert self._connection is not None
        try:
            if not self._buffer:
                self._connection.process_data_events(time_limit=self._poll_timeout)
            if self._cancelled:
                self._resubscribe_cancelled()
        except Exception as exc:
            failure = self._failure(exc, "consuming")
            self._drop_connection()
            raise failure from exc
        if self._stopping.is_set():  # stop() came while waiting
            self._wind_down()
            return None
        return self._records() or None

    def _records(self) -> list[SourceRecord]:
        """Records for up to a batch of buffered deliveries, each remembered until committed."""
        records: list[SourceRecord] = []
        while self._buffer and len(records) < self._batch_size:
            delivery = self._buffer[0]
            try:
                record = self._record(delivery)
            except DataException:
                if records:  # return those first; the bad message fails the next poll
                    break
                raise  # it stays buffered, unacknowledged: redelivered after the task
            self._buffer.popleft()
            self._unacked[id(record)] = (record, delivery)
            records.append(record)
        return records

    def _record(self, delivery: Delivery) -> SourceRecord:
        properties = delivery.properties
        method = delivery.method
        message_id = properties.message_id
        value: Any = delivery.body
        if self._as_string:
            try:
                value = delivery.body.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DataException(
                    f"message {message_id!r} (delivery {method.delivery_tag}) of queue "
                    f"{delivery.queue!r} is not UTF-8 text ({exc}); {VALUE_FORMAT}=string "
                    f"needs UTF-8 bodies (use bytes)"
                ) from exc
        headers = (
            Headers()
            .add_string(HEADER_QUEUE, delivery.queue)
            .add_string(HEADER_EXCHANGE, method.exchange)
            .add_string(HEADER_ROUTING_KEY, method.routing_key)
            .add_string(HEADER_MESSAGE_ID, message_id)
            .add_boolean(HEADER_REDELIVERED, bool(method.redelivered))
        )
        timestamp = properties.timestamp
        return SourceRecord(
            None,  # no source partition or offset: a queue redelivers what was not acked
            None,
            self._topic,
            None,
            _KEY_SCHEMA,
            message_id,
            Schema.STRING_SCHEMA if self._as_string else Schema.BYTES_SCHEMA,
            value,
            timestamp * 1000 if isinstance(timestamp, int) and timestamp >= 0 else None,
            headers,
        )

    # ------------------------------------------------------------------ acknowledging
    @override
    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        """Acknowledge the record's message: Kafka has it (or it was dropped or skipped)."""
        delivery = self._take(record)
        if delivery is not None:
            self._ack(delivery)
        self._close_if_done()

    def _take(self, record: SourceRecord) -> Delivery | None:
        """The delivery of a polled record, forgotten from now on (None if unknown)."""
        entry = self._unacked.pop(id(record), None)
        if entry is None or entry[0] is not record:
            return None
        return entry[1]

    def _ack(self, delivery: Delivery) -> None:
        """``basic.ack`` the delivery, unless its channel is gone (then it is redelivered)."""
        channel = self._channel
        if delivery.generation != self._generation or channel is None:
            log.debug(
                "Not acknowledging delivery %d of a closed channel: RabbitMQ redelivers it",
                delivery.method.delivery_tag,
            )
            return
        try:
            channel.basic_ack(delivery_tag=delivery.method.delivery_tag)
        except Exception as exc:  # noqa: BLE001 - the message is redelivered; poll reconnects
            log.warning(
                "Could not acknowledge delivery %d to %s (%s): RabbitMQ redelivers it",
                delivery.method.delivery_tag,
                self._settings,
                describe(exc),
            )
            self._drop_connection()
            self._retry_at = 0.0

    def _awaiting(self) -> bool:
        """Whether a polled record of the current channel awaits its commit_record."""
        return any(d.generation == self._generation for _, d in self._unacked.values())

    # ------------------------------------------------------------------ stopping
    @override
    def commit(self) -> None:
        """After a stop() from another thread, close the connection: the final commit comes last.

        A runtime that calls :meth:`stop` from another thread than :meth:`poll` still makes the
        final offset commit on the task's thread, after the final flush (so after the last
        :meth:`commit_record`): what is still unacknowledged then never will be, and closing
        the connection hands it back to RabbitMQ. Otherwise nothing to do: messages are
        acknowledged one by one in :meth:`commit_record`.
        """
        if self._stopping.is_set() and self._owner == threading.get_ident():
            self._close()

    @override
    def stop(self) -> None:
        self._stopping.set()
        if self._owner is None or self._owner == threading.get_ident():
            self._close()
            return
        connection = self._connection
        if connection is not None:
            try:
                connection.add_callback_threadsafe(self._wind_down)
            except Exception as exc:  # noqa: BLE001 - already closed: nothing to wind down
                log.debug("stop(): %s", describe(exc))

    def _wind_down(self) -> None:
        """On the connection's thread, after stop(): take no more, requeue the buffer."""
        channel = self._channel
        if channel is not None and not self._wound_down:
            self._wound_down = True
            try:
                for tag in list(self._consumers):
                    channel.basic_cancel(tag)  # nacks what was not dispatched yet
                self._consumers.clear()
                while self._buffer:
                    delivery = self._buffer.popleft()
                    if delivery.generation == self._generation:
                        channel.basic_nack(delivery.method.delivery_tag, requeue=True)
            except Exception as exc:  # noqa: BLE001 - closing it requeues everything anyway
                log.debug("winding down: %s", describe(exc))
                self._close()
                return
        self._close_if_done()

    def _close_if_done(self) -> None:
        if self._stopping.is_set() and self._connection is not None and not self._awaiting():
            self._close()

    def _close(self) -> None:
        """Close the connection: RabbitMQ redelivers what it left unacknowledged."""
        connection = self._connection
        self._connection = None
        self._channel = None
        self._owner = None
        self._buffer.clear()
        self._consumers.clear()
        self._generation += 1  # the old channel's delivery tags are void from now on
        close_quietly(connection)
