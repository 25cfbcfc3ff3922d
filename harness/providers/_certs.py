"""A throw-away certificate authority: TLS keys and certificates for tests, made in memory.

Keys are ECDSA P-256 (fast to make); certificates are valid for two days and name
``localhost`` and ``127.0.0.1`` by default, so clients that check host names accept them on
loopback. The files are written in the forms Kafka's ``ssl.*`` settings read: PEM (the key
optionally encrypted) and PKCS12.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["CertificateAuthority", "IssuedCertificate"]

_VALIDITY = dt.timedelta(days=2)


def _x509() -> Any:
    try:
        from cryptography import x509
    except ImportError as exc:  # pragma: no cover - a dependency of the kit
        raise ImportError(
            "Test certificates need the 'cryptography' package: pip install cryptography"
        ) from exc
    return x509


def _new_key() -> Any:
    from cryptography.hazmat.primitives.asymmetric import ec

    return ec.generate_private_key(ec.SECP256R1())


def _name(common_name: str) -> Any:
    x509 = _x509()
    from cryptography.x509.oid import NameOID

    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    path.chmod(0o600)
    return path


@dataclass(frozen=True)
class IssuedCertificate:
    """A key and the certificate the authority signed for it.

    Attributes:
        name: the certificate's common name.
        key: the private key (a ``cryptography`` key object).
        certificate: the certificate (a ``cryptography`` ``x509.Certificate``).
        authority: the authority's certificate (the rest of the chain).
    """

    name: str
    key: Any
    certificate: Any
    authority: Any

    @property
    def cert_pem(self) -> bytes:
        """The certificate, then the authority's, as PEM."""
        from cryptography.hazmat.primitives.serialization import Encoding

        chain: bytes = self.certificate.public_bytes(Encoding.PEM)
        return chain + bytes(self.authority.public_bytes(Encoding.PEM))

    def key_pem(self, password: str | None = None) -> bytes:
        """The private key as PKCS8 PEM, encrypted with ``password`` when given."""
        from cryptography.hazmat.primitives.serialization import (
            BestAvailableEncryption,
            Encoding,
            NoEncryption,
            PrivateFormat,
        )

        encryption: Any = (
            BestAvailableEncryption(password.encode()) if password is not None else NoEncryption()
        )
        data: bytes = self.key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, encryption)
        return data

    def write_pem(self, directory: Path, *, password: str | None = None) -> tuple[Path, Path]:
        """Write ``<name>.crt`` (the chain) and ``<name>.key`` (the key) into ``directory``."""
        directory = Path(directory)
        return (
            _write(directory / f"{self.name}.crt", self.cert_pem),
            _write(directory / f"{self.name}.key", self.key_pem(password)),
        )

    def write_keystore_pem(self, path: Path, *, password: str | None = None) -> Path:
        """One PEM file with the key and the chain (Kafka's ``ssl.keystore.type=PEM``)."""
        return _write(Path(path), self.key_pem(password) + self.cert_pem)

    def write_pkcs12(self, path: Path, password: str) -> Path:
        """A PKCS12 key store with the key, the certificate and the authority's."""
        from cryptography.hazmat.primitives.serialization import BestAvailableEncryption, pkcs12

        data = pkcs12.serialize_key_and_certificates(
            self.name.encode(),
            self.key,
            self.certificate,
            [self.authority],
            BestAvailableEncryption(password.encode()),
        )
        return _write(Path(path), data)


class CertificateAuthority:
    """A certificate authority made on the spot, to sign test servers' and clients' certificates.

    Example::

        ca = CertificateAuthority()
        server = ca.issue("broker")            # names localhost and 127.0.0.1
        ca.write_ca(tmp / "ca.pem")
        server.write_pkcs12(tmp / "broker.p12", "changeit")

    Args:
        name: the authority's common name.
    """

    def __init__(self, name: str = "connect-cdk test CA") -> None:
        x509 = _x509()
        from cryptography.hazmat.primitives import hashes

        self.name = name
        self.key = _new_key()
        now = dt.datetime.now(dt.timezone.utc)
        subject = _name(name)
        self.certificate = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(subject)
            .public_key(self.key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + _VALIDITY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(
                x509.SubjectKeyIdentifier.from_public_key(self.key.public_key()), critical=False
            )
            .sign(self.key, hashes.SHA256())
        )

    @property
    def ca_pem(self) -> bytes:
        """The authority's certificate as PEM (what a trust store holds)."""
        from cryptography.hazmat.primitives.serialization import Encoding

        data: bytes = self.certificate.public_bytes(Encoding.PEM)
        return data

    def write_ca(self, path: Path) -> Path:
        """Write the authority's certificate as PEM (``ssl.truststore.type=PEM``)."""
        return _write(Path(path), self.ca_pem)

    def write_truststore_pkcs12(self, path: Path, password: str) -> Path:
        """A PKCS12 trust store holding the authority's certificate."""
        from cryptography.hazmat.primitives.serialization import BestAvailableEncryption, pkcs12

        data = pkcs12.serialize_key_and_certificates(
            None, None, None, [self.certificate], BestAvailableEncryption(password.encode())
        )
        return _write(Path(path), data)

    def issue(
        self, name: str, *, hosts: tuple[str, ...] = ("localhost", "127.0.0.1")
    ) -> IssuedCertificate:
        """A key and a certificate for ``name``, valid for servers and clients on ``hosts``."""
        x509 = _x509()
        from cryptography.hazmat.primitives import hashes
        from cryptography.x509.oid import ExtendedKeyUsageOID

        key = _new_key()
        now = dt.datetime.now(dt.timezone.utc)
        alternative: list[Any] = []
        for host in hosts:
            try:
                alternative.append(x509.IPAddress(ipaddress.ip_address(host)))
            except ValueError:
                alternative.append(x509.DNSName(host))
        certificate = (
            x509.CertificateBuilder()
            .subject_name(_name(name))
            .issuer_name(self.certificate.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + _VALIDITY)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.SubjectAlternativeName(alternative), critical=False)
            .add_extension(
                x509.ExtendedKeyUsage(
                    [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
                ),
                critical=False,
            )
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self.key.public_key()),
                critical=False,
            )
            .sign(self.key, hashes.SHA256())
        )
        return IssuedCertificate(name, key, certificate, self.certificate)
