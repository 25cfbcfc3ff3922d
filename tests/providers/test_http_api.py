"""The stand-in REST API and the rate-limiting proxy, over real sockets with httpx."""

from __future__ import annotations

import email.utils
import time
from collections.abc import Iterator

import httpx
import pytest

from harness.providers import HttpFaultProxy, RecordsApi, stamp


@pytest.fixture
def api() -> Iterator[RecordsApi]:
    with RecordsApi(max_page=3) as served:
        yield served


def _all_pages(client: httpx.Client, url: str) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    params: dict[str, object] = {"limit": 3}
    while True:
        body = client.get(f"{url}/records", params=params).json()
        out += body["data"]
        if body["next"] is None:
            return out
        params = {"limit": 3, **body["next"]}


def test_keyset_pages_return_a_run_of_tied_stamps_once(api: RecordsApi) -> None:
    api.put([{"id": i, "n": i} for i in range(1, 3)])
    api.put([{"id": i, "n": i} for i in range(3, 11)], updated_at="2030-06-01T00:00:00.000Z")
    api.put([{"id": 11}])
    with httpx.Client(timeout=5) as client:
        seen = _all_pages(client, api.url)
    assert [r["id"] for r in seen] == list(range(1, 12))
    tied = [r for r in seen if r["updated_at"] == "2030-06-01T00:00:00.000Z"]
    assert len(tied) == 8
    assert api.requests == 4


def test_an_update_moves_a_record_past_the_others(api: RecordsApi) -> None:
    api.put([{"id": 1}, {"id": 2}])
    api.update([1], status="closed")
    rows = api.records()
    assert [r["id"] for r in rows] == [2, 1]
    assert rows[1]["status"] == "closed"
    assert rows[1]["updated_at"] > rows[0]["updated_at"]


def test_a_bad_query_and_a_wrong_token_are_refused() -> None:
    with RecordsApi(token="s3cret") as served, httpx.Client(timeout=5) as client:
        assert client.get(f"{served.url}/records").status_code == 401
        ok = client.get(f"{served.url}/records", headers={"Authorization": "Bearer s3cret"})
        assert ok.status_code == 200
        bad = client.get(
            f"{served.url}/records",
            params={"limit": "x"},
            headers={"Authorization": "Bearer s3cret"},
        )
        assert bad.status_code == 400
        assert "bad query" in bad.json()["error"]


def test_stamp_has_milliseconds_and_z() -> None:
    import datetime as dt

    moment = dt.datetime(2030, 1, 2, 3, 4, 5, 678901, tzinfo=dt.timezone.utc)
    assert stamp(moment) == "2030-01-02T03:04:05.678Z"


def test_the_proxy_forwards_then_rate_limits_and_counts_early_requests(api: RecordsApi) -> None:
    api.put([{"id": 1}])
    with HttpFaultProxy(api.url) as proxy, httpx.Client(timeout=5) as client:
        assert client.get(f"{proxy.url}/records").json()["data"][0]["id"] == 1
        proxy.rate_limit(1, status=429, retry_after_s=1)
        limited = client.get(f"{proxy.url}/records")
        assert limited.status_code == 429
        assert limited.headers["Retry-After"] == "1"
        answered = time.monotonic()
        early = client.get(f"{proxy.url}/records")  # at once: before the second is up
        assert early.status_code == 429
        counts = proxy.snapshot()
        assert counts.early == 1
        assert 0 < counts.earliest_s <= 1.0
        wait = 1.0 - (time.monotonic() - answered)
        if wait > 0:
            time.sleep(wait + 0.02)  # honouring the Retry-After, as the client under test must
        assert client.get(f"{proxy.url}/records").status_code == 200
        counts = proxy.snapshot()
    assert (counts.requests, counts.forwarded, counts.limited, counts.early) == (4, 2, 1, 1)
    assert counts.as_evidence()["arrived before Retry-After allowed"] == 1


def test_an_http_date_retry_after_names_a_second_in_the_future(api: RecordsApi) -> None:
    with HttpFaultProxy(api.url) as proxy, httpx.Client(timeout=5) as client:
        proxy.rate_limit(1, status=503, retry_after_s=2, http_date=True)
        before = time.time()
        answer = client.get(f"{proxy.url}/records")
        assert answer.status_code == 503
        until = email.utils.parsedate_to_datetime(answer.headers["Retry-After"]).timestamp()
        assert before + 2 <= until <= before + 3.001
        assert proxy.pending == 0


def test_the_proxy_refuses_a_non_http_upstream() -> None:
    with pytest.raises(ValueError, match="forwards to an http:// URL"):
        HttpFaultProxy("ftp://example.invalid")
