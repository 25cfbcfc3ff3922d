"""The DB-API cursors a querier reads a round through (server-side on PostgreSQL and MariaDB)."""

from __future__ import annotations

import contextlib
import logging
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sqlalchemy as sa

__all__ = ["close_cursor", "execute", "mysql_binary_flags"]

log = logging.getLogger(__name__)


def execute(connection: sa.Connection, sql: str, params: dict[str, Any], batch: int) -> Any:
    """Run ``sql`` on a DB-API cursor of ``connection``: server-side on PostgreSQL and MariaDB.

    The cursor is the driver's own (not SQLAlchemy's result), so that a cursor of a connection
    that broke is closed for sure (after its connection).
    """
    import sqlalchemy as sa

    compiled = sa.text(sql).bindparams(**params).compile(dialect=connection.dialect)
    values = compiled.construct_params()
    raw: Any = connection.connection.dbapi_connection
    name = connection.dialect.name
    if name == "postgresql":
        cursor = raw.cursor(name=f"cdk_{id(raw):x}_{time.monotonic_ns():x}")
        cursor.itersize = max(batch, 1000)
    elif name in ("mysql", "mariadb"):
        import pymysql.cursors

        cursor = raw.cursor(pymysql.cursors.SSCursor)
    else:
        cursor = raw.cursor()
    try:
        if compiled.positiontup is not None:  # qmark (SQLite)
            cursor.execute(compiled.string, [values[k] for k in compiled.positiontup])
        else:
            cursor.execute(compiled.string, values)
    except BaseException:
        close_cursor(cursor, broken=True)
        raise
    return cursor


def close_cursor(cursor: Any, *, broken: bool) -> None:
    """Close a round's cursor; after an error, its connection first (it is dropped anyway)."""
    if broken:
        with contextlib.suppress(Exception):
            cursor.connection.close()
    try:
        cursor.close()
    except Exception as exc:  # noqa: BLE001 - closing a broken cursor
        log.debug("closing a cursor failed: %s", exc)
        if not broken:
            with contextlib.suppress(Exception):
                cursor.connection.close()
            with contextlib.suppress(Exception):
                cursor.close()


def mysql_binary_flags(cursor: Any) -> list[bool] | None:
    """For PyMySQL, whether each result field holds bytes (the binary character set)."""
    result = getattr(cursor, "_result", None)
    fields = getattr(result, "fields", None)
    if not fields:
        return None
    return [getattr(f, "charsetnr", 0) == 63 for f in fields]
