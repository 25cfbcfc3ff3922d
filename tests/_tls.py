"""TLS material for the tests: one throw-away authority and its certificates, made once per session.

The passwords are fixed test values that the secrets tests look for in logs and answers.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path

from harness.providers.tls import CertificateAuthority

#: The passwords of the test stores (never to appear in a log or an answer).
STORE_PASSWORD = "store-pass-8c1e"
KEY_PASSWORD = "key-pass-5d2f"


@dataclass(frozen=True)
class TlsFiles:
    """The files of a test authority, a server (``localhost``/``127.0.0.1``) and a client."""

    directory: Path
    ca_pem: Path
    ca_p12: Path
    server_p12: Path
    server_pem: Path  # key (encrypted with KEY_PASSWORD) and chain in one file
    client_p12: Path
    client_pem: Path  # key (encrypted with KEY_PASSWORD) and chain in one file
    other_client_p12: Path  # signed by another authority: not trusted

    def client_context(self, *, certificate: bool = False) -> ssl.SSLContext:
        """A client context trusting the authority (presenting the client certificate)."""
        context = ssl.create_default_context(cafile=str(self.ca_pem))
        if certificate:
            context.load_cert_chain(str(self.client_pem), password=KEY_PASSWORD)
        return context


def make_tls_files(directory: Path) -> TlsFiles:
    """Make the authority and certificates and write them into ``directory``."""
    ca = CertificateAuthority()
    server = ca.issue("server")
    client = ca.issue("client")
    stranger = CertificateAuthority("another CA").issue("stranger")
    return TlsFiles(
        directory=directory,
        ca_pem=ca.write_ca(directory / "ca.pem"),
        ca_p12=ca.write_truststore_pkcs12(directory / "ca.p12", STORE_PASSWORD),
        server_p12=server.write_pkcs12(directory / "server.p12", STORE_PASSWORD),
        server_pem=server.write_keystore_pem(directory / "server.pem", password=KEY_PASSWORD),
        client_p12=client.write_pkcs12(directory / "client.p12", STORE_PASSWORD),
        client_pem=client.write_keystore_pem(directory / "client.pem", password=KEY_PASSWORD),
        other_client_p12=stranger.write_pkcs12(directory / "stranger.p12", STORE_PASSWORD),
    )
