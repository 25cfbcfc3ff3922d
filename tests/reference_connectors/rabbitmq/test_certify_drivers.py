"""The certification drivers against the real server: pending_ids reads without consuming,
the sink driver's read_back can be called again, outage and break do what they say."""

from __future__ import annotations

from pathlib import Path

import pytest

from cdk import RecordMetadata
from reference_connectors.rabbitmq.certify import RabbitMQSinkDriver, RabbitMQSourceDriver
from tests.reference_connectors.rabbitmq._support import Rabbit, poll_until, source_task


@pytest.fixture
def source_driver(rabbit: Rabbit, tmp_path: Path):  # type: ignore[no-untyped-def]
    driver = RabbitMQSourceDriver(tmp_path)
    driver.setup()
    try:
        yield driver
    finally:
        driver.teardown()


def test_pending_ids_reads_without_consuming(source_driver: RabbitMQSourceDriver) -> None:
    source_driver.write_records([1, 2, 3], stream=0)
    source_driver.write_records([4, 5], stream=1)
    assert sorted(source_driver.pending_ids()) == [1, 2, 3, 4, 5]
    assert sorted(source_driver.pending_ids()) == [1, 2, 3, 4, 5]  # nothing consumed
    config = source_driver.example_config("t")
    with source_task(config) as task:
        for record in poll_until(task, 5):
            if record.key in ("2", "4"):
                task.commit_record(record, RecordMetadata("t", 0, 0))
    # the task's connection closed: what it did not acknowledge is pending again
    assert sorted(source_driver.pending_ids()) == [1, 3, 5]


def test_the_source_outage_cuts_the_connector_only(source_driver: RabbitMQSourceDriver) -> None:
    with source_driver.outage():
        source_driver.write_records([1])  # the driver's own writes go on
    assert source_driver.pending_ids() == [1]


def test_the_sink_driver_reads_back_repeatedly(rabbit: Rabbit, tmp_path: Path) -> None:
    driver = RabbitMQSinkDriver(tmp_path)
    driver.setup()
    try:
        import pika

        with driver._broker.channel(confirm=True) as channel:
            for i in (1, 2):
                channel.basic_publish(
                    driver.exchange, "t", b"{}", pika.BasicProperties(message_id=str(i))
                )
        assert driver.read_back() == [1, 2]
        assert driver.read_back() == [1, 2]
    finally:
        driver.teardown()
