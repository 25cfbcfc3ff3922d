"""HttpClient and RateLimiter against a real local HTTP server, on the real clock."""

from __future__ import annotations

import email.utils
import itertools
import logging
import random
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from cdk.errors import ConnectException, RetriableException
from cdk.http import (
    ApiKeyAuth,
    BearerTokenAuth,
    HttpClient,
    HttpFatalError,
    HttpInterruptedError,
    HttpRetriableError,
    RateLimiter,
)
from tests.http._server import Reply, ScriptedServer


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as running:
        yield running


def _client(server: ScriptedServer, **kwargs: Any) -> HttpClient:
    options: dict[str, Any] = {"backoff_initial_s": 0.01, "backoff_max_s": 0.05, "max_retries": 3}
    options.update(kwargs)
    return HttpClient(server.url(), **options)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# ---------------------------------------------------------------------- success
def test_success_with_default_headers_and_user_agent(server: ScriptedServer) -> None:
    server.reply("/v1/items", Reply(200, {"items": [1]}))
    with HttpClient(server.url("/v1"), headers={"Accept": "application/json"}) as client:
        response = client.get("items", params={"page": 2}, headers={"X-Trace": "t"})
    assert response.json() == {"items": [1]}
    (received,) = server.requests()
    assert received.path == "/v1/items"
    assert received.query == {"page": ["2"]}
    assert received.headers["accept"] == "application/json"
    assert received.headers["x-trace"] == "t"
    assert received.headers["user-agent"].startswith("connect-cdk/")


def test_post_json_is_sent_again_on_retry(server: ScriptedServer) -> None:
    server.reply("/search", Reply(503), Reply(200, {"ok": True}))
    with _client(server, user_agent="my-connector/1.0") as client:
        assert client.request("post", "/search", json={"q": "x"}).json() == {"ok": True}
    first, second = server.requests("/search")
    assert first.method == second.method == "POST"
    assert first.body == second.body == b'{"q":"x"}'
    assert first.headers["user-agent"] == "my-connector/1.0"


def test_redirects_are_followed(server: ScriptedServer) -> None:
    server.reply("/old", Reply(302, headers={"Location": "/new"}))
    server.reply("/new", Reply(200, "here"))
    with _client(server) as client:
        assert client.get("/old").text == "here"


# ---------------------------------------------------------------------- retriable
def test_503_then_200_succeeds(server: ScriptedServer) -> None:
    server.reply("/items", Reply(503, "busy"), Reply(200, {"ok": 1}))
    with _client(server) as client:
        assert client.get("/items").json() == {"ok": 1}
    assert len(server.requests("/items")) == 2


@pytest.mark.parametrize("status", [408, 425, 429, 500, 502, 504])
def test_retriable_statuses_are_retried(server: ScriptedServer, status: int) -> None:
    server.reply("/items", Reply(status), Reply(200, "ok"))
    with _client(server) as client:
        assert client.get("/items").text == "ok"


def test_429_retry_after_seconds_is_honoured(server: ScriptedServer) -> None:
    server.reply("/items", Reply(429, "slow down", {"Retry-After": "1"}), Reply(200, "ok"))
    with _client(server) as client:
        assert client.get("/items").text == "ok"
    first, second = server.requests("/items")
    assert second.at - first.at >= 1.0


def test_503_retry_after_http_date_is_honoured(server: ScriptedServer) -> None:
    # HTTP-dates have whole seconds: the next-but-one boundary, so that the first request
    # surely arrives before it
    not_before = int(time.time()) + 2
    date = email.utils.formatdate(not_before, usegmt=True)
    server.reply("/items", Reply(503, headers={"Retry-After": date}), Reply(200, "ok"))
    with _client(server) as client:
        assert client.get("/items").text == "ok"
    first, second = server.requests("/items")
    assert second.wall >= not_before
    assert first.wall < not_before


def test_retry_after_past_the_deadline_raises_at_once(server: ScriptedServer) -> None:
    server.always("/items", Reply(429, headers={"Retry-After": "30"}))
    started = time.monotonic()
    with _client(server, deadline_s=2) as client, pytest.raises(HttpRetriableError) as info:
        client.get("/items")
    assert time.monotonic() - started < 0.5
    assert len(server.requests("/items")) == 1
    error = info.value
    assert error.retry_after_s == 30
    assert (error.status, error.attempts) == (429, 1)
    assert "30.000 s (Retry-After)" in str(error)
    assert "deadline of 2 s" in str(error)


