"""An HTTP proxy on loopback that rate-limits like a SaaS API, and counts what arrives early.

The connector under test is pointed at the proxy instead of the API. Requests go through to the
API until faults are queued (:meth:`HttpFaultProxy.rate_limit`): then each of the next requests
is answered with the fault's status (429 or 503) and a ``Retry-After`` (delta-seconds or an
HTTP-date), and the proxy remembers until when the client was asked to wait. A request that
arrives before that time is **early**: it is counted (with how early it was) and answered 429
again with the time that is left, as an API enforcing its limit would. The counts are the
evidence of the certification's rate-limit check.
"""

from __future__ import annotations

import email.utils
import http.client
import math
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

__all__ = ["HttpFaultProxy", "ProxyCounts"]

#: The longest the proxy waits for the API.
UPSTREAM_TIMEOUT_S = 10.0
#: A request this little before its time is not early (timer and clock granularity).
TOLERANCE_S = 0.01
#: Headers not passed on (hop by hop).
_HOP = frozenset(
    {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "host"}
)


@dataclass
class ProxyCounts:
    """What arrived at the proxy.

    Attributes:
        requests: every request.
        forwarded: those passed to the API.
        limited: those answered with a queued fault (429/503 with Retry-After).
        early: those that arrived before the time the last Retry-After gave.
        earliest_s: how much too early the earliest of them was (0.0 when none was).
    """

    requests: int = 0
    forwarded: int = 0
    limited: int = 0
    early: int = 0
    earliest_s: float = 0.0
    early_at: list[str] = field(default_factory=list)

    def as_evidence(self) -> dict[str, Any]:
        """The counts as a certification records them."""
        return {
            "requests": self.requests,
            "forwarded to the API": self.forwarded,
            "answered 429/503 with Retry-After": self.limited,
            "arrived before Retry-After allowed": self.early,
            "earliest by (s)": round(self.earliest_s, 3),
        }


@dataclass(frozen=True)
class _Fault:
    status: int
    retry_after_s: float
    http_date: bool


class HttpFaultProxy:
    """Forwards ``http://127.0.0.1:<port>`` to the API at ``upstream`` (a base URL).

    Args:
        upstream: the API's base URL (``http://host:port``; a path prefix is kept).
    """

    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"the proxy forwards to an http:// URL, not {upstream!r}")
        self._host = parts.hostname
        self._port = parts.port or 80
        self._prefix = parts.path.rstrip("/")
        self._lock = threading.Lock()
        self._faults: deque[_Fault] = deque()
        self._not_before = 0.0  # time.monotonic() before which a request is early
        self.counts = ProxyCounts()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> HttpFaultProxy:
        """Listen on a free loopback port."""
        proxy = self

        class Handler(_Handler):
            owner = proxy

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving (idempotent)."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> HttpFaultProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """The proxy's base URL, to give the connector instead of the API's."""
        if self._server is None:
            raise RuntimeError("the proxy is not started")
        return f"http://127.0.0.1:{self._server.server_address[1]}{self._prefix}"

    # ------------------------------------------------------------------ faults
    def rate_limit(
        self, count: int, *, status: int = 429, retry_after_s: float = 1.0, http_date: bool = False
    ) -> None:
        """Answer the next ``count`` requests (that are not early) with ``status``.

        Each answer carries a ``Retry-After`` of ``retry_after_s`` (whole seconds, rounded up;
        an HTTP-date with ``http_date``).
        """
        with self._lock:
            for _ in range(count):
                self._faults.append(_Fault(status, retry_after_s, http_date))

    @property
    def pending(self) -> int:
        """Queued faults not answered yet."""
        with self._lock:
            return len(self._faults)

    def snapshot(self) -> ProxyCounts:
        """A copy of the counts."""
        with self._lock:
            c = self.counts
            return ProxyCounts(
                c.requests, c.forwarded, c.limited, c.early, c.earliest_s, list(c.early_at)
            )

    def _decide(self, path: str) -> tuple[int, dict[str, str]] | None:
        """The fault answer to a request (status, headers), or None to forward it."""
        now = time.monotonic()
        with self._lock:
            self.counts.requests += 1
            if now < self._not_before - TOLERANCE_S:
                early = self._not_before - now
                self.counts.early += 1
                self.counts.earliest_s = max(self.counts.earliest_s, early)
                if len(self.counts.early_at) < 20:
                    self.counts.early_at.append(f"{path} {early:.3f}s early")
                return 429, {"Retry-After": str(max(1, math.ceil(early)))}
            if not self._faults:
                self.counts.forwarded += 1
                return None
            fault = self._faults.popleft()
            self.counts.limited += 1
            seconds = max(1, math.ceil(fault.retry_after_s))
            if fault.http_date:
                # an HTTP-date has whole seconds: the wait ends at the next second boundary after
                # ``seconds`` from now, and the proxy holds the client to that same instant
                wall = time.time()
                until = math.ceil(wall + seconds)
                self._not_before = now + (until - wall)
                value = email.utils.formatdate(until, usegmt=True)
            else:
                self._not_before = now + seconds
                value = str(seconds)
            return fault.status, {"Retry-After": value}

    def _forward(self, method: str, path: str, headers: dict[str, str], body: bytes) -> Any:
        connection = http.client.HTTPConnection(self._host, self._port, timeout=UPSTREAM_TIMEOUT_S)
        try:
            connection.request(method, path, body=body or None, headers=headers)
            response = connection.getresponse()
            return response.status, response.getheaders(), response.read()
        finally:
            connection.close()


class _Handler(BaseHTTPRequestHandler):
    owner: HttpFaultProxy
    protocol_version = "HTTP/1.1"

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        fault = self.owner._decide(self.path)
        if fault is not None:
            status, headers = fault
            self._reply(status, list(headers.items()), b'{"error":"rate limited"}')
            return
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
        try:
            status, answer_headers, payload = self.owner._forward(
                self.command, self.path, headers, body
            )
        except OSError as exc:
            self._reply(502, [], f'{{"error":"the API did not answer: {exc}"}}'.encode())
            return
        kept = [(k, v) for k, v in answer_headers if k.lower() not in _HOP | {"content-length"}]
        self._reply(status, kept, payload)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle

    def _reply(self, status: int, headers: list[tuple[str, str]], payload: bytes) -> None:
        self.send_response(status)
        for key, value in headers:
            self.send_header(key, value)
        if not any(k.lower() == "content-type" for k, _ in headers):
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the proxy counts requests, it does not log them."""
