"""The authenticators of cdk.http against a real local HTTP server."""

from __future__ import annotations

import base64
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from cdk.config import Password
from cdk.errors import ConnectException, RetriableException
from cdk.http import (
    ApiKeyAuth,
    BasicAuth,
    BearerTokenAuth,
    HttpClient,
    HttpFatalError,
    HttpRetriableError,
    OAuth2ClientCredentials,
    OAuth2RefreshToken,
)
from tests._wait import wait_until
from tests.http._server import Received, Reply, ScriptedServer

SECRET = "s3cr3t-client-secret"


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as running:
        running.always("/items", Reply(200, {"items": []}))
        yield running


def _tokens(*answers: dict[str, object]) -> Iterator[Reply]:
    for answer in answers:
        yield Reply(200, answer)


def _client(server: ScriptedServer, auth: httpx.Auth, **kwargs: Any) -> HttpClient:
    return HttpClient(server.url(), auth=auth, backoff_initial_s=0.01, **kwargs)


# ---------------------------------------------------------------------- static credentials
def test_bearer_token_header(server: ScriptedServer) -> None:
    with _client(server, BearerTokenAuth(Password("tok-1"))) as client:
        assert client.get("/items").json() == {"items": []}
    assert server.requests("/items")[0].headers["authorization"] == "Bearer tok-1"


def test_api_key_in_the_default_header(server: ScriptedServer) -> None:
    with _client(server, ApiKeyAuth("k-123")) as client:
        client.get("/items")
    assert server.requests("/items")[0].headers["x-api-key"] == "k-123"


def test_api_key_in_a_named_header(server: ScriptedServer) -> None:
    with _client(server, ApiKeyAuth("k-123", header="Api-Token")) as client:
        client.get("/items")
    received = server.requests("/items")[0]
    assert received.headers["api-token"] == "k-123"
    assert "x-api-key" not in received.headers


def test_api_key_in_a_query_parameter(server: ScriptedServer) -> None:
    with _client(server, ApiKeyAuth("k-123", query_param="api_key")) as client:
        client.get("/items", params={"page": "2"})
    received = server.requests("/items")[0]
    assert received.query == {"page": ["2"], "api_key": ["k-123"]}
    assert "x-api-key" not in received.headers


def test_api_key_takes_a_header_or_a_query_parameter_not_both() -> None:
    with pytest.raises(ValueError, match="not both"):
        ApiKeyAuth("k", header="X-Key", query_param="key")
    with pytest.raises(ValueError, match="non-empty"):
        ApiKeyAuth("")


def test_basic_auth_header(server: ScriptedServer) -> None:
    with _client(server, BasicAuth("ann", Password("pässword"))) as client:
        client.get("/items")
    header = server.requests("/items")[0].headers["authorization"]
    assert header == "Basic " + base64.b64encode("ann:pässword".encode()).decode()


def test_reprs_hide_the_secrets() -> None:
    auths = [
        BearerTokenAuth("tok-secret"),
        ApiKeyAuth("key-secret", query_param="api_key"),
        BasicAuth("ann", "pw-secret"),
        OAuth2ClientCredentials("https://auth.example.com/token", "cid", "cs-secret"),
        OAuth2RefreshToken("https://auth.example.com/token", "cid", "cs-secret", "rt-secret"),
    ]
    for auth in auths:
        text = repr(auth)
        assert "[hidden]" in text
        assert "secret" not in text.replace("client_secret", "")
    assert "cid" in repr(auths[3])


# ---------------------------------------------------------------------- OAuth2
def test_client_credentials_token_is_fetched_once_and_cached(server: ScriptedServer) -> None:
    server.reply("/token", Reply(200, {"access_token": "at-1", "expires_in": 3600}))
    auth = OAuth2ClientCredentials(server.url("/token"), "cid", SECRET, scopes=["read", "write"])
    with _client(server, auth) as client:
        for _ in range(3):
            client.get("/items")
    (token_request,) = server.requests("/token")
    assert token_request.method == "POST"
    assert token_request.form() == {
        "grant_type": "client_credentials",
        "client_id": "cid",
        "client_secret": SECRET,
        "scope": "read write",
    }
    assert [r.headers["authorization"] for r in server.requests("/items")] == ["Bearer at-1"] * 3