def test_a_call_that_gave_up_leaves_the_next_one_waiting_for_retry_after(
    server: ScriptedServer,
) -> None:
    # A poll() that raised the RetriableException is called again at once by the worker: the
    # request it sends must still wait for the time the server gave.
    server.reply("/items", Reply(429, headers={"Retry-After": "1"}), Reply(200, "ok"))
    with _client(server, max_retries=0) as client:
        with pytest.raises(HttpRetriableError, match="after 1 attempt"):
            client.get("/items")
        assert client.get("/items").text == "ok"  # the next poll, at once
    first, second = server.requests("/items")
    assert second.at - first.at >= 1.0


def test_a_retry_after_past_the_next_calls_deadline_sends_nothing(server: ScriptedServer) -> None:
    server.reply("/items", Reply(429, headers={"Retry-After": "30"}), Reply(200, "ok"))
    with _client(server, deadline_s=0.2) as client:
        with pytest.raises(HttpRetriableError, match="past the deadline"):
            client.get("/items")
        with pytest.raises(HttpRetriableError, match=r"not sent: the server asked to wait"):
            client.get("/items")
    assert len(server.requests("/items")) == 1


def test_deadline_bounds_the_retries(server: ScriptedServer) -> None:
    server.always("/items", Reply(503))
    client = _client(server, deadline_s=0.3, max_retries=100, backoff_max_s=0.2, jitter=False)
    started = time.monotonic()
    with client, pytest.raises(HttpRetriableError, match="past the deadline"):
        client.get("/items")
    assert time.monotonic() - started < 0.3 + 0.1  # the last answer may take a moment on a busy CPU
    assert len(server.requests("/items")) >= 3


def test_500_past_max_retries_is_retriable_and_names_the_request(server: ScriptedServer) -> None:
    server.always("/items", Reply(500, "internal   oops\n trace"))
    with _client(server, max_retries=2) as client, pytest.raises(RetriableException) as info:
        client.get("/items", params={"page": "3"})
    error = info.value
    assert isinstance(error, HttpRetriableError)
    assert len(server.requests("/items")) == 3
    assert (error.method, error.status, error.attempts) == ("GET", 500, 3)
    assert error.url == server.url("/items?page=3")
    assert f"GET {server.url('/items?page=3')} failed after 3 attempt(s)" in str(error)
    assert "HTTP 500 Internal Server Error: internal oops trace" in str(error)


def test_backoff_doubles_up_to_the_maximum_without_jitter(server: ScriptedServer) -> None:
    server.always("/items", Reply(500))
    client = _client(server, backoff_initial_s=0.02, backoff_max_s=0.05, jitter=False)
    with client, pytest.raises(HttpRetriableError):
        client.get("/items")
    arrivals = [r.at for r in server.requests("/items")]
    gaps = [b - a for a, b in itertools.pairwise(arrivals)]
    assert len(gaps) == 3
    for gap, wanted in zip(gaps, [0.02, 0.04, 0.05], strict=True):
        assert gap >= wanted


def test_full_jitter_draws_from_the_given_random(server: ScriptedServer) -> None:
    server.always("/items", Reply(500))
    client = _client(server, backoff_initial_s=0.04, backoff_max_s=0.1, rng=random.Random(7))
    with client, pytest.raises(HttpRetriableError):
        client.get("/items")
    same = random.Random(7)
    wanted = [same.uniform(0, min(0.1, 0.04 * 2**i)) for i in range(3)]
    arrivals = [r.at for r in server.requests("/items")]
    for (a, b), wait in zip(itertools.pairwise(arrivals), wanted, strict=True):
        assert b - a >= wait


def test_connection_refused_is_retriable() -> None:
    url = f"http://127.0.0.1:{_free_port()}"
    client = HttpClient(url, max_retries=1, backoff_initial_s=0.01)
    with client, pytest.raises(RetriableException) as info:
        client.get("/items")
    error = info.value
    assert isinstance(error, HttpRetriableError)
    assert error.status is None
    assert error.attempts == 2
    assert "ConnectError" in str(error)
    assert f"GET {url}/items" in str(error)


