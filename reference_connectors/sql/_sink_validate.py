"""The SQL sink's database checks: at validate time, and the task's engine.

``validate`` reports on the keys: an unreachable database, wrong credentials or an unknown
database on ``connection.url`` (the text names the problem, never the password); with
``auto.create=false``, a table that ``table.name.format`` gives for a topic of ``topics`` and
that does not exist, on ``table.name.format``. A SQLite database file that does not exist yet
is fine when its directory exists: the sink creates it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cdk import AbstractConfig, ConnectException, RetriableException
from cdk.config import ConfigValue
from reference_connectors.sql._connection import (
    CONNECTION_ATTEMPTS,
    CONNECTION_BACKOFF_MS,
    CONNECTION_URL,
    ConnectionSettings,
    translate_error,
)
from reference_connectors.sql._sink_config import (
    AUTO_CREATE,
    TABLE_NAME_FORMAT,
    sink_config_problems,
)

if TYPE_CHECKING:
    import sqlalchemy as sa

__all__ = ["connect_engine", "validate_sink"]

log = logging.getLogger(__name__)


def _sqlite_problem(settings: ConnectionSettings) -> str | None:
    """Why the SQLite database file cannot be used or created (None when it can)."""
    if settings.dialect != "sqlite":
        return None
    path = Path(settings.url.database or "")
    if "\x00" in str(path):  # pathlib answers "not there" for it; opening it fails later
        return f"{_shown(str(path))} is not a usable file path: a file name cannot hold NUL"
    try:
        if path.is_dir():
            return f"{path} is a directory, not a database file"
        if not path.exists() and not path.absolute().parent.is_dir():
            return f"the directory of the database file {path} does not exist"
    except (OSError, ValueError) as exc:  # a name too long for the OS, a NUL in it...
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return f"{_shown(str(path))} is not a usable file path: {reason}"
    return None


def _shown(text: str, limit: int = 80) -> str:
    return repr(text) if len(text) <= limit else f"{text[:limit]!r}… ({len(text)} characters)"


def _engine(settings: ConnectionSettings) -> sa.Engine:
    """An engine; SQLite transactions begin with BEGIN IMMEDIATE (DDL included)."""
    from sqlalchemy import event

    engine = settings.create_engine()
    if settings.dialect == "sqlite":

        @event.listens_for(engine, "connect")
        def _autocommit_driver(dbapi_connection: Any, _record: Any) -> None:
            dbapi_connection.isolation_level = None  # SQLAlchemy emits BEGIN itself

        @event.listens_for(engine, "begin")
        def _begin(connection: sa.Connection) -> None:
            connection.exec_driver_sql("BEGIN IMMEDIATE")  # take the write lock up front

    return engine


def connect_engine(settings: ConnectionSettings, config: AbstractConfig) -> sa.Engine:
    """The task's engine, after a first connection succeeded.

    Tries ``connection.attempts`` times, ``connection.backoff.ms`` apart, while the database
    is unreachable.

    Raises:
        ConnectException: the database cannot be used (named, with the reason).
    """
    problem = _sqlite_problem(settings)
    if problem:
        raise ConnectException(f"Opening {settings.describe()}: {problem}")
    attempts = config.get_int(CONNECTION_ATTEMPTS)
    backoff_s = config.get_long(CONNECTION_BACKOFF_MS) / 1000
    engine = _engine(settings)
    for attempt in range(1, attempts + 1):
        try:
            with engine.connect() as connection:
                connection.exec_driver_sql("SELECT 1").fetchall()
            return engine
        except Exception as exc:  # noqa: BLE001 - every driver error is translated
            error = translate_error(exc, "connecting", settings)
            if not isinstance(error, RetriableException) or attempt == attempts:
                engine.dispose()
                suffix = f" (after {attempts} attempts)" if attempts > 1 else ""
                raise ConnectException(f"{error}{suffix}") from None
            log.info("%s; attempt %d of %d, trying again", error, attempt, attempts)
            time.sleep(backoff_s)
    raise AssertionError("unreachable")  # pragma: no cover


def validate_sink(props: dict[str, str], config_values: Iterable[ConfigValue]) -> None:
    """Add the cross-key and database problems to ``config_values``."""
    by_name = {value.name: value for value in config_values}
    values = {k: v.value for k, v in by_name.items() if not v.error_messages}
    for key, message in sink_config_problems(values):
        if key in by_name:
            by_name[key].add_error_message(message)
    url = by_name.get(CONNECTION_URL)
    if url is None or url.error_messages or values.get(CONNECTION_URL) is None:
        return
    try:
        settings = ConnectionSettings.from_values(values)
    except ConnectException as exc:
        url.add_error_message(str(exc))
        return
    problem = _sqlite_problem(settings)
    if problem:
        url.add_error_message(problem)
        return
    if settings.dialect == "sqlite" and not Path(settings.url.database or "").exists():
        return  # created by the sink (_sqlite_problem found the path usable)
    import sqlalchemy as sa

    engine = _engine(settings)
    try:
        with engine.connect() as connection:
            connection.exec_driver_sql("SELECT 1").fetchall()
            if values.get(AUTO_CREATE) is False and TABLE_NAME_FORMAT in values:
                inspector = sa.inspect(connection)
                form = str(values[TABLE_NAME_FORMAT])
                topics = [t.strip() for t in props.get("topics", "").split(",") if t.strip()]
                missing = sorted(
                    {form.replace("${topic}", t) for t in topics} - set(inspector.get_table_names())
                )
                if missing and TABLE_NAME_FORMAT in by_name:
                    by_name[TABLE_NAME_FORMAT].add_error_message(
                        f"table(s) {', '.join(map(repr, missing))} do not exist in "
                        f"{settings.describe()} and auto.create=false: create them, or set "
                        "auto.create=true"
                    )
    except Exception as exc:  # noqa: BLE001 - every driver error is translated
        url.add_error_message(str(translate_error(exc, "connecting", settings)))
    finally:
        engine.dispose()
