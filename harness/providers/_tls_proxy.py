"""A TLS-terminating TCP proxy: clients speak TLS to it, it speaks plain TCP to a target.

The embedded broker (Tansu 0.6.0) has ``--cert``/``--key`` switches but serves plain TCP
whatever they say, so the harness puts this proxy in front of it and has the broker advertise
the proxy's address: every client connection, bootstrap and after, goes through TLS. It runs an
asyncio loop on one thread; each connection's handshake happens on that loop, so a client that
fails its handshake (no certificate when one is required, an untrusted one) is dropped without
holding up the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import ssl
import threading

__all__ = ["TlsProxy"]

_log = logging.getLogger("harness.providers.tls")

_CHUNK = 64 * 1024


class TlsProxy:
    """Accepts TLS on ``host:port`` and forwards the bytes to ``target`` in clear.

    Args:
        context: the server-side TLS context (certificate, and client verification if wanted).
        target: ``(host, port)`` to forward to; may be set later (:attr:`target`), before
            :meth:`start`.
        host: the address to listen on.
        port: the port; 0 picks a free one (bound by the constructor, see :attr:`port`).
    """

    def __init__(
        self,
        context: ssl.SSLContext,
        target: tuple[str, int] | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.context = context
        self.target = target
        self.host = host
        self._socket = socket.create_server((host, port))
        self.port: int = self._socket.getsockname()[1]
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.base_events.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._ready = threading.Event()
        self._error: BaseException | None = None
        #: Connections whose TLS handshake failed (counted, for tests).
        self.failed_handshakes = 0

    def start(self) -> TlsProxy:
        """Serve on a thread of its own; return ``self`` once it accepts connections.

        Raises:
            RuntimeError: no target is set, or the proxy could not start.
        """
        if self.target is None:
            raise RuntimeError("TlsProxy needs a target (host, port) before start()")
        self._thread = threading.Thread(target=self._run, name="cdk-tls-proxy", daemon=True)
        self._thread.start()
        self._ready.wait(10)
        if self._error is not None or not self._ready.is_set():
            self.stop()
            raise RuntimeError(f"The TLS proxy could not start: {self._error}")
        return self

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        loop.set_exception_handler(self._loop_error)
        self._loop = loop
        try:
            loop.run_until_complete(self._serve())
            loop.run_forever()
        except BaseException as exc:  # noqa: BLE001 - reported to start()
            self._error = exc
            self._ready.set()
        finally:
            for task in list(self._tasks):
                task.cancel()
            with contextlib.suppress(Exception):
                loop.run_until_complete(asyncio.gather(*self._tasks, return_exceptions=True))
            loop.close()

    def _loop_error(self, loop: asyncio.AbstractEventLoop, context: dict[str, object]) -> None:
        """A failed handshake or a dropped client: counted and logged at DEBUG, not printed."""
        message = str(context.get("message", ""))
        if "handshake" in message.lower():
            self.failed_handshakes += 1
        _log.debug("TLS proxy: %s (%s)", message, context.get("exception"))

    async def _serve(self) -> None:
        self._server = await asyncio.start_server(
            self._accept, sock=self._socket, ssl=self.context, ssl_handshake_timeout=30
        )
        self._ready.set()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            assert self.target is not None
            try:
                up_reader, up_writer = await asyncio.open_connection(*self.target)
            except OSError as exc:
                _log.debug("TLS proxy: the target %s is unreachable: %s", self.target, exc)
                writer.close()
                return
            await asyncio.gather(_pump(reader, up_writer), _pump(up_reader, writer))
        finally:
            self._tasks.discard(task)

    def stop(self) -> None:
        """Close the listening socket and every connection; join the thread."""
        loop, thread = self._loop, self._thread
        if loop is not None and thread is not None and thread.is_alive():

            def shut() -> None:
                if self._server is not None:
                    self._server.close()
                for task in list(self._tasks):
                    task.cancel()
                loop.stop()

            loop.call_soon_threadsafe(shut)
            thread.join(10)
        with contextlib.suppress(OSError):
            self._socket.close()
        self._thread = None

    def __enter__(self) -> TlsProxy:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


async def _pump(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    """Copy ``source`` to ``sink`` until either end closes, then close ``sink``."""
    try:
        while True:
            data = await source.read(_CHUNK)
            if not data:
                break
            sink.write(data)
            await sink.drain()
    except (ConnectionError, ssl.SSLError, OSError):
        pass
    finally:
        with contextlib.suppress(Exception):
            sink.close()