def test_a_read_timeout_is_retriable(server: ScriptedServer) -> None:
    release = threading.Event()
    server.always("/slow", Reply(200, "late", block=release))
    try:
        client = _client(server, timeout_s=0.1, max_retries=0)
        with client, pytest.raises(HttpRetriableError, match="ReadTimeout"):
            client.get("/slow")
    finally:
        release.set()


# ---------------------------------------------------------------------- fatal
@pytest.mark.parametrize("status", [400, 401, 403, 404, 410, 422])
def test_client_errors_are_fatal_at_once(server: ScriptedServer, status: int) -> None:
    server.always("/items", Reply(status, {"message": "nope"}))
    with _client(server) as client, pytest.raises(HttpFatalError) as info:
        client.request("DELETE", "/items")
    error = info.value
    assert isinstance(error, ConnectException)
    assert not isinstance(error, RetriableException)
    assert len(server.requests("/items")) == 1
    assert (error.method, error.url, error.status) == ("DELETE", server.url("/items"), status)
    assert f"DELETE {server.url('/items')} failed: HTTP {status}" in str(error)
    assert '{"message": "nope"}' in str(error)


def test_a_redirect_loop_is_fatal(server: ScriptedServer) -> None:
    server.always("/loop", Reply(302, headers={"Location": "/loop"}))
    with _client(server) as client, pytest.raises(HttpFatalError, match="TooManyRedirects"):
        client.get("/loop")


def test_an_unsupported_scheme_is_fatal() -> None:
    with HttpClient("ftp://127.0.0.1/") as client, pytest.raises(HttpFatalError) as info:
        client.get("/file")
    assert not isinstance(info.value, RetriableException)
    assert "GET ftp://127.0.0.1/file cannot be sent" in str(info.value)


def test_api_key_in_the_query_is_masked_everywhere(
    server: ScriptedServer, caplog: pytest.LogCaptureFixture
) -> None:
    key = "k-very-secret-123"
    server.reply("/items", Reply(503, f"echo {key}"))
    server.always("/items", Reply(404, f"no such thing for api_key={key}"))
    caplog.set_level(logging.DEBUG)
    auth = ApiKeyAuth(key, query_param="api_key")
    with _client(server, auth=auth) as client, pytest.raises(HttpFatalError) as info:
        client.get("/items", params={"page": "1", "access_token": "user-token-456"})
    assert server.requests("/items")[0].query["api_key"] == [key]
    text = str(info.value)
    assert info.value.url == server.url("/items?page=1&access_token=[hidden]")
    assert key not in text
    assert "user-token-456" not in text
    assert "[hidden]" in text
    assert key not in caplog.text
    assert "user-token-456" not in caplog.text
    assert "retry 1 of 3" in caplog.text  # the retry was logged, masked
    assert key not in repr(client)


def test_retry_logs_name_the_request_and_never_the_credentials(
    server: ScriptedServer, caplog: pytest.LogCaptureFixture
) -> None:
    server.reply("/items", Reply(502), Reply(429, headers={"Retry-After": "0"}), Reply(200))
    caplog.set_level(logging.INFO, logger="cdk.http")
    with _client(server, auth=BearerTokenAuth("bearer-secret-9")) as client:
        client.get("/items")
    records = [r for r in caplog.records if r.name == "cdk.http"]
    assert [r.levelno for r in records] == [logging.WARNING, logging.INFO]
    assert f"GET {server.url('/items')} failed (HTTP 502 Bad Gateway)" in records[0].getMessage()
    assert "the server asked to wait 0.000 s (Retry-After)" in records[1].getMessage()
    assert "bearer-secret-9" not in caplog.text


# ---------------------------------------------------------------------- stop
def test_stop_event_interrupts_a_backoff(server: ScriptedServer) -> None:
    server.always("/items", Reply(503))
    stop = threading.Event()
    outcome: list[ConnectException] = []
    client = _client(server, stop=stop, backoff_initial_s=10, backoff_max_s=10, jitter=False)

    def call() -> None:
        try:
            client.get("/items")
        except ConnectException as exc:
            outcome.append(exc)

    with client:
        thread = threading.Thread(target=call)
        thread.start()
        try:
            server.wait_for(1, "/items")
        finally:
            stopped = time.monotonic()
            stop.set()
            thread.join(5)
        elapsed = time.monotonic() - stopped
    assert not thread.is_alive()
    assert elapsed < 0.5
    (error,) = outcome
    assert isinstance(error, HttpInterruptedError)
    assert isinstance(error, RetriableException)
    assert "stopped while waiting to retry" in str(error)
    assert len(server.requests("/items")) == 1


