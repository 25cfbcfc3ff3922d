"""``admin.listeners``, CORS (``access.control.allow.*``) and ``response.http.headers.config``."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import httpx
import pytest

from cdk.errors import ConfigException
from cdk.runtime._worker_config import WorkerConfig
from cdk.runtime.standalone._worker import EmbeddedWorker
from tests.runtime.rest.test_rest import worker_props


@contextlib.contextmanager
def serving(bootstrap: str, **extra: str) -> Iterator[tuple[EmbeddedWorker, httpx.Client]]:
    """A worker with ``extra`` settings and a client of its REST listener (both closed after)."""
    with EmbeddedWorker(worker_props(bootstrap, **extra), cluster_id_timeout=0) as worker:
        assert worker.rest_url is not None
        with httpx.Client(base_url=worker.rest_url, timeout=10) as http:
            yield worker, http


def test_admin_endpoints_only_on_the_admin_listeners(kafka_bootstrap: str) -> None:
    with serving(kafka_bootstrap, **{"admin.listeners": "http://127.0.0.1:0"}) as (worker, main):
        assert worker.rest is not None
        (admin,) = worker.rest.admin_urls
        assert admin != worker.rest_url
        assert main.get("/connectors").status_code == 200
        assert main.get("/admin/loggers").status_code == 404
        assert main.put("/admin/loggers/cdk", json={"level": "DEBUG"}).status_code == 404
        with httpx.Client(base_url=admin, timeout=10) as http:
            assert http.get("/admin/loggers").status_code == 200
            assert http.get("/admin/loggers/root").status_code == 200
            assert http.get("/connectors").status_code == 404


def test_an_empty_admin_listeners_disables_the_admin_endpoints(kafka_bootstrap: str) -> None:
    with serving(kafka_bootstrap, **{"admin.listeners": ""}) as (worker, http):
        assert worker.rest is not None
        assert worker.rest.admin_urls == []
        assert http.get("/admin/loggers").status_code == 404
        assert http.get("/connectors").status_code == 200


def test_unset_admin_listeners_serve_the_admin_endpoints_on_the_listeners(
    kafka_bootstrap: str,
) -> None:
    with serving(kafka_bootstrap) as (_, http):
        assert http.get("/admin/loggers").status_code == 200


def test_cross_origin_requests_as_kafka(kafka_bootstrap: str) -> None:
    cors = {
        "access.control.allow.origin": "https://ui.example.com",
        "access.control.allow.methods": "GET,PUT,DELETE",
    }
    with serving(kafka_bootstrap, **cors) as (_, http):
        allowed = {"Origin": "https://ui.example.com"}
        response = http.get("/connectors", headers=allowed)
        assert response.headers["access-control-allow-origin"] == "https://ui.example.com"
        assert response.headers["access-control-allow-credentials"] == "true"
        other = http.get("/connectors", headers={"Origin": "https://evil.example.com"})
        assert other.status_code == 200
        assert "access-control-allow-origin" not in other.headers
        preflight = http.options(
            "/connectors/x", headers={**allowed, "Access-Control-Request-Method": "DELETE"}
        )
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-methods"] == "GET,PUT,DELETE"
        assert preflight.headers["access-control-allow-origin"] == "https://ui.example.com"


def test_without_cors_keys_no_cross_origin_headers(kafka_bootstrap: str) -> None:
    with serving(kafka_bootstrap) as (_, http):
        response = http.get("/connectors", headers={"Origin": "https://ui.example.com"})
        assert "access-control-allow-origin" not in response.headers


def test_response_http_headers_config(kafka_bootstrap: str) -> None:
    rules = (
        "set X-Frame-Options: DENY, add Cache-Control: no-cache, "
        '"add Cache-Control: no-store, must-revalidate", setDate Expires: 31540000000'
    )
    with serving(kafka_bootstrap, **{"response.http.headers.config": rules}) as (_, http):
        for response in (http.get("/connectors"), http.get("/connectors/nope")):
            assert response.headers["x-frame-options"] == "DENY"
            assert response.headers.get_list("cache-control") == [
                "no-cache",
                "no-store, must-revalidate",
            ]
            assert response.headers["expires"].endswith(" GMT")


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        ("X-Frame-Options", "Invalid format of header config 'X-Frame-Options'"),
        ("frob X: y", "Invalid header config action: 'frob'. Expected one of"),
        ("set A: b: c", "Invalid format of header name and header value pair 'A: b: c'"),
    ],
)
def test_a_malformed_header_rule_names_the_key(rules: str, message: str) -> None:
    with pytest.raises(ConfigException) as info:
        WorkerConfig(
            {
                "key.converter": "JsonConverter",
                "value.converter": "JsonConverter",
                "response.http.headers.config": rules,
            }
        )
    assert "response.http.headers.config" in str(info.value)
    assert message in str(info.value)