def test_client_credentials_in_a_basic_header(server: ScriptedServer) -> None:
    server.reply("/token", Reply(200, {"access_token": "at-1"}))
    auth = OAuth2ClientCredentials(server.url("/token"), "cid", SECRET, client_auth="basic")
    with _client(server, auth) as client:
        client.get("/items")
    (token_request,) = server.requests("/token")
    assert token_request.form() == {"grant_type": "client_credentials"}
    expected = base64.b64encode(f"cid:{SECRET}".encode()).decode()
    assert token_request.headers["authorization"] == f"Basic {expected}"


def test_token_is_renewed_before_it_expires(server: ScriptedServer) -> None:
    # expires_in 1 s, margin 0.7 s: renewed after half the lifetime (0.5 s), before expiry.
    counter = iter(range(1, 100))

    def token(_: Received) -> Reply:
        return Reply(200, {"access_token": f"at-{next(counter)}", "expires_in": 1})

    server.always("/token", token)
    auth = OAuth2ClientCredentials(server.url("/token"), "cid", SECRET, refresh_margin_s=0.7)
    with _client(server, auth) as client:
        client.get("/items")
        client.get("/items")
        assert len(server.requests("/token")) == 1

        def renewed() -> bool:
            client.get("/items")
            return len(server.requests("/token")) >= 2

        wait_until(renewed, timeout=3, interval=0.01, message="a second token request")
    first, second = server.requests("/token")[:2]
    assert 0.5 <= second.at - first.at < 1.0
    used = [r.headers["authorization"] for r in server.requests("/items")]
    assert used[:2] == ["Bearer at-1", "Bearer at-1"]
    assert used[-1] == "Bearer at-2"


def test_a_401_renews_the_token_once_and_retries_once(server: ScriptedServer) -> None:
    server.reply("/token", *_tokens({"access_token": "at-1"}, {"access_token": "at-2"}))
    server.reply("/api", Reply(401, "expired"), Reply(200, {"ok": True}))
    auth = OAuth2ClientCredentials(server.url("/token"), "cid", SECRET)
    with _client(server, auth) as client:
        assert client.get("/api").json() == {"ok": True}
    assert [r.headers["authorization"] for r in server.requests("/api")] == [
        "Bearer at-1",
        "Bearer at-2",
    ]
    assert len(server.requests("/token")) == 2


def test_a_second_401_is_fatal_after_one_renewal(server: ScriptedServer) -> None:
    server.reply("/token", *_tokens({"access_token": "at-1"}, {"access_token": "at-2"}))
    server.always("/api", Reply(401, "no"))
    auth = OAuth2ClientCredentials(server.url("/token"), "cid", SECRET)
    with _client(server, auth, max_retries=3) as client, pytest.raises(HttpFatalError) as info:
        client.get("/api")
    assert not isinstance(info.value, RetriableException)
    assert info.value.status == 401
    assert len(server.requests("/api")) == 2
    assert len(server.requests("/token")) == 2


def test_a_rotated_refresh_token_replaces_the_old_one(server: ScriptedServer) -> None:
    server.reply(
        "/token",
        *_tokens(
            {"access_token": "at-1", "refresh_token": "rt-2", "expires_in": 3600},
            {"access_token": "at-2", "expires_in": 3600},
        ),
    )
    server.reply("/api", Reply(401), Reply(200, {"ok": True}))
    rotated: list[str] = []
    auth = OAuth2RefreshToken(
        server.url("/token"), "cid", SECRET, Password("rt-1"), on_rotate=rotated.append
    )
    with _client(server, auth) as client:
        client.get("/api")
    first, second = (r.form() for r in server.requests("/token"))
    assert first["grant_type"] == second["grant_type"] == "refresh_token"
    assert first["refresh_token"] == "rt-1"
    assert second["refresh_token"] == "rt-2"
    assert rotated == ["rt-2"]
    assert "rt-2" not in repr(auth)


