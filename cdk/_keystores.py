"""Key and trust material in the forms Kafka's ``ssl.*`` settings name: PEM, PKCS12 and JKS.

Python's :mod:`ssl` (and librdkafka) read PEM; a PKCS12 store is opened with the
``cryptography`` library and turned into PEM in memory. A Java KeyStore (JKS) is refused with
an error that says how to convert it (``keytool -importkeystore``), since nothing outside the
JVM reads it. As Java does, a store declared ``JKS`` (Kafka's default type) whose file is in
fact PKCS12 is read as PKCS12.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import ssl
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cdk.config import Password
from cdk.errors import ConfigException

__all__ = [
    "KeyMaterial",
    "file_kind",
    "jks_message",
    "load_into_context",
    "read_key_material",
    "read_trust_pem",
]

_JKS_MAGIC = b"\xfe\xed\xfe\xed"
_JCEKS_MAGIC = b"\xce\xce\xce\xce"


@dataclass(frozen=True)
class KeyMaterial:
    """A private key and its certificate chain, as PEM.

    Attributes:
        key_pem: the private key (unencrypted PKCS8 PEM: keep it in memory only).
        chain_pem: the certificate, then its issuers.
    """

    key_pem: bytes
    chain_pem: bytes


def file_kind(path: str) -> str:
    """``PEM``, ``PKCS12`` or ``JKS`` by the file's first bytes.

    Raises:
        ConfigException: the file cannot be read (the message names it).
    """
    try:
        with open(path, "rb") as handle:
            head = handle.read(64)
    except OSError as exc:
        raise ConfigException(f"Cannot read {path}: {exc.strerror or exc}") from None
    if head.startswith((_JKS_MAGIC, _JCEKS_MAGIC)):
        return "JKS"
    if head.lstrip().startswith(b"-----BEGIN"):
        return "PEM"
    return "PKCS12"


def jks_message(key: str, path: str, password_key: str, store: str) -> str:
    """The error text for a Java KeyStore at ``path`` (``store`` is ``keystore``/``truststore``)."""
    return (
        f"{path} is a Java KeyStore (JKS), which only the JVM reads: convert it to PKCS12 with "
        f"'keytool -importkeystore -srckeystore {path} -srcstoretype JKS -destkeystore "
        f"{Path(path).with_suffix('.p12')} -deststoretype PKCS12', then set "
        f"{key.removesuffix('location')}type=PKCS12 (and {password_key}); PEM files "
        f"({key.removesuffix('location')}type=PEM) work too"
        + (
            " ('keytool -exportcert -rfc' writes a certificate as PEM)"
            if store == "truststore"
            else ""
        )
    )


def _effective_type(key: str, declared: str | None, path: str, password_key: str) -> str:
    """The store type to read ``path`` as: the declared one, or PKCS12 for a JKS-declared .p12."""
    kind = file_kind(path)
    store = "truststore" if "truststore" in key else "keystore"
    if kind == "JKS":
        raise ConfigException(key, path, jks_message(key, path, password_key, store))
    wanted = (declared or "JKS").strip().upper().replace("PKCS#12", "PKCS12")
    if wanted == "JKS":
        if kind == "PEM":
            raise ConfigException(
                key,
                path,
                f"the file is PEM but {key.removesuffix('location')}type is JKS (Kafka's "
                f"default): set {key.removesuffix('location')}type=PEM",
            )
        return "PKCS12"
    if wanted not in ("PEM", "PKCS12"):
        raise ConfigException(
            key.removesuffix("location") + "type", declared, "supported types: PEM, PKCS12"
        )
    if wanted != kind:
        raise ConfigException(
            key, path, f"{key.removesuffix('location')}type is {wanted} but the file is {kind}"
        )
    return wanted


def _secret(value: Any) -> str | None:
    if value is None:
        return None
    return value.value() if isinstance(value, Password) else str(value)


def _pkcs12(path: str, password: str | None, key: str) -> Any:
    try:
        from cryptography.hazmat.primitives.serialization import pkcs12
    except ImportError:  # pragma: no cover - cryptography is a dependency of the kit
        raise ConfigException(
            key, path, "reading PKCS12 needs the 'cryptography' package: pip install cryptography"
        ) from None
    data = Path(path).read_bytes()
    try:
        return pkcs12.load_pkcs12(data, password.encode() if password is not None else None)
    except ValueError as exc:
        raise ConfigException(
            key,
            path,
            f"cannot open the PKCS12 store (wrong password, or not PKCS12): {exc}",
        ) from None


def _pem_of(certificates: Any) -> bytes:
    from cryptography.hazmat.primitives.serialization import Encoding

    return b"".join(c.public_bytes(Encoding.PEM) for c in certificates)


def read_key_material(settings: dict[str, Any], prefix: str = "") -> KeyMaterial | None:
    """The key and chain the ``ssl.keystore.*`` settings name, or ``None`` when none is set.

    Supports ``ssl.keystore.type`` PEM (``ssl.keystore.location`` holding the key and chain,
    the key optionally encrypted with ``ssl.key.password``; or ``ssl.keystore.key`` and
    ``ssl.keystore.certificate.chain`` given inline) and PKCS12 (``ssl.keystore.location`` and
    ``ssl.keystore.password``).

    Args:
        settings: the ``ssl.*`` values (Password values allowed).
        prefix: the prefix the keys were given with, for messages (``listeners.https.``).

    Raises:
        ConfigException: the store cannot be read, is JKS, or its type does not match.
    """
    from cryptography.hazmat.primitives.serialization import (
        Encoding,
        NoEncryption,
        PrivateFormat,
        load_pem_private_key,
    )

    location = settings.get("ssl.keystore.location")
    inline_key = _secret(settings.get("ssl.keystore.key"))
    inline_chain = _secret(settings.get("ssl.keystore.certificate.chain"))
    key_password = _secret(settings.get("ssl.key.password"))
    if not location and not inline_key:
        return None
    loc_key = f"{prefix}ssl.keystore.location"
    if location:
        kind = _effective_type(
            loc_key,
            settings.get("ssl.keystore.type"),
            str(location),
            f"{prefix}ssl.keystore.password",
        )
        if kind == "PKCS12":
            store_password = _secret(settings.get("ssl.keystore.password"))
            loaded = _pkcs12(str(location), store_password, loc_key)
            if loaded.key is None or loaded.cert is None:
                raise ConfigException(loc_key, location, "the PKCS12 store holds no private key")
            key_pem = loaded.key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
            chain = [loaded.cert.certificate, *(c.certificate for c in loaded.additional_certs)]
            return KeyMaterial(key_pem, _pem_of(chain))
        text = Path(str(location)).read_bytes()
        key_block, chain_pem = _split_pem(text)
        where = loc_key
    else:
        if not inline_chain:
            raise ConfigException(
                f"{prefix}ssl.keystore.certificate.chain",
                None,
                f"is required with {prefix}ssl.keystore.key",
            )
        key_block, chain_pem = (inline_key or "").encode(), inline_chain.encode()
        where = f"{prefix}ssl.keystore.key"
    if not key_block:
        raise ConfigException(where, Password.HIDDEN, "holds no PEM private key")
    if not chain_pem:
        raise ConfigException(where, Password.HIDDEN, "holds no PEM certificate")
    try:
        private = load_pem_private_key(
            key_block, key_password.encode() if key_password is not None else None
        )
    except (ValueError, TypeError) as exc:
        raise ConfigException(
            where,
            Password.HIDDEN,
            f"cannot read the private key (is {prefix}ssl.key.password right?): {exc}",
        ) from None
    key_pem = private.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
    return KeyMaterial(key_pem, chain_pem)


def _split_pem(text: bytes) -> tuple[bytes, bytes]:
    """The private key block and the certificate blocks of a PEM file."""
    key_parts: list[bytes] = []
    cert_parts: list[bytes] = []
    current: list[bytes] | None = None
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped.startswith(b"-----BEGIN"):
            current = key_parts if b"PRIVATE KEY" in stripped else cert_parts
        if current is not None:
            current.append(line if line.endswith(b"\n") else line + b"\n")
        if stripped.startswith(b"-----END"):
            current = None
    return b"".join(key_parts), b"".join(cert_parts)


def read_trust_pem(settings: dict[str, Any], prefix: str = "") -> bytes | None:
    """The trusted certificates the ``ssl.truststore.*`` settings name, as PEM; ``None``: unset.

    Raises:
        ConfigException: the store cannot be read, is JKS, or its type does not match.
    """
    inline = _secret(settings.get("ssl.truststore.certificates"))
    if inline:
        return inline.encode()
    location = settings.get("ssl.truststore.location")
    if not location:
        return None
    loc_key = f"{prefix}ssl.truststore.location"
    kind = _effective_type(
        loc_key,
        settings.get("ssl.truststore.type"),
        str(location),
        f"{prefix}ssl.truststore.password",
    )
    if kind == "PEM":
        _key, certs = _split_pem(Path(str(location)).read_bytes())
        if not certs:
            raise ConfigException(loc_key, location, "holds no PEM certificate")
        return certs
    loaded = _pkcs12(str(location), _secret(settings.get("ssl.truststore.password")), loc_key)
    certificates = [c.certificate for c in loaded.additional_certs]
    if loaded.cert is not None:
        certificates.insert(0, loaded.cert.certificate)
    if not certificates:
        raise ConfigException(loc_key, location, "the PKCS12 store holds no certificate")
    return _pem_of(certificates)


@contextlib.contextmanager
def _private_file(data: bytes) -> Iterator[str]:
    """A file only this user can read, holding ``data``; removed when the block ends."""
    directory = tempfile.mkdtemp(prefix="cdk-tls-")
    path = os.path.join(directory, "material.pem")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        yield path
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)
        with contextlib.suppress(OSError):
            os.rmdir(directory)


def load_into_context(context: ssl.SSLContext, material: KeyMaterial) -> None:
    """Give ``context`` the key and chain; the key touches disk only encrypted, for a moment.

    :meth:`ssl.SSLContext.load_cert_chain` reads files only: the key is written encrypted
    with a one-time passphrase to a private temporary file, loaded, and the file removed.
    """
    from cryptography.hazmat.primitives.serialization import (
        BestAvailableEncryption,
        Encoding,
        PrivateFormat,
        load_pem_private_key,
    )

    passphrase = secrets.token_bytes(24)
    private = load_pem_private_key(material.key_pem, None)
    encrypted = private.private_bytes(
        Encoding.PEM, PrivateFormat.PKCS8, BestAvailableEncryption(passphrase)
    )
    with _private_file(material.chain_pem + encrypted) as path:
        try:
            context.load_cert_chain(path, password=passphrase)
        except ssl.SSLError as exc:
            raise ConfigException(
                f"The TLS key does not match its certificate, or the chain is invalid: {exc}"
            ) from None
