"""The http.* configuration keys and the client built from them."""

from __future__ import annotations

import base64
from collections.abc import Iterator

import pytest

import cdk.http
from cdk.config import NO_DEFAULT, AbstractConfig, ConfigDef, Importance, Password, Type
from cdk.errors import ConfigException
from cdk.http import (
    HttpClient,
    http_client_from_config,
    http_config_def,
    http_config_problems,
    validate_http_config,
)
from tests.http._server import Reply, ScriptedServer

BASE = {"http.base.url": "https://api.example.com/v1"}

SECRET_KEYS = {
    "http.auth.token",
    "http.auth.api.key",
    "http.auth.password",
    "http.auth.oauth2.client.secret",
    "http.auth.oauth2.refresh.token",
}


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as running:
        running.always("/v1/items", Reply(200, {"ok": True}))
        yield running


def test_block_a_exports() -> None:
    assert {
        "BearerTokenAuth",
        "ApiKeyAuth",
        "BasicAuth",
        "OAuth2ClientCredentials",
        "OAuth2RefreshToken",
        "HttpClient",
        "RateLimiter",
        "HttpFatalError",
        "HttpRetriableError",
        "HttpInterruptedError",
        "http_config_def",
        "http_config_problems",
        "validate_http_config",
        "http_client_from_config",
    } <= set(cdk.http.__all__)
    for name in cdk.http.__all__:
        assert getattr(cdk.http, name) is not None


def test_defaults_parse() -> None:
    values = http_config_def().parse(BASE)
    assert values["http.base.url"] == "https://api.example.com/v1"
    assert values["http.timeout.ms"] == 30_000
    assert values["http.deadline.ms"] == 300_000
    assert values["http.max.retries"] == 8
    assert values["http.backoff.initial.ms"] == 500
    assert values["http.backoff.max.ms"] == 60_000
    assert values["http.rate.limit.per.second"] == 0.0
    assert values["http.max.concurrent.requests"] == 1
    assert values["http.auth.type"] == "none"
    assert values["http.auth.api.key.header"] == "X-API-Key"
    assert values["http.auth.oauth2.scopes"] == []
    assert values["http.headers"] == []
    assert http_config_problems(values) == []


def test_keys_are_documented_in_the_http_group() -> None:
    definition = http_config_def()
    keys = definition.config_keys()
    assert all(name.startswith("http.") for name in keys)
    assert definition.groups() == ["HTTP"]
    assert all(key.group == "HTTP" and key.documentation for key in keys.values())
    assert {n for n, k in keys.items() if k.type is Type.PASSWORD} == SECRET_KEYS
    assert keys["http.base.url"].default_value is NO_DEFAULT
    assert keys["http.base.url"].importance is Importance.HIGH
    assert "http.auth.oauth2.refresh.token" in definition.to_rst()


def test_secrets_are_passwords_and_masked() -> None:
    props = {**BASE, **{key: f"value-of-{key}" for key in SECRET_KEYS}}
    config = AbstractConfig(http_config_def(), props)
    for key in SECRET_KEYS:
        value = config.values()[key]
        assert isinstance(value, Password)
        assert value.value() == f"value-of-{key}"
        assert str(value) == "[hidden]"
    assert "value-of-" not in repr(config)
    assert "value-of-" not in str(config.values())


def test_missing_base_url_names_the_key() -> None:
    with pytest.raises(ConfigException, match=r"http\.base\.url"):
        http_client_from_config({})


@pytest.mark.parametrize("url", ["ftp://example.com", "/relative", "https://"])
def test_bad_base_url_names_the_key(url: str) -> None:
    with pytest.raises(ConfigException) as info:
        http_config_def().parse({"http.base.url": url})
    assert info.value.name == "http.base.url"


def test_bearer_without_a_token_names_http_auth_token() -> None:
    with pytest.raises(ConfigException) as info:
        http_client_from_config({**BASE, "http.auth.type": "bearer"})
    assert info.value.name == "http.auth.token"
    assert "http.auth.type=bearer needs http.auth.token" in str(info.value)


@pytest.mark.parametrize(
    ("auth", "given", "missing"),
    [
        ("api_key", {}, "http.auth.api.key"),
        ("api_key", {"http.auth.api.key": "k", "http.auth.api.key.header": ""}, None),
        ("basic", {}, "http.auth.username"),
        ("oauth2_client_credentials", {}, "http.auth.oauth2.token.url"),
        (
            "oauth2_client_credentials",
            {"http.auth.oauth2.token.url": "https://a/t", "http.auth.oauth2.client.id": "c"},
            "http.auth.oauth2.client.secret",
        ),
        (
            "oauth2_refresh_token",
            {"http.auth.oauth2.token.url": "https://a/t", "http.auth.oauth2.client.id": "c"},
            "http.auth.oauth2.refresh.token",
        ),
    ],
)
def test_each_auth_type_needs_its_keys(
    auth: str, given: dict[str, str], missing: str | None
) -> None:
    values = http_config_def().parse({**BASE, "http.auth.type": auth, **given})
    problems = dict(http_config_problems(values))
    expected = missing or "http.auth.api.key.header"
    assert expected in problems
    with pytest.raises(ConfigException) as info:
        validate_http_config(values)
    assert info.value.name is not None
    assert info.value.name in problems


