"""Creating the topics the runtime itself needs (offsets topic, dead letter queues)."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any

from cdk.errors import ConnectException

__all__ = ["ensure_topic"]

log = logging.getLogger("cdk.runtime.topics")


def ensure_topic(
    admin: Any,
    topic: str,
    *,
    partitions: int,
    replication_factor: int,
    config: Mapping[str, str] | None = None,
    timeout_s: float = 30.0,
    purpose: str = "the runtime",
) -> int:
    """Create ``topic`` unless it exists; return its number of partitions.

    The replication factor is capped to the number of brokers in the cluster (a single-broker
    development cluster cannot hold 3 replicas).

    Raises:
        ConnectException: the cluster cannot be reached or the topic cannot be created.
    """
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import NewTopic  # type: ignore[attr-defined]

    try:
        metadata = admin.list_topics(timeout=timeout_s)
    except KafkaException as e:
        raise ConnectException(
            f"Could not list topics to set up topic {topic} for {purpose}: {e}"
        ) from e
    existing = metadata.topics.get(topic)
    if existing is not None and existing.error is None and existing.partitions:
        return len(existing.partitions)
    brokers = max(1, len(metadata.brokers))
    rf = replication_factor if replication_factor > 0 else brokers
    new = NewTopic(
        topic,
        num_partitions=partitions,
        replication_factor=min(rf, brokers),
        config=dict(config or {}),
    )
    log.info("Creating topic %s for %s (%d partitions)", topic, purpose, partitions)
    futures = admin.create_topics([new], operation_timeout=timeout_s, request_timeout=timeout_s)
    try:
        futures[topic].result(timeout=timeout_s)
    except KafkaException as e:
        error = e.args[0] if e.args else None
        if not (isinstance(error, KafkaError) and error.code() == KafkaError.TOPIC_ALREADY_EXISTS):
            raise ConnectException(f"Could not create topic {topic} for {purpose}: {e}") from e
    except Exception as e:
        raise ConnectException(f"Could not create topic {topic} for {purpose}: {e}") from e
    deadline = time.monotonic() + timeout_s
    while True:
        described = admin.list_topics(topic=topic, timeout=timeout_s).topics.get(topic)
        if described is not None and described.error is None and described.partitions:
            return len(described.partitions)
        if time.monotonic() >= deadline:
            raise ConnectException(f"Topic {topic} for {purpose} did not appear after creation")
        time.sleep(0.05)
