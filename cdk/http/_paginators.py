"""Paginators: from the request just made and its response to the next request, or the end.

A paginator knows nothing of the client that sends the requests: it reads an
:class:`httpx.Response` (its JSON body, headers, ``Link`` header and request URL) and the records
taken from it, and answers with the next :class:`Page` to request, or ``None`` when the listing is
complete. A task drives it so::

    paginator = NextTokenPaginator(token_path="meta.next", param="page_token")
    page = paginator.first("https://api.example.com/v1/users", {"limit": "100"})
    while page is not None:
        response = client.get(page.url, params=page.params)
        records = records_at(response.json(), "data")
        ...  # turn the records into SourceRecords
        page = paginator.next(page, response, records)

Every paginator is guarded against loops: an API that answers with the same next token forever
(or cycles between pages) makes :meth:`Paginator.next` raise :class:`~cdk.ConnectException`
naming the URL and parameters that would have been requested again (a listing remembers the
identity of each of its pages: a few hundred bytes a page).

A server that caps the page size below the one asked for makes a full page look short; the
paginators that stop on a short page (cursor, page number, offset) must be given a page size the
API honours (at most its documented maximum).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import httpx
from typing_extensions import override

from cdk.errors import ConnectException, DataException

__all__ = [
    "CursorPaginator",
    "LinkHeaderPaginator",
    "NextTokenPaginator",
    "OffsetPaginator",
    "Page",
    "PageNumberPaginator",
    "Paginator",
    "records_at",
]

_Identity = tuple[str, tuple[tuple[str, str], ...]]


class Page:
    """One request of a paginated listing: a URL and its query parameters.

    A query in the URL moves into :attr:`params` (a parameter given more than once becomes a
    list), so ``client.get(page.url, params=page.params)`` sends the whole query: httpx replaces
    a URL's query by the ``params`` given, it does not merge them.

    Attributes:
        url: the URL to request, without its query (absolute, or relative to a base URL).
        params: the query parameters; a value is a string, or a list for a repeated parameter.
    """

    __slots__ = ("_seen", "params", "url")

    def __init__(self, url: str, params: Mapping[str, str | Sequence[str]] | None = None) -> None:
        parsed = httpx.URL(url)
        query: dict[str, str | list[str]] = {}
        for key, value in parsed.params.multi_items():
            known = query.get(key)
            query[key] = value if known is None else [*_values(known), value]
        for key, given in (params or {}).items():
            query[key] = given if isinstance(given, str) else list(given)
        self.url = str(parsed.copy_with(query=None)) if parsed.query else url
        self.params = query
        # identity of each page of this listing -> identity of the page that led to it
        self._seen: dict[_Identity, _Identity | None] = {self._identity(): None}

    def _identity(self) -> _Identity:
        """The page as the server sees it: the URL and the sorted query items."""
        items = ((k, v) for k, vs in self.params.items() for v in _values(vs))
        return self.url, tuple(sorted(items))

    def _follow(self, nxt: Page, paginator: Paginator) -> Page:
        """``nxt`` as the page after this one, or :class:`ConnectException` on a loop."""
        here, there = self._identity(), nxt._identity()
        before = self._seen.get(there, ...)
        # Asking again for the page that follows this one (a retried step) is not a loop.
        if there == here or (before is not ... and before != here):
            raise ConnectException(
                f"Pagination loop: {type(paginator).__name__} would request {nxt.url} with "
                f"params {nxt.params} again (the page after {self.url} with params "
                f"{self.params}); the API keeps answering with a page already read"
            )
        self._seen[there] = here
        nxt._seen = self._seen
        return nxt

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Page):
            return NotImplemented
        return self.url == other.url and self.params == other.params

    __hash__ = None  # type: ignore[assignment]  # mutable params

    def __repr__(self) -> str:
        return f"Page(url={self.url!r}, params={self.params!r})"


class Paginator(ABC):
    """Turns the page just read into the next page to request (subclass :meth:`next_page`)."""

    def first(self, url: str, params: Mapping[str, str | Sequence[str]] | None = None) -> Page:
        """The first page of a listing: ``url`` with ``params`` and the paginator's own."""
        return Page(url, {**(params or {}), **self.first_params()})

    def first_params(self) -> dict[str, str]:
        """The query parameters the paginator adds to the first request (a page size, ...)."""
        return {}

    def next(self, page: Page, response: httpx.Response, records: Sequence[Any]) -> Page | None:
        """The page after ``page``, or ``None`` when the listing is complete.

        Args:
            page: the page that was requested.
            response: its response.
            records: the records taken from the response (see :func:`records_at`).

        Raises:
            ConnectException: the next page is one already requested in this listing.
            DataException: the response lacks what the paginator reads (a JSON body, a field).
        """
        nxt = self.next_page(page, response, records)
        return None if nxt is None else page._follow(nxt, self)

    @abstractmethod
    def next_page(
        self, page: Page, response: httpx.Response, records: Sequence[Any]
    ) -> Page | None:
        """Compute the page after ``page`` (without the loop guard of :meth:`next`)."""

    def __repr__(self) -> str:
        shown = ", ".join(f"{k.lstrip('_')}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({shown})"


class CursorPaginator(Paginator):
    """Keyset pagination: the next page asks for what follows the last record of this one.

    Examples: ``CursorPaginator("after_id", "id")`` sends ``?after_id=<id of the last record>``;
    ``CursorPaginator(params={"since": "updated_at", "after": "id"})`` sends both values of the
    last record. A callable ``cursor_from`` receives the page's records and returns the value
    (``None`` ends the listing).

    The listing ends on an empty page, or on a page shorter than ``page_size`` when given.

    Args:
        param: the query parameter that carries the cursor.
        cursor_from: a dotted field path into the last record, or a callable of the records.
        params: instead of ``param``/``cursor_from``: query parameter -> field path.
        page_size: the page size asked for; a shorter page is the last one.
        size_param: the query parameter that asks for ``page_size`` (sent when both are given).
    """

    def __init__(
        self,
        param: str | None = None,
        cursor_from: str | Callable[[Sequence[Any]], str | None] = "id",
        *,
        params: Mapping[str, str] | None = None,
        page_size: int | None = None,
        size_param: str | None = None,
    ) -> None:
        if (param is None) == (params is None):
            raise ConnectException("CursorPaginator takes either param or params, not both")
        self._param = param
        self._cursor_from = cursor_from
        self._params = dict(params or {})
        self._page_size = page_size
        self._size_param = size_param

    @override
    def first_params(self) -> dict[str, str]:
        return _size_params(self._size_param, self._page_size)

    @override
    def next_page(
        self, page: Page, response: httpx.Response, records: Sequence[Any]
    ) -> Page | None:
        if _is_last(records, self._page_size):
            return None
        last = records[-1]
        if self._param is None:
            values = {p: _field_text(last, path) for p, path in self._params.items()}
            return Page(page.url, {**page.params, **values})
        if callable(self._cursor_from):
            value = self._cursor_from(records)
            if value is None:
                return None
            return Page(page.url, {**page.params, self._param: str(value)})
        return Page(page.url, {**page.params, self._param: _field_text(last, self._cursor_from)})


class NextTokenPaginator(Paginator):
    """The body names the next page by a token sent back as a query parameter.

    The listing ends when the token is missing, null or empty.

    Args:
        token_path: dotted path of the token in the JSON body (``"meta.next"``).
        param: the query parameter that carries the token.
    """

    def __init__(self, token_path: str = "next_page_token", param: str = "page_token") -> None:
        self._token_path = token_path
        self._param = param

    @override
    def next_page(
        self, page: Page, response: httpx.Response, records: Sequence[Any]
    ) -> Page | None:
        token = _path_value(_body(response), self._token_path)
        if token is None or token == "":
            return None
        if isinstance(token, (Mapping, list)):
            raise DataException(
                f"Expected a next-page token at {self._token_path!r} of the response body, "
                f"found {token!r}",
                field=self._token_path,
            )
        return Page(page.url, {**page.params, self._param: _text(token)})


class LinkHeaderPaginator(Paginator):
    """Follows the RFC 8288 ``Link`` header: ``Link: <url>; rel="next"``.

    The linked URL is requested as given (it carries its own query), resolved against the URL of
    the request when relative. The listing ends when no link has the relation.

    Args:
        rel: the link relation to follow (compared case-insensitively).
    """

    def __init__(self, rel: str = "next") -> None:
        self._rel = rel.lower()

    @override
    def next_page(
        self, page: Page, response: httpx.Response, records: Sequence[Any]
    ) -> Page | None:
        for link in response.links.values():
            rels = next((v for k, v in link.items() if k.lower() == "rel"), "")
            if self._rel in rels.lower().split() and link.get("url"):
                return Page(str(response.request.url.join(link["url"])))
        return None


class PageNumberPaginator(Paginator):
    """Numbered pages: ``?page=1``, ``?page=2``, ...

    The listing ends on an empty page, on a page shorter than ``page_size`` (when given), or
    after the last page a ``total_pages_path`` of the body names.

    Args:
        param: the query parameter of the page number.
        start: the number of the first page.
        size_param: the query parameter that asks for ``page_size`` (``None``: not sent).
        page_size: the page size asked for.
        total_pages_path: dotted path in the body of the number of pages.
    """

    def __init__(
        self,
        param: str = "page",
        start: int = 1,
        size_param: str | None = "per_page",
        page_size: int | None = None,
        *,
        total_pages_path: str | None = None,
    ) -> None:
        self._param = param
        self._start = start
        self._size_param = size_param
        self._page_size = page_size
        self._total_pages_path = total_pages_path

    @override
    def first_params(self) -> dict[str, str]:
        return {self._param: str(self._start), **_size_params(self._size_param, self._page_size)}

    @override
    def next_page(
        self, page: Page, response: httpx.Response, records: Sequence[Any]
    ) -> Page | None:
        if _is_last(records, self._page_size):
            return None
        number = _int_param(page, self._param, self._start)
        if self._total_pages_path is not None:
            total = _int_at(response, self._total_pages_path)
            if total is not None and number - self._start + 1 >= total:
                return None
        return Page(page.url, {**page.params, self._param: str(number + 1)})


class OffsetPaginator(Paginator):
    """Offset and limit: ``?offset=0&limit=100``, ``?offset=100&limit=100``, ...

    The next offset is the current one plus the number of records read, so a server that
    returns fewer than asked never makes a record skipped. The listing ends on an empty page, a
    page shorter than ``limit``, or when the offset reaches the total a ``total_path`` names.

    Args:
        offset_param: the query parameter of the offset.
        limit_param: the query parameter of the page size.
        limit: the page size asked for.
        start: the first offset.
        total_path: dotted path in the body of the total number of records.
    """

    def __init__(
        self,
        offset_param: str = "offset",
        limit_param: str = "limit",
        limit: int = 100,
        *,
        start: int = 0,
        total_path: str | None = None,
    ) -> None:
        self._offset_param = offset_param
        self._limit_param = limit_param
        self._limit = limit
        self._start = start
        self._total_path = total_path

    @override
    def first_params(self) -> dict[str, str]:
        return {self._offset_param: str(self._start), self._limit_param: str(self._limit)}

    @override
    def next_page(
        self, page: Page, response: httpx.Response, records: Sequence[Any]
    ) -> Page | None:
        if _is_last(records, self._limit):
            return None
        offset = _int_param(page, self._offset_param, self._start) + len(records)
        if self._total_path is not None:
            total = _int_at(response, self._total_path)
            if total is not None and offset >= total:
                return None
        return Page(page.url, {**page.params, self._offset_param: str(offset)})


def records_at(body: Any, path: str) -> list[Any]:
    """The list of records at a dotted ``path`` of a JSON body (``""``: the body itself).

    Examples: ``records_at(body, "data")``, ``records_at(body, "results.items")``,
    ``records_at([...], "")``.

    Raises:
        DataException: there is no list at ``path``; the message names the path and the type (and
            keys) of the body.
    """
    found = body if path == "" else _path_value(body, path)
    if isinstance(found, list):
        return found
    shape = type(body).__name__
    if isinstance(body, Mapping):
        shape += f" with keys {sorted(map(str, body))}"
    what = "nothing" if found is None else f"a {type(found).__name__}"
    raise DataException(
        f"Expected a list of records at path {path!r} of the response body, found {what} "
        f"(the body is a {shape})",
        field=path or None,
    )


def _path_value(obj: Any, path: str) -> Any:
    """The value at a dotted path (``"a.b"``, ``"items.0.id"``), or ``None`` when absent."""
    for part in path.split(".") if path else ():
        if isinstance(obj, Mapping):
            obj = obj.get(part)
        elif isinstance(obj, list) and part.lstrip("-").isdigit():
            index = int(part)
            obj = obj[index] if -len(obj) <= index < len(obj) else None
        else:
            return None
        if obj is None:
            return None
    return obj


def _values(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else value


def _text(value: Any) -> str:
    """A JSON scalar as query-parameter text (``true``/``false`` for booleans)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _field_text(record: Any, path: str) -> str:
    value = _path_value(record, path)
    if value is None:
        raise DataException(
            f"The last record of the page has no value at {path!r} to continue from: {record!r}",
            field=path,
        )
    return _text(value)


def _body(response: httpx.Response) -> Any:
    try:
        return response.json()
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataException(
            f"The response of {response.request.method} {response.request.url} is not JSON: {exc}"
        ) from exc


def _int_at(response: httpx.Response, path: str) -> int | None:
    value = _path_value(_body(response), path)
    if value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError) as exc:
        raise DataException(
            f"Expected an integer at {path!r} of the response body, found {value!r}", field=path
        ) from exc


def _int_param(page: Page, param: str, default: int) -> int:
    raw = page.params.get(param)
    if raw is None:
        return default
    try:
        return int(raw) if isinstance(raw, str) else int(raw[-1])
    except ValueError as exc:
        raise ConnectException(f"Query parameter {param}={raw!r} of {page} is no integer") from exc


def _is_last(records: Sequence[Any], page_size: int | None) -> bool:
    return not records or (page_size is not None and len(records) < page_size)


def _size_params(size_param: str | None, page_size: int | None) -> dict[str, str]:
    if size_param is None or page_size is None:
        return {}
    return {size_param: str(page_size)}
