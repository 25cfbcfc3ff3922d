"""The broken acknowledging sources of tests/certify/broken/ack.py do get wrong what they say."""

from __future__ import annotations

import pytest

from cdk import RecordMetadata
from reference_connectors.rabbitmq import RabbitMQSourceTask
from tests.certify.broken.ack import (
    AckOnPollSource,
    AckOnStopSource,
    NeverAckSource,
    NoAckOnDropSource,
)
from tests.reference_connectors.rabbitmq._support import Rabbit, poll_until, source_task


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
def test_what_each_acknowledges(
    rabbit: Rabbit, task_class: type[RabbitMQSourceTask], ready_after: int
) -> None:
    queue = rabbit.queue()
    rabbit.publish(queue, range(12))
    props = {**rabbit.source_config(queue), "rabbitmq.batch.size": "7"}
    with source_task(props, task_class) as task:
        records = poll_until(task, 7)[:7]
        for record in records[:2]:
            task.commit_record(record, None)  # dropped by a transformation
        for offset, record in enumerate(records[2:5]):
            task.commit_record(record, RecordMetadata("t", 0, offset))
        # records[5:7] never reached Kafka; 5 more messages were delivered but never polled
    rabbit.wait_no_consumer(queue)
    rabbit.wait_ready(queue, ready_after, f"what {task_class.__name__} left unacknowledged")
