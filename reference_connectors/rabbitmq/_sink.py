"""RabbitMQSinkConnector: each record is published to an exchange, confirmed by RabbitMQ.

The task publishes on a channel in confirm mode (``confirm.select``), with ``mandatory`` set:
each ``basic.publish`` returns once RabbitMQ confirmed the message (``basic.ack``), so when
:meth:`RabbitMQSinkTask.put` returns every message of the batch is in a queue (durably, for a
persistent message on a durable queue), and :meth:`~RabbitMQSinkTask.flush` has nothing left
to wait for. A message RabbitMQ refuses (``basic.nack``) or a lost connection fails the batch
with a :class:`~cdk.RetriableException` (Kafka redelivers it: at least once); a message that no
queue is bound for (returned unroutable) or a missing exchange fails the task with a
:class:`~cdk.ConnectException` that says so.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import pika
import pika.exceptions
from pika.adapters.blocking_connection import BlockingChannel
from typing_extensions import override

from cdk import (
    NO_DEFAULT,
    Config,
    ConfigDef,
    ConfigValue,
    ConnectException,
    DataException,
    Importance,
    OffsetAndMetadata,
    RetriableException,
    SinkConnector,
    SinkRecord,
    SinkTask,
    TopicPartition,
    Type,
)
from cdk.config import AbstractConfig, validators
from cdk.converters import JsonConverter
from reference_connectors.rabbitmq._connection import (
    VERSION,
    ConnectionSettings,
    check_broker,
    close_quietly,
    define_connection,
    describe,
    failure,
    reporting_missing,
)

__all__ = ["SINK_CONFIG_DEF", "RabbitMQSinkConnector", "RabbitMQSinkTask"]

log = logging.getLogger(__name__)

EXCHANGE = "rabbitmq.exchange"
ROUTING_KEY = "rabbitmq.routing.key"
VALUE_FORMAT = "rabbitmq.value.format"
DELIVERY_MODE = "rabbitmq.delivery.mode"

#: The AMQP headers the sink sets on each message.
HEADER_TOPIC = "kafka.topic"
HEADER_PARTITION = "kafka.partition"
HEADER_OFFSET = "kafka.offset"

_SHORTSTR_MAX = 255  # AMQP message-id is a short string

SINK_CONFIG_DEF = (
    define_connection(ConfigDef())
    .define(
        EXCHANGE,
        Type.STRING,
        NO_DEFAULT,
        validators.NonEmptyStringWithoutControlChars(),
        Importance.HIGH,
        "The exchange to publish to (it must exist).",
        group="RabbitMQ",
        order_in_group=1,
    )
    .define(
        ROUTING_KEY,
        Type.STRING,
        "",
        None,
        Importance.MEDIUM,
        "The routing key of every message; empty (the default): the record's topic.",
        group="RabbitMQ",
        order_in_group=2,
    )
    .define(
        VALUE_FORMAT,
        Type.STRING,
        "json",
        validators.ValidString.of("json", "json.schemaless", "bytes"),
        Importance.MEDIUM,
        "The message body: ``json`` (Kafka Connect's JSON envelope, schema and payload, as "
        "JsonConverter with schemas.enable=true writes it), ``json.schemaless`` (the payload "
        "alone) or ``bytes`` (the value as it is: it must be bytes or a string, written as "
        "UTF-8). A null value (a tombstone) is published with an empty body.",
        group="RabbitMQ",
        order_in_group=3,
    )
    .define(
        DELIVERY_MODE,
        Type.STRING,
        "persistent",
        validators.ValidString.of("persistent", "transient"),
        Importance.LOW,
        "``persistent`` messages (delivery mode 2) survive a broker restart on a durable queue; "
        "``transient`` ones (1) do not.",
        group="RabbitMQ",
        order_in_group=4,
    )
)


class RabbitMQSinkConnector(SinkConnector):
    """Publishes the records of its topics to a RabbitMQ exchange."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    @override
    def version(self) -> str:
        return VERSION

    @override
    def config(self) -> ConfigDef:
        return SINK_CONFIG_DEF

    @override
    def start(self, props: dict[str, str]) -> None:
        AbstractConfig(SINK_CONFIG_DEF, props)  # raises ConfigException naming the bad key
        self._props = dict(props)

    @override
    def task_class(self) -> type[SinkTask]:
        return RabbitMQSinkTask

    @override
    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props) for _ in range(max_tasks)]

    @override
    def stop(self) -> None:
        """Nothing to release: the tasks own their connections."""

    @override
    def validate(self, props: dict[str, str]) -> Config:
        return check_broker(super().validate(props), "the exchange", _check_exchange)


def _check_exchange(
    connection: pika.BlockingConnection,
    settings: ConnectionSettings,
    by_name: dict[str, ConfigValue],
) -> None:
    """Report the exchange if it does not exist."""
    exchange = by_name[EXCHANGE].value
    with reporting_missing(by_name[EXCHANGE], f"exchange {exchange!r}", settings):
        connection.channel().exchange_declare(exchange, passive=True)


def message_id(key: Any) -> str | None:
    """The AMQP message id for a record key: its text (None without a key, or too long)."""
    if key is None:
        return None
    text = key.decode("utf-8", "backslashreplace") if isinstance(key, bytes) else str(key)
    if len(text.encode("utf-8")) > _SHORTSTR_MAX:
        return None  # AMQP's message-id holds 255 bytes; the key is not sent then
    return text


