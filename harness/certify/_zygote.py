"""A process that imports the harness once and forks the processes that run checks from it.

Started as a fresh interpreter, a child that runs checks (:mod:`harness.certify._child`)
spends about a second of CPU importing the kit and the harness before its first check; a run
with twelve jobs starts twelve at once, and on two cores that is six seconds before any check
starts. ``cdk certify`` instead starts one zygote (``python -m harness.certify._zygote``), which
imports :data:`PRELOAD` and nothing of the connector's, then forks each child from it: a fork
copies the imported modules, so a child only imports the connector's own code.

The zygote runs no thread (a fork copies only the thread that forks; a lock another one held
would stay locked in the child), and every child it forks leads a session of its own, as a
``start_new_session`` process would, so the parent kills its whole process group as before.
The parent and the zygote talk over a ``SOCK_SEQPACKET`` socket pair: the parent sends
``b"fork"`` with the child's two pipe ends (commands in, answers out) as ``SCM_RIGHTS``; the
zygote answers ``("forked", pid)``, and ``("exited", pid, code)`` once it reaped the child
(``code`` as :attr:`subprocess.Popen.returncode` has it: negative for a signal). When the
parent's end closes, the zygote exits; children it forked run on until their own pipes end.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

__all__ = ["PRELOAD", "Forked", "Zygote", "ZygoteGone"]

#: What the zygote imports before it forks: the harness, its checks and the kit's runtime.
PRELOAD = (
    "harness.certify._child",
    "harness.certify._runner",
    "harness.certify._discovery",
    "harness.certify.suites",
    "harness.certify._broker_grant",
    "cdk.runtime",
    "confluent_kafka",
    "confluent_kafka.admin",
    "httpx",
    "harness.strategies",
)
#: How long the zygote may take to import :data:`PRELOAD` and answer its first fork.
START_TIMEOUT_S = 60.0
#: How long one fork may take to be answered.
FORK_TIMEOUT_S = 10.0
_MESSAGE_MAX = 65536


class ZygoteGone(Exception):
    """The zygote ended or did not answer: start children the plain way."""


class Forked:
    """A child forked by the zygote, with what the parent uses of :class:`subprocess.Popen`.

    The zygote reaps it, so its exit status arrives as a message; until then it has none.
    """

    def __init__(self, zygote: Zygote, pid: int) -> None:
        self._zygote = zygote
        self.pid = pid

    @property
    def returncode(self) -> int | None:
        return self._zygote.exit_code(self.pid)

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the exit; raise :class:`subprocess.TimeoutExpired` after ``timeout``."""
        if not self._zygote.await_exit(self.pid, timeout):
            raise subprocess.TimeoutExpired(f"pid {self.pid}", timeout or 0.0)
        code = self.returncode
        return -signal.SIGKILL if code is None else code

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)


