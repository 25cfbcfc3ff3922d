"""RabbitMQ source and sink: reference connectors for a queue, on the public ``cdk`` API.

``RabbitMQSourceConnector`` copies the messages of RabbitMQ queues to a Kafka topic and
acknowledges each message to RabbitMQ only once Kafka acknowledged its record (in
``commit_record``): an *acknowledging* source, which RabbitMQ redelivers from rather than a
replayable one resumed from offsets. ``RabbitMQSinkConnector`` publishes records to an
exchange with publisher confirms. Both use pika (the ``rabbitmq`` extra: ``pip install
'connect-cdk[rabbitmq]'``); the certification drivers live in
:mod:`reference_connectors.rabbitmq.certify`.
"""

from __future__ import annotations

from reference_connectors.rabbitmq._connection import VERSION
from reference_connectors.rabbitmq._sink import (
    SINK_CONFIG_DEF,
    RabbitMQSinkConnector,
    RabbitMQSinkTask,
)
from reference_connectors.rabbitmq._source import (
    SOURCE_CONFIG_DEF,
    RabbitMQSourceConnector,
    RabbitMQSourceTask,
)

__version__ = VERSION

__all__ = [
    "__version__",
    "RabbitMQSinkConnector",
    "RabbitMQSinkTask",
    "RabbitMQSourceConnector",
    "RabbitMQSourceTask",
    "SINK_CONFIG_DEF",
    "SOURCE_CONFIG_DEF",
]
