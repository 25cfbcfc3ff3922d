"""Reading a FAILED task's trace: the exceptions of its chain, and whose they are."""

from __future__ import annotations

import builtins
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cdk.runtime
from cdk.errors import ConnectException

__all__ = ["TracedError", "connector_error", "describe_chain", "first_line", "parse_trace"]


@dataclass(frozen=True)
class TracedError:
    """One exception of a Python traceback text (the chain's causes come first).

    Attributes:
        name: the exception's class as printed (``cdk.errors.ConnectException``).
        message: its message (empty when it has none).
        raised_in: the file of the frame that raised it, or None when it was never raised.
    """

    name: str
    message: str
    raised_in: str | None


_CHAIN_SEPARATORS = (
    "The above exception was the direct cause of the following exception:",
    "During handling of the above exception, another exception occurred:",
)
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line \d+')
_HEADER = re.compile(r"^(?P<name>[A-Za-z_][\w.]*)(?::\s?(?P<message>.*))?$")


def parse_trace(trace: str) -> list[TracedError]:
    """The exceptions of a traceback text, innermost cause first, the raised one last."""
    segments: list[list[str]] = [[]]
    for line in trace.splitlines():
        if line.strip() in _CHAIN_SEPARATORS:
            segments.append([])
        else:
            segments[-1].append(line)
    out: list[TracedError] = []
    for lines in segments:
        found = _parse_segment(lines)
        if found is not None:
            out.append(found)
    return out


def _parse_segment(lines: Sequence[str]) -> TracedError | None:
    raised_in: str | None = None
    body_start = 0
    for index, line in enumerate(lines):
        frame = _FRAME.match(line)
        if frame is not None:
            raised_in = frame["file"]
            body_start = index + 1
    for index in range(body_start, len(lines)):
        line = lines[index]
        if not line.strip() or line[0].isspace() or line.startswith("Traceback ("):
            continue
        header = _HEADER.match(line)
        if header is None:
            continue
        rest = [extra for extra in lines[index + 1 :] if extra.strip()]
        message = "\n".join([header["message"] or "", *rest]).strip()
        return TracedError(header["name"], message, raised_in)
    return None


def _resolve(name: str) -> type | None:
    """The exception class a trace names, if its module is loaded (nothing is imported)."""
    parts = name.split(".")
    if len(parts) == 1:
        builtin = getattr(builtins, name, None)
        return builtin if isinstance(builtin, type) else None
    for cut in range(len(parts) - 1, 0, -1):
        module = sys.modules.get(".".join(parts[:cut]))
        if module is None:
            continue
        target: Any = module
        for attr in parts[cut:]:
            target = getattr(target, attr, None)
        if isinstance(target, type):
            return target
    return None


def _is_connect_error(name: str) -> bool:
    cls = _resolve(name)
    if cls is not None:
        return issubclass(cls, ConnectException)
    # A class that is not loaded here: judge by the kit's names.
    from cdk import errors

    return name.rsplit(".", 1)[-1] in errors.__all__


def _raised_by_runtime(error: TracedError) -> bool:
    if error.raised_in is None:
        return False
    runtime = Path(cdk.runtime.__file__).resolve().parent
    try:
        return Path(error.raised_in).resolve().is_relative_to(runtime)
    except OSError:
        return False


def connector_error(trace: str) -> TracedError | None:
    """The ConnectException-family error with a message that the connector raised, or None.

    Exceptions the runtime raised itself (it wraps a sink's errors in a ConnectException of its
    own) do not count: what counts is what the connector's code raised.
    """
    for error in reversed(parse_trace(trace)):
        if _raised_by_runtime(error):
            continue
        if _is_connect_error(error.name) and error.message:
            return error
    return None


def describe_chain(trace: str) -> str:
    """The connector's exceptions in a trace, outermost first (``a.B: msg`` caused by ...)."""
    errors = [e for e in reversed(parse_trace(trace)) if not _raised_by_runtime(e)]
    if not errors:
        errors = list(reversed(parse_trace(trace)))
    if not errors:
        return "an unreadable trace"
    return ", caused by ".join(
        f"{e.name}" + (f": {first_line(e.message)}" if e.message else " (no message)")
        for e in errors[:3]
    )


def first_line(text: str, limit: int = 200) -> str:
    """The first line of ``text``, cut to ``limit`` characters."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"
