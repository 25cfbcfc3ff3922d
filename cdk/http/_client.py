"""``HttpClient``: one :class:`httpx.Client` that classifies failures, retries and limits its rate.

A source task owns one client (``start()`` builds it, ``stop()`` sets its stop event, the task's
thread closes it). Each call either returns a successful response (status below 400) or raises:

- :class:`~cdk.http.HttpFatalError` (a :class:`~cdk.errors.ConnectException`) at once for 401,
  403, 404 and every other 4xx but 408, 425 and 429: retrying cannot help, the task fails;
- :class:`~cdk.http.HttpRetriableError` (a :class:`~cdk.errors.RetriableException`) when 408,
  425, 429, 5xx, connection errors and timeouts persist past ``max_retries`` or the call's
  deadline: the worker calls ``poll()`` again later;
- :class:`~cdk.http.HttpInterruptedError` (a retriable error) when the stop event ends a wait.

Between attempts the client waits what ``Retry-After`` asks (delta-seconds or an HTTP-date),
never less, or else an exponential backoff with full jitter. A wait that would pass the deadline
is not started: the retriable error is raised at once and says how long the server asked for.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import logging
import random
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from types import TracebackType
from typing import Any

import httpx

from cdk.http._auth import secret_query_params, secret_values
from cdk.http._errors import (
    DEFAULT_SECRET_PARAMS,
    HttpFatalError,
    HttpInterruptedError,
    HttpRetriableError,
    excerpt,
    mask_url,
    scrub,
)
from cdk.http._rate_limit import RateLimiter

__all__ = ["RETRIABLE_STATUS", "HttpClient", "parse_retry_after"]

log = logging.getLogger("cdk.http")

#: The statuses below 500 that are retried (all of 5xx are).
RETRIABLE_STATUS: frozenset[int] = frozenset({408, 425, 429})


def parse_retry_after(value: str | None, now: dt.datetime | None = None) -> float | None:
    """The seconds a ``Retry-After`` header asks to wait: delta-seconds or an HTTP-date.

    Args:
        value: the header's value.
        now: the current time (UTC), for an HTTP-date; default: now.

    Returns:
        The wait in seconds (``0`` for a date in the past), or ``None`` without a usable value.
    """
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    now = now or dt.datetime.now(dt.timezone.utc)
    return max(0.0, (when - now).total_seconds())


class HttpClient:
    """A thin wrapper over one :class:`httpx.Client`: error classification, retries, rate limit.

    Args:
        base_url: the URL relative request URLs are joined to.
        auth: an authenticator (:mod:`cdk.http` or any :class:`httpx.Auth`); closed with the
            client when it has a ``close()``.
        timeout_s: the timeout of one request (connect, read, write, pool), also bounded by what
            is left of the call's deadline.
        deadline_s: the most time one call may take, retries and waits included.
        max_retries: retries after the first attempt (``0``: none).
        backoff_initial_s: the backoff before the first retry without ``Retry-After``; it
            doubles with each retry.
        backoff_max_s: the longest backoff.
        jitter: full jitter: wait a uniform random time between 0 and the backoff.
        rate_limiter: limits the rate and concurrency of the requests, retries included.
        headers: headers sent with every request.
        user_agent: the ``User-Agent`` (default ``connect-cdk/<version>``).
        stop: an event that, once set, ends any wait at once (:class:`HttpInterruptedError`)
            and keeps new requests from starting; a request in flight ends within ``timeout_s``.
        secret_params: more query parameter names whose values are masked in messages and logs
            (common names such as ``api_key``, ``access_token`` and ``token`` always are).
        follow_redirects: follow 3xx redirects.
        rng: the random numbers of the jitter (for tests).
        clock: a monotonic clock in seconds (for tests).
    """

    def __init__(
        self,
        base_url: str = "",
        *,
        auth: httpx.Auth | None = None,
        timeout_s: float = 30.0,
        deadline_s: float = 300.0,
        max_retries: int = 8,
        backoff_initial_s: float = 0.5,
        backoff_max_s: float = 60.0,
        jitter: bool = True,
        rate_limiter: RateLimiter | None = None,
        headers: Mapping[str, str] | None = None,
        user_agent: str | None = None,
        stop: threading.Event | None = None,
        secret_params: Iterable[str] = (),
        follow_redirects: bool = True,
        rng: random.Random | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_retries < 0:
            raise ValueError(f"max_retries must not be negative, not {max_retries}")
        self.timeout_s = timeout_s
        self.deadline_s = deadline_s
        self.max_retries = max_retries
        self.backoff_initial_s = backoff_initial_s
        self.backoff_max_s = backoff_max_s
        self.jitter = jitter
        self.rate_limiter = rate_limiter or RateLimiter()
        self.stop = stop if stop is not None else threading.Event()
        self._auth = auth
        self._secret_params = (
            DEFAULT_SECRET_PARAMS | secret_query_params(auth) | {p.lower() for p in secret_params}
        )
        self._secrets = secret_values(auth)
        self._rng = rng or random.Random()
        self._clock = clock
        # the server's last Retry-After, as a time of the clock: no request of this client (the
        # next call's included, after a call that gave up) is sent before it
        self._not_before = 0.0
        all_headers = {"User-Agent": user_agent or _default_user_agent()}
        all_headers.update(headers or {})
        _redact_httpx_log(self._secret_params)
        self._http = httpx.Client(
            base_url=base_url,
            auth=auth,
            headers=all_headers,
            timeout=timeout_s,
            follow_redirects=follow_redirects,
        )

    @property
    def base_url(self) -> httpx.URL:
        """The base URL."""
        return self._http.base_url

    # ------------------------------------------------------------------ requests
    def get(
        self,
        url: str,
        *,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        """``request("GET", url, ...)``."""
        return self.request("GET", url, params=params, headers=headers)

    def request(
        self,
        method: str,
        url: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        """Send a request, retrying what is retriable, and return the response (status < 400).

        Args:
            method: the HTTP method.
            url: the URL, absolute or relative to the base URL.
            params: query parameters.
            json: a body to send as JSON.
            headers: headers for this request (over the client's).

        Returns:
            The response, read.

        Raises:
            HttpFatalError: a status that retrying cannot fix (401, 403, 404, other 4xx).
            HttpRetriableError: retriable failures past ``max_retries`` or the deadline.
            HttpInterruptedError: the stop event was set.
        """
        method = method.upper()
        sent = self._http.build_request(method, url, params=params).url
        shown = mask_url(sent, self._secret_params)
        secrets = self._secrets + tuple(
            v for k, v in sent.params.multi_items() if k.lower() in self._secret_params and v
        )
        deadline = self._clock() + self.deadline_s
        attempts = 0
        while True:
            if self.stop.is_set():
                raise HttpInterruptedError(
                    f"{method} {shown} not sent: the task is stopping",
                    method=method,
                    url=shown,
                    attempts=attempts,
                )
            hold = self._not_before - self._clock()
            if hold > 0:
                if self._clock() + hold > deadline:
                    raise HttpRetriableError(
                        f"{method} {shown} not sent: the server asked to wait {hold:.3f} s more "
                        f"(Retry-After), past the deadline of {self.deadline_s:g} s per call",
                        method=method,
                        url=shown,
                        attempts=attempts,
                        retry_after_s=hold,
                    )
                if self._wait(hold):
                    raise HttpInterruptedError(
                        f"{method} {shown} not sent: stopped while waiting for Retry-After",
                        method=method,
                        url=shown,
                        attempts=attempts,
                    )
            remaining = deadline - self._clock()
            if not self.rate_limiter.acquire(timeout=max(0.0, remaining), stop=self.stop):
                what = "stopped" if self.stop.is_set() else "gave up"
                error = HttpInterruptedError if self.stop.is_set() else HttpRetriableError
                raise error(
                    f"{method} {shown} {what} waiting for the rate limit after {attempts} "
                    f"attempt(s) (deadline {self.deadline_s:g} s per call)",
                    method=method,
                    url=shown,
                    attempts=attempts,
                )
            attempts += 1
            response: httpx.Response | None = None
            failure = ""
            try:
                timeout = max(0.001, min(self.timeout_s, deadline - self._clock()))
                response = self._http.request(
                    method, url, params=params, json=json, headers=headers, timeout=timeout
                )
            except httpx.UnsupportedProtocol as exc:
                raise HttpFatalError(
                    scrub(f"{method} {shown} cannot be sent: {exc}", secrets),
                    method=method,
                    url=shown,
                ) from None
            except httpx.TransportError as exc:  # connecting, timeouts, a dropped connection
                failure = scrub(f"{type(exc).__name__}: {exc}".rstrip(": "), secrets)
            except httpx.RequestError as exc:  # too many redirects, an undecodable body
                raise HttpFatalError(
                    scrub(f"{method} {shown} failed: {type(exc).__name__}: {exc}", secrets),
                    method=method,
                    url=shown,
                ) from None
            except HttpRetriableError as exc:  # the token endpoint fails for now
                failure = exc.message
            finally:
                self.rate_limiter.release()
            status = None if response is None else response.status_code
            retry_after = None
            if response is not None:
                if response.status_code < 400:
                    return response
                failure = (
                    f"HTTP {response.status_code} {response.reason_phrase}: "
                    f"{excerpt(response.text, secrets)}"
                ).rstrip(": ")
                if response.status_code < 500 and response.status_code not in RETRIABLE_STATUS:
                    raise HttpFatalError(
                        f"{method} {shown} failed: {failure}{_hint(response.status_code)}",
                        method=method,
                        url=shown,
                        status=response.status_code,
                    )
                retry_after = parse_retry_after(response.headers.get("Retry-After"))
                if retry_after is not None:
                    self._not_before = max(self._not_before, self._clock() + retry_after)
            if attempts > self.max_retries:
                raise HttpRetriableError(
                    f"{method} {shown} failed after {attempts} attempt(s): {failure}",
                    method=method,
                    url=shown,
                    status=status,
                    attempts=attempts,
                    retry_after_s=retry_after,
                )
            if retry_after is not None:
                wait = retry_after
                why = f"the server asked to wait {wait:.3f} s (Retry-After)"
            else:
                wait = self._backoff(attempts - 1)
                why = f"backing off {wait:.3f} s"
            if self._clock() + wait > deadline:
                raise HttpRetriableError(
                    f"{method} {shown} failed: {failure}; {why}, past the deadline of "
                    f"{self.deadline_s:g} s per call, so it gives up after {attempts} attempt(s)",
                    method=method,
                    url=shown,
                    status=status,
                    attempts=attempts,
                    retry_after_s=retry_after,
                )
            log.log(
                logging.INFO if status in (429, 503) else logging.WARNING,
                "%s %s failed (%s); retry %d of %d: %s",
                method,
                shown,
                failure,
                attempts,
                self.max_retries,
                why,
            )
            if self._wait(wait):
                raise HttpInterruptedError(
                    f"{method} {shown}: stopped while waiting to retry ({failure})",
                    method=method,
                    url=shown,
                    status=status,
                    attempts=attempts,
                    retry_after_s=retry_after,
                )

    def _backoff(self, retry: int) -> float:
        """The wait before retry number ``retry + 1``: capped exponential, with full jitter."""
        ceiling = min(self.backoff_max_s, self.backoff_initial_s * 2.0 ** min(retry, 62))
        return self._rng.uniform(0.0, ceiling) if self.jitter else ceiling

    def _wait(self, seconds: float) -> bool:
        """Wait ``seconds`` (never less) on the stop event; whether it was set."""
        end = self._clock() + seconds
        while (left := end - self._clock()) > 0:
            if self.stop.wait(left):
                return True
        return self.stop.is_set()

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        """Close the connection pool and the authenticator; the client is unusable after."""
        self._http.close()
        close = getattr(self._auth, "close", None)
        if callable(close):
            close()

    def __enter__(self) -> HttpClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"HttpClient(base_url={mask_url(self._http.base_url, self._secret_params)!r}, "
            f"auth={self._auth!r}, rate_limiter={self.rate_limiter!r})"
        )


def _hint(status: int) -> str:
    if status in (401, 403):
        return " (check the credentials and their permissions, http.auth.*)"
    if status == 404:
        return " (check the URL, http.base.url)"
    return ""


def _default_user_agent() -> str:
    from cdk import __version__

    return f"connect-cdk/{__version__}"


class _RedactUrls(logging.Filter):
    """Masks secret query parameters in the URLs that httpx logs (``HTTP Request: GET ...``)."""

    def __init__(self) -> None:
        super().__init__()
        self.params: frozenset[str] = DEFAULT_SECRET_PARAMS

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and any(isinstance(a, httpx.URL) for a in record.args):
            record.args = tuple(
                mask_url(a, self.params) if isinstance(a, httpx.URL) else a for a in record.args
            )
        return True


_REDACTOR = _RedactUrls()
_REDACTOR_LOCK = threading.Lock()


def _redact_httpx_log(params: frozenset[str]) -> None:
    """Install the filter on the ``httpx`` logger (once) and teach it ``params``."""
    with _REDACTOR_LOCK:
        logger = logging.getLogger("httpx")
        if _REDACTOR not in logger.filters:
            logger.addFilter(_REDACTOR)
        _REDACTOR.params = _REDACTOR.params | params
