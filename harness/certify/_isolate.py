"""Running checks in child processes, so connector code cannot hang or kill ``cdk certify``.

:func:`run_isolated` hands the planned checks to a child process (:mod:`harness.certify._child`)
in its own process group and collects each result as it ends. One child runs checks one after
another; a fresh one starts only after trouble:

- a check overruns its deadline: the child's threads are dumped (``faulthandler``), its whole
  process group is killed, and the check is an ERROR that says it was abandoned after N s, with
  the dump in its details;
- the child dies (``os._exit``, a signal, a segfault): the check in progress is an ERROR naming
  the exit code or the signal;
- a check leaves non-daemon threads running: the check is an ERROR naming each thread and where
  it is, and the child is retired (it ends with ``os._exit``, which no thread can prevent).

The broker, the report and the verdict stay in the parent, which always gets past the last
check within :data:`EXIT_GRACE_S` of its end.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness._driver import ConnectorDriver
from harness.certify._checks import Check, CheckResult
from harness.certify._child import read_frame, write_frame

__all__ = [
    "DEFAULT_CHECK_TIMEOUT_S",
    "EXIT_GRACE_S",
    "STARTUP_TIMEOUT_S",
    "Abandoned",
    "ChildFailed",
    "check_timeout",
    "run_isolated",
]

#: The deadline of a check unless the run sets one (checks that need Spark get three times it).
DEFAULT_CHECK_TIMEOUT_S = 300.0
#: How long a child may take to start its first check, or its next one after a result (the
#: run's check deadline when it sets one, but at least :data:`STARTUP_MIN_S`).
STARTUP_TIMEOUT_S = 120.0
STARTUP_MIN_S = 10.0
#: How long a child has to end once told there is nothing left (then its group is killed).
EXIT_GRACE_S = 5.0
#: How long the child has to write its thread dump before it is killed.
_DUMP_WAIT_S = 2.0
_DUMP_LIMIT = 12_000

Planned = tuple[int, Check, type[ConnectorDriver], "str | None"]


@dataclass
class Abandoned:
    """What an isolated run had to give up on: the check, and why."""

    check_id: str
    subject: str
    why: str


@dataclass
class _Child:
    proc: subprocess.Popen[bytes]
    messages: queue.Queue[Any]
    dump: Path
    reader: threading.Thread
    pending: list[Planned] = field(default_factory=list)


def check_timeout(c: Check, override: float | None) -> float:
    """The deadline of check ``c``: ``override`` when given, else the default for its needs."""
    if override is not None:
        return override
    return DEFAULT_CHECK_TIMEOUT_S * (3 if "spark" in c.needs else 1)


def run_isolated(
    items: Sequence[Planned],
    job: dict[str, Any],
    *,
    base: Path,
    timeout: float | None,
    make_result: Callable[[Planned, dict[str, Any]], CheckResult],
    error_result: Callable[[Planned, str, str | None], CheckResult],
    on_started: Callable[[Planned], None],
    on_result: Callable[[CheckResult, list[str]], None],
    on_config_docs: Callable[[dict[str, dict[str, str]]], None],
    after_child: Callable[[], None],
) -> list[Abandoned]:
    """Run ``items`` in child processes; report each result through ``on_result``.

    Args:
        items: (index, check, driver, skip reason) in run order.
        job: what every child needs besides the items (project, bootstrap, kafka...).
        base: the run's working directory (each check's is ``base/NNN``).
        timeout: the deadline of every check in seconds (None: the default per check).
        make_result: builds a result from a child's fields.
        error_result: builds the ERROR result of an abandoned check (message, details).
        on_started: a check starts.
        on_result: a check ended (with the leaked threads the child saw, if any).
        on_config_docs: the connectors' config references (sent once, by the first child).
        after_child: called after each child ended (the broker is resumed there).

    Returns:
        What was abandoned, in order.
    """
    remaining = list(items)
    abandoned: list[Abandoned] = []
    first = True
    while remaining:
        child = _spawn(remaining, job, base, config_docs=first)
        first = False
        try:
            remaining, lost = _drive(
                child, timeout, make_result, error_result, on_started, on_result, on_config_docs
            )
            abandoned.extend(lost)
        except BaseException:
            _kill_group(child.proc)  # interrupted (Ctrl-C) or failed: no grace period
            raise
        finally:
            _finish(child)
            after_child()
    return abandoned


def _spawn(items: list[Planned], job: dict[str, Any], base: Path, *, config_docs: bool) -> _Child:
    read_end, write_end = os.pipe()
    dump = base / f"threads-{time.monotonic_ns()}.txt"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "harness.certify._child", str(write_end)],
            stdin=subprocess.PIPE,
            pass_fds=(write_end,),
            start_new_session=True,  # its own process group: killed whole when abandoned
            env=env,
        )
    finally:
        os.close(write_end)
    messages: queue.Queue[Any] = queue.Queue()
    reader = threading.Thread(
        target=_read, args=(os.fdopen(read_end, "rb"), messages), name="cdk-certify-child-reader"
    )
    reader.daemon = True
    reader.start()
    child = _Child(proc, messages, dump, reader, list(items))
    assert proc.stdin is not None
    try:
        write_frame(proc.stdin, list(sys.path))
        write_frame(
            proc.stdin,
            {
                **job,
                "items": items,
                "workdir": str(base),
                "dump_file": str(dump),
                "config_docs": config_docs,
            },
        )
        proc.stdin.close()
    except (BrokenPipeError, OSError):
        pass  # the child died at once: _drive reports it from its exit status
    return child


def _read(stream: Any, messages: queue.Queue[Any]) -> None:
    with stream:
        while True:
            try:
                messages.put(read_frame(stream))
            except EOFError:
                break
            except Exception as exc:  # noqa: BLE001 - a garbled frame ends the conversation
                messages.put(("garbled", f"{type(exc).__name__}: {exc}"))
                break
    messages.put(None)


def _drive(
    child: _Child,
    timeout: float | None,
    make_result: Callable[[Planned, dict[str, Any]], CheckResult],
    error_result: Callable[[Planned, str, str | None], CheckResult],
    on_started: Callable[[Planned], None],
    on_result: Callable[[CheckResult, list[str]], None],
    on_config_docs: Callable[[dict[str, dict[str, str]]], None],
) -> tuple[list[Planned], list[Abandoned]]:
    """Follow one child until it is done, retired, dead or overrun; return what is left."""
    pending = {item[0]: item for item in child.pending}
    order = [item[0] for item in child.pending]
    current: Planned | None = None
    deadline: float | None = None
    limit = 0.0
    started_any = False
    startup = STARTUP_TIMEOUT_S if timeout is None else max(timeout, STARTUP_MIN_S)
    idle_deadline = time.monotonic() + startup
    while True:
        wait = max((deadline or idle_deadline) - time.monotonic(), 0.0)
        try:
            message = child.messages.get(timeout=wait)
        except queue.Empty:
            if current is None:
                _kill_group(child.proc)
                if started_any:  # stuck between two checks: the rest go to a fresh child
                    return _left(order, pending), []
                # importing the drivers or generating the config references does not end
                raise ChildFailed(
                    "the process that runs the checks did not start a check within "
                    f"{startup:g}s (importing the drivers, or a connector's config(), does not "
                    "return)"
                ) from None
            details = _dump_threads(child)
            _kill_group(child.proc)
            why = f"overran its deadline of {limit:g}s"
            result = error_result(
                current,
                f"abandoned: the check {why}; its process was killed (--check-timeout sets "
                "the deadline)",
                details,
            )
            on_result(result, [])
            del pending[current[0]]
            return _left(order, pending), [Abandoned(current[1].id, result.subject, why)]
        if message is None or message[0] in ("failed", "garbled"):
            code = _exit_status(child.proc)
            cause = message[1] if message is not None else None
            if current is None:
                if started_any:
                    return _left(order, pending), []
                raise ChildFailed(
                    "the process that runs the checks could not start ("
                    + (cause or _describe_exit(code))
                    + ")"
                )
            why = f"its process {cause or _describe_exit(code)}"
            result = error_result(
                current,
                f"abandoned: the check could not finish: {why}; the next checks run in a fresh "
                "process",
                None,
            )
            on_result(result, [])
            del pending[current[0]]
            return _left(order, pending), [Abandoned(current[1].id, result.subject, why)]
        kind = message[0]
        if kind == "config_docs":
            on_config_docs(message[1])
        elif kind == "started":
            started_any = True
            current = pending[message[1]]
            limit = check_timeout(current[1], timeout)
            deadline = time.monotonic() + limit
            on_started(current)
        elif kind == "result":
            _, index, fields, secrets, leaked = message
            item = pending.pop(index)
            result = make_result(item, {**fields, "_secrets": secrets})
            on_result(result, leaked)
            current, deadline = None, None
            idle_deadline = time.monotonic() + startup
        elif kind == "retire":
            return _left(order, pending), []
        elif kind == "done":
            return [], []


def _left(order: list[int], pending: dict[int, Planned]) -> list[Planned]:
    return [pending[i] for i in order if i in pending]


class ChildFailed(Exception):
    """The child ended before it could run any check."""


def _dump_threads(child: _Child) -> str | None:
    """Ask the child for a dump of its threads (SIGUSR1); return it, trimmed, or None."""
    if child.proc.poll() is not None:
        return None
    with contextlib.suppress(OSError):
        child.proc.send_signal(signal.SIGUSR1)
    deadline = time.monotonic() + _DUMP_WAIT_S
    size, steady_since = -1, time.monotonic()
    while time.monotonic() < deadline:
        try:
            now_size = child.dump.stat().st_size
        except OSError:
            now_size = 0
        if now_size != size:
            size, steady_since = now_size, time.monotonic()
        elif size > 0 and time.monotonic() - steady_since >= 0.3:
            break  # the dump stopped growing: faulthandler is done
        time.sleep(0.05)
    try:
        text = child.dump.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if not text.strip():
        return None
    if len(text) > _DUMP_LIMIT:
        text = text[:_DUMP_LIMIT] + "\n... (the rest of the dump is cut)"
    return "The threads of the check's process when it was abandoned:\n" + text


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the child's whole process group (it leads its own session) and reap it.

    The group is killed before the child is reaped, so its id cannot have been reused.
    """
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(EXIT_GRACE_S)


def _exited(proc: subprocess.Popen[bytes], timeout: float) -> bool:
    """Wait up to ``timeout`` for the child to exit, without reaping it (it stays a zombie)."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.returncode is not None:
            return True
        try:
            info = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return True
        if info is not None:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)


def _finish(child: _Child) -> None:
    """Let the child end (os._exit) within the grace period, then kill what is left of its group.

    Whatever the child started and left (a ``cdk standalone``, a server) is in its process
    group and goes with it.
    """
    _exited(child.proc, EXIT_GRACE_S)
    _kill_group(child.proc)
    child.reader.join(EXIT_GRACE_S)
    with contextlib.suppress(OSError):
        child.dump.unlink()


def _exit_status(proc: subprocess.Popen[bytes]) -> int | None:
    """The child's exit status once it ended (None if it had to be killed)."""
    ended = _exited(proc, EXIT_GRACE_S)
    _kill_group(proc)
    return proc.returncode if ended else None


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "closed its pipe but did not exit (it was killed)"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"was killed by {name} (signal {-code})"
    return f"exited with code {code}"
