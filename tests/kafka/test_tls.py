"""Kafka clients over TLS with Kafka's (Java) settings, against the embedded broker behind TLS."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from cdk.errors import ConfigException
from cdk.kafka import BrokerUnreachableException, check_connection, create_topics, new_admin
from cdk.kafka._clients import check_client_config
from harness.providers.kafka import consume_all, produce
from harness.providers.tls import TlsKafka
from tests._tls import KEY_PASSWORD, STORE_PASSWORD


def round_trip(kafka: TlsKafka, security: dict[str, Any]) -> None:
    """Create a topic, write three records and read them back, all with ``security``."""
    topic = f"tls-{uuid.uuid4().hex[:8]}"
    admin = new_admin({"bootstrap.servers": kafka.bootstrap_servers, **security})
    create_topics(admin, [topic])
    produce(kafka.bootstrap_servers, topic, [b"a", b"b", b"c"], client_config=security)
    records = consume_all(kafka.bootstrap_servers, topic, min_records=3, client_config=security)
    assert [r.value for r in records] == [b"a", b"b", b"c"]


def refused(kafka: TlsKafka, security: dict[str, Any]) -> None:
    admin = new_admin({"bootstrap.servers": kafka.bootstrap_servers, **security})
    with pytest.raises(BrokerUnreachableException):
        check_connection(admin, timeout=2)


def test_pem_and_pkcs12_trust_stores(tls_kafka: TlsKafka, tmp_path: Path) -> None:
    round_trip(tls_kafka, tls_kafka.client_config())  # security.protocol=SSL, a PEM trust store
    p12 = tls_kafka.authority.write_truststore_pkcs12(tmp_path / "trust.p12", STORE_PASSWORD)
    round_trip(
        tls_kafka,
        {
            "security.protocol": "SSL",
            "ssl.truststore.type": "PKCS12",
            "ssl.truststore.location": str(p12),
            "ssl.truststore.password": STORE_PASSWORD,
        },
    )


def test_untrusted_and_plaintext_clients_are_refused(tls_kafka: TlsKafka) -> None:
    refused(tls_kafka, {})  # plaintext to the TLS port
    refused(tls_kafka, {"security.protocol": "SSL"})  # the system's authorities only


def test_mutual_tls_with_pkcs12_and_pem_key_stores(mtls_kafka: TlsKafka, tmp_path: Path) -> None:
    round_trip(mtls_kafka, mtls_kafka.client_config())  # a PKCS12 key store
    pem = mtls_kafka.authority.issue("pem-client").write_keystore_pem(
        tmp_path / "client.pem", password=KEY_PASSWORD
    )
    trust = {k: v for k, v in mtls_kafka.client_config().items() if "keystore" not in k}
    round_trip(
        mtls_kafka,
        {
            **trust,
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(pem),
            "ssl.key.password": KEY_PASSWORD,
        },
    )
    refused(mtls_kafka, trust)  # no client certificate


def test_java_key_stores_are_refused_naming_the_conversion(tmp_path: Path) -> None:
    jks = tmp_path / "trust.jks"
    jks.write_bytes(b"\xfe\xed\xfe\xed" + bytes(60))
    settings = {"bootstrap.servers": "127.0.0.1:1", "ssl.truststore.location": str(jks)}
    with pytest.raises(ConfigException, match="keytool -importkeystore") as error:
        new_admin(settings)
    assert error.value.name == "ssl.truststore.location"
    assert "ssl.truststore.type=PKCS12" in str(error.value)
    rejected = check_client_config("producer", {"ssl.keystore.location": str(jks)})
    assert "Java KeyStore (JKS)" in rejected["ssl.keystore.location"]
    # a PEM file under Kafka's default type (JKS) says which type to set
    pem = tmp_path / "ca.pem"
    pem.write_text("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n")
    with pytest.raises(ConfigException, match=r"set ssl\.truststore\.type=PEM"):
        new_admin({**settings, "ssl.truststore.location": str(pem)})
