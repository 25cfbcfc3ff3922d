"""A TCP forwarder on loopback, so certification drivers can cut an external system off.

A driver points the connector under test at the proxy instead of the server (a database, a
message broker); its ``outage()`` cuts the proxy for the block. The connector under test
reaches the server through the proxy; :meth:`TcpProxy.cut` closes the
listening socket and every forwarded connection (the connector sees its connection drop, then
"connection refused"), :meth:`TcpProxy.restore` listens again on the same port. The driver's own
writes go to the server directly, so they go on during the cut.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import threading

__all__ = ["TcpProxy"]


class TcpProxy:
    """Forwards ``127.0.0.1:<port>`` to ``(host, port)``.

    Args:
        target: the server's address.
    """

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = 0
        self._lock = threading.Lock()
        self._listener: socket.socket | None = None
        self._sockets: set[socket.socket] = set()
        self._threads: list[threading.Thread] = []
        self._stopped = threading.Event()

    def start(self) -> None:
        """Listen on a free port (kept across cuts)."""
        self._listen()

    def _listen(self) -> None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(16)
        self.port = listener.getsockname()[1]
        with self._lock:
            self._listener = listener
        thread = threading.Thread(target=self._accept, args=(listener,), daemon=True)
        thread.start()
        self._threads.append(thread)

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # closed by cut() or stop()
            try:
                server = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            server.settimeout(None)
            for sock in (client, server):  # forward small frames at once (no Nagle delay)
                with contextlib.suppress(OSError):
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                self._sockets.update((client, server))
            thread = threading.Thread(target=self._pump, args=(client, server), daemon=True)
            thread.start()

    def _pump(self, client: socket.socket, server: socket.socket) -> None:
        peers = {client: server, server: client}
        with selectors.DefaultSelector() as selector:
            for sock in peers:
                selector.register(sock, selectors.EVENT_READ)
            try:
                while True:
                    for key, _ in selector.select(timeout=1.0):
                        data = key.fileobj.recv(65536)  # type: ignore[union-attr]
                        if not data:
                            return
                        peers[key.fileobj].sendall(data)  # type: ignore[index]
                    if self._stopped.is_set():
                        return
            except (OSError, ValueError):
                return
            finally:
                self._close_pair(client, server)

    def _close_pair(self, *sockets: socket.socket) -> None:
        with self._lock:
            for sock in sockets:
                self._sockets.discard(sock)
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def cut(self) -> None:
        """Stop listening and drop every forwarded connection."""
        with self._lock:
            listener, self._listener = self._listener, None
            sockets = list(self._sockets)
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)  # wakes the thread blocked in accept()
            listener.close()
        self._close_pair(*sockets)

    def restore(self) -> None:
        """Listen again on the same port."""
        with self._lock:
            listening = self._listener is not None
        if not listening:
            self._listen()

    def stop(self) -> None:
        """Close everything and wait for the threads."""
        self._stopped.set()
        self.cut()
        for thread in self._threads:
            thread.join(5)
