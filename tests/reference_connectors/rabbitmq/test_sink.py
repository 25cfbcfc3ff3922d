"""The RabbitMQ sink against the real server: confirmed publishes, the value formats, and the
errors (a nack is retriable; unroutable messages and a missing exchange are fatal)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Sequence

import pytest

from cdk import (
    ConfigException,
    ConnectException,
    DataException,
    RetriableException,
    Schema,
    SchemaBuilder,
    SinkRecord,
    Struct,
)
from cdk.converters import JsonConverter
from harness import FakeSinkTaskContext
from reference_connectors.rabbitmq import RabbitMQSinkConnector, RabbitMQSinkTask
from tests.reference_connectors.rabbitmq._support import Rabbit

_SCHEMA = (
    SchemaBuilder.struct()
    .name("order")
    .field("id", Schema.INT64_SCHEMA)
    .field("item", Schema.STRING_SCHEMA)
    .build()
)


def _records(ids: Sequence[int], topic: str = "orders") -> list[SinkRecord]:
    return [
        SinkRecord(
            topic,
            0,
            Schema.INT64_SCHEMA,
            i,
            _SCHEMA,
            Struct(_SCHEMA).put("id", i).put("item", f"tea-{i}"),
            i,
        )
        for i in ids
    ]


def _bound_exchange(rabbit: Rabbit) -> tuple[str, str]:
    """A fresh topic exchange and a fresh queue bound to it for every routing key."""
    exchange = rabbit.exchange()
    queue = rabbit.queue("out")
    rabbit.bind(queue, exchange)
    return exchange, queue


@contextlib.contextmanager
def _sink_task(
    rabbit: Rabbit, exchange: str, port: int | None = None, **props: str
) -> Iterator[RabbitMQSinkTask]:
    """A sink task started (with a worker's context) publishing to ``exchange``, then stopped.

    ``port``: the broker's port to go through (a proxy's); ``props``: more config keys.
    """
    config = {**rabbit.config(port), "rabbitmq.exchange": exchange, **props}
    task = RabbitMQSinkTask()
    task.initialize(FakeSinkTaskContext(configs=config))
    task.start(config)
    try:
        yield task
    finally:
        task.stop()


@pytest.fixture
def sink(rabbit: Rabbit) -> Iterator[tuple[RabbitMQSinkTask, str, str]]:
    """A started sink task publishing to a fresh exchange, and the queue bound to it."""
    exchange, queue = _bound_exchange(rabbit)
    with _sink_task(rabbit, exchange) as task:
        yield task, exchange, queue


def test_put_returns_with_every_message_confirmed_in_the_queue(
    rabbit: Rabbit, sink: tuple[RabbitMQSinkTask, str, str]
) -> None:
    task, _, queue = sink
    task.put(_records(range(20)))
    # confirmed: in the queue as soon as put() returned, no wait
    assert rabbit.ready(queue) == 20
    got = rabbit.drain(queue)
    converter = JsonConverter()
    converter.configure({"schemas.enable": True}, False)
    expected = [
        converter.from_connect_data(r.topic, r.value_schema, r.value) for r in _records(range(20))
    ]
    assert [body for _, body in got] == expected  # byte for byte JsonConverter's envelope
    properties = got[3][0]
    assert properties.message_id == "3"
    assert properties.delivery_mode == 2
    assert properties.content_type == "application/json"
    assert properties.headers == {"kafka.topic": "orders", "kafka.partition": 0, "kafka.offset": 3}


def test_the_routing_key_is_the_topic_or_the_fixed_one(rabbit: Rabbit) -> None:
    exchange = rabbit.exchange(kind="direct")
    by_topic = rabbit.queue()
    fixed = rabbit.queue()
    rabbit.bind(by_topic, exchange, "orders")
    rabbit.bind(fixed, exchange, "all")
    with _sink_task(rabbit, exchange) as task:
        task.put(_records([1]))
    with _sink_task(rabbit, exchange, **{"rabbitmq.routing.key": "all"}) as task:
        task.put(_records([2]))
    assert [p.message_id for p, _ in rabbit.drain(by_topic)] == ["1"]
    assert [p.message_id for p, _ in rabbit.drain(fixed)] == ["2"]


def test_schemaless_and_bytes_formats(rabbit: Rabbit) -> None:
    exchange, queue = _bound_exchange(rabbit)
    with _sink_task(rabbit, exchange, **{"rabbitmq.value.format": "json.schemaless"}) as task:
        task.put(_records([7]))
    [(_, body)] = rabbit.drain(queue)
    assert json.loads(body) == {"id": 7, "item": "tea-7"}
    with _sink_task(rabbit, exchange, **{"rabbitmq.value.format": "bytes"}) as task:
        raw = [
            SinkRecord("t", 0, None, None, None, v, i)
            for i, v in enumerate([b"\x00\xff", "caf\u00e9"])
        ]
        task.put(raw)
        assert [body for _, body in rabbit.drain(queue)] == [b"\x00\xff", "caf\u00e9".encode()]
        with pytest.raises(DataException, match="bytes or string"):
            task.put(_records([1]))


def test_a_nack_is_retriable(rabbit: Rabbit) -> None:
    exchange = rabbit.exchange()
    full = rabbit.queue("full", **{"x-max-length": 3, "x-overflow": "reject-publish"})
    rabbit.bind(full, exchange)
    with _sink_task(rabbit, exchange) as task:
        with pytest.raises(RetriableException, match=r"refused \(nack\) record orders-0@3"):
            task.put(_records(range(10)))
        assert rabbit.ready(full) == 3
        rabbit.drain(full)
        task.put(_records(range(3)))  # a fresh channel after the nack
        assert rabbit.ready(full) == 3


def test_unroutable_messages_fail_the_task(rabbit: Rabbit) -> None:
    exchange = rabbit.exchange()  # nothing bound
    with (
        _sink_task(rabbit, exchange) as task,
        pytest.raises(
            ConnectException, match=r"unroutable: no queue is bound for routing key 'orders'"
        ),
    ):
        task.put(_records([1]))


def test_a_lost_connection_is_retriable_and_the_batch_goes_through_after(rabbit: Rabbit) -> None:
    exchange, queue = _bound_exchange(rabbit)
    proxy = rabbit.proxy()
    with _sink_task(rabbit, exchange, proxy.port) as task:
        task.put(_records([1]))
        proxy.cut()
        with pytest.raises(RetriableException):
            task.put(_records([2]))
        proxy.restore()
        task.put(_records([2]))
    assert [p.message_id for p, _ in rabbit.drain(queue)] == ["1", "2"]


def test_a_deleted_exchange_fails_the_task_saying_so(
    rabbit: Rabbit, sink: tuple[RabbitMQSinkTask, str, str]
) -> None:
    task, exchange, _ = sink
    task.put(_records([1]))
    rabbit.channel.exchange_delete(exchange)
    with pytest.raises(ConnectException, match=rf"exchange '{exchange}' does not exist"):
        task.put(_records([2]))


def test_validate_and_start(rabbit: Rabbit) -> None:
    exchange = rabbit.exchange()

    def errors(**props: str) -> dict[str, list[str]]:
        config = RabbitMQSinkConnector().validate({**rabbit.config(), **props})
        return {v.name: v.error_messages for v in config.config_values if v.error_messages}

    assert errors(**{"rabbitmq.exchange": exchange}) == {}
    assert list(errors(**{"rabbitmq.exchange": "cdk_test_nope"})) == ["rabbitmq.exchange"]
    refused = errors(**{"rabbitmq.exchange": exchange, "rabbitmq.password": "never-shown-pw"})
    assert list(refused) == ["rabbitmq.username"]
    assert "never-shown-pw" not in str(refused)
    with pytest.raises(ConfigException, match=r"rabbitmq\.value\.format"):
        RabbitMQSinkConnector().start({"rabbitmq.exchange": "x", "rabbitmq.value.format": "xml"})
    with pytest.raises(ConfigException, match=r"rabbitmq\.exchange"):
        RabbitMQSinkConnector().start({})


def test_a_connection_the_broker_closed_while_idle_is_reopened_quietly(rabbit: Rabbit) -> None:
    exchange, queue = _bound_exchange(rabbit)
    proxy = rabbit.proxy()
    with _sink_task(rabbit, exchange, proxy.port) as task:
        task.put(_records([1]))
        proxy.cut()  # the connection dies while the task is idle
        proxy.restore()
        task.put([])  # an idle put notices it
        task.put(_records([2]))  # and the next batch goes through without a retriable error
    assert [p.message_id for p, _ in rabbit.drain(queue)] == ["1", "2"]