def test_a_stopped_client_sends_nothing(server: ScriptedServer) -> None:
    stop = threading.Event()
    stop.set()
    with _client(server, stop=stop) as client, pytest.raises(HttpInterruptedError):
        client.get("/items")
    assert server.requests() == []


def test_stop_event_interrupts_a_retry_after_wait(server: ScriptedServer) -> None:
    server.always("/items", Reply(429, headers={"Retry-After": "20"}))
    stop = threading.Event()
    with _client(server, stop=stop, deadline_s=60) as client:
        timer = threading.Timer(0.1, stop.set)
        timer.start()
        started = time.monotonic()
        with pytest.raises(HttpInterruptedError):
            client.get("/items")
        timer.join()
    assert time.monotonic() - started < 1.0


# ---------------------------------------------------------------------- rate limit
def test_rate_limit_spaces_requests_at_the_server(server: ScriptedServer) -> None:
    server.always("/items", Reply(200))
    count, rate = 6, 20.0
    with _client(server, rate_limiter=RateLimiter(rate)) as client:
        for _ in range(count):
            client.get("/items")
    arrivals = [r.at for r in server.requests("/items")]
    # The limiter spaces the sends (count - 1) / rate apart; what happens between a send and its
    # arrival varies by a few ms on a busy machine, hence a slack of less than half an interval
    # (without the limiter the six arrive within a few ms).
    assert arrivals[-1] - arrivals[0] >= (count - 1) / rate - 0.02


def test_rate_limit_counts_retries(server: ScriptedServer) -> None:
    server.reply("/items", Reply(503), Reply(503), Reply(200))
    with _client(server, rate_limiter=RateLimiter(10), backoff_initial_s=0.0) as client:
        client.get("/items")
    arrivals = [r.at for r in server.requests("/items")]
    assert arrivals[-1] - arrivals[0] >= 0.2 - 0.02  # slack as above


def test_max_concurrent_bounds_requests_in_flight(server: ScriptedServer) -> None:
    release = threading.Event()
    server.always("/items", Reply(200, block=release))
    start = threading.Barrier(6)
    errors: list[ConnectException] = []

    def call(client: HttpClient) -> None:
        start.wait(5)
        try:
            client.get("/items")
        except ConnectException as exc:
            errors.append(exc)

    with _client(server, rate_limiter=RateLimiter(max_concurrent=2)) as client:
        threads = [threading.Thread(target=call, args=(client,)) for _ in range(6)]
        for thread in threads:
            thread.start()
        try:
            server.wait_for(2, "/items")
            in_flight = server.in_flight  # the other four wait for a slot
        finally:
            release.set()
            for thread in threads:
                thread.join(5)
    assert in_flight == 2
    assert errors == []
    assert len(server.requests("/items")) == 6
    assert server.max_in_flight == 2


def test_rate_limiter_refuses_a_wait_past_its_timeout() -> None:
    limiter = RateLimiter(1.0)
    assert limiter.acquire(timeout=0.01)
    limiter.release()
    started = time.monotonic()
    assert not limiter.acquire(timeout=0.5)  # the next token is ~1 s away: no wait at all
    assert time.monotonic() - started < 0.1


def test_rate_limiter_burst_and_stop() -> None:
    limiter = RateLimiter(2.0, max_concurrent=1, burst=3)
    for _ in range(3):
        assert limiter.acquire(timeout=0)
        limiter.release()
    stop = threading.Event()
    threading.Timer(0.05, stop.set).start()
    started = time.monotonic()
    assert not limiter.acquire(stop=stop)
    assert time.monotonic() - started < 0.4
    assert limiter._slots is not None
    assert limiter._slots.acquire(timeout=0)  # the interrupted wait gave its slot back
    limiter._slots.release()
    assert repr(limiter) == "RateLimiter(requests_per_second=2.0, max_concurrent=1, burst=3)"


def test_rate_limiter_as_a_context_manager() -> None:
    limiter = RateLimiter(max_concurrent=1)
    with limiter:
        assert not limiter.acquire(timeout=0.05)  # the one slot is taken
    with limiter:  # and given back
        pass


def test_rate_limiter_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="max_concurrent"):
        RateLimiter(max_concurrent=0)
    with pytest.raises(ValueError, match="requests_per_second"):
        RateLimiter(-1)
