"""A Docker engine for testcontainers: an engine that already answers, or one started here.

Machines of the project's kind run no Docker engine and reach no registry, but ``dockerd`` from
the Debian ``docker.io`` package can be started by root (``reference/docker.md``): vfs storage,
its data root in a cache folder (images survive between runs), no bridge network and no
iptables, so containers use host networking. :class:`DockerEngine` finds an engine that answers
(``$DOCKER_HOST``, ``/var/run/docker.sock``, or one it left running before) or starts one, and
stops only what it started.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from typing_extensions import Self

from cdk._process import spawn, stop_process
from cdk.errors import ConnectException, MissingExtraError
from harness._cache import cache_folder

__all__ = [
    "DockerEngine",
    "DockerUnavailableError",
    "default_engine_root",
    "dockerd_installed",
    "find_dockerd",
    "ping",
]

_log = logging.getLogger("harness.docker")

DEFAULT_SOCKET = "unix:///var/run/docker.sock"
# containerd puts its socket at <exec root>/containerd/containerd.sock; unix socket paths must
# stay under 108 bytes, so a longer root gets its exec root in the temporary folder instead.
_MAX_ROOT_FOR_SOCKETS = 50


class DockerUnavailableError(ConnectException):
    """No Docker engine answers and none can be started here."""


def default_engine_root() -> Path:
    """The folder of the engine the harness starts: ``$XDG_CACHE_HOME/connect-cdk/docker``."""
    return cache_folder("docker")


def ping(host: str, timeout: float = 2.0) -> bool:
    """Whether a Docker engine answers ``GET /_ping`` at ``host`` (``unix://...``, ``tcp://...``)."""
    try:
        if host.startswith("unix://"):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(timeout)
            try:
                sock.connect(host[len("unix://") :])
            except OSError:
                sock.close()
                raise
        elif host.startswith("tcp://"):
            address, _, port = host[len("tcp://") :].rstrip("/").rpartition(":")
            sock = socket.create_connection((address, int(port)), timeout=timeout)
        else:
            return False
        with sock:
            sock.sendall(b"GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n")
            response = b""
            while len(response) < 4096:
                chunk = sock.recv(4096)
                if not chunk:
                    break
                response += chunk
    except (OSError, ValueError):
        return False
    return response.startswith(b"HTTP/") and b" 200 " in response.split(b"\r\n", 1)[0]


class DockerEngine:
    """A Docker engine that answers: found, or started by :meth:`start` and stopped by :meth:`stop`.

    Args:
        root: the folder of an engine started here (data root, exec root, socket, log).
        start_timeout: seconds to wait for a started engine to answer.
        stop_timeout: seconds to wait after SIGTERM before killing a started engine.
        reuse: use an engine that already answers (``$DOCKER_HOST``, the default socket, or one
            left running in ``root``) instead of starting one.
    """

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        *,
        start_timeout: float = 90.0,
        stop_timeout: float = 30.0,
        reuse: bool = True,
    ) -> None:
        self.root = Path(root) if root is not None else default_engine_root()
        self._start_timeout = start_timeout
        self._stop_timeout = stop_timeout
        self._reuse = reuse
        self._host: str | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._log_file: IO[bytes] | None = None

    @property
    def socket_path(self) -> Path:
        """The socket of an engine started here."""
        return self.exec_root / "docker.sock"

    @property
    def exec_root(self) -> Path:
        """The engine's runtime state: sockets, so a short path (a unix socket path is short)."""
        if len(str(self.root)) <= _MAX_ROOT_FOR_SOCKETS:
            return self.root / "exec"
        digest = hashlib.sha1(str(self.root).encode(), usedforsecurity=False).hexdigest()[:10]
        return Path(tempfile.gettempdir()) / f"cdk-docker-{digest}"

    @property
    def host(self) -> str:
        """The engine's address, as ``DOCKER_HOST`` spells it."""
        if self._host is None:
            raise ConnectException("DockerEngine is not started: call start() first")
        return self._host

    @property
    def started_here(self) -> bool:
        """Whether :meth:`start` started the engine (and :meth:`stop` will stop it)."""
        return self._proc is not None

    def environment(self) -> dict[str, str]:
        """Environment variables that point Docker clients at this engine."""
        return {"DOCKER_HOST": self.host}

    def client(self) -> Any:
        """A ``docker.DockerClient`` for this engine (close it when done)."""
        try:
            import docker
        except ImportError as exc:
            raise MissingExtraError("The Docker engine client", "testcontainers", "docker") from exc
        return docker.DockerClient(base_url=self.host)

    def start(self) -> Self:
        """Find an engine that answers, or start ``dockerd``, and wait until it answers."""
        if self._host is not None:
            return self
        if self._reuse:
            for candidate in self._candidates():
                if ping(candidate):
                    _log.info("using the Docker engine at %s", candidate)
                    self._host = candidate
                    return self
        self._start_dockerd()
        return self

    def _candidates(self) -> list[str]:
        hosts = []
        if os.environ.get("DOCKER_HOST"):
            hosts.append(os.environ["DOCKER_HOST"])
        hosts += [DEFAULT_SOCKET, f"unix://{self.socket_path}"]
        return hosts

    def _start_dockerd(self) -> None:
        dockerd = find_dockerd()
        if dockerd is None:
            raise DockerUnavailableError(
                "No Docker engine answers ($DOCKER_HOST is unset or silent, "
                f"{DEFAULT_SOCKET} does not answer) and dockerd is not installed to start one. "
                "Install it with: apt-get install -y docker.io (and run as root)"
            )
        (self.root / "data").mkdir(parents=True, exist_ok=True)
        self.exec_root.mkdir(parents=True, exist_ok=True)
        pidfile = self.root / "dockerd.pid"
        host = f"unix://{self.socket_path}"
        if _live_pid(pidfile):  # another session is starting an engine in this root: share it
            deadline = time.monotonic() + self._start_timeout
            while _live_pid(pidfile) and time.monotonic() < deadline:
                if ping(host):
                    self._host = host
                    return
                time.sleep(0.1)
            if _live_pid(pidfile):
                raise DockerUnavailableError(
                    f"A dockerd (pidfile {pidfile}) runs but does not answer on {host}; "
                    "stop it or remove the pidfile"
                )
        with contextlib.suppress(FileNotFoundError):
            pidfile.unlink()
        with contextlib.suppress(FileNotFoundError):
            self.socket_path.unlink()  # a socket left by an engine that died
        command = [
            dockerd,
            "--storage-driver=vfs",
            f"--data-root={self.root / 'data'}",
            f"--exec-root={self.exec_root}",
            f"--pidfile={pidfile}",
            f"--host={host}",
            "--bridge=none",
            "--iptables=false",
        ]
        log_path = self.root / "dockerd.log"
        self._log_file = open(log_path, "wb")  # noqa: SIM115 - closed in stop()
        _log.info("starting a Docker engine: %s", " ".join(command))
        try:
            self._proc = spawn(command, self._log_file)
        except OSError as exc:
            self._close_log()
            raise DockerUnavailableError(f"Could not run {dockerd}: {exc}") from exc
        deadline = time.monotonic() + self._start_timeout
        while not ping(host):
            returncode = self._proc.poll()
            if returncode is not None:
                self._proc = None
                self._close_log()
                raise DockerUnavailableError(
                    f"dockerd exited with code {returncode} before it answered (it needs root; "
                    f"log: {log_path}):\n{_tail(log_path)}"
                )
            if time.monotonic() > deadline:
                self.stop()
                raise DockerUnavailableError(
                    f"dockerd did not answer on {host} within {self._start_timeout:g}s; "
                    f"its log:\n{_tail(log_path)}"
                )
            time.sleep(0.1)
        self._host = host
        _log.info("Docker engine answering on %s", host)

    def stop(self) -> None:
        """Stop the engine if :meth:`start` started it; forget a found one."""
        proc = self._proc
        if proc is not None:
            if proc.poll() is None:
                stop_process(
                    proc,
                    signal.SIGTERM,
                    self._stop_timeout,
                    _log,
                    "dockerd did not stop within %ss; killing it",
                    self._stop_timeout,
                )
            self._proc = None
            self._release_mounts()
        self._close_log()
        self._host = None

    def _release_mounts(self) -> None:
        """Unmount what a stopped dockerd leaves mounted (its network namespace, data root)."""
        roots = [str(self.exec_root), str(self.root / "data")]
        try:
            mounts = Path("/proc/self/mounts").read_text().splitlines()
        except OSError:
            return
        points = [line.split()[1] for line in mounts if len(line.split()) > 1]
        for point in sorted(points, reverse=True):  # innermost first
            if any(point == root or point.startswith(root + "/") for root in roots):
                subprocess.run(
                    ["umount", "-l", point], capture_output=True, check=False, timeout=30
                )
        if not self.exec_root.is_relative_to(self.root):
            shutil.rmtree(self.exec_root, ignore_errors=True)

    def _close_log(self) -> None:
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        where = self._host or "not started"
        return f"DockerEngine({where}{', started here' if self.started_here else ''})"


def find_dockerd() -> str | None:
    """The path of ``dockerd`` (on ``PATH`` or in the sbin folders root's PATH holds)."""
    found = shutil.which("dockerd")
    if found:
        return found
    candidates = ("/usr/sbin/dockerd", "/usr/bin/dockerd")
    return next((p for p in candidates if os.access(p, os.X_OK)), None)


def dockerd_installed() -> bool:
    """Whether ``dockerd`` can be found to start an engine."""
    return find_dockerd() is not None


def _live_pid(pidfile: Path) -> int | None:
    try:
        pid = int(pidfile.read_text().strip())
    except (OSError, ValueError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        return pid
    return pid


def _tail(path: Path, lines: int = 30) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.rstrip().splitlines()[-lines:])
