"""Client factories and topic administration against the session's embedded broker."""

from __future__ import annotations

import logging
import re
import uuid

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient

from cdk.config import Password
from cdk.errors import ConfigException, ConnectException
from cdk.kafka import (
    BrokerUnreachableException,
    EmbeddedKafka,
    NewTopicSpec,
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
from harness.providers.kafka import FAST_GROUP_JOIN, consume_all, produce
from tests._wait import wait_until

UNREACHABLE = "127.0.0.1:1"


def topic_name() -> str:
    return f"t-{uuid.uuid4().hex[:10]}"


def test_producer_config_defaults_and_overrides() -> None:
    config = producer_config("h:1")
    assert config == {"bootstrap.servers": "h:1", "acks": "all", "enable.idempotence": True}
    assert producer_config("h:1", {"linger.ms": 5})["linger.ms"] == 5
    weaker = producer_config("h:1", {"acks": "1"})
    assert weaker["acks"] == "1"
    assert "enable.idempotence" not in weaker


def test_consumer_config_defaults() -> None:
    config = consumer_config("h:1", "g", {"session.timeout.ms": 6000})
    assert config["group.id"] == "g"
    assert config["auto.offset.reset"] == "earliest"
    assert config["enable.auto.commit"] is False
    assert config["session.timeout.ms"] == 6000
    assert consumer_config("h:1")["group.id"]


def test_factories_return_confluent_clients(kafka_bootstrap: str) -> None:
    assert isinstance(new_producer(producer_config(kafka_bootstrap)), Producer)
    consumer = new_consumer(consumer_config(kafka_bootstrap, "g-factories"))
    assert isinstance(consumer, Consumer)
    consumer.close()
    assert isinstance(new_admin({"bootstrap.servers": kafka_bootstrap}), AdminClient)


def test_unknown_property_is_a_config_exception_naming_it() -> None:
    with pytest.raises(ConfigException, match=r"no\.such\.property") as info:
        new_producer({"bootstrap.servers": "h:1", "no.such.property": "1"})
    assert info.value.name == "no.such.property"


def test_invalid_value_is_a_config_exception() -> None:
    with pytest.raises(ConfigException, match="linger"):
        new_producer({"bootstrap.servers": "h:1", "linger.ms": "soon"})


def test_missing_bootstrap_and_group_are_config_exceptions() -> None:
    with pytest.raises(ConfigException, match=r"bootstrap\.servers"):
        new_admin({})
    with pytest.raises(ConfigException, match=r"group\.id"):
        new_consumer({"bootstrap.servers": "h:1"})
    with pytest.raises(ConfigException, match="mapping"):
        new_producer("h:1")  # type: ignore[arg-type]


def test_password_values_are_unwrapped() -> None:
    producer = new_producer(
        {
            "bootstrap.servers": "h:1",
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN",
            "sasl.username": "u",
            "sasl.password": Password("secret"),
        }
    )
    assert isinstance(producer, Producer)


def test_produce_and_consume_through_a_group(kafka_bootstrap: str) -> None:
    topic = topic_name()
    create_topics(kafka_bootstrap, [topic])
    produce(kafka_bootstrap, topic, [f"v{i}" for i in range(20)])
    consumer = new_consumer(consumer_config(kafka_bootstrap, f"g-{topic}", FAST_GROUP_JOIN))
    consumer.subscribe([topic])
    seen: list[bytes] = []

    def all_read() -> bool:
        msg = consumer.poll(0.2)
        if msg is not None and msg.error() is None:
            seen.append(msg.value() or b"")
        return len(seen) == 20

    try:
        wait_until(all_read, timeout=30, interval=0, message=lambda: f"{len(seen)} of 20 read")
    finally:
        consumer.close()
    assert seen == [f"v{i}".encode() for i in range(20)]


def test_consume_all_reads_keys_values_and_headers(kafka_bootstrap: str) -> None:
    topic = topic_name()
    create_topics(kafka_bootstrap, [NewTopicSpec(topic, partitions=3)])
    produce(kafka_bootstrap, topic, [("k1", "a"), ("k2", None)], headers={"h": "x"})
    records = consume_all(kafka_bootstrap, topic, min_records=2)
    assert sorted((r.key, r.value) for r in records) == [(b"k1", b"a"), (b"k2", None)]
    assert all(r.headers == [("h", b"x")] for r in records)
    assert consume_all(kafka_bootstrap, topic, idle=0.3) == records


def test_create_topics_is_idempotent(kafka_bootstrap: str) -> None:
    first, second = topic_name(), topic_name()
    create_topics(kafka_bootstrap, [first], partitions=2)
    create_topics(
        kafka_bootstrap,
        [first, NewTopicSpec(second, partitions=3, config={"cleanup.policy": "compact"})],
    )
    admin = new_admin({"bootstrap.servers": kafka_bootstrap})
    create_topics(admin, [second])
    metadata = admin.list_topics(timeout=10)
    assert len(metadata.topics[first].partitions) == 2
    assert len(metadata.topics[second].partitions) == 3
    assert {first, second} <= list_topics(kafka_bootstrap)
    create_topics(kafka_bootstrap, [])


def test_delete_topics_is_idempotent(kafka_bootstrap: str) -> None:
    topic = topic_name()
    create_topics(kafka_bootstrap, [topic])
    delete_topics(kafka_bootstrap, [topic])
    delete_topics(kafka_bootstrap, [topic, topic_name()])
    assert topic not in list_topics(kafka_bootstrap)


def test_bad_topic_spec_is_a_config_exception(kafka_bootstrap: str) -> None:
    with pytest.raises(ConfigException, match="topic"):
        create_topics(kafka_bootstrap, [42])  # type: ignore[list-item]
    with pytest.raises(ConfigException, match="name"):
        create_topics(kafka_bootstrap, [""])


def test_invalid_topic_spec_names_the_topic(kafka_bootstrap: str) -> None:
    with pytest.raises(ConfigException, match="bad-partitions"):
        create_topics(kafka_bootstrap, [NewTopicSpec("bad-partitions", partitions=-5)])


def test_unreachable_broker_is_a_clear_error(capfd: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(BrokerUnreachableException, match=re.escape(UNREACHABLE)) as info:
        check_connection(UNREACHABLE, timeout=1)
    assert info.value.bootstrap_servers == UNREACHABLE
    assert isinstance(info.value, ConnectException)
    with pytest.raises(BrokerUnreachableException, match=re.escape(UNREACHABLE)):
        create_topics(UNREACHABLE, ["x"], timeout=1)
    with pytest.raises(BrokerUnreachableException, match=re.escape(UNREACHABLE)):
        delete_topics(UNREACHABLE, ["x"], timeout=1)
    out, err = capfd.readouterr()
    assert "rdkafka" not in out + err  # librdkafka's lines went to logging, not the terminal


def test_librdkafka_logs_go_to_python_logging(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="cdk.kafka"), pytest.raises(ConnectException):
        list_topics(UNREACHABLE, timeout=1)
    assert any(r.name == "cdk.kafka.librdkafka" for r in caplog.records)


def test_a_client_reports_an_unreachable_broker_once_in_a_while(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cdk.kafka import _clients

    monkeypatch.setattr(_clients, "UNREACHABLE_WARNING_INTERVAL_S", 1.0)
    monkeypatch.setattr(_clients, "UNREACHABLE_WARNINGS", _clients._UnreachableWarnings())
    producer = new_producer({"bootstrap.servers": UNREACHABLE, "reconnect.backoff.max.ms": 100})

    def reports() -> list[logging.LogRecord]:
        producer.poll(0.1)  # delivers librdkafka's queued log lines and errors
        return [r for r in caplog.records if "Kafka broker unreachable" in r.getMessage()]

    with caplog.at_level(logging.DEBUG, logger="cdk.kafka"):
        first, second = wait_until(
            lambda: reports()[:2] if len(reports()) >= 2 else None,
            30,
            message="two reports, a second apart",
        )
    attempts = [r for r in caplog.records if r.name == "cdk.kafka.librdkafka"]
    assert attempts  # librdkafka's lines for the attempts were logged, at DEBUG only
    assert {r.levelno for r in attempts} == {logging.DEBUG}
    assert first.levelno == second.levelno == logging.WARNING
    # the limiter measures with time.monotonic(), a record's created is wall time: allow skew
    assert second.created - first.created >= 0.95
    assert f"at bootstrap servers '{UNREACHABLE}'" in first.getMessage()
    assert "Connection refused" in first.getMessage()
    assert "more failed attempt(s) since the last report" in second.getMessage()
    producer.flush(0)


def test_other_connection_failures_keep_their_level_and_are_counted_apart(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from cdk.kafka import _clients

    reports = _clients._UnreachableWarnings()
    refused = "[thrd:b:9092/bootstrap]: b:9092/bootstrap: Connect to ipv4#10.0.0.1:9092 failed: "
    auth = "[thrd:b:9092/1]: b:9092/1: SASL authentication error: Authentication failed"
    with caplog.at_level(logging.DEBUG, logger="cdk.kafka"):
        for _ in range(3):
            reports.report("b:9092", refused + "Connection refused (after 0ms in state CONNECT)")
            reports.report("b:9092", auth + " (after 5ms in state AUTH_REQ)", logging.ERROR)
    shown = [(r.levelno, r.getMessage()) for r in caplog.records]
    assert shown == [
        (
            logging.WARNING,
            "Kafka broker unreachable at bootstrap servers 'b:9092': b:9092/bootstrap: Connect "
            "to ipv4#10.0.0.1:9092 failed: Connection refused (the clients keep retrying; "
            "repeated at most every 60s)",
        ),
        (
            logging.ERROR,
            "Cannot connect to Kafka at bootstrap servers 'b:9092': b:9092/1: SASL "
            "authentication error: Authentication failed (the clients keep retrying; repeated "
            "at most every 60s)",
        ),
    ]


def test_check_connection_returns_the_cluster_id(kafka: EmbeddedKafka) -> None:
    assert check_connection(kafka.bootstrap_servers) == kafka.cluster_id


def test_rejected_secret_values_are_not_shown() -> None:
    # a property librdkafka does not know (Java-only ones such as ssl.truststore.password are
    # dropped with a warning instead: see translate_client_config)
    with pytest.raises(ConfigException, match=r"ssl\.unknown\.password") as info:
        new_producer({"bootstrap.servers": "h:1", "ssl.unknown.password": "hunter2"})
    assert "hunter2" not in str(info.value)
    assert "[hidden]" in str(info.value)


def test_unreachable_through_an_admin_client_names_its_bootstrap() -> None:
    admin = new_admin({"bootstrap.servers": UNREACHABLE, "error_cb": lambda error: None})
    with pytest.raises(BrokerUnreachableException, match=re.escape(UNREACHABLE)):
        list_topics(admin, timeout=1)
