"""TLS for the REST API: the HTTPS listeners' context and the one forwarding to the leader uses.

Both are made from Kafka's ``ssl.*`` settings (where they are read from:
:func:`~cdk.runtime._ssl_config.rest_ssl_settings`): the key store is this worker's certificate
(served by the listeners, presented to a leader that asks for one), the trust store the
authorities whose certificates are accepted (of clients when ``ssl.client.auth`` asks for them,
of the leader).
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from typing import Any

from cdk._keystores import load_into_context, read_key_material, read_trust_pem
from cdk.errors import ConfigException

__all__ = ["client_context", "server_context"]

_VERSIONS = {
    "TLSV1.2": ssl.TLSVersion.TLSv1_2,
    "TLSV1.3": ssl.TLSVersion.TLSv1_3,
}
_CLIENT_AUTH = {
    "none": ssl.CERT_NONE,
    "requested": ssl.CERT_OPTIONAL,
    "required": ssl.CERT_REQUIRED,
}


def _versions(context: ssl.SSLContext, settings: Mapping[str, Any], prefix: str) -> None:
    enabled = [str(v).strip() for v in settings.get("ssl.enabled.protocols") or [] if str(v)]
    versions = []
    for name in enabled or ["TLSv1.2", "TLSv1.3"]:
        version = _VERSIONS.get(name.upper())
        if version is None:
            raise ConfigException(
                f"{prefix}ssl.enabled.protocols",
                ",".join(enabled),
                "supported versions: TLSv1.2, TLSv1.3",
            )
        versions.append(version)
    cap = ssl.TLSVersion.TLSv1_2 if settings.get("ssl.protocol") == "TLSv1.2" else None
    highest = max(versions)
    if cap is not None and highest > cap:
        highest = cap
    lowest = min(versions)
    if lowest > highest:
        raise ConfigException(
            f"{prefix}ssl.enabled.protocols",
            ",".join(enabled),
            f"no enabled version is allowed by {prefix}ssl.protocol={settings.get('ssl.protocol')}",
        )
    context.minimum_version = lowest
    context.maximum_version = highest
    ciphers = settings.get("ssl.cipher.suites")
    if ciphers:
        try:
            context.set_ciphers(":".join(str(c).strip() for c in ciphers))
        except ssl.SSLError:
            raise ConfigException(
                f"{prefix}ssl.cipher.suites",
                ",".join(ciphers),
                "no cipher suite OpenSSL knows (use OpenSSL names, e.g. "
                "ECDHE-RSA-AES128-GCM-SHA256)",
            ) from None


def _trust(
    context: ssl.SSLContext, settings: Mapping[str, Any], prefix: str, purpose: ssl.Purpose
) -> None:
    """Trust the trust store's certificates, or the system's when none is set."""
    pem = read_trust_pem(dict(settings), prefix)
    if pem is None:
        context.load_default_certs(purpose)
        return
    try:
        context.load_verify_locations(cadata=pem.decode("ascii"))
    except (ssl.SSLError, ValueError) as exc:
        raise ConfigException(
            f"{prefix}ssl.truststore.location", None, f"holds no usable certificate: {exc}"
        ) from None


def server_context(settings: Mapping[str, Any], prefix: str = "") -> ssl.SSLContext:
    """The TLS context of the HTTPS listeners.

    Args:
        settings: the ``ssl.*`` values and ``ssl.client.auth``.
        prefix: the prefix the settings were given with, for messages.

    Raises:
        ConfigException: no key store is set, a store cannot be read (JKS names the
            conversion), or a setting is invalid; the message names the key.
    """
    material = read_key_material(dict(settings), prefix)
    if material is None:
        raise ConfigException(
            f"An HTTPS listener needs this worker's key and certificate: set "
            f"{prefix}ssl.keystore.location (a PKCS12 file with {prefix}ssl.keystore.password, "
            f"or a PEM file with {prefix}ssl.keystore.type=PEM)"
        )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    _versions(context, settings, prefix)
    load_into_context(context, material)
    auth = str(settings.get("ssl.client.auth") or "none").strip().lower()
    mode = _CLIENT_AUTH.get(auth)
    if mode is None:
        raise ConfigException(
            f"{prefix}ssl.client.auth", auth, "String must be one of: required, requested, none"
        )
    context.verify_mode = mode
    if mode != ssl.CERT_NONE:
        _trust(context, settings, prefix, ssl.Purpose.CLIENT_AUTH)
    return context


def client_context(settings: Mapping[str, Any], prefix: str = "") -> ssl.SSLContext:
    """The TLS context for calling another worker's HTTPS listener (forwarding to the leader).

    It trusts the trust store's authorities (the system's when unset), checks the host name
    unless ``ssl.endpoint.identification.algorithm`` is empty, and presents the key store's
    certificate when one is set (for a leader whose ``ssl.client.auth`` asks for it).

    Raises:
        ConfigException: a store cannot be read or a setting is invalid.
    """
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    _versions(context, settings, prefix)
    algorithm = settings.get("ssl.endpoint.identification.algorithm")
    context.check_hostname = bool(algorithm and str(algorithm).strip())
    context.verify_mode = ssl.CERT_REQUIRED
    _trust(context, settings, prefix, ssl.Purpose.SERVER_AUTH)
    material = read_key_material(dict(settings), prefix)
    if material is not None:
        load_into_context(context, material)
    return context
