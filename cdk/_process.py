"""Helper server processes the kit starts itself (the embedded broker, a Docker engine).

:func:`spawn` starts one with its output in a log file; :func:`stop_process` stops it with a
signal, then kills it if it does not exit in time.
"""

from __future__ import annotations

import subprocess
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    import logging
    import signal
    from collections.abc import Sequence

__all__ = ["spawn", "stop_process"]


def spawn(command: Sequence[str], output: IO[bytes]) -> subprocess.Popen[bytes]:
    """Start ``command`` with no input and its stdout and stderr written to ``output``.

    It runs in a session of its own: a Ctrl-C in the terminal reaches only this process, which
    then stops the helper cleanly.

    Raises:
        OSError: the command could not be run.
    """
    return subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=output,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def stop_process(
    proc: subprocess.Popen[bytes],
    sig: signal.Signals,
    timeout: float,
    log: logging.Logger,
    message: str,
    *args: object,
) -> None:
    """Send ``sig`` to a running ``proc`` and wait for it to exit.

    If it has not exited after ``timeout`` seconds, ``message`` (with ``args``) is logged as a
    warning to ``log``, and the process is killed and waited for.
    """
    proc.send_signal(sig)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        log.warning(message, *args)
        proc.kill()
        proc.wait()
