"""The exceptions of :mod:`cdk.http`, branches of the kit's tree in :mod:`cdk.errors`.

::

    ConnectException                       (cdk.errors)
    ├── HttpFatalError                     a request failed for good (401, 403, 404, other 4xx,
    │                                      a token endpoint refusing the credentials)
    └── RetriableException                 (cdk.errors)
        └── HttpRetriableError             retries exhausted, or the deadline reached (429, 5xx,
            │                              connection errors, timeouts)
            └── HttpInterruptedError       the stop event ended a wait (the task is stopping)

Every one names the request: its method, its URL with secret query parameters masked, and the
HTTP status when there was a response. Messages never contain credentials.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import unquote_plus

from cdk.errors import ConnectException, RetriableException

__all__ = [
    "DEFAULT_SECRET_PARAMS",
    "HIDDEN",
    "HttpFatalError",
    "HttpInterruptedError",
    "HttpRetriableError",
    "excerpt",
    "mask_url",
    "scrub",
]


class HttpFatalError(ConnectException):
    """A request failed in a way that retrying cannot fix; the task should fail.

    Args:
        message: the description, naming the request.
        method: the HTTP method.
        url: the URL, secret query parameters masked.
        status: the HTTP status of the response, ``None`` when there was none.
        error_code: the OAuth2 ``error`` code of a token endpoint's answer, when there was one.

    Attributes:
        method: the HTTP method.
        url: the URL, secret query parameters masked.
        status: the HTTP status of the response, ``None`` when there was none.
        error_code: the OAuth2 ``error`` code of a token endpoint's answer, when there was one.
    """

    def __init__(
        self,
        message: str,
        *,
        method: str,
        url: str,
        status: int | None = None,
        error_code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.method = method
        self.url = url
        self.status = status
        self.error_code = error_code


class HttpRetriableError(RetriableException):
    """A request failed for now (rate limited, server error, network); retry the poll later.

    Args:
        message: the description, naming the request.
        method: the HTTP method.
        url: the URL, secret query parameters masked.
        status: the HTTP status of the last response, ``None`` when there was none.
        attempts: how many requests were sent.
        retry_after_s: how long the server asked to wait (``Retry-After``), when it did.

    Attributes:
        method: the HTTP method.
        url: the URL, secret query parameters masked.
        status: the HTTP status of the last response, ``None`` when there was none.
        attempts: how many requests were sent.
        retry_after_s: how long the server asked to wait (``Retry-After``), when it did.
    """

    def __init__(
        self,
        message: str,
        *,
        method: str,
        url: str,
        status: int | None = None,
        attempts: int = 0,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.method = method
        self.url = url
        self.status = status
        self.attempts = attempts
        self.retry_after_s = retry_after_s


class HttpInterruptedError(HttpRetriableError):
    """The stop event was set while a request waited (backoff, ``Retry-After``, rate limit).

    A task's ``poll()`` may catch it and return ``None``: the task is stopping.
    """


#: Query parameters that are masked in every URL the package shows, whatever the authenticator.
DEFAULT_SECRET_PARAMS: frozenset[str] = frozenset(
    {
        "access_token",
        "api-key",
        "api_key",
        "apikey",
        "client_secret",
        "key",
        "password",
        "refresh_token",
        "secret",
        "sig",
        "signature",
        "token",
    }
)

HIDDEN = "[hidden]"


def mask_url(url: object, secret_params: Iterable[str] = DEFAULT_SECRET_PARAMS) -> str:
    """Render ``url`` with the values of secret query parameters and any password masked.

    Args:
        url: a URL (``str`` or :class:`httpx.URL`).
        secret_params: the names (case-insensitive) of the parameters to mask.

    Returns:
        The URL as text, e.g. ``https://api.example.com/items?api_key=[hidden]&page=2``.
    """
    text = str(url)
    names = {name.lower() for name in secret_params}
    base, hash_, fragment = text.partition("#")
    head, question, query = base.partition("?")
    scheme, sep, rest = head.partition("://")
    if sep:
        authority, slash, path = rest.partition("/")
        userinfo, at, host = authority.rpartition("@")
        if at and ":" in userinfo:
            userinfo = userinfo.split(":", 1)[0] + ":" + HIDDEN
        head = scheme + sep + (userinfo + at if at else "") + host + slash + path
    if question:
        parts = []
        for part in query.split("&"):
            name, eq, _value = part.partition("=")
            if eq and unquote_plus(name).lower() in names:
                part = name + "=" + HIDDEN
            parts.append(part)
        query = "&".join(parts)
    return head + question + query + hash_ + fragment


def scrub(text: str, secrets: Iterable[str]) -> str:
    """Replace every occurrence of a secret value in ``text`` with ``[hidden]``."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, HIDDEN)
    return text


def excerpt(text: str, secrets: Iterable[str] = (), limit: int = 200) -> str:
    """The start of a response body for a message: whitespace collapsed, secrets scrubbed."""
    short = " ".join(text.split())
    if len(short) > limit:
        short = short[:limit] + "..."
    return scrub(short, secrets)