class RabbitMQSinkTask(SinkTask):
    """Publishes each record with publisher confirms; ``put`` returns once all are confirmed."""

    def __init__(self) -> None:
        self._settings: ConnectionSettings | None = None
        self._exchange = ""
        self._routing_key = ""
        self._format = "json"
        self._persistent = True
        self._converter: JsonConverter | None = None
        self._connection: pika.BlockingConnection | None = None
        self._channel: BlockingChannel | None = None
        self._name = "cdk-rabbitmq-sink"

    @override
    def version(self) -> str:
        return VERSION

    @override
    def start(self, props: dict[str, str]) -> None:
        config = AbstractConfig(SINK_CONFIG_DEF, props)
        self._settings = ConnectionSettings.from_config(config)
        self._exchange = config.get_string(EXCHANGE)
        self._routing_key = config.get_string(ROUTING_KEY)
        self._format = config.get_string(VALUE_FORMAT)
        self._persistent = config.get_string(DELIVERY_MODE) == "persistent"
        if self._format != "bytes":
            converter = JsonConverter()
            converter.configure({"schemas.enable": self._format == "json"}, False)
            self._converter = converter
        self._name = f"cdk-rabbitmq-sink {props.get('name', '')}".strip()
        log.info("Publishing to exchange %r of %s", self._exchange, self._settings)

    def _open(self) -> BlockingChannel:
        if self._channel is not None and self._channel.is_open:
            return self._channel
        assert self._settings is not None
        close_quietly(self._connection)
        self._connection = self._settings.connect(self._name)
        try:
            channel = self._connection.channel()
            channel.confirm_delivery()
            channel.exchange_declare(self._exchange, passive=True)
        except Exception as exc:
            self._drop()
            raise self._failure(exc, "opening a publishing channel") from exc
        self._channel = channel
        return channel

    def _drop(self) -> None:
        connection = self._connection
        self._connection = None
        self._channel = None
        close_quietly(connection)

    def _failure(self, exc: BaseException, doing: str) -> ConnectException:
        return failure(exc, doing, self._settings, f"exchange {self._exchange!r}")

    def _body(self, record: SinkRecord) -> bytes:
        value = record.value
        if self._converter is not None:
            return (
                self._converter.from_connect_data(record.topic, record.value_schema, value) or b""
            )
        if value is None:
            return b""
        if isinstance(value, bytes | bytearray | memoryview):
            return bytes(value)
        if isinstance(value, str):
            return value.encode("utf-8")
        raise DataException(
            f"{VALUE_FORMAT}=bytes needs bytes or string values, but record "
            f"{record.topic}-{record.kafka_partition}@{record.kafka_offset} has a "
            f"{type(value).__name__} (use json or json.schemaless)"
        )

    def _keep_alive(self) -> None:
        """Answer the broker's heartbeats; forget a connection the broker closed meanwhile.

        pika's BlockingConnection does its I/O only when called: a connection left idle longer
        than about twice the heartbeat is closed by the broker, and is reopened quietly here
        (nothing was published on it since) rather than failing the next batch.
        """
        connection = self._connection
        if connection is None:
            return
        try:
            connection.process_data_events(0)
        except Exception as exc:  # noqa: BLE001 - reconnect before the next publish
            log.info("Reconnecting to %s: %s", self._settings, describe(exc))
            self._drop()
        else:
            if not connection.is_open or self._channel is None or not self._channel.is_open:
                self._drop()

    @override
    def put(self, records: Sequence[SinkRecord]) -> None:
        self._keep_alive()
        if not records:
            return
        bodies = [self._body(record) for record in records]  # a bad value fails before sending
        channel = self._open()
        for record, body in zip(records, bodies, strict=True):
            routing_key = self._routing_key or record.topic
            properties = pika.BasicProperties(
                message_id=message_id(record.key),
                content_type="application/octet-stream"
                if self._format == "bytes"
                else "application/json",
                delivery_mode=2 if self._persistent else 1,
                headers={
                    HEADER_TOPIC: record.topic,
                    HEADER_PARTITION: record.kafka_partition,
                    HEADER_OFFSET: record.kafka_offset,
                },
            )
            try:
                channel.basic_publish(self._exchange, routing_key, body, properties, mandatory=True)
            except pika.exceptions.UnroutableError as exc:
                raise ConnectException(
                    f"exchange {self._exchange!r} of {self._settings} returned record "
                    f"{record.topic}-{record.kafka_partition}@{record.kafka_offset} as "
                    f"unroutable: no queue is bound for routing key {routing_key!r}"
                ) from exc
            except pika.exceptions.NackError as exc:
                self._drop()  # a fresh channel for the redelivered batch
                raise RetriableException(
                    f"RabbitMQ refused (nack) record {record.topic}-{record.kafka_partition}"
                    f"@{record.kafka_offset} on exchange {self._exchange!r}; the batch is "
                    f"redelivered"
                ) from exc
            except Exception as exc:
                failure = self._failure(exc, f"publishing to exchange {self._exchange!r}")
                self._drop()
                raise failure from exc

    @override
    def flush(self, current_offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        """Nothing to wait for: ``put`` returns only once RabbitMQ confirmed every message."""
        self._keep_alive()

    @override
    def stop(self) -> None:
        self._drop()
