"""Registries that fail, for the converter tests: down, silent, answering an HTTP error.

Each is a context manager that yields the URL and stops what it started on exit.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

__all__ = ["answering_server", "failing", "refused_port", "silent_server"]


@contextmanager
def refused_port() -> Iterator[str]:
    """A loopback port nothing listens on (bound, then closed)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    yield f"http://127.0.0.1:{port}"


@contextmanager
def silent_server() -> Iterator[str]:
    """A socket that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.05)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            accepted.append(conn)  # hold it open, never reply

    thread = threading.Thread(target=accept, name="silent-registry", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(5)
        for conn in accepted:
            conn.close()
        server.close()


class _Answer(BaseHTTPRequestHandler):
    status = 503
    body: ClassVar[dict[str, Any]] = {"error_code": 50301, "message": "registry overloaded"}

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _reply(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        data = json.dumps(self.body).encode()
        self.send_response(self.status)
        self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = _reply
    do_POST = _reply


@contextmanager
def answering_server(status: int, body: dict[str, Any]) -> Iterator[str]:
    handler = type("Handler", (_Answer,), {"status": status, "body": body})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="answering-registry", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@contextmanager
def failing(mode: str) -> Iterator[str]:
    if mode == "down":
        with refused_port() as url:
            yield url
    elif mode == "silent":
        with silent_server() as url:
            yield url
    else:
        with answering_server(503, _Answer.body) as url:
            yield url
