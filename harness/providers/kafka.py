"""Kafka for tests and certification: the providers by name, testcontainers, and small helpers.

``kafka_provider(spec)`` picks a cluster: ``"embedded"`` (the Tansu process, the default),
``"testcontainers"`` (a container on a Docker engine), ``"embedded-tls"`` (the embedded broker
reached over TLS only, with a throw-away certificate authority: :class:`TlsKafka`), or
bootstrap servers of an existing cluster (its security settings, if any, given apart). The
helpers read and write topics without consumer groups (no group join to wait for) and count
records by reading them, since Tansu's high watermark can lag behind.
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
from harness.providers._tls_kafka import TlsKafka

__all__ = [
    "FAST_GROUP_JOIN",
    "BrokerStall",
    "Stall",
    "OFFICIAL_KAFKA_IMAGE",
    "Record",
    "TestcontainersKafka",
    "TlsKafka",
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
        spec: ``embedded``, ``embedded-tls``, ``testcontainers``, or bootstrap servers
            (``host:port[,...]``).
        options: keyword arguments for the provider's constructor.
    """
    name = spec.strip()
    if name == "embedded":
        return EmbeddedKafka(**options)
    if name == "embedded-tls":
        return TlsKafka(**options)
    if name == "testcontainers":
        return TestcontainersKafka(**options)
    if not name or any(":" not in server for server in name.split(",")):
        raise ConfigException(
            "kafka provider",
            spec,
            "expected 'embedded', 'embedded-tls', 'testcontainers' or bootstrap servers "
            "host:port[,host:port]",
        )
    return ExternalKafka(name, **options)
