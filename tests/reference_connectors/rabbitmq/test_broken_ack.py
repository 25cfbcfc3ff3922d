"""The broken acknowledging sources of tests/certify/broken/ack.py do get wrong what they say."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from cdk import RecordMetadata, SourceRecord
from reference_connectors.rabbitmq import RabbitMQSourceTask
from tests._wait import wait_until
from tests.certify.broken.ack import (
    AckOnPollSource,
    AckOnStopSource,
    NeverAckSource,
    NoAckOnDropSource,
)
from tests.reference_connectors.rabbitmq._support import Rabbit, TaskContext


@contextlib.contextmanager
def _run(task: RabbitMQSourceTask, props: dict[str, str]) -> Iterator[RabbitMQSourceTask]:
    task.initialize(TaskContext(props))
    task.start(props)
    try:
        yield task
    finally:
        task.stop()


def _poll(task: RabbitMQSourceTask, count: int) -> list[SourceRecord]:
    records: list[SourceRecord] = []
    wait_until(
        lambda: records.extend(task.poll() or []) or len(records) >= count, 20, 0.0, "polled"
    )
    return records


@pytest.mark.parametrize(
    ("task_class", "ready_after"),
    [
        (RabbitMQSourceTask, 7),  # the reference: the 2 dropped + 3 sent are acked, 7 come back
        (AckOnPollSource, 5),  # the 7 polled are acknowledged, the 2 Kafka never had too
        (NeverAckSource, 12),  # nothing acknowledged
        (AckOnStopSource, 0),  # everything delivered acknowledged on stop, the unpolled too
        (NoAckOnDropSource, 9),  # the 2 dropped come back
    ],
)
def test_what_each_acknowledges(rabbit: Rabbit, task_class: type, ready_after: int) -> None:
    queue = rabbit.queue()
    rabbit.publish(queue, range(12))
    props = {
        **rabbit.config(),
        "rabbitmq.queue": queue,
        "kafka.topic": "t",
        "rabbitmq.batch.size": "7",
    }
    with _run(task_class(), props) as task:
        records = _poll(task, 7)[:7]
        for record in records[:2]:
            task.commit_record(record, None)  # dropped by a transformation
        for offset, record in enumerate(records[2:5]):
            task.commit_record(record, RecordMetadata("t", 0, offset))
        # records[5:7] never reached Kafka; 5 more messages were delivered but never polled
    wait_until(lambda: rabbit.consumers(queue) == 0, 10, 0.05, "the task's consumer gone")
    wait_until(
        lambda: rabbit.ready(queue) == ready_after,
        10,
        0.05,
        lambda: f"{ready_after} messages ready, have {rabbit.ready(queue)}",
    )
