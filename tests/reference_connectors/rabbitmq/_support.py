"""The RabbitMQ server of the tests: fresh queues and exchanges, publishing, counting, a task."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterator, Sequence
from typing import Any

import pika
import pika.exceptions

from cdk import RecordMetadata, RetriableException, SourceRecord
from harness import FakeSourceTaskContext
from harness.providers import TcpProxy
from reference_connectors.rabbitmq import RabbitMQSourceTask
from reference_connectors.rabbitmq.certify import RABBITMQ_URL_ENV, broker_parameters
from tests._wait import wait_until


def rabbit_problem() -> str | None:
    """Why the server cannot be used, or None when it answers."""
    parameters = broker_parameters()
    try:
        pika.BlockingConnection(parameters).close()
    except pika.exceptions.AMQPError as exc:
        return (
            f"RabbitMQ does not answer at {parameters.host}:{parameters.port} ({exc!r}): start "
            f"it (rabbitmq-server -detached) or set {RABBITMQ_URL_ENV} to an AMQP URL of one"
        )
    return None


class Rabbit:
    """The test's names on the server: ``queue()``/``exchange()`` make them, cleanup deletes."""

    def __init__(self) -> None:
        self.parameters = broker_parameters()
        # the test's own connection idles while a test waits on Kafka: no heartbeat to miss
        # (the tests' timeouts bound it)
        own = broker_parameters()
        own.heartbeat = 0
        self.connection = pika.BlockingConnection(own)
        self.channel = self.connection.channel()
        self.channel.confirm_delivery()
        self._queues: list[str] = []
        self._exchanges: list[str] = []
        self._proxies: list[TcpProxy] = []

    def name(self, prefix: str) -> str:
        return f"cdk_test_{prefix}_{secrets.token_hex(4)}"

    def queue(self, prefix: str = "q", **arguments: Any) -> str:
        name = self.name(prefix)
        self.channel.queue_declare(name, durable=True, arguments=arguments or None)
        self._queues.append(name)
        return name

    def exchange(self, prefix: str = "x", kind: str = "topic") -> str:
        name = self.name(prefix)
        self.channel.exchange_declare(name, kind, durable=True)
        self._exchanges.append(name)
        return name

    def bind(self, queue: str, exchange: str, key: str = "#") -> None:
        self.channel.queue_bind(queue, exchange, key)

    def proxy(self) -> TcpProxy:
        proxy = TcpProxy((self.parameters.host, self.parameters.port))
        proxy.start()
        self._proxies.append(proxy)
        return proxy

    def publish(self, queue: str, ids: Sequence[int], body: str = "record-{}") -> None:
        for i in ids:
            self.channel.basic_publish(
                "",
                queue,
                body.format(i).encode(),
                pika.BasicProperties(message_id=str(i), delivery_mode=2),
                mandatory=True,
            )

    def ready(self, queue: str) -> int:
        """Messages ready in ``queue`` (not counting those delivered and unacknowledged)."""
        return int(self.channel.queue_declare(queue, passive=True).method.message_count)

    def consumers(self, queue: str) -> int:
        return int(self.channel.queue_declare(queue, passive=True).method.consumer_count)

    def wait_ready(self, queue: str, count: int, what: str) -> None:
        """Wait (10 s at most) until ``count`` messages are ready in ``queue``."""
        wait_until(
            lambda: self.ready(queue) == count,
            10,
            0.05,
            lambda: f"{what}: {count} messages ready, have {self.ready(queue)}",
        )

    def wait_no_consumer(self, queue: str) -> None:
        """Wait (10 s at most) until nothing consumes ``queue`` (the task's connection closed)."""
        wait_until(lambda: self.consumers(queue) == 0, 10, 0.05, "the task's consumer gone")

    def drain(self, queue: str) -> list[tuple[pika.spec.BasicProperties, bytes]]:
        """Consume everything ready in ``queue`` (acknowledged)."""
        got = []
        while True:
            method, properties, body = self.channel.basic_get(queue, auto_ack=True)
            if method is None:
                return got
            got.append((properties, body))

    def config(self, port: int | None = None, **extra: str) -> dict[str, str]:
        """The connection keys of a connector (through ``port``, e.g. a proxy's, if given)."""
        credentials = self.parameters.credentials
        return {
            "rabbitmq.host": self.parameters.host,
            "rabbitmq.port": str(port or self.parameters.port),
            "rabbitmq.username": credentials.username,  # type: ignore[attr-defined]
            "rabbitmq.password": credentials.password,  # type: ignore[attr-defined]
            "rabbitmq.virtual.host": self.parameters.virtual_host,
            "rabbitmq.requested.heartbeat.seconds": "5",
            **extra,
        }

    def source_config(self, queue: str, port: int | None = None) -> dict[str, str]:
        """A source's config: ``queue`` into topic ``t`` (through ``port`` if given)."""
        return {**self.config(port), "rabbitmq.queue": queue, "kafka.topic": "t"}

    def cleanup(self) -> None:
        for proxy in self._proxies:
            proxy.stop()
        with contextlib.suppress(pika.exceptions.AMQPError):
            if not self.channel.is_open:
                self.channel = self.connection.channel()
            for queue in self._queues:
                self.channel.queue_delete(queue)
            for exchange in self._exchanges:
                self.channel.exchange_delete(exchange)
        with contextlib.suppress(pika.exceptions.AMQPError):
            self.connection.close()


@contextlib.contextmanager
def source_task(
    props: dict[str, str], task_class: type[RabbitMQSourceTask] = RabbitMQSourceTask
) -> Iterator[RabbitMQSourceTask]:
    """A started source task (on this thread, with a worker's context), stopped afterwards."""
    task = task_class()
    task.initialize(FakeSourceTaskContext(props))
    task.start(props)
    try:
        yield task
    finally:
        task.stop()


def poll_until(task: RabbitMQSourceTask, count: int, timeout: float = 20.0) -> list[SourceRecord]:
    """Poll until ``count`` records came (retriable failures are polled again, as a worker does)."""
    records: list[SourceRecord] = []

    def enough() -> bool:
        with contextlib.suppress(RetriableException):
            records.extend(task.poll() or [])
        return len(records) >= count

    wait_until(enough, timeout, 0.0, lambda: f"{count} records polled, have {len(records)}")
    return records


def commit_all(task: RabbitMQSourceTask, records: Sequence[SourceRecord]) -> None:
    """``commit_record`` each record as Kafka acknowledged it (offsets 0, 1...)."""
    for offset, record in enumerate(records):
        task.commit_record(record, RecordMetadata(record.topic, 0, offset))
