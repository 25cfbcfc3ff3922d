"""OAuth2 authenticators: the client credentials and the refresh token grants (RFC 6749).

They fetch an access token from the token endpoint (a form POST), cache it, renew it shortly
before it expires, and on a ``401`` from the API renew it once and send the request once more.
Concurrent requests share one renewal (a lock). A refresh token that the token endpoint rotates
replaces the old one. The flows do blocking I/O and are meant for the synchronous
:class:`httpx.Client` (which :class:`~cdk.http.HttpClient` wraps). Secrets never appear in
``repr()``, messages or logs.
"""

from __future__ import annotations

import base64
import json
import logging
import threading
import time
from collections.abc import Callable, Generator, Iterable
from typing import Literal
from urllib.parse import parse_qsl

import httpx
from typing_extensions import override

from cdk.config import Password
from cdk.http._auth import Authenticator, reveal
from cdk.http._errors import HIDDEN, HttpFatalError, HttpRetriableError, excerpt, mask_url, scrub

__all__ = ["OAuth2ClientCredentials", "OAuth2RefreshToken"]

log = logging.getLogger("cdk.http")

_RETRIABLE_TOKEN_STATUS = frozenset({408, 425, 429})


class _OAuth2(Authenticator):
    """An access token from a token endpoint, cached, renewed before expiry and after a 401."""

    _grant_name = ""

    def __init__(
        self,
        token_url: str,
        client_id: str,
        client_secret: str | Password | None,
        *,
        scopes: Iterable[str],
        refresh_margin_s: float,
        timeout_s: float,
        client_auth: Literal["body", "basic"],
        clock: Callable[[], float],
    ) -> None:
        self.token_url = token_url
        self.client_id = client_id
        self._client_secret = reveal(client_secret)
        self.scopes = tuple(scopes)
        self.refresh_margin_s = refresh_margin_s
        self.timeout_s = timeout_s
        self.client_auth = client_auth
        self._clock = clock
        self._lock = threading.Lock()
        self._access: str | None = None
        self._renew_at: float | None = None
        self._http: httpx.Client | None = None

    # ------------------------------------------------------------------ flow
    @override
    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        token = self._current_token()
        request.headers["Authorization"] = f"Bearer {token}"
        response = yield request
        if response.status_code == 401:
            log.info(
                "%s %s answered 401: renewing the OAuth2 access token and sending it once more",
                request.method,
                mask_url(request.url),
            )
            request.headers["Authorization"] = f"Bearer {self._renew(token)}"
            yield request

    def _current_token(self) -> str:
        with self._lock:
            if self._access is None or (
                self._renew_at is not None and self._clock() >= self._renew_at
            ):
                return self._fetch()
            return self._access

    def _renew(self, stale: str) -> str:
        with self._lock:
            if self._access is None or self._access == stale:
                return self._fetch()
            return self._access  # another request renewed it meanwhile

    # ------------------------------------------------------------------ token endpoint
    def _grant(self) -> dict[str, str]:
        raise NotImplementedError  # pragma: no cover

    def _rotated(self, refresh_token: str) -> None:
        """A new refresh token came with the access token (only the refresh-token grant)."""

    def _fetch(self) -> str:
        """Ask the token endpoint for an access token (holding the lock)."""
        data = {"grant_type": self._grant_name, **self._grant()}
        if self.scopes:
            data["scope"] = " ".join(self.scopes)
        headers = {"Accept": "application/json"}
        if self.client_auth == "basic":
            raw = f"{self.client_id}:{self._client_secret or ''}".encode()
            headers["Authorization"] = "Basic " + base64.b64encode(raw).decode("ascii")
        else:
            data["client_id"] = self.client_id
            if self._client_secret is not None:
                data["client_secret"] = self._client_secret
        if self._http is None:
            self._http = httpx.Client(timeout=self.timeout_s)
        url = mask_url(self.token_url)
        where = f"OAuth2 token request ({self._grant_name}) to {url}"
        try:
            response = self._http.post(self.token_url, data=data, headers=headers)
        except httpx.TransportError as exc:
            message = scrub(f"{where} failed: {type(exc).__name__}: {exc}", self._secrets())
            raise HttpRetriableError(message, method="POST", url=url, attempts=1) from None
        body = _token_body(response)
        status = response.status_code
        if status in _RETRIABLE_TOKEN_STATUS or status >= 500:
            message = f"{where} failed: HTTP {status} {response.reason_phrase}"
            raise HttpRetriableError(
                scrub(message, self._secrets()), method="POST", url=url, status=status, attempts=1
            )
        if status >= 300:
            code = str(body.get("error") or "") or None
            message = f"{where} was refused: HTTP {status} {response.reason_phrase}"
            if code:
                message += f", error {code!r}"
                if body.get("error_description"):
                    message += f" ({body['error_description']})"
            else:
                message += f": {excerpt(response.text, self._secrets())}"
            message += "; check the client id, secret, scopes and token URL"
            raise HttpFatalError(
                scrub(message, self._secrets()),
                method="POST",
                url=url,
                status=status,
                error_code=code,
            )
        token = body.get("access_token")
        if not isinstance(token, str) or not token:
            raise HttpFatalError(
                f"{where} answered HTTP {status} without an access_token",
                method="POST",
                url=url,
                status=status,
            )
        self._access = token
        self._renew_at = None
        try:
            expires_in = float(body.get("expires_in"))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            expires_in = None
        if expires_in is not None:
            # Renew `refresh_margin_s` before expiry, but use at least half of the lifetime.
            self._renew_at = self._clock() + expires_in - min(self.refresh_margin_s, expires_in / 2)
        rotated = body.get("refresh_token")
        if isinstance(rotated, str) and rotated:
            self._rotated(rotated)
        return token

    @override
    def _secrets(self) -> tuple[str, ...]:
        return tuple(s for s in (self._client_secret, self._access) if s)

    @override
    def _query_params(self) -> frozenset[str]:
        return frozenset()

    @override
    def close(self) -> None:
        """Close the connection pool of the token endpoint."""
        with self._lock:
            if self._http is not None:
                self._http.close()
                self._http = None

    def _repr_fields(self) -> str:
        return (
            f"token_url={mask_url(self.token_url)!r}, client_id={self.client_id!r}, "
            f"client_secret={HIDDEN}, scopes={self.scopes!r}"
        )


