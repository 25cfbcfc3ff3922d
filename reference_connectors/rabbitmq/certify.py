"""Certification drivers for the RabbitMQ connectors (``cdk certify`` and the kit's tests).

The broker is the one ``CDK_TEST_RABBITMQ_URL`` names (an AMQP URL; by default the local
server, ``amqp://guest:guest@127.0.0.1:5672/``). Each driver instance owns names of its own in
the URL's virtual host, with a random suffix, created by :meth:`setup` and deleted by
:meth:`teardown`: the source driver one queue per input stream (``cdk_cert_<suffix>_<n>``), the
sink driver a topic exchange and an output queue bound to it for every routing key.

The source is an *acknowledging* source (:attr:`harness.SourceKind.ACKNOWLEDGING`): its records
carry no offsets, and :meth:`RabbitMQSourceDriver.pending_ids` reads what the queues still hold
without consuming it (every message fetched unacknowledged, then requeued by closing the
channel). A record's id is its AMQP ``message_id``, the record key.

Failure injection: the connector reaches RabbitMQ through a :class:`harness.providers.TcpProxy`
of the driver; an outage cuts it (the connector's connection drops, new ones are refused) while
the driver goes on writing and reading directly. Breaking deletes the queues (source) or the
exchange (sink).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import secrets
import shutil
import subprocess
import time
from collections.abc import Hashable, Iterator, Sequence
from typing import Any, ClassVar

import pika
import pika.exceptions

from cdk.converters import JsonConverter
from cdk.data import Schema, Struct
from harness import SinkDriver, SourceDriver, SourceKind
from harness.providers import TcpProxy
from reference_connectors.rabbitmq._sink import RabbitMQSinkConnector
from reference_connectors.rabbitmq._source import RabbitMQSourceConnector

__all__ = ["RABBITMQ_URL_ENV", "RabbitMQSinkDriver", "RabbitMQSourceDriver", "broker_parameters"]

RABBITMQ_URL_ENV = "CDK_TEST_RABBITMQ_URL"
DEFAULT_URL = "amqp://guest:guest@127.0.0.1:5672/"
_TIMEOUTS = "?connection_attempts=1&socket_timeout=5&stack_timeout=10&heartbeat=10"
#: How long pending_ids() waits for RabbitMQ to take back what a closed connection held.
_SETTLE_S = 10.0
#: How long the queues' counts must stay the same before pending_ids() reads them.
_STEADY_S = 0.5


#: The user the drivers create on the local broker when ``CDK_TEST_RABBITMQ_URL`` is not set:
#: CFG-08 searches the logs for the password, which must be long enough to search for
#: (guest's is not). A test user of a test broker, as guest/guest is.
CERTIFY_USER = "cdk-certify"
CERTIFY_PASSWORD = "cdk-certify-password"
_certify_credentials: pika.PlainCredentials | None = None


def broker_parameters() -> pika.URLParameters:
    """The broker the drivers use: ``CDK_TEST_RABBITMQ_URL``, every wait bounded.

    Without the variable: the local server, as the user :data:`CERTIFY_USER` (created with
    ``rabbitmqctl`` when it is missing and rabbitmqctl can), else as guest.
    """
    url = os.environ.get(RABBITMQ_URL_ENV) or DEFAULT_URL
    parameters = pika.URLParameters(url + (_TIMEOUTS if "?" not in url else ""))
    if not os.environ.get(RABBITMQ_URL_ENV):
        parameters.credentials = _local_credentials(parameters)
    return parameters


def _local_credentials(parameters: pika.URLParameters) -> Any:
    global _certify_credentials
    if _certify_credentials is not None:
        return _certify_credentials
    wanted = pika.PlainCredentials(CERTIFY_USER, CERTIFY_PASSWORD)
    for attempt in range(2):
        parameters.credentials = wanted
        try:
            pika.BlockingConnection(parameters).close()
        except pika.exceptions.AMQPConnectionError:
            if attempt or not _create_certify_user(parameters.virtual_host):
                return pika.PlainCredentials("guest", "guest")
            continue
        _certify_credentials = wanted
        return wanted
    return pika.PlainCredentials("guest", "guest")


def _create_certify_user(virtual_host: str) -> bool:
    """Create (or reset) :data:`CERTIFY_USER` with rabbitmqctl; False when it cannot."""
    ctl = shutil.which("rabbitmqctl")
    if ctl is None:
        return False
    commands = (
        ["add_user", CERTIFY_USER, CERTIFY_PASSWORD],
        ["change_password", CERTIFY_USER, CERTIFY_PASSWORD],
        ["set_permissions", "-p", virtual_host, CERTIFY_USER, ".*", ".*", ".*"],
    )
    try:
        for command in commands:
            subprocess.run([ctl, "-q", *command], capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return True


def _connect() -> pika.BlockingConnection:
    return pika.BlockingConnection(broker_parameters())


class _Broker:
    """The driver's connections to the broker, and the proxy the connector goes through.

    Every operation opens a connection of its own and closes it (a few milliseconds on
    loopback): a connection kept between the harness's calls would miss its heartbeats.
    """

    def __init__(self) -> None:
        self.parameters = broker_parameters()
        self.suffix = secrets.token_hex(4)
        self.proxy = TcpProxy((self.parameters.host, self.parameters.port))

    def start(self) -> None:
        self.proxy.start()

    def stop(self) -> None:
        self.proxy.stop()

    @contextlib.contextmanager
    def channel(self, *, confirm: bool = False) -> Iterator[Any]:
        """A channel on a fresh connection, closed when the block ends."""
        connection = pika.BlockingConnection(self.parameters)
        try:
            channel = connection.channel()
            if confirm:
                channel.confirm_delivery()
            yield channel
        finally:
            with contextlib.suppress(pika.exceptions.AMQPError):
                connection.close()

    def connector_config(self) -> dict[str, str]:
        credentials = self.parameters.credentials
        return {
            "rabbitmq.host": "127.0.0.1",
            "rabbitmq.port": str(self.proxy.port),
            "rabbitmq.username": credentials.username,
            "rabbitmq.password": credentials.password,
            "rabbitmq.virtual.host": self.parameters.virtual_host,
            "rabbitmq.connection.timeout.ms": "5000",
            "rabbitmq.handshake.timeout.ms": "5000",
            "rabbitmq.requested.heartbeat.seconds": "5",
        }

    @contextlib.contextmanager
    def outage(self) -> Iterator[None]:
        self.proxy.cut()
        try:
            yield
        finally:
            self.proxy.restore()


class RabbitMQSourceDriver(SourceDriver):
    """Publishes ``record-<id>`` bodies (message id ``<id>``) to a queue per input stream."""

    connector: ClassVar[type] = RabbitMQSourceConnector
    streams: ClassVar[int] = 4
    source_kind: ClassVar[SourceKind] = SourceKind.ACKNOWLEDGING
    records_carry_offsets: ClassVar[bool] = False

    def __init__(self, workdir: Any) -> None:
        super().__init__(workdir)
        self._broker = _Broker()
        self._next_value_id = itertools.count(1_000_000_000)

    @property
    def queues(self) -> list[str]:
        """The queue of each input stream."""
        return [f"cdk_cert_{self._broker.suffix}_{n}" for n in range(self.streams)]

    def setup(self) -> None:
        self._broker.start()
        with self._broker.channel() as channel:
            for queue in self.queues:
                channel.queue_declare(queue, durable=True)

    def teardown(self) -> None:
        try:
            with self._broker.channel() as channel:
                for queue in self.queues:
                    channel.queue_delete(queue)
        finally:
            self._broker.stop()

    def example_config(self, topic: str) -> dict[str, str]:
        return {
            **self._broker.connector_config(),
            "rabbitmq.queue": ",".join(self.queues),
            "kafka.topic": topic,
        }

    def _publish(self, messages: Sequence[tuple[int, bytes]], stream: int) -> None:
        queue = self.queues[stream]
        with self._broker.channel(confirm=True) as channel:
            for record_id, body in messages:
                channel.basic_publish(
                    "",
                    queue,
                    body,
                    pika.BasicProperties(message_id=str(record_id), delivery_mode=2),
                    mandatory=True,
                )

    def write_records(self, ids: Sequence[int], *, stream: int = 0) -> None:
        self._publish([(i, f"record-{i}".encode()) for i in ids], stream)

    def record_id(self, key: Any, value: Any) -> Hashable:
        if isinstance(key, str) and key.isdigit():
            return int(key)
        raise ValueError(f"key={key!r} is not the message id of a message the driver wrote")

    def expected_value(self, record_id: int) -> Any:
        return f"record-{record_id}".encode()

    def value_schema(self) -> Schema:
        return Schema.BYTES_SCHEMA  # the body, as it is

    def write_values(self, values: Sequence[Any], *, stream: int = 0) -> list[Hashable]:
        ids = [next(self._next_value_id) for _ in values]
        self._publish([(i, bytes(v)) for i, v in zip(ids, values, strict=True)], stream)
        return list(ids)

    def pending_ids(self) -> list[Hashable]:
        """Every message the queues hold, read unacknowledged and requeued (see the module)."""
        deadline = time.monotonic() + _SETTLE_S
        ids: list[Hashable] = []
        with self._broker.channel() as channel:
            for queue in self.queues:  # wait for the connector's consumers to be gone
                while channel.queue_declare(queue, passive=True).method.consumer_count:
                    if time.monotonic() > deadline:
                        break
                    channel.connection.sleep(0.05)
            # A closed channel's unacknowledged messages reach their queue just after its
            # consumer is gone: wait until the queues' counts stop changing.
            counts = self._ready_counts(channel)
            steady_since = time.monotonic()
            while time.monotonic() - steady_since < _STEADY_S and time.monotonic() < deadline:
                channel.connection.sleep(0.05)
                now = self._ready_counts(channel)
                if now != counts:
                    counts, steady_since = now, time.monotonic()
            for queue in self.queues:
                while True:
                    method, properties, _ = channel.basic_get(queue, auto_ack=False)
                    if method is None:
                        break
                    ids.append(int(properties.message_id))
        # closing the connection requeued every message fetched
        return ids

    def _ready_counts(self, channel: Any) -> list[int]:
        return [
            channel.queue_declare(queue, passive=True).method.message_count for queue in self.queues
        ]

    def outage(self) -> contextlib.AbstractContextManager[None]:
        return self._broker.outage()

    def break_external_system(self) -> None:
        with self._broker.channel() as channel:
            for queue in self.queues:
                channel.queue_delete(queue)


class RabbitMQSinkDriver(SinkDriver):
    """Reads what the sink published from a queue bound to its exchange for every routing key."""

    connector: ClassVar[type] = RabbitMQSinkConnector
    #: The sink publishes any record: a message body carries its own schema (the JSON
    #: envelope) or none at all; no schema of the exchange to be incompatible with.
    accepts_any_schema: ClassVar[bool] = True

    def __init__(self, workdir: Any) -> None:
        super().__init__(workdir)
        self._broker = _Broker()
        self._received: list[tuple[Hashable, bytes]] = []
        self._decoder = JsonConverter()
        self._decoder.configure({"schemas.enable": True}, False)

    @property
    def exchange(self) -> str:
        return f"cdk_cert_{self._broker.suffix}_x"

    @property
    def output_queue(self) -> str:
        return f"cdk_cert_{self._broker.suffix}_out"

    def setup(self) -> None:
        self._broker.start()
        with self._broker.channel() as channel:
            channel.exchange_declare(self.exchange, "topic", durable=True)
            channel.queue_declare(self.output_queue, durable=True)
            channel.queue_bind(self.output_queue, self.exchange, "#")

    def teardown(self) -> None:
        try:
            with self._broker.channel() as channel:
                channel.queue_delete(self.output_queue)
                channel.exchange_delete(self.exchange)
        finally:
            self._broker.stop()

    def example_config(self, topics: str) -> dict[str, str]:
        return {
            **self._broker.connector_config(),
            "topics": topics,
            "rabbitmq.exchange": self.exchange,
        }

    def _drain(self) -> list[tuple[Hashable, bytes]]:
        """What the output queue received so far (consumed once, kept by the driver)."""
        with self._broker.channel() as channel:
            while True:
                method, properties, body = channel.basic_get(self.output_queue, auto_ack=False)
                if method is None:
                    break
                self._received.append((self._id_of(properties, body), body))
                channel.basic_ack(method.delivery_tag)  # cached first: never lost
        return self._received

    def _id_of(self, properties: Any, body: bytes) -> Hashable:
        if properties.message_id is not None and properties.message_id.lstrip("-").isdigit():
            return int(properties.message_id)
        value = self._decoder.to_connect_data("", body).value
        if isinstance(value, Struct):
            found: Hashable = value.get("id")
            return found
        if isinstance(value, dict):
            return value.get("id")
        return properties.message_id  # type: ignore[no-any-return]

    def read_back(self) -> list[Hashable]:
        return [record_id for record_id, _ in self._drain()]

    def read_values(self) -> dict[Hashable, Any]:
        values: dict[Hashable, Any] = {}
        for record_id, body in self._drain():
            value = self._decoder.to_connect_data("", body).value
            if isinstance(value, Struct):
                value = {field.name: value.get(field.name) for field in value.schema.fields}
            values[record_id] = value
        return values

    def outage(self) -> contextlib.AbstractContextManager[None]:
        return self._broker.outage()

    def break_external_system(self) -> None:
        with self._broker.channel() as channel:
            channel.exchange_delete(self.exchange)
