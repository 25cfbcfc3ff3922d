"""Dynamic log levels (KIP-495): Kafka Connect's ``/admin/loggers`` over Python's logging.

Kafka names levels as log4j does (``TRACE``, ``DEBUG``, ``INFO``, ``WARN``, ``ERROR``,
``FATAL``, ``OFF``, and ``ALL``); :func:`to_python_level` and :func:`kafka_level_name` map them
to Python's levels and back (``TRACE`` is 5, ``FATAL`` is ``CRITICAL``, ``OFF`` is above
``CRITICAL``; a Python level between two Kafka ones reads as the lower one). Logger names are
taken as given, so a Java name such as ``org.apache.kafka.connect.runtime.WorkerSourceTask``
names a (new) Python logger of that name.

As Kafka 3.9's ``Loggers`` does: the listing holds the root logger and every logger whose
level is set explicitly; one logger's level is its own or else its effective level; setting a
level sets it explicitly on the named logger (created if needed) and on every existing
descendant, and answers their names, sorted. Python's logging is process-wide, and so are the
levels and their ``last_modified`` times kept here.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

__all__ = [
    "KAFKA_LEVELS",
    "ROOT_LOGGER_NAME",
    "Loggers",
    "kafka_level_name",
    "to_python_level",
]

log = logging.getLogger("cdk.runtime.loggers")

#: The root logger's name in the REST API (log4j's; matched case-insensitively).
ROOT_LOGGER_NAME = "root"

#: Kafka's (log4j's) level names and the Python level each maps to, from the most verbose.
KAFKA_LEVELS: dict[str, int] = {
    "ALL": 1,
    "TRACE": 5,
    "DEBUG": logging.DEBUG,
    "INFO": logging.INFO,
    "WARN": logging.WARNING,
    "ERROR": logging.ERROR,
    "FATAL": logging.CRITICAL,
    "OFF": logging.CRITICAL + 1,
}

_lock = threading.Lock()
#: When each logger's level was last changed through :meth:`Loggers.set_level` (ms since epoch).
_last_modified: dict[str, int] = {}


def to_python_level(name: str) -> int | None:
    """The Python level of a Kafka level name (any case), ``None`` when it is not one."""
    return KAFKA_LEVELS.get(name.strip().upper()) if name.strip() else None


def kafka_level_name(level: int) -> str:
    """The Kafka name of a Python level: the most severe Kafka level at or below it."""
    if level > logging.CRITICAL:
        return "OFF"
    name = "ALL"
    for kafka_name, python_level in KAFKA_LEVELS.items():
        if python_level <= level:
            name = kafka_name
    return name


def _is_root(name: str) -> bool:
    return name.lower() == ROOT_LOGGER_NAME or name == ""


def _existing_loggers() -> dict[str, logging.Logger]:
    """The loggers created so far (not the root logger, not placeholders), by name."""
    snapshot = logging.Logger.manager.loggerDict.copy()  # one C call: safe against inserts
    return {name: lg for name, lg in snapshot.items() if isinstance(lg, logging.Logger)}


def _rest_name(logger: logging.Logger) -> str:
    return ROOT_LOGGER_NAME if logger is logging.getLogger() else logger.name


class Loggers:
    """Reads and sets log levels in Kafka's terms (the worker's ``/admin/loggers``)."""

    def level(self, name: str) -> dict[str, Any] | None:
        """``{"level", "last_modified"}`` of an existing logger (or root), else ``None``.

        The level is the logger's own, or its effective level when it has none.
        """
        if _is_root(name):
            logger = logging.getLogger()
        else:
            found = _existing_loggers().get(name)
            if found is None:
                log.warning("Unable to find level for logger %s", name)
                return None
            logger = found
        return self._level_of(logger)

    def all_levels(self) -> dict[str, dict[str, Any]]:
        """Every logger with an explicit level, and root, sorted by name."""
        result = {
            name: self._level_of(logger)
            for name, logger in _existing_loggers().items()
            if logger.level != logging.NOTSET
        }
        result[ROOT_LOGGER_NAME] = self._level_of(logging.getLogger())
        return dict(sorted(result.items()))

    def set_level(self, namespace: str, level: str) -> list[str]:
        """Set ``level`` on the logger ``namespace`` and its descendants; return their names.

        ``root`` (any case) sets every logger. A logger that is already at the level keeps
        its ``last_modified`` time.

        Raises:
            ValueError: ``level`` is not one of Kafka's level names.
        """
        python_level = to_python_level(level)
        if python_level is None:
            raise ValueError(f"invalid log level '{level}'.")
        log.info("Setting level of namespace %s and children to %s", namespace, level.upper())
        loggers = self._namespace(namespace)
        now = int(time.time() * 1000)
        names = []
        with _lock:
            for logger in loggers:
                name = _rest_name(logger)
                current = logger.level or logger.getEffectiveLevel()
                if current != python_level:
                    logger.setLevel(python_level)
                    _last_modified[name] = now
                names.append(name)
        return sorted(names)

    @staticmethod
    def _namespace(namespace: str) -> list[logging.Logger]:
        existing = _existing_loggers()
        if _is_root(namespace):
            return [*existing.values(), logging.getLogger()]
        prefix = namespace + "."
        loggers = [
            lg for name, lg in existing.items() if name == namespace or name.startswith(prefix)
        ]
        if namespace not in existing:
            loggers.append(logging.getLogger(namespace))
        return loggers

    @staticmethod
    def _level_of(logger: logging.Logger) -> dict[str, Any]:
        level = logger.level or logger.getEffectiveLevel()
        with _lock:
            last_modified = _last_modified.get(_rest_name(logger))
        return {"level": kafka_level_name(level), "last_modified": last_modified}
