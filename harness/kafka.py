"""Kept importable for earlier users: the Kafka providers are :mod:`harness.providers.kafka`."""

from __future__ import annotations

from harness.providers.kafka import (
    FAST_GROUP_JOIN,
    OFFICIAL_KAFKA_IMAGE,
    BrokerStall,
    Record,
    Stall,
    TestcontainersKafka,
    TlsKafka,
    broker_stall,
    consume_all,
    kafka_provider,
    produce,
    registry_answers,
    tansu_image,
)

__all__ = [
    "BrokerStall",
    "FAST_GROUP_JOIN",
    "OFFICIAL_KAFKA_IMAGE",
    "Record",
    "Stall",
    "TestcontainersKafka",
    "TlsKafka",
    "broker_stall",
    "consume_all",
    "kafka_provider",
    "produce",
    "registry_answers",
    "tansu_image",
]
