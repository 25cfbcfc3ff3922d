"""The worker's TLS settings: Kafka's ``ssl.*`` keys and ``ssl.client.auth``.

They configure the REST API's HTTPS listeners, read with the ``listeners.https.`` prefix when any
key has it (then the unprefixed ones are ignored, as Kafka does) or else unprefixed; and the
same unprefixed keys (with ``security.protocol`` and ``sasl.*``) are the worker-level Kafka
client settings that Kafka gives its admin clients and, in distributed mode, the clients of the
internal topics.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cdk.config import ConfigDef, Importance, Type
from cdk.config.validators import CaseInsensitiveValidString, ValidString

__all__ = [
    "CLIENT_SECURITY_PREFIXES",
    "LISTENERS_HTTPS_PREFIX",
    "SSL_CLIENT_AUTH_CONFIG",
    "SSL_CONFIG_DEF",
    "add_security_configs",
    "client_security_settings",
    "rest_ssl_settings",
]

LISTENERS_HTTPS_PREFIX = "listeners.https."
SSL_CLIENT_AUTH_CONFIG = "ssl.client.auth"
SECURITY_PROTOCOL_CONFIG = "security.protocol"
#: The worker keys that are Kafka client security settings (given to admin clients and stores).
CLIENT_SECURITY_PREFIXES = ("ssl.", "sasl.")
#: Worker keys starting with ``ssl.`` that only the REST server reads.
_REST_ONLY = frozenset({SSL_CLIENT_AUTH_CONFIG})

_STORE_TYPES = "PKCS12, PEM (JKS files must be converted; a JKS-typed PKCS12 file is read)"


def add_security_configs(definition: ConfigDef) -> ConfigDef:
    """Define ``ssl.*``, ``ssl.client.auth`` and ``security.protocol`` on ``definition``."""
    return (
        definition.define(
            SECURITY_PROTOCOL_CONFIG,
            Type.STRING,
            "PLAINTEXT",
            CaseInsensitiveValidString.of("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"),
            Importance.MEDIUM,
            "How the worker's own Kafka clients (admin clients, and in distributed mode the "
            "clients of the config, offset and status topics) talk to the brokers. Task "
            "producers and consumers take theirs from the producer. and consumer. prefixed "
            "keys.",
        )
        .define(
            "sasl.mechanism",
            Type.STRING,
            "GSSAPI",
            None,
            Importance.MEDIUM,
            "The SASL mechanism of the worker's own Kafka clients (PLAIN, SCRAM-SHA-256, "
            "SCRAM-SHA-512, OAUTHBEARER, GSSAPI) when security.protocol is SASL_*.",
        )
        .define(
            "sasl.jaas.config",
            Type.PASSWORD,
            None,
            None,
            Importance.MEDIUM,
            "Kafka's JAAS login line; a PlainLoginModule or ScramLoginModule line's username "
            "and password become the client's SASL credentials.",
        )
        .define(
            SSL_CLIENT_AUTH_CONFIG,
            Type.STRING,
            "none",
            ValidString.of("required", "requested", "none"),
            Importance.LOW,
            "Whether the REST API's HTTPS listeners ask clients for a certificate: "
            "<code>required</code> refuses a client without a certificate the truststore "
            "trusts, <code>requested</code> asks for one but serves clients without one, "
            "<code>none</code> does not ask.",
        )
        .define(
            "ssl.protocol",
            Type.STRING,
            "TLSv1.3",
            ValidString.of("TLS", "TLSv1.2", "TLSv1.3"),
            Importance.MEDIUM,
            "The highest TLS version to use: TLSv1.3 (or TLS) allows TLS 1.3 and below, "
            "TLSv1.2 caps at TLS 1.2.",
        )
        .define(
            "ssl.enabled.protocols",
            Type.LIST,
            "TLSv1.2,TLSv1.3",
            None,
            Importance.MEDIUM,
            "The TLS versions a connection may use (TLSv1.2, TLSv1.3).",
        )
        .define(
            "ssl.cipher.suites",
            Type.LIST,
            None,
            None,
            Importance.LOW,
            "TLS 1.2 cipher suites, by their OpenSSL names (e.g. ECDHE-RSA-AES128-GCM-SHA256); "
            "unset: OpenSSL's secure defaults. TLS 1.3 suites are always enabled.",
        )
        .define(
            "ssl.keystore.type",
            Type.STRING,
            "JKS",
            None,
            Importance.MEDIUM,
            f"The format of the key store: {_STORE_TYPES}.",
        )
        .define(
            "ssl.keystore.location",
            Type.STRING,
            None,
            None,
            Importance.HIGH,
            "The file holding this side's private key and certificate chain.",
        )
        .define(
            "ssl.keystore.password",
            Type.PASSWORD,
            None,
            None,
            Importance.HIGH,
            "The password of a PKCS12 key store.",
        )
        .define(
            "ssl.key.password",
            Type.PASSWORD,
            None,
            None,
            Importance.HIGH,
            "The password of an encrypted PEM private key.",
        )
        .define(
            "ssl.keystore.key",
            Type.PASSWORD,
            None,
            None,
            Importance.HIGH,
            "The private key itself, as PEM (with ssl.keystore.certificate.chain), instead of "
            "a file.",
        )
        .define(
            "ssl.keystore.certificate.chain",
            Type.PASSWORD,
            None,
            None,
            Importance.HIGH,
            "The certificate chain of ssl.keystore.key, as PEM.",
        )
        .define(
            "ssl.truststore.type",
            Type.STRING,
            "JKS",
            None,
            Importance.MEDIUM,
            f"The format of the trust store: {_STORE_TYPES}.",
        )
        .define(
            "ssl.truststore.location",
            Type.STRING,
            None,
            None,
            Importance.HIGH,
            "The file holding the certificates of the authorities to trust; unset: the system's.",
        )
        .define(
            "ssl.truststore.password",
            Type.PASSWORD,
            None,
            None,
            Importance.HIGH,
            "The password of a PKCS12 trust store.",
        )
        .define(
            "ssl.truststore.certificates",
            Type.PASSWORD,
            None,
            None,
            Importance.HIGH,
            "The trusted certificates themselves, as PEM, instead of a file.",
        )
        .define(
            "ssl.endpoint.identification.algorithm",
            Type.STRING,
            "https",
            None,
            Importance.LOW,
            "<code>https</code> checks that the server's certificate names the host connected "
            "to; empty turns the check off.",
        )
        .define(
            "ssl.keymanager.algorithm",
            Type.STRING,
            "SunX509",
            None,
            Importance.LOW,
            "Accepted for compatibility with Kafka worker files and ignored (a JVM setting).",
        )
        .define(
            "ssl.trustmanager.algorithm",
            Type.STRING,
            "PKIX",
            None,
            Importance.LOW,
            "Accepted for compatibility with Kafka worker files and ignored (a JVM setting).",
        )
        .define(
            "ssl.secure.random.implementation",
            Type.STRING,
            None,
            None,
            Importance.LOW,
            "Accepted for compatibility with Kafka worker files and ignored (a JVM setting).",
        )
        .define(
            "ssl.provider",
            Type.STRING,
            None,
            None,
            Importance.LOW,
            "Accepted for compatibility with Kafka worker files and ignored (a JVM setting).",
        )
    )


#: The TLS keys alone, for parsing ``listeners.https.``-prefixed settings.
SSL_CONFIG_DEF: ConfigDef = add_security_configs(ConfigDef())


def rest_ssl_settings(
    originals: Mapping[str, Any], values: Mapping[str, Any], prefix: str = LISTENERS_HTTPS_PREFIX
) -> dict[str, Any]:
    """The TLS settings of the REST API's HTTPS listeners (and of forwarding to the leader).

    As Kafka: when any key starts with ``listeners.https.``, those keys alone (prefix
    stripped, the others at their defaults); otherwise the worker's unprefixed ``ssl.*`` values.

    Args:
        originals: the worker properties as given.
        values: the parsed worker values.
        prefix: ``listeners.https.``, or ``admin.listeners.https.`` for the admin listeners.
    """
    prefixed = {
        k[len(prefix) :]: v
        for k, v in originals.items()
        if k.startswith(prefix) and len(k) > len(prefix)
    }
    names = SSL_CONFIG_DEF.names()
    if prefixed:
        return dict(SSL_CONFIG_DEF.parse({k: v for k, v in prefixed.items() if k in names}))
    return {k: values.get(k) for k in names}


def client_security_settings(originals: Mapping[str, Any]) -> dict[str, Any]:
    """The worker's unprefixed Kafka client security keys, as given.

    What Kafka gives the worker's admin clients and the clients of the internal topics:
    ``security.protocol``, with the ``ssl.*`` keys when it is SSL or SASL_SSL and the
    ``sasl.*`` keys when it is SASL_PLAINTEXT or SASL_SSL (a plaintext client ignores them,
    and ``ssl.*`` keys meant for the REST API alone stay there).
    """
    protocol = str(originals.get(SECURITY_PROTOCOL_CONFIG, "PLAINTEXT")).strip().upper()
    if protocol == "PLAINTEXT":
        return {}
    wanted = tuple(p for p in CLIENT_SECURITY_PREFIXES if p.rstrip(".").upper() in protocol)
    return {SECURITY_PROTOCOL_CONFIG: originals[SECURITY_PROTOCOL_CONFIG]} | {
        k: v for k, v in originals.items() if k.startswith(wanted) and k not in _REST_ONLY
    }