def test_unknown_auth_type_is_refused() -> None:
    with pytest.raises(ConfigException) as info:
        http_config_def().parse({**BASE, "http.auth.type": "kerberos"})
    assert info.value.name == "http.auth.type"


def test_backoff_max_below_initial_is_a_problem() -> None:
    values = http_config_def().parse(
        {**BASE, "http.backoff.initial.ms": "1000", "http.backoff.max.ms": "10"}
    )
    assert http_config_problems(values) == [
        ("http.backoff.max.ms", "must be at least http.backoff.initial.ms (1000)")
    ]


def test_bad_header_entry_names_the_key() -> None:
    with pytest.raises(ConfigException) as info:
        http_config_def().parse({**BASE, "http.headers": "Accept: application/json,nocolon"})
    assert info.value.name == "http.headers"
    assert "nocolon" in str(info.value)


def test_validate_reports_on_the_key_and_hides_secrets() -> None:
    definition = http_config_def()
    props = {**BASE, "http.auth.token": "tok-secret", "http.timeout.ms": "0"}
    by_name = {value.name: value for value in definition.validate(props)}
    assert by_name["http.timeout.ms"].error_messages
    assert "tok-secret" not in str(list(by_name.values()))


def test_client_from_config_sends_auth_headers_and_user_agent(server: ScriptedServer) -> None:
    props = {
        "http.base.url": server.url("/v1"),
        "http.auth.type": "bearer",
        "http.auth.token": "tok-1",
        "http.headers": "Accept: application/json, X-Tenant: acme",
        "http.user.agent": "acme-source/2.0",
        "http.rate.limit.per.second": "50",
        "http.max.concurrent.requests": "2",
        "http.timeout.ms": "2000",
        "http.max.retries": "2",
        "http.backoff.initial.ms": "10",
    }
    with http_client_from_config(props) as client:
        assert isinstance(client, HttpClient)
        assert client.get("items").json() == {"ok": True}
        assert (client.timeout_s, client.max_retries, client.backoff_initial_s) == (2.0, 2, 0.01)
        assert client.rate_limiter.requests_per_second == 50.0
        assert client.rate_limiter.max_concurrent == 2
        assert "tok-1" not in repr(client)
    (received,) = server.requests()
    assert received.headers["authorization"] == "Bearer tok-1"
    assert received.headers["accept"] == "application/json"
    assert received.headers["x-tenant"] == "acme"
    assert received.headers["user-agent"] == "acme-source/2.0"


def test_client_from_an_abstract_config_with_connector_keys(server: ScriptedServer) -> None:
    definition = ConfigDef(http_config_def()).define(
        "topic", Type.STRING, NO_DEFAULT, None, Importance.HIGH, "The topic."
    )
    config = AbstractConfig(
        definition,
        {
            "topic": "items",
            "http.base.url": server.url("/v1"),
            "http.auth.type": "basic",
            "http.auth.username": "ann",
            "http.auth.password": "pw",
        },
    )
    with http_client_from_config(config) as client:
        client.get("items")
    header = server.requests()[0].headers["authorization"]
    assert header == "Basic " + base64.b64encode(b"ann:pw").decode()


def test_api_key_query_param_from_config(server: ScriptedServer) -> None:
    props = {
        "http.base.url": server.url("/v1"),
        "http.auth.type": "api_key",
        "http.auth.api.key": "k-9",
        "http.auth.api.key.query.param": "key",
    }
    with http_client_from_config(props) as client:
        client.get("items")
    received = server.requests()[0]
    assert received.query == {"key": ["k-9"]}
    assert "x-api-key" not in received.headers


def test_oauth2_client_credentials_from_config(server: ScriptedServer) -> None:
    server.reply("/token", Reply(200, {"access_token": "at-1", "expires_in": 3600}))
    props = {
        "http.base.url": server.url("/v1"),
        "http.auth.type": "oauth2_client_credentials",
        "http.auth.oauth2.token.url": server.url("/token"),
        "http.auth.oauth2.client.id": "cid",
        "http.auth.oauth2.client.secret": "cs",
        "http.auth.oauth2.scopes": "read,write",
    }
    with http_client_from_config(props) as client:
        client.get("items")
    assert server.requests("/token")[0].form()["scope"] == "read write"
    assert server.requests("/v1/items")[0].headers["authorization"] == "Bearer at-1"


def test_oauth2_refresh_token_from_config(server: ScriptedServer) -> None:
    server.reply("/token", Reply(200, {"access_token": "at-1"}))
    props = {
        "http.base.url": server.url("/v1"),
        "http.auth.type": "oauth2_refresh_token",
        "http.auth.oauth2.token.url": server.url("/token"),
        "http.auth.oauth2.client.id": "cid",
        "http.auth.oauth2.refresh.token": "rt-1",
    }
    with http_client_from_config(props) as client:
        client.get("items")
    assert server.requests("/token")[0].form()["refresh_token"] == "rt-1"