class Zygote:
    """The parent's side: start the zygote, fork children from it, close it.

    Use :meth:`start` (None when no zygote could start: the caller starts children itself).
    """

    def __init__(self, proc: subprocess.Popen[bytes], sock: socket.socket) -> None:
        self._proc = proc
        self._sock = sock
        self._cond = threading.Condition()
        self._forked: list[int] = []
        self._exits: dict[int, int] = {}
        self._gone = False
        self._fork_lock = threading.Lock()
        self._first = True
        self._reader = threading.Thread(target=self._read, name="cdk-certify-zygote", daemon=True)
        self._reader.start()

    @classmethod
    def start(cls, env: dict[str, str]) -> Zygote | None:
        """Start a zygote with ``env`` (its ``PYTHONPATH`` decides what it imports)."""
        if not hasattr(socket, "send_fds") or not hasattr(os, "fork"):
            return None
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", "harness.certify._zygote", str(theirs.fileno())],
                stdin=subprocess.DEVNULL,
                pass_fds=(theirs.fileno(),),
                start_new_session=True,  # a Ctrl-C reaches the parent, which ends the run
                env=env,
            )
        except OSError:
            ours.close()
            return None
        finally:
            theirs.close()
        return cls(proc, ours)

    def fork(self, stdin_fd: int, answers_fd: int) -> Forked:
        """Fork a child that reads ``stdin_fd`` and answers on ``answers_fd``.

        The descriptors are the caller's to close. Raises :class:`ZygoteGone` when the zygote
        ended or did not answer in time (the first fork waits for its imports).
        """
        with self._fork_lock:
            timeout = START_TIMEOUT_S if self._first else FORK_TIMEOUT_S
            try:
                socket.send_fds(self._sock, [b"fork"], [stdin_fd, answers_fd])
            except OSError as exc:
                raise ZygoteGone(f"the zygote is gone ({exc})") from exc
            deadline = time.monotonic() + timeout
            with self._cond:
                while not self._forked and not self._gone:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._cond.wait(left)
                if not self._forked:
                    raise ZygoteGone(
                        "the zygote ended" if self._gone else f"no fork within {timeout:g}s"
                    )
                pid = self._forked.pop(0)
            self._first = False
        return Forked(self, pid)

    def exit_code(self, pid: int) -> int | None:
        with self._cond:
            return self._exits.get(pid)

    def await_exit(self, pid: int, timeout: float | None) -> bool:
        """Wait up to ``timeout`` for ``pid`` to exit; True once it did.

        If the zygote is gone, a process no longer there has ended (its status is unknown).
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while pid not in self._exits:
                if self._gone:
                    return not _alive(pid)
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def close(self) -> None:
        """End the zygote (its children run on until their pipes end)."""
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        self._sock.close()
        try:
            self._proc.wait(FORK_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._reader.join(FORK_TIMEOUT_S)

    def _read(self) -> None:
        while True:
            try:
                data = self._sock.recv(_MESSAGE_MAX)
                message: Any = pickle.loads(data) if data else None
            except (OSError, pickle.UnpicklingError, EOFError):
                message = None
            with self._cond:
                if message is None:
                    self._gone = True
                elif message[0] == "forked":
                    self._forked.append(message[1])
                elif message[0] == "exited":
                    self._exits[message[1]] = message[2]
                self._cond.notify_all()
            if message is None:
                return


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# ---------------------------------------------------------------------------------------------
# the zygote process


def main(argv: Sequence[str]) -> None:
    """Import :data:`PRELOAD`, then fork a child for every request on the socket ``argv[0]``."""
    sock = socket.socket(fileno=int(argv[0]))
    for name in PRELOAD:
        # a module that does not import fails in the child too, which reports it
        with contextlib.suppress(Exception):
            __import__(name)
    _warm_hypothesis()
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # wakes the select below
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        ready, _, _ = select.select([sock.fileno(), wake_r], [], [])
        if wake_r in ready:
            with contextlib.suppress(BlockingIOError):
                os.read(wake_r, 4096)
            _reap(sock)
        if sock.fileno() in ready:
            try:
                data, fds, _, _ = socket.recv_fds(sock, 64, 2)
            except OSError:
                data, fds = b"", []
            if not data:
                break  # the parent is done (or gone)
            pid = os.fork()
            if pid == 0:
                _become_child(sock, (wake_r, wake_w), fds)
            for fd in fds:
                os.close(fd)
            _send(sock, ("forked", pid))
    _reap(sock)
    os._exit(0)


def _warm_hypothesis() -> None:
    """Load (or build, the first time) what hypothesis derives, once for every child.

    Its Unicode tables and the constants it collects from the loaded modules' source cost
    seconds to build and are kept in memory per process (and on disk in the shared cache of
    :func:`~harness.certify.suites._hypothesis.hypothesis_home`): loaded here, every forked
    child has them, where otherwise each check that fuzzes would build or load them. Internal
    hypothesis functions, so any failure only leaves the children to do it themselves.
    """
    try:
        from hypothesis import configuration
        from hypothesis.internal.charmap import charmap
        from hypothesis.internal.conjecture.providers import _get_local_constants

        from harness.certify.suites._hypothesis import cache_directory
    except Exception:  # noqa: BLE001 - hypothesis is optional (connect-cdk[certify])
        return
    directory = cache_directory()
    if directory is None:
        return
    previous = getattr(configuration, "__hypothesis_home_directory", None)
    configuration.set_hypothesis_home_dir(directory)
    try:
        charmap()
        _get_local_constants()
    except Exception:  # noqa: BLE001 - the children build them if this could not
        pass
    finally:
        configuration.set_hypothesis_home_dir(previous)


def _reap(sock: socket.socket) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        _send(sock, ("exited", pid, os.waitstatus_to_exitcode(status)))


def _send(sock: socket.socket, message: Any) -> None:
    with contextlib.suppress(OSError):  # the parent is gone: nobody to tell
        sock.send(pickle.dumps(message))


def _become_child(sock: socket.socket, wake: tuple[int, int], fds: list[int]) -> None:
    """In the forked process: drop the zygote's state, lead a session, run the checks."""
    code = 70
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        sock.close()
        for fd in wake:
            os.close(fd)
        os.setsid()
        from harness.certify._child import serve

        commands, answers = fds
        serve(os.fdopen(commands, "rb"), os.fdopen(answers, "wb"))
    except BaseException:  # noqa: BLE001 - never back into the zygote's loop
        with contextlib.suppress(Exception):
            import traceback

            traceback.print_exc()
    finally:
        os._exit(code)


if __name__ == "__main__":  # pragma: no cover - run by cdk certify as a subprocess
    main(sys.argv[1:])
