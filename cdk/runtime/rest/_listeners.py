"""The REST API's listening sockets: one HTTP server per listener, HTTPS ones wrapped in TLS.

The TLS handshake of a connection happens on that connection's own thread, never on the thread
that accepts connections, so a slow or hostile client cannot hold the listener up; a failed
handshake (a plain HTTP request to an HTTPS port, a client without the certificate
``ssl.client.auth=required`` asks for) closes that connection and is logged at DEBUG.
"""

from __future__ import annotations

import logging
import socket
import ssl
import threading
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from typing import Any

from cdk.errors import ConnectException
from cdk.runtime._worker_config import Listener

__all__ = ["BoundListener", "bind_listener", "is_loopback"]

log = logging.getLogger("cdk.runtime.rest")

_LOOPBACK_NAMES = frozenset({"localhost", "ip6-localhost"})


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address or name (127.0.0.0/8, ::1, localhost)."""
    if host.lower() in _LOOPBACK_NAMES:
        return True
    return host.startswith("127.") or host in ("::1", "0:0:0:0:0:0:0:1")


class _Server(ThreadingHTTPServer):
    daemon_threads = False
    block_on_close = True

    def __init__(self, address: tuple[str, int], handler: Any, tls: ssl.SSLContext | None) -> None:
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.tls = tls
        super().__init__(address, handler)

    def get_request(self) -> tuple[Any, Any]:
        connection, address = super().get_request()
        if self.tls is not None:
            try:
                connection = self.tls.wrap_socket(
                    connection, server_side=True, do_handshake_on_connect=False
                )
            except (OSError, ssl.SSLError):
                connection.close()
                raise
        return connection, address

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A connection that failed (TLS handshake, client gone) is logged, not printed."""
        log.debug("REST connection from %s ended with an error", client_address, exc_info=True)


@dataclass
class BoundListener:
    """A listener whose socket is bound (``listener.port`` is the real port).

    Attributes:
        listener: the scheme, host and bound port.
        server: the HTTP server on that socket.
        thread: the thread serving it, once started.
    """

    listener: Listener
    server: ThreadingHTTPServer
    thread: threading.Thread | None = field(default=None)

    def start(self) -> None:
        """Serve on a thread of its own."""
        self.thread = threading.Thread(
            target=self.server.serve_forever,
            kwargs={"poll_interval": 0.1},
            name=f"cdk-rest-{self.listener.scheme}-{self.listener.port}",
            daemon=False,
        )
        self.thread.start()

    def stop(self) -> None:
        """Stop serving and close the socket (open connections are closed by the caller)."""
        if self.thread is not None:
            self.server.shutdown()
        self.server.server_close()
        if self.thread is not None:
            self.thread.join()
            self.thread = None


def bind_listener(listener: Listener, handler: Any, tls: ssl.SSLContext | None) -> BoundListener:
    """Bind ``listener``'s socket (port 0 picks a free one); TLS when ``tls`` is given.

    Raises:
        ConnectException: the address cannot be bound (e.g. the port is in use).
    """
    try:
        server = _Server((listener.host, listener.port), handler, tls)
    except OSError as exc:
        raise ConnectException(
            f"Could not bind the REST API to {listener.host}:{listener.port}: {exc}"
        ) from exc
    bound = Listener(listener.scheme, listener.host, int(server.server_address[1]))
    return BoundListener(bound, server)
