"""The embedded broker behind a TLS listener, with a certificate made for the occasion.

Tansu 0.6.0 (the embedded broker) accepts ``--cert`` and ``--key`` but keeps serving plain TCP
(its ``--cert`` and ``--key`` even exclude each other, and a missing file is not noticed), so a
TLS client's ClientHello reads to it as a Kafka frame of some 369 MB that never arrives: the
handshake hangs. :class:`TlsKafka` therefore starts the broker on a private port, advertising
the port of a :class:`~harness.providers._tls_proxy.TlsProxy` that terminates TLS in front of
it: clients bootstrap through the proxy and are sent back to it by the metadata, so every
connection is TLS.
"""

from __future__ import annotations

import ssl
import tempfile
from pathlib import Path

from typing_extensions import Self, override

from cdk.kafka import EmbeddedKafka, KafkaProvider
from harness.providers._certs import CertificateAuthority
from harness.providers._tls_proxy import TlsProxy

__all__ = ["TlsKafka"]


class TlsKafka(KafkaProvider):
    """The embedded broker reached over TLS only (``security.protocol=SSL``).

    Example::

        with TlsKafka() as kafka:
            producer = new_producer({"bootstrap.servers": kafka.bootstrap_servers,
                                     **kafka.client_config()})

    Args:
        authority: the certificate authority signing the broker's certificate; a new one by
            default.
        directory: where the CA and client files are written; a temporary directory (removed on
            stop) by default.
        client_auth: require clients to present a certificate the authority signed (mutual
            TLS); :meth:`client_config` then names the client's key store.
        broker_options: keyword arguments for the :class:`~cdk.kafka.EmbeddedKafka` behind it.
    """

    name = "embedded-tls"

    #: The password of the client key store written for mutual TLS.
    CLIENT_STORE_PASSWORD = "cdk-test-client"

    def __init__(
        self,
        *,
        authority: CertificateAuthority | None = None,
        directory: Path | None = None,
        client_auth: bool = False,
        **broker_options: object,
    ) -> None:
        self.authority = authority or CertificateAuthority()
        self._own_dir = directory is None
        self.directory = Path(directory or tempfile.mkdtemp(prefix="cdk-tls-kafka-"))
        self.client_auth = client_auth
        self._broker_options = broker_options
        self.broker: EmbeddedKafka | None = None
        self.proxy: TlsProxy | None = None
        self.ca_file = self.authority.write_ca(self.directory / "ca.pem")
        self.client_keystore: Path | None = None
        if client_auth:
            client = self.authority.issue("kafka-client")
            self.client_keystore = client.write_pkcs12(
                self.directory / "client.p12", self.CLIENT_STORE_PASSWORD
            )

    def _server_context(self) -> ssl.SSLContext:
        from cdk._keystores import KeyMaterial, load_into_context

        issued = self.authority.issue("kafka-broker")
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        load_into_context(context, KeyMaterial(issued.key_pem(), issued.cert_pem))
        if self.client_auth:
            context.verify_mode = ssl.CERT_REQUIRED
            context.load_verify_locations(cadata=self.authority.ca_pem.decode("ascii"))
        return context

    @property
    @override
    def bootstrap_servers(self) -> str:
        if self.proxy is None or self.broker is None:
            raise self._not_started()
        return f"127.0.0.1:{self.proxy.port}"

    @property
    @override
    def running(self) -> bool:
        return self.broker is not None and self.broker.running

    @property
    def pid(self) -> int | None:
        """The broker's process id while it runs."""
        return self.broker.pid if self.broker is not None else None

    @override
    def client_config(self) -> dict[str, str]:
        """``security.protocol=SSL`` and the trust store (and key store with ``client_auth``)."""
        config = {
            "security.protocol": "SSL",
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(self.ca_file),
        }
        if self.client_keystore is not None:
            config.update(
                {
                    "ssl.keystore.type": "PKCS12",
                    "ssl.keystore.location": str(self.client_keystore),
                    "ssl.keystore.password": self.CLIENT_STORE_PASSWORD,
                }
            )
        return config

    @override
    def start(self) -> Self:
        if self.broker is not None:
            return self
        from cdk.kafka import check_connection
        from cdk.kafka._clients import new_admin

        self.proxy = TlsProxy(self._server_context())
        try:
            self.broker = EmbeddedKafka(
                advertised_port=self.proxy.port,
                **self._broker_options,  # type: ignore[arg-type]
            ).start()
            host, port = self.broker.listening_address.rsplit(":", 1)
            self.proxy.target = (host, int(port))
            self.proxy.start()
            admin = new_admin({"bootstrap.servers": self.bootstrap_servers, **self.client_config()})
            check_connection(admin, timeout=30)
        except BaseException:
            self.stop()
            raise
        return self

    @override
    def stop(self) -> None:
        proxy, self.proxy = self.proxy, None
        broker, self.broker = self.broker, None
        try:
            if proxy is not None:
                proxy.stop()
        finally:
            if broker is not None:
                broker.stop()
            if self._own_dir:
                import shutil

                shutil.rmtree(self.directory, ignore_errors=True)

    def __repr__(self) -> str:
        where = self.bootstrap_servers if self.proxy is not None else "not started"
        return f"TlsKafka({where})"
