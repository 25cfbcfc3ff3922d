"""The public names of ``cdk.kafka`` are pinned here: changing them changes the contract."""

from __future__ import annotations

import cdk.kafka

EXPECTED = {
    "new_producer",
    "new_consumer",
    "new_admin",
    "producer_config",
    "consumer_config",
    "admin_config",
    "NewTopicSpec",
    "create_topics",
    "delete_topics",
    "list_topics",
    "check_connection",
    "BrokerUnreachableException",
    "KafkaProvider",
    "EmbeddedKafka",
    "ExternalKafka",
    "free_port",
    "tansu_binary",
    "tansu_version",
}


def test_all_is_pinned() -> None:
    assert set(cdk.kafka.__all__) == EXPECTED
    assert len(cdk.kafka.__all__) == len(EXPECTED)


def test_every_name_exists_and_is_documented() -> None:
    for name in cdk.kafka.__all__:
        obj = getattr(cdk.kafka, name)
        assert obj.__doc__, name
