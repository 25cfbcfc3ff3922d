"""The child process that runs checks for an isolated run (``python -m harness.certify._child``).

The parent (:mod:`harness.certify._isolate`) keeps the broker and the report; connector code
runs here. The parent writes frames on the child's standard input: the parent's ``sys.path``
(so the drivers import the same way), then the job (the project and where to run its checks),
then one check at a time, ``(index, check, driver, skip reason)``, each once the child answered
the one before (and, during a check that asked for the broker, ``("broker", "granted")``); it
closes the pipe when there is nothing left for this child. The child answers
on its own pipe (file descriptor given on the command line) with one frame per event:

- ``("config_docs", docs)`` once, the generated config references of the project's connectors;
- ``("started", index)`` when a check starts (the parent's deadline for it starts then);
- ``("result", index, fields, secrets, leaked)`` when it ended: the :class:`CheckResult`'s
  fields except ``check``, taken generically (a field added to the dataclass flows through; a
  value that cannot be pickled crosses as its ``repr``), the secret values the run registered,
  and the non-daemon threads the check left running (named, with where each is);
- ``("broker", "want", index)`` when a check that stalls the broker (``exclusive="kafka"``)
  needs it stopped: the check then waits for ``("broker", "granted")`` on standard input, sent
  once the parent has stopped the broker; ``("broker", "released", index)`` when it is done
  with it (:mod:`harness.certify._broker_grant`). A check the job gives a broker of its own
  (``own_brokers``: its index, then the broker's bootstrap servers and stall) runs on it and
  stalls it itself;
- ``("retire", reason)`` when the child must not run another check (a check left non-daemon
  threads running); the parent starts a fresh child for the rest;
- ``("done",)`` when the parent closed the pipe (every check it was given ended).

A frame is a 4-byte big-endian length then a pickle. Whatever the checks leave behind, the
child ends with :func:`os._exit` once its frames are flushed, so a leaked thread cannot keep it
(or ``cdk certify``) alive.
"""

from __future__ import annotations

import contextlib
import dataclasses
import faulthandler
import logging
import os
import pickle
import signal
import struct
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

__all__ = [
    "LEAK_GRACE_S",
    "leaked_threads",
    "read_frame",
    "result_fields",
    "serve",
    "write_frame",
]

_HEADER = struct.Struct(">I")
#: How long the child waits for threads a check started to end before calling them leaked.
LEAK_GRACE_S = 5.0


def write_frame(stream: IO[bytes], message: Any) -> None:
    """Write one pickled ``message`` with its length, and flush."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def read_frame(stream: IO[bytes]) -> Any:
    """Read one message; raise :class:`EOFError` at the end of the stream."""
    header = _read_exactly(stream, _HEADER.size)
    (size,) = _HEADER.unpack(header)
    return pickle.loads(_read_exactly(stream, size))


def _read_exactly(stream: IO[bytes], size: int) -> bytes:
    chunks = []
    remaining = size
    while remaining:
        chunk = stream.read(remaining)
        if not chunk:
            raise EOFError("the stream ended")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def result_fields(result: Any) -> dict[str, Any]:
    """The fields of a CheckResult but ``check``, each replaced by its text if it won't pickle."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(result):
        if f.name == "check":
            continue
        value = getattr(result, f.name)
        try:
            pickle.dumps(value)
        except Exception:  # noqa: BLE001 - any unpicklable value crosses as its text
            value = repr(value)
        out[f.name] = value
    return out


def leaked_threads(before: set[threading.Thread], grace: float) -> list[str]:
    """The non-daemon threads started since ``before`` still alive after ``grace`` seconds.

    Each is named with where it is (``name (at file:line in function)``).
    """
    deadline = time.monotonic() + grace
    while True:
        alive = [
            t
            for t in threading.enumerate()
            if t not in before
            and not t.daemon
            and t.is_alive()
            and t is not threading.current_thread()
        ]
        if not alive or time.monotonic() >= deadline:
            break
        time.sleep(0.05)
    frames = sys._current_frames()
    described = []
    for t in alive:
        frame = frames.get(t.ident) if t.ident is not None else None
        where = (
            f" (at {frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name})"
            if frame is not None
            else ""
        )
        described.append(f"{t.name}{where}")
    return described


def main(argv: list[str]) -> None:
    """Run the job read from standard input; answer on the file descriptor ``argv[0]``."""
    serve(sys.stdin.buffer, os.fdopen(int(argv[0]), "wb"))


def serve(source: IO[bytes], out: IO[bytes]) -> None:
    """Run the job read from ``source``, answer on ``out``, then end the process."""
    os.environ.setdefault("PYTHONFAULTHANDLER", "1")
    try:
        sys.path[:] = read_frame(source)
        job = read_frame(source)
        _run_job(job, lambda message: write_frame(out, message), lambda: read_frame(source))
    except BaseException as exc:  # noqa: BLE001 - told to the parent, which reports it
        with contextlib.suppress(Exception):  # the parent reads the exit status instead
            write_frame(out, ("failed", f"{type(exc).__name__}: {exc}"))
        _exit(out, 70)
    _exit(out, 0)


def _exit(out: IO[bytes], code: int) -> None:
    for stream in (out, sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # nothing left to tell
            stream.flush()
    os._exit(code)


def _run_job(job: dict[str, Any], send: Callable[[Any], None], receive: Callable[[], Any]) -> None:
    from harness.certify._broker_grant import GrantedStall
    from harness.certify._runner import CertificationRun, _config_docs, _run_one

    dump = Path(job["dump_file"])
    dump_file = dump.open("w", encoding="utf-8")  # open until os._exit
    faulthandler.register(signal.SIGUSR1, file=dump_file, all_threads=True)
    level = job.get("log_level")
    root = logging.getLogger()
    if level is not None:
        handler = logging.StreamHandler(sys.stderr)
        handler.setLevel(getattr(logging, str(level).upper()))
        handler.setFormatter(logging.Formatter("[%(asctime)s] %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
    if root.level > logging.INFO or root.level == logging.NOTSET:
        root.setLevel(logging.INFO)
    project = job["project"]
    if job.get("config_docs"):
        send(("config_docs", _config_docs(project)))
    run = CertificationRun(project, kafka=job["kafka"])
    while True:
        try:
            index, c, driver, reason = receive()
        except EOFError:  # nothing left for this child
            break
        send(("started", index))
        before = set(threading.enumerate())
        broker = job.get("broker")
        bootstrap = job["bootstrap"]
        granted = None
        own = job.get("own_brokers", {}).get(index)
        if own is not None:  # a broker of its own: it stalls it itself, nothing to ask
            bootstrap, broker = own
        elif broker is not None and c.exclusive == "kafka":
            broker = granted = GrantedStall(index, send, receive)  # the parent stalls it
        result = _run_one(
            c,
            driver,
            reason,
            project,
            bootstrap,
            job["kafka"],
            job["provided"],
            Path(job["workdir"]) / f"{index:03d}",
            run,
            broker=broker,
            spark_dir=job.get("spark_dir"),
            seed=job.get("seed", 0),
            kafka_config=job.get("kafka_config"),
        )
        if granted is not None:
            granted.resume()  # a check that did not continue the broker itself
        leaked = leaked_threads(before, LEAK_GRACE_S) if reason is None else []
        send(("result", index, result_fields(result), sorted(run.secrets), leaked))
        if leaked:
            send(("retire", f"{c.id} left non-daemon threads running"))
            return
    send(("done",))


if __name__ == "__main__":  # pragma: no cover - run by the parent as a subprocess
    main(sys.argv[1:])
