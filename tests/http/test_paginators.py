"""Paginators (cdk.http._paginators): next page or end, loop guard, records_at.

The paginators are pure logic over ``httpx.Response`` objects, so the responses are real httpx
responses built here; the end-to-end listings run through a real ``httpx.Client`` whose transport
is an in-process API (``httpx.MockTransport``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from cdk.errors import ConnectException, DataException
from cdk.http import (
    CursorPaginator,
    LinkHeaderPaginator,
    NextTokenPaginator,
    OffsetPaginator,
    Page,
    PageNumberPaginator,
    Paginator,
    records_at,
)

URL = "https://api.example.com/v1/items"


def _response(
    body: Any = None, *, headers: dict[str, str] | None = None, page: Page | None = None
) -> httpx.Response:
    page = page or Page(URL)
    request = httpx.Request("GET", httpx.URL(page.url).copy_merge_params(page.params))
    return httpx.Response(200, json=body, headers=headers, request=request)


def _list_all(
    paginator: Paginator, handler: Callable[[httpx.Request], httpx.Response], path: str
) -> tuple[list[Any], list[httpx.URL]]:
    """Drive ``paginator`` through a whole listing served by ``handler``."""
    seen: list[httpx.URL] = []
    out: list[Any] = []
    with httpx.Client(transport=httpx.MockTransport(handler)) as client:
        page: Page | None = paginator.first(URL, {"fields": "all"})
        while page is not None:
            response = client.get(page.url, params=page.params)
            seen.append(response.request.url)
            records = records_at(response.json(), path)
            out.extend(records)
            page = paginator.next(page, response, records)
    return out, seen


# -- records_at ----------------------------------------------------------------------------------
def test_records_at_paths() -> None:
    assert records_at({"data": [1, 2]}, "data") == [1, 2]
    assert records_at({"results": {"items": [{"id": 1}]}}, "results.items") == [{"id": 1}]
    assert records_at([{"id": 1}], "") == [{"id": 1}]
    assert records_at({"data": []}, "data") == []


def test_records_at_names_the_path_and_the_body() -> None:
    with pytest.raises(DataException, match=r"'data'.*nothing.*dict with keys \['error', 'meta'\]"):
        records_at({"meta": {}, "error": "x"}, "data")
    with pytest.raises(DataException, match=r"'results.items'.*found a dict") as info:
        records_at({"results": {"items": {"id": 1}}}, "results.items")
    assert info.value.field == "results.items"
    with pytest.raises(DataException, match=r"path ''.*body is a dict"):
        records_at({"data": []}, "")


# -- cursor (keyset) -------------------------------------------------------------------------------
def test_cursor_paginator_continues_after_the_last_record() -> None:
    paginator = CursorPaginator("after_id", "id", page_size=2, size_param="limit")
    first = paginator.first(URL, {"q": "x"})
    assert first == Page(URL, {"q": "x", "limit": "2"})
    nxt = paginator.next(first, _response(), [{"id": 7}, {"id": 9}])
    assert nxt == Page(URL, {"q": "x", "limit": "2", "after_id": "9"})
    assert nxt is not None
    assert paginator.next(nxt, _response(), [{"id": 11}]) is None  # short page
    assert paginator.next(nxt, _response(), []) is None  # empty page


def test_cursor_paginator_without_page_size_stops_on_empty_page_only() -> None:
    paginator = CursorPaginator("after", "meta.key")
    first = paginator.first(URL)
    nxt = paginator.next(first, _response(), [{"meta": {"key": "k1"}}])
    assert nxt == Page(URL, {"after": "k1"})
    assert nxt is not None
    assert paginator.next(nxt, _response(), []) is None


def test_cursor_paginator_several_params_and_callable() -> None:
    keyset = CursorPaginator(params={"since": "updated_at", "after": "id"})
    records = [{"id": 1, "updated_at": "t1"}, {"id": 2, "updated_at": "t2"}]
    assert keyset.next(keyset.first(URL), _response(), records) == Page(
        URL, {"since": "t2", "after": "2"}
    )
    computed = CursorPaginator("max", lambda rs: str(max(r["n"] for r in rs)))
    assert computed.next(computed.first(URL), _response(), [{"n": 5}, {"n": 3}]) == Page(
        URL, {"max": "5"}
    )
    ending = CursorPaginator("max", lambda rs: None)
    assert ending.next(ending.first(URL), _response(), [{"n": 5}]) is None


def test_cursor_paginator_names_a_missing_field() -> None:
    paginator = CursorPaginator("after_id", "id")
    with pytest.raises(DataException, match=r"no value at 'id'") as info:
        paginator.next(paginator.first(URL), _response(), [{"id": 1}, {"name": "x"}])
    assert info.value.field == "id"
    with pytest.raises(ConnectException, match="either param or params"):
        CursorPaginator()


def test_cursor_paginator_that_does_not_advance_is_a_loop() -> None:
    # A full page of records sharing the keyset value: the next request is the same request.
    paginator = CursorPaginator("since", "ts", page_size=2)
    first = paginator.first(URL, {"since": "5"})
    with pytest.raises(ConnectException, match=r"Pagination loop.*'since': '5'"):
        paginator.next(first, _response(), [{"ts": 5}, {"ts": 5}])


# -- next token ------------------------------------------------------------------------------------
def test_next_token_from_a_nested_path() -> None:
    paginator = NextTokenPaginator(token_path="meta.next", param="page_token")
    first = paginator.first(URL, {"limit": "10"})
    assert first == Page(URL, {"limit": "10"})
    nxt = paginator.next(first, _response({"meta": {"next": "abc"}}), [1])
    assert nxt == Page(URL, {"limit": "10", "page_token": "abc"})


@pytest.mark.parametrize(
    "body", [{"data": []}, {"meta": None}, {"meta": {"next": None}}, {"meta": {"next": ""}}]
)
def test_next_token_missing_null_or_empty_ends(body: dict[str, Any]) -> None:
    paginator = NextTokenPaginator(token_path="meta.next")
    assert paginator.next(paginator.first(URL), _response(body), [1]) is None


def test_next_token_that_is_not_a_scalar_is_an_error() -> None:
    paginator = NextTokenPaginator()
    with pytest.raises(DataException, match="next_page_token"):
        paginator.next(paginator.first(URL), _response({"next_page_token": {"a": 1}}), [1])


def test_body_that_is_not_json_is_a_data_exception() -> None:
    paginator = NextTokenPaginator()
    request = httpx.Request("GET", URL)
    response = httpx.Response(200, text="<html>", request=request)
    with pytest.raises(DataException, match=r"GET https://api.example.com/v1/items is not JSON"):
        paginator.next(paginator.first(URL), response, [])


def test_same_token_forever_is_a_loop_naming_url_and_params() -> None:
    paginator = NextTokenPaginator()
    first = paginator.first(URL, {"limit": "1"})
    second = paginator.next(first, _response({"next_page_token": "T"}), [1])
    assert second is not None
    with pytest.raises(ConnectException, match=r"Pagination loop: NextTokenPaginator") as info:
        paginator.next(second, _response({"next_page_token": "T"}), [1])
    assert URL in str(info.value)
    assert "'page_token': 'T'" in str(info.value)


def test_tokens_cycling_is_a_loop_but_asking_again_is_not() -> None:
    paginator = NextTokenPaginator()
    first = paginator.first(URL)
    a = paginator.next(first, _response({"next_page_token": "A"}), [1])
    assert a is not None
    # the step retried from the same page (same answer) is not a loop
    assert paginator.next(first, _response({"next_page_token": "A"}), [1]) == a
    b = paginator.next(a, _response({"next_page_token": "B"}), [1])
    assert b is not None
    with pytest.raises(ConnectException, match="Pagination loop"):
        paginator.next(b, _response({"next_page_token": "A"}), [1])
    # a new listing starts with a clean history
    again = paginator.next(paginator.first(URL), _response({"next_page_token": "A"}), [1])
    assert again == a


# -- Page ------------------------------------------------------------------------------------------
def test_page_moves_the_url_query_into_params() -> None:
    page = Page(f"{URL}?a=1&tag=x&tag=y", {"b": "2"})
    assert page.url == URL
    assert page.params == {"a": "1", "tag": ["x", "y"], "b": "2"}
    assert Page("/v1/items?a=1").url == "/v1/items"
    assert Page(URL, {"tag": ("x", "y")}) == Page(f"{URL}?tag=x&tag=y")


def test_page_params_sent_by_httpx_carry_the_whole_query() -> None:
    # httpx replaces a URL's query by the params given: the query must live in params.
    page = Page(f"{URL}?a=1&tag=x&tag=y")
    request = httpx.Client().build_request("GET", page.url, params=page.params)
    assert request.url.params.multi_items() == [("a", "1"), ("tag", "x"), ("tag", "y")]


# -- Link header -----------------------------------------------------------------------------------
def test_link_header_absolute_relative_and_several_rels() -> None:
    paginator = LinkHeaderPaginator()
    first = paginator.first(URL, {"per_page": "2"})
    absolute = {"Link": '<https://api.example.com/v1/items?page=2&per_page=2>; rel="next"'}
    assert paginator.next(first, _response([], headers=absolute, page=first), [1]) == Page(
        URL, {"page": "2", "per_page": "2"}
    )
    relative = {"Link": '</v1/items?page=3>; rel="prev", <items?page=4>; REL="next last"'}
    nxt = paginator.next(first, _response([], headers=relative, page=first), [1])
    assert nxt == Page(URL, {"page": "4"})
    prev = LinkHeaderPaginator(rel="PREV")
    assert prev.next(first, _response([], headers=relative, page=first), [1]) == Page(
        URL, {"page": "3"}
    )


def test_link_header_absent_or_without_the_rel_ends() -> None:
    paginator = LinkHeaderPaginator()
    first = paginator.first(URL)
    assert paginator.next(first, _response([]), [1]) is None
    only_last = {"Link": '<https://api.example.com/v1/items?page=9>; rel="last"'}
    assert paginator.next(first, _response([], headers=only_last), [1]) is None


def test_link_header_pointing_at_the_same_page_is_a_loop() -> None:
    paginator = LinkHeaderPaginator()
    first = paginator.first(URL, {"page": "1"})
    same = {"Link": f'<{URL}?page=1>; rel="next"'}
    with pytest.raises(ConnectException, match=r"Pagination loop.*'page': '1'"):
        paginator.next(first, _response([], headers=same, page=first), [1])


# -- page number -----------------------------------------------------------------------------------
def test_page_number_pages_until_a_short_page() -> None:
    paginator = PageNumberPaginator(page_size=2)
    first = paginator.first(URL)
    assert first == Page(URL, {"page": "1", "per_page": "2"})
    second = paginator.next(first, _response([1, 2]), [1, 2])
    assert second == Page(URL, {"page": "2", "per_page": "2"})
    assert second is not None
    assert paginator.next(second, _response([3]), [3]) is None
    assert paginator.next(second, _response([]), []) is None


def test_page_number_total_pages_and_start_zero() -> None:
    paginator = PageNumberPaginator("p", start=0, size_param=None, total_pages_path="meta.pages")
    first = paginator.first(URL)
    assert first == Page(URL, {"p": "0"})
    second = paginator.next(first, _response({"meta": {"pages": 2}}), [1, 2, 3])
    assert second == Page(URL, {"p": "1"})
    assert second is not None
    assert paginator.next(second, _response({"meta": {"pages": 2}}), [4, 5, 6]) is None
    with pytest.raises(DataException, match=r"integer at 'meta.pages'.*'many'"):
        paginator.next(first, _response({"meta": {"pages": "many"}}), [1])


# -- offset ----------------------------------------------------------------------------------------
def test_offset_advances_by_the_records_read() -> None:
    paginator = OffsetPaginator(limit=3)
    first = paginator.first(URL)
    assert first == Page(URL, {"offset": "0", "limit": "3"})
    second = paginator.next(first, _response([]), [1, 2, 3])
    assert second == Page(URL, {"offset": "3", "limit": "3"})
    assert second is not None
    assert paginator.next(second, _response([]), [4, 5]) is None  # short
    assert paginator.next(second, _response([]), []) is None


def test_offset_stops_at_the_total() -> None:
    paginator = OffsetPaginator("skip", "top", 2, total_path="count")
    first = paginator.first(URL)
    second = paginator.next(first, _response({"count": 4}), [1, 2])
    assert second == Page(URL, {"skip": "2", "top": "2"})
    assert second is not None
    assert paginator.next(second, _response({"count": 4}), [3, 4]) is None


# -- whole listings through a client ---------------------------------------------------------------
_ITEMS = [{"id": i} for i in range(1, 8)]


def test_whole_listing_by_link_header() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        page = int(request.url.params.get("page", "1"))
        chunk = _ITEMS[(page - 1) * 3 : page * 3]
        headers = {}
        if page * 3 < len(_ITEMS):
            headers["Link"] = f'<?page={page + 1}&fields=all>; rel="next"'
        return httpx.Response(200, json={"data": chunk}, headers=headers)

    records, urls = _list_all(LinkHeaderPaginator(), handler, "data")
    assert records == _ITEMS
    assert [u.params.get("page") for u in urls] == [None, "2", "3"]


def test_whole_listing_by_token_offset_and_keyset() -> None:
    def by_token(request: httpx.Request) -> httpx.Response:
        start = int(request.url.params.get("page_token", "0"))
        nxt = start + 2 if start + 2 < len(_ITEMS) else None
        return httpx.Response(
            200, json={"items": _ITEMS[start : start + 2], "next_page_token": nxt}
        )

    def by_offset(request: httpx.Request) -> httpx.Response:
        offset, limit = int(request.url.params["offset"]), int(request.url.params["limit"])
        return httpx.Response(200, json=_ITEMS[offset : offset + limit])

    def by_keyset(request: httpx.Request) -> httpx.Response:
        after, limit = int(request.url.params.get("after_id", "0")), int(request.url.params["n"])
        return httpx.Response(200, json=[r for r in _ITEMS if r["id"] > after][:limit])

    assert _list_all(NextTokenPaginator(), by_token, "items")[0] == _ITEMS
    assert _list_all(OffsetPaginator(limit=3), by_offset, "")[0] == _ITEMS
    assert _list_all(OffsetPaginator(limit=7), by_offset, "")[0] == _ITEMS  # exact multiple
    keyset = CursorPaginator("after_id", "id", page_size=2, size_param="n")
    assert _list_all(keyset, by_keyset, "")[0] == _ITEMS


def test_api_returning_the_same_token_forever_ends_with_an_error() -> None:
    calls = 0

    def stuck(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        return httpx.Response(200, json={"data": [{"id": calls}], "next_page_token": "same"})

    with pytest.raises(ConnectException, match="Pagination loop"):
        _list_all(NextTokenPaginator(), stuck, "data")
    assert calls == 2


def test_repr_names_the_settings() -> None:
    assert repr(NextTokenPaginator("meta.next", "t")) == (
        "NextTokenPaginator(token_path='meta.next', param='t')"
    )
    assert repr(Page(URL, {"a": "1"})) == f"Page(url='{URL}', params={{'a': '1'}})"
