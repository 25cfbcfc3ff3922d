"""A real, scriptable HTTP server on 127.0.0.1 for the cdk.http tests.

Each path has a queue of canned replies (consumed in order) and an optional standing reply for
when the queue is empty; without either the server answers 599 so that a test notices. Every
request is logged with its arrival time (``time.monotonic()`` and ``time.time()``), headers,
query and body. HTTP/1.0, so each request has its connection and no handler thread outlives it.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests._wait import wait_until


@dataclass
class Received:
    """A request as the server saw it."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]  # lower-case names
    body: bytes
    at: float  # time.monotonic() on arrival
    wall: float  # time.time() on arrival

    def form(self) -> dict[str, str]:
        return {k: v[0] for k, v in parse_qs(self.body.decode()).items()}


@dataclass
class Reply:
    """A canned answer; ``block`` makes the handler wait for the event first (up to 5 s)."""

    status: int = 200
    body: Any = b""
    headers: dict[str, str] = field(default_factory=dict)
    block: threading.Event | None = None

    def payload(self) -> tuple[bytes, str]:
        if isinstance(self.body, bytes):
            return self.body, "application/octet-stream"
        if isinstance(self.body, str):
            return self.body.encode(), "text/plain; charset=utf-8"
        return json.dumps(self.body).encode(), "application/json"


Script = Reply | Callable[[Received], Reply]


class ScriptedServer:
    """The server; use it as a context manager (it starts and stops a serving thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queues: dict[str, deque[Script]] = {}
        self._standing: dict[str, Script] = {}
        self.received: list[Received] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.errors: list[BaseException] = []
        self._httpd = _Server(("127.0.0.1", 0), _handler(self))
        self._httpd.owner = self
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    # ------------------------------------------------------------ scripting
    def reply(self, path: str, *replies: Script) -> None:
        """Queue replies for ``path`` (consumed one per request)."""
        with self._lock:
            self._queues.setdefault(path, deque()).extend(replies)

    def always(self, path: str, reply: Script) -> None:
        """The reply to ``path`` once its queue is empty."""
        with self._lock:
            self._standing[path] = reply

    def url(self, path: str = "") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    def requests(self, path: str | None = None) -> list[Received]:
        with self._lock:
            return [r for r in self.received if path is None or r.path == path]

    def wait_for(self, count: int, path: str | None = None, timeout: float = 5.0) -> None:
        wait_until(
            lambda: len(self.requests(path)) >= count,
            timeout=timeout,
            interval=0.005,
            message=lambda: f"{count} requests to {path}, got {len(self.requests(path))}",
        )

    # ------------------------------------------------------------ serving
    def _answer(self, received: Received) -> Reply:
        with self._lock:
            self.received.append(received)
            queue = self._queues.get(received.path)
            script = queue.popleft() if queue else self._standing.get(received.path)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        if script is None:
            return Reply(599, f"no reply scripted for {received.method} {received.path}")
        return script(received) if callable(script) else script

    def _done(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)
        assert not self._thread.is_alive(), "the test server did not stop"
        assert self.errors == [], f"the test server failed: {self.errors}"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: ScriptedServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        if not isinstance(error, ConnectionError):  # a client that gave up (a timeout test)
            self.owner.errors.append(error)  # type: ignore[arg-type]


def _handler(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _handle(self) -> None:
            at, wall = time.monotonic(), time.time()
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            received = Received(
                self.command,
                parts.path,
                parse_qs(parts.query, keep_blank_values=True),
                {k.lower(): v for k, v in self.headers.items()},
                body,
                at,
                wall,
            )
            reply = server._answer(received)
            try:
                if reply.block is not None:
                    reply.block.wait(5)
            finally:
                # No longer in flight before the first byte of the answer leaves: the client
                # cannot start its next request while this one still counts.
                server._done()
            payload, content_type = reply.payload()
            self.send_response(reply.status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _handle

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@contextmanager
def running() -> Iterator[ScriptedServer]:
    with ScriptedServer() as server:
        yield server