def _token_body(response: httpx.Response) -> dict[str, object]:
    """The token endpoint's answer: JSON, or form-encoded as some providers send it."""
    text = response.text
    try:
        body = json.loads(text)
    except ValueError:
        return dict(parse_qsl(text)) if "=" in text else {}
    return body if isinstance(body, dict) else {}


class OAuth2ClientCredentials(_OAuth2):
    """OAuth2's client credentials grant (RFC 6749 section 4.4).

    Args:
        token_url: the token endpoint.
        client_id: the client id.
        client_secret: the client secret.
        scopes: the scopes to ask for (sent space-separated as ``scope``; none: the default).
        refresh_margin_s: renew the token this long before it expires (at most half of its
            lifetime). A token without ``expires_in`` is renewed only after a 401.
        timeout_s: the timeout of a token request.
        client_auth: send the client credentials in the form body (``"body"``,
            client_secret_post) or as HTTP Basic authentication (``"basic"``).
        clock: a monotonic clock in seconds (for tests).

    A request whose token cannot be fetched raises :class:`~cdk.http.HttpFatalError` when the
    token endpoint refuses (4xx; the message names the URL and the OAuth2 ``error`` code) and
    :class:`~cdk.http.HttpRetriableError` when it fails for now (5xx, 429, network).
    """

    _grant_name = "client_credentials"

    def __init__(
        self,
        token_url: str,
        client_id: str,
        client_secret: str | Password,
        *,
        scopes: Iterable[str] = (),
        refresh_margin_s: float = 60.0,
        timeout_s: float = 30.0,
        client_auth: Literal["body", "basic"] = "body",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(
            token_url,
            client_id,
            client_secret,
            scopes=scopes,
            refresh_margin_s=refresh_margin_s,
            timeout_s=timeout_s,
            client_auth=client_auth,
            clock=clock,
        )

    @override
    def _grant(self) -> dict[str, str]:
        return {}

    def __repr__(self) -> str:
        return f"OAuth2ClientCredentials({self._repr_fields()})"


class OAuth2RefreshToken(_OAuth2):
    """OAuth2's refresh token grant (RFC 6749 section 6).

    A long-lived refresh token is traded for access tokens; a new refresh token in an answer
    replaces the old one (rotation).

    Args:
        token_url: the token endpoint.
        client_id: the client id.
        client_secret: the client secret, ``None`` for a public client.
        refresh_token: the refresh token.
        scopes: the scopes to ask for (none: those of the grant).
        refresh_margin_s: renew the token this long before it expires (at most half of its
            lifetime).
        timeout_s: the timeout of a token request.
        client_auth: send the client credentials in the form body or as HTTP Basic.
        on_rotate: called (under the lock) with a rotated refresh token, e.g. to store it.
        clock: a monotonic clock in seconds (for tests).
    """

    _grant_name = "refresh_token"

    def __init__(
        self,
        token_url: str,
        client_id: str,
        client_secret: str | Password | None,
        refresh_token: str | Password,
        *,
        scopes: Iterable[str] = (),
        refresh_margin_s: float = 60.0,
        timeout_s: float = 30.0,
        client_auth: Literal["body", "basic"] = "body",
        on_rotate: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(
            token_url,
            client_id,
            client_secret,
            scopes=scopes,
            refresh_margin_s=refresh_margin_s,
            timeout_s=timeout_s,
            client_auth=client_auth,
            clock=clock,
        )
        self._refresh_token = reveal(refresh_token) or ""
        if not self._refresh_token:
            raise ValueError("OAuth2RefreshToken needs a non-empty refresh token")
        self._on_rotate = on_rotate

    @override
    def _grant(self) -> dict[str, str]:
        return {"refresh_token": self._refresh_token}

    @override
    def _rotated(self, refresh_token: str) -> None:
        if refresh_token != self._refresh_token:
            log.info("The token endpoint %s rotated the refresh token", mask_url(self.token_url))
            self._refresh_token = refresh_token
            if self._on_rotate is not None:
                self._on_rotate(refresh_token)

    @override
    def _secrets(self) -> tuple[str, ...]:
        return (*super()._secrets(), self._refresh_token)

    def __repr__(self) -> str:
        return f"OAuth2RefreshToken({self._repr_fields()}, refresh_token={HIDDEN})"
