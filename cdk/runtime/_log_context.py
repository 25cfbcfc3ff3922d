"""The connector context of log lines (Kafka's KIP-449 ``connector.context``) and log formats.

Kafka Connect puts ``[my-connector|task-0]`` before every line logged by a task's thread and
``[my-connector|worker]`` before every line logged while the worker runs the connector itself,
whoever the logger is (the connector's own ``logger.info`` included). cdk does the same: the
threads that run a connector or a task, in either mode and on Spark executors, run inside
:func:`connector_context`, and :class:`ConnectorContextFilter` gives every record handled
``connector``, ``task`` and ``connector_context`` attributes that the formats use.

Two formats, chosen with ``--log-format`` on ``cdk standalone`` and ``cdk distributed``:
``text`` (the default, ``[time] LEVEL logger: [name|task-N] message``) and ``json``, one object
a line with ``time``, ``level``, ``logger``, ``connector``, ``task``, ``message`` and
``exception`` for log shippers.
"""

from __future__ import annotations

import contextlib
import contextvars
import datetime
import json
import logging
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple, ParamSpec, TypeVar

__all__ = [
    "LOG_FORMATS",
    "LOG_FORMAT_ENV",
    "ConnectorContextFilter",
    "JsonFormatter",
    "LogContext",
    "configure_logging",
    "connector_context",
    "current_context",
    "in_context",
    "text_formatter",
]

LOG_FORMATS = ("text", "json")
#: The environment variable that carries the ``--log-format`` to Spark's Python workers.
LOG_FORMAT_ENV = "CDK_LOG_FORMAT"
TEXT_FORMAT = "[%(asctime)s] %(levelname)s %(name)s: %(connector_context)s%(message)s"

_P = ParamSpec("_P")
_R = TypeVar("_R")


class LogContext(NamedTuple):
    """Who a thread works for: a connector, and its task (``None`` for the connector itself)."""

    connector: str
    task: int | None = None

    def __str__(self) -> str:
        scope = "worker" if self.task is None else f"task-{self.task}"
        return f"[{self.connector}|{scope}] "


_CONTEXT: contextvars.ContextVar[LogContext | None] = contextvars.ContextVar(
    "cdk_connector_context", default=None
)


def current_context() -> LogContext | None:
    """The connector context of the calling thread, if any."""
    return _CONTEXT.get()


@contextlib.contextmanager
def connector_context(connector: str, task: int | None = None) -> Iterator[LogContext]:
    """Log as working for ``connector`` (its task ``task``, or the connector) inside the block."""
    context = LogContext(connector, task)
    token = _CONTEXT.set(context)
    try:
        yield context
    finally:
        _CONTEXT.reset(token)


def in_context(connector: str, task: int | None, fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """``fn`` wrapped to run in the connector context (a thread's target, typically)."""

    def run(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with connector_context(connector, task):
            return fn(*args, **kwargs)

    return run


class ConnectorContextFilter(logging.Filter):
    """Adds ``connector``, ``task`` and ``connector_context`` to every record it sees.

    Attach it to a handler: it then applies to the records of every logger the handler writes.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        """Annotate ``record`` with the calling thread's context (never drops it)."""
        context = _CONTEXT.get()
        if getattr(record, "connector_context", None) is None:
            record.connector = None if context is None else context.connector
            record.task = None if context is None else context.task
            record.connector_context = "" if context is None else str(context)
        return True


def text_formatter() -> logging.Formatter:
    """The default format: ``[time] LEVEL logger: [name|task-N] message``."""
    return logging.Formatter(TEXT_FORMAT)


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, connector, task, message, exception."""

    def format(self, record: logging.LogRecord) -> str:
        """Render ``record`` as a JSON line."""
        task = getattr(record, "task", None)
        data: dict[str, Any] = {
            "time": datetime.datetime.fromtimestamp(
                record.created, datetime.timezone.utc
            ).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "connector": getattr(record, "connector", None),
            "task": None if task is None else f"task-{task}",
            "message": record.getMessage(),
            "exception": self.formatException(record.exc_info) if record.exc_info else None,
        }
        if data["connector"] is not None and task is None:
            data["task"] = "worker"
        return json.dumps(data, ensure_ascii=False)


def configure_logging(
    level: str | int = "INFO", log_format: str | None = None, *, only_if_unset: bool = False
) -> None:
    """Log to stderr through the root logger, in ``log_format``, with the connector context.

    Args:
        level: the root logger's level.
        log_format: ``text`` or ``json`` (default: ``$CDK_LOG_FORMAT``, else ``text``); it is
            put in ``$CDK_LOG_FORMAT`` so that processes this one starts log the same way.
        only_if_unset: do nothing when the root logger already has handlers (an application
            configured its logging).

    Raises:
        ValueError: an unknown format.
    """
    chosen = (log_format or os.environ.get(LOG_FORMAT_ENV) or "text").strip().lower()
    if chosen not in LOG_FORMATS:
        raise ValueError(f"Unknown log format {chosen!r}: use one of {', '.join(LOG_FORMATS)}")
    root = logging.getLogger()
    if only_if_unset and root.handlers:
        return
    os.environ[LOG_FORMAT_ENV] = chosen
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if chosen == "json" else text_formatter())
    handler.addFilter(ConnectorContextFilter())
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper() if isinstance(level, str) else level)
