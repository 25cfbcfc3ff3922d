"""Kafka for tests and certification: the providers by name, testcontainers, and small helpers.

``kafka_provider(spec)`` picks a cluster: ``"embedded"`` (the Tansu process, the default),
``"testcontainers"`` (a container on a Docker engine), or bootstrap servers of an existing
cluster. The helpers read and write topics without consumer groups (no group join to wait for)
and count records by reading them, since Tansu's high watermark can lag behind.
"""

from __future__ import annotations

from typing import Any

from cdk.errors import ConfigException
from cdk.kafka import EmbeddedKafka, ExternalKafka, KafkaProvider
from harness.providers._broker_stall import BrokerStall, Stall, broker_stall
from harness.providers._kafka_containers import (
    OFFICIAL_KAFKA_IMAGE,
    TestcontainersKafka,
    registry_answers,
    tansu_image,
)
from harness.providers._records import FAST_GROUP_JOIN, Record, consume_all, produce

__all__ = [
    "FAST_GROUP_JOIN",
    "BrokerStall",
    "Stall",
    "OFFICIAL_KAFKA_IMAGE",
    "Record",
    "TestcontainersKafka",
    "consume_all",
    "broker_stall",
    "kafka_provider",
    "produce",
    "registry_answers",
    "tansu_image",
]


def kafka_provider(spec: str = "embedded", **options: Any) -> KafkaProvider:
    """Return the (not yet started) provider named by ``spec``.

    Args:
        spec: ``embedded``, ``testcontainers``, or bootstrap servers (``host:port[,...]``).
        options: keyword arguments for the provider's constructor.
    """
    name = spec.strip()
    if name == "embedded":
        return EmbeddedKafka(**options)
    if name == "testcontainers":
        return TestcontainersKafka(**options)
    if not name or any(":" not in server for server in name.split(",")):
        raise ConfigException(
            "kafka provider",
            spec,
            "expected 'embedded', 'testcontainers' or bootstrap servers host:port[,host:port]",
        )
    return ExternalKafka(name, **options)