def test_refresh_token_grant_of_a_public_client(server: ScriptedServer) -> None:
    server.reply("/token", Reply(200, {"access_token": "at-1"}))
    with _client(server, OAuth2RefreshToken(server.url("/token"), "cid", None, "rt-1")) as client:
        client.get("/items")
    assert server.requests("/token")[0].form() == {
        "grant_type": "refresh_token",
        "refresh_token": "rt-1",
        "client_id": "cid",
    }


def test_token_endpoint_400_is_fatal_and_names_url_and_code(server: ScriptedServer) -> None:
    server.always(
        "/token",
        Reply(
            400, {"error": "invalid_client", "error_description": "Client authentication failed"}
        ),
    )
    auth = OAuth2ClientCredentials(server.url("/token"), "cid", SECRET)
    with _client(server, auth, max_retries=3) as client, pytest.raises(HttpFatalError) as info:
        client.get("/items")
    error = info.value
    assert isinstance(error, ConnectException)
    assert not isinstance(error, RetriableException)
    assert server.url("/token") in str(error)
    assert "invalid_client" in str(error)
    assert SECRET not in str(error)
    assert SECRET not in repr(error.args)
    assert (error.status, error.error_code, error.method) == (400, "invalid_client", "POST")
    assert len(server.requests("/token")) == 1
    assert server.requests("/items") == []


def test_token_endpoint_echoing_the_secret_is_scrubbed(server: ScriptedServer) -> None:
    server.always("/token", Reply(401, f"bad client_secret={SECRET}"))
    auth = OAuth2ClientCredentials(server.url("/token"), "cid", SECRET)
    with _client(server, auth) as client, pytest.raises(HttpFatalError) as info:
        client.get("/items")
    assert SECRET not in str(info.value)
    assert "[hidden]" in str(info.value)


def test_token_endpoint_5xx_is_retriable(server: ScriptedServer) -> None:
    server.reply("/token", Reply(503, "busy"), Reply(200, {"access_token": "at-1"}))
    auth = OAuth2ClientCredentials(server.url("/token"), "cid", SECRET)
    with _client(server, auth, max_retries=2) as client:
        client.get("/items")  # the client retries the token failure like any retriable one
    assert len(server.requests("/token")) == 2

    server.always("/token", Reply(500, "down"))
    auth = OAuth2ClientCredentials(server.url("/token"), "cid", SECRET)
    with _client(server, auth, max_retries=1) as client, pytest.raises(HttpRetriableError) as info:
        client.get("/items")
    assert server.url("/token") in str(info.value)
    assert "500" in str(info.value)
    assert SECRET not in str(info.value)


def test_concurrent_requests_fetch_the_token_once(server: ScriptedServer) -> None:
    release = threading.Event()
    server.reply("/token", Reply(200, {"access_token": "at-1", "expires_in": 3600}, block=release))
    auth = OAuth2ClientCredentials(server.url("/token"), "cid", SECRET)
    start = threading.Barrier(6)
    errors: list[ConnectException] = []

    def call(client: HttpClient) -> None:
        start.wait(5)
        try:
            client.get("/items")
        except ConnectException as exc:
            errors.append(exc)

    with _client(server, auth) as client:
        threads = [threading.Thread(target=call, args=(client,)) for _ in range(6)]
        for thread in threads:
            thread.start()
        try:
            server.wait_for(1, "/token")
        finally:
            release.set()
            for thread in threads:
                thread.join(5)
    assert errors == []
    assert len(server.requests("/token")) == 1
    assert len(server.requests("/items")) == 6


def test_expiry_uses_the_clock_it_is_given(server: ScriptedServer) -> None:
    now = [1000.0]
    server.always("/token", Reply(200, {"access_token": "at", "expires_in": 100}))
    auth = OAuth2ClientCredentials(
        server.url("/token"), "cid", SECRET, refresh_margin_s=10, clock=lambda: now[0]
    )
    with _client(server, auth) as client:
        client.get("/items")
        now[0] += 89.9
        client.get("/items")
        assert len(server.requests("/token")) == 1
        now[0] += 0.2  # 90.1 s after the fetch: within the 10 s margin
        client.get("/items")
    assert len(server.requests("/token")) == 2
