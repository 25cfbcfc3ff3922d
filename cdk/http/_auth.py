"""Authenticators for HTTP APIs, as :class:`httpx.Auth` flows an :class:`httpx.Client` runs.

Static credentials (:class:`BearerTokenAuth`, :class:`ApiKeyAuth`, :class:`BasicAuth`) add a
header or a query parameter to each request (the OAuth2 flows are
:class:`~cdk.http.OAuth2ClientCredentials` and :class:`~cdk.http.OAuth2RefreshToken`).
Secrets are kept private: ``repr()`` shows them as ``[hidden]``, and no message or log line
contains them.
"""

from __future__ import annotations

import base64
from collections.abc import Generator

import httpx
from typing_extensions import override

from cdk.config import Password
from cdk.http._errors import HIDDEN

__all__ = [
    "ApiKeyAuth",
    "Authenticator",
    "BasicAuth",
    "BearerTokenAuth",
    "reveal",
    "secret_query_params",
    "secret_values",
]


def reveal(value: str | Password | None) -> str | None:
    """The secret of a :class:`~cdk.config.Password`, or the string itself."""
    return value.value() if isinstance(value, Password) else value


def secret_query_params(auth: httpx.Auth | None) -> frozenset[str]:
    """The query parameters ``auth`` puts secrets in (masked in every URL shown)."""
    return auth._query_params() if isinstance(auth, Authenticator) else frozenset()


def secret_values(auth: httpx.Auth | None) -> tuple[str, ...]:
    """The secrets of ``auth``, to scrub from text a server sent back (never to show)."""
    return auth._secrets() if isinstance(auth, Authenticator) else ()


class Authenticator(httpx.Auth):
    """What the kit's authenticators share: they tell the client which values are secret.

    (Public within the package only: :mod:`cdk.http` does not export it.)
    """

    def _secrets(self) -> tuple[str, ...]:
        return ()

    def _query_params(self) -> frozenset[str]:
        return frozenset()

    def close(self) -> None:
        """Release what the authenticator holds (nothing, unless it talks to a token endpoint)."""


class BearerTokenAuth(Authenticator):
    """Sends ``Authorization: Bearer <token>``.

    Args:
        token: the token.
    """

    def __init__(self, token: str | Password) -> None:
        self._token = reveal(token) or ""
        if not self._token:
            raise ValueError("BearerTokenAuth needs a non-empty token")

    @override
    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = f"Bearer {self._token}"
        yield request

    @override
    def _secrets(self) -> tuple[str, ...]:
        return (self._token,)

    def __repr__(self) -> str:
        return f"BearerTokenAuth(token={HIDDEN})"


class ApiKeyAuth(Authenticator):
    """Sends an API key in a header (``X-API-Key`` unless told otherwise) or a query parameter.

    Args:
        key: the API key.
        header: the header to send it in; ``None`` when ``query_param`` is given.
        query_param: the query parameter to send it in instead of a header. Its value is masked
            in every URL the kit shows.

    Raises:
        ValueError: the key is empty, or both or neither of ``header`` and ``query_param`` are
            given.
    """

    def __init__(
        self, key: str | Password, *, header: str | None = None, query_param: str | None = None
    ) -> None:
        self._key = reveal(key) or ""
        if not self._key:
            raise ValueError("ApiKeyAuth needs a non-empty key")
        if header and query_param:
            raise ValueError("ApiKeyAuth takes a header or a query parameter, not both")
        self.header = None if query_param else (header or "X-API-Key")
        self.query_param = query_param or None

    @override
    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        if self.query_param:
            request.url = request.url.copy_set_param(self.query_param, self._key)
        else:
            assert self.header is not None
            request.headers[self.header] = self._key
        yield request

    @override
    def _secrets(self) -> tuple[str, ...]:
        return (self._key,)

    @override
    def _query_params(self) -> frozenset[str]:
        return frozenset({self.query_param}) if self.query_param else frozenset()

    def __repr__(self) -> str:
        where = (
            f"query_param={self.query_param!r}" if self.query_param else f"header={self.header!r}"
        )
        return f"ApiKeyAuth(key={HIDDEN}, {where})"


class BasicAuth(Authenticator):
    """Sends ``Authorization: Basic <base64(username:password)>`` (RFC 7617, UTF-8).

    Args:
        username: the user name.
        password: the password (may be empty, as for APIs that take a key as the user name).
    """

    def __init__(self, username: str, password: str | Password | None = "") -> None:
        self.username = username
        self._password = reveal(password) or ""
        raw = f"{username}:{self._password}".encode()
        self._header = "Basic " + base64.b64encode(raw).decode("ascii")

    @override
    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = self._header
        yield request

    @override
    def _secrets(self) -> tuple[str, ...]:
        return (self._password, self._header.split(" ", 1)[1])

    def __repr__(self) -> str:
        return f"BasicAuth(username={self.username!r}, password={HIDDEN})"
