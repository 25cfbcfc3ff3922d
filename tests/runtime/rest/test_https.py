"""The REST API over HTTPS: Kafka Connect's listener keys, client certificates, advertised URLs."""

from __future__ import annotations

import logging
import ssl

import httpx
import pytest

from cdk.errors import ConfigException
from cdk.runtime.standalone._worker import EmbeddedWorker
from tests._tls import KEY_PASSWORD, STORE_PASSWORD, TlsFiles
from tests.runtime.rest.test_rest import worker_props
from tests.runtime.standalone.test_herder import TinySourceConnector


def https_props(bootstrap: str, tls: TlsFiles, **extra: str) -> dict[str, str]:
    """An HTTPS listener with a PKCS12 key store, under Kafka's listeners.https. prefix."""
    return worker_props(
        bootstrap,
        **{
            "listeners": "https://127.0.0.1:0",
            "listeners.https.ssl.keystore.type": "PKCS12",
            "listeners.https.ssl.keystore.location": str(tls.server_p12),
            "listeners.https.ssl.keystore.password": STORE_PASSWORD,
            "listeners.https.ssl.truststore.type": "PEM",
            "listeners.https.ssl.truststore.location": str(tls.ca_pem),
            **extra,
        },
    )


def get(url: str, context: ssl.SSLContext | bool, **kwargs: object) -> httpx.Response:
    with httpx.Client(verify=context, timeout=10) as http:
        return http.get(url, **kwargs)  # type: ignore[arg-type]


def test_https_and_http_listeners_side_by_side(kafka_bootstrap: str, tls_files: TlsFiles) -> None:
    props = https_props(
        kafka_bootstrap, tls_files, listeners="http://127.0.0.1:0,https://127.0.0.1:0"
    )
    with EmbeddedWorker(props, extra_plugins=[TinySourceConnector]) as worker:
        assert worker.rest is not None
        http_url, https_url = worker.rest.urls
        assert http_url.startswith("http://")
        assert https_url.startswith("https://")
        # Kafka's rule: with both, the HTTP listener is the one advertised
        assert worker.rest_url == http_url
        assert get(f"{https_url}/connectors", tls_files.client_context()).json() == []
        assert get(f"{http_url}/connectors", False).json() == []
        # the certificate is checked: a client that does not trust the authority is refused
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            get(f"{https_url}/connectors", ssl.create_default_context())
        # plain HTTP to the HTTPS port gets no answer, and the listener keeps serving
        with pytest.raises(httpx.TransportError):
            get(https_url.replace("https:", "http:") + "/connectors", False)
        assert get(f"{https_url}/", tls_files.client_context()).status_code == 200


def test_pem_key_store_through_the_unprefixed_ssl_keys(
    kafka_bootstrap: str, tls_files: TlsFiles
) -> None:
    """No listeners.https. key: the ssl.* keys serve (Kafka's fallback); an encrypted PEM key."""
    props = worker_props(
        kafka_bootstrap,
        **{
            "listeners": "https://127.0.0.1:0",
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(tls_files.server_pem),
            "ssl.key.password": KEY_PASSWORD,
        },
    )
    with EmbeddedWorker(props) as worker:
        assert worker.rest_url is not None
        assert worker.rest_url.startswith("https://127.0.0.1:")
        assert get(f"{worker.rest_url}/", tls_files.client_context()).status_code == 200


@pytest.mark.parametrize("mode", ["required", "requested"])
def test_client_certificates(kafka_bootstrap: str, tls_files: TlsFiles, mode: str) -> None:
    props = https_props(kafka_bootstrap, tls_files, **{"listeners.https.ssl.client.auth": mode})
    with EmbeddedWorker(props) as worker:
        url = f"{worker.rest_url}/connectors"
        assert get(url, tls_files.client_context(certificate=True)).json() == []
        if mode == "required":
            with pytest.raises(httpx.TransportError):
                get(url, tls_files.client_context())
        else:
            assert get(url, tls_files.client_context()).json() == []


def test_a_certificate_from_another_authority_is_refused(
    kafka_bootstrap: str, tls_files: TlsFiles
) -> None:
    from cryptography.hazmat.primitives.serialization import (
        Encoding,
        NoEncryption,
        PrivateFormat,
        pkcs12,
    )

    props = https_props(
        kafka_bootstrap, tls_files, **{"listeners.https.ssl.client.auth": "required"}
    )
    loaded = pkcs12.load_pkcs12(tls_files.other_client_p12.read_bytes(), STORE_PASSWORD.encode())
    assert loaded.key is not None
    assert loaded.cert is not None
    stranger_pem = tls_files.directory / "stranger-combined.pem"
    stranger_pem.write_bytes(
        loaded.key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
        + loaded.cert.certificate.public_bytes(Encoding.PEM)
    )
    context = tls_files.client_context()
    context.load_cert_chain(str(stranger_pem))
    with EmbeddedWorker(props) as worker, pytest.raises(httpx.TransportError):
        get(f"{worker.rest_url}/connectors", context)


def test_basic_auth_over_https(kafka_bootstrap: str, tls_files: TlsFiles) -> None:
    props = https_props(
        kafka_bootstrap,
        tls_files,
        **{"rest.basic.auth.user": "admin", "rest.basic.auth.password": "over-tls-3f9a"},
    )
    with EmbeddedWorker(props) as worker:
        url = f"{worker.rest_url}/connectors"
        assert get(url, tls_files.client_context()).status_code == 401
        ok = get(url, tls_files.client_context(), auth=("admin", "over-tls-3f9a"))
        assert ok.status_code == 200
        assert ok.json() == []


def test_advertised_url(kafka_bootstrap: str, tls_files: TlsFiles) -> None:
    props = https_props(
        kafka_bootstrap,
        tls_files,
        listeners="http://127.0.0.1:0,https://127.0.0.1:0",
        **{
            "rest.advertised.listener": "https",
            "rest.advertised.host.name": "connect-1.example.internal",
            "rest.advertised.port": "9443",
        },
    )
    with EmbeddedWorker(props) as worker:
        assert worker.rest_url == "https://connect-1.example.internal:9443"
        assert worker.herder.worker_id == "connect-1.example.internal:9443"
    props = https_props(kafka_bootstrap, tls_files, **{"rest.advertised.listener": "http"})
    with pytest.raises(ConfigException, match="no http listener"):
        EmbeddedWorker(props).start()


def test_key_store_errors_are_clear(kafka_bootstrap: str, tls_files: TlsFiles) -> None:
    jks = tls_files.directory / "server.jks"
    jks.write_bytes(b"\xfe\xed\xfe\xed" + b"\x00" * 60)
    props = https_props(
        kafka_bootstrap, tls_files, **{"listeners.https.ssl.keystore.location": str(jks)}
    )
    with pytest.raises(ConfigException) as error:
        EmbeddedWorker(props).start()
    text = str(error.value)
    assert "Java KeyStore (JKS)" in text
    assert "keytool -importkeystore" in text
    assert "-deststoretype PKCS12" in text
    assert "listeners.https.ssl.keystore.type=PKCS12" in text
    # an HTTPS listener without a key store names what to set
    bare = worker_props(kafka_bootstrap, listeners="https://127.0.0.1:0")
    with pytest.raises(ConfigException, match="needs this worker's key and certificate"):
        EmbeddedWorker(bare).start()
    # a wrong PKCS12 password names the file, never the password
    wrong = https_props(
        kafka_bootstrap, tls_files, **{"listeners.https.ssl.keystore.password": "nope-7c1d"}
    )
    with pytest.raises(ConfigException, match="cannot open the PKCS12 store") as error:
        EmbeddedWorker(wrong).start()
    assert "nope-7c1d" not in str(error.value)


@pytest.mark.parametrize(
    ("listener", "warned"),
    [("http://0.0.0.0:0", True), ("http://127.0.0.1:0", False), ("https://0.0.0.0:0", False)],
)
def test_basic_auth_on_plain_http_beyond_loopback_warns(
    kafka_bootstrap: str,
    tls_files: TlsFiles,
    caplog: pytest.LogCaptureFixture,
    listener: str,
    warned: bool,
) -> None:
    caplog.set_level(logging.WARNING, logger="cdk.runtime.rest")
    props = https_props(
        kafka_bootstrap,
        tls_files,
        listeners=listener,
        **{"rest.basic.auth.user": "admin", "rest.basic.auth.password": "warned-1a2b"},
    )
    with EmbeddedWorker(props):
        pass
    warnings = [r.getMessage() for r in caplog.records if "in clear" in r.getMessage()]
    assert bool(warnings) is warned, warnings
    assert not any("warned-1a2b" in r.getMessage() for r in caplog.records)
