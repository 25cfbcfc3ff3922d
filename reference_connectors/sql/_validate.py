"""The SQL source's validation beyond single keys: the database answers, tables and columns fit.

Like the JDBC connector's, ``validate`` connects to the database: an unreachable server, wrong
credentials or an unknown database are reported on ``connection.url``. When it answers, the
whitelisted tables that exist (and the custom query) are checked against the mode: the
incrementing and timestamp columns must exist (and be NOT NULL with ``validate.non.null``), and
every column must have a Connect type.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from cdk import ConfigDef, ConnectException
from cdk.config import ConfigValue
from reference_connectors.sql._connection import (
    CONNECTION_URL,
    ConnectionSettings,
    check_connection,
    translate_error,
)
from reference_connectors.sql._reflect import list_tables, reflect_columns
from reference_connectors.sql._source_config import (
    INCREMENTING_COLUMN,
    MODE,
    QUERY,
    SCHEMA_PATTERN,
    TABLE_TYPES,
    TABLE_WHITELIST,
    TIMESTAMP_COLUMN,
    VALIDATE_NON_NULL,
    source_config_problems,
)

if TYPE_CHECKING:
    import sqlalchemy as sa

__all__ = ["validate_source"]


def validate_source(
    definition: ConfigDef, props: dict[str, str], config_values: Iterable[ConfigValue]
) -> None:
    """Add the cross-key and database problems to ``config_values``."""
    by_name = {value.name: value for value in config_values}
    if any(value.error_messages for value in by_name.values()):
        values = {k: v.value for k, v in by_name.items() if not v.error_messages}
    else:
        values = {k: v.value for k, v in by_name.items()}
    for key, message in source_config_problems(values):
        if key in by_name:
            by_name[key].add_error_message(message)
    url = by_name.get(CONNECTION_URL)
    if url is None or url.error_messages or values.get(CONNECTION_URL) is None:
        return
    try:
        settings = ConnectionSettings.from_values(values)
    except (ConnectException, ValueError) as exc:
        url.add_error_message(str(exc))
        return
    try:
        problem = check_connection(settings)
        if problem:
            url.add_error_message(problem)
            return
        with settings.connect("checking the tables") as connection:
            _check_tables(connection, values, by_name, settings)
    except ConnectException as exc:
        url.add_error_message(str(exc))
    except Exception as exc:  # noqa: BLE001 - validate() reports, never raises
        url.add_error_message(str(translate_error(exc, "checking the database", settings)))


def _check_tables(
    connection: sa.Connection,
    values: dict[str, Any],
    by_name: dict[str, ConfigValue],
    settings: ConnectionSettings,
) -> None:
    import sqlalchemy as sa

    mode = str(values.get(MODE) or "").lower()
    inc = str(values.get(INCREMENTING_COLUMN) or "")
    stamps = [str(c).strip() for c in values.get(TIMESTAMP_COLUMN) or [] if str(c).strip()]
    non_null = bool(values.get(VALIDATE_NON_NULL, True))
    query = str(values.get(QUERY) or "").strip()
    if query:
        try:
            result = connection.execute(sa.text(f"SELECT * FROM ({query}) cdk_query WHERE 1 = 0"))
            names = list(result.keys())
        except sa.exc.SQLAlchemyError as exc:
            error = translate_error(exc, "running the query", settings)
            by_name[QUERY].add_error_message(f"The query fails: {error}")
            return
        wanted = ([inc] if mode.endswith("incrementing") and inc else []) + (
            stamps if mode.startswith("timestamp") else []
        )
        for column in wanted:
            if column not in names:
                key = TIMESTAMP_COLUMN if column in stamps else INCREMENTING_COLUMN
                by_name[key].add_error_message(
                    f"The query has no column {column!r}; its columns are {names}"
                )
        return
    schema = values.get(SCHEMA_PATTERN) or None
    whitelist = [str(t).strip() for t in values.get(TABLE_WHITELIST) or [] if str(t).strip()]
    if not whitelist:
        return
    try:
        existing = set(list_tables(connection, schema, list(values.get(TABLE_TYPES) or ["TABLE"])))
    except sa.exc.SQLAlchemyError as exc:
        by_name[CONNECTION_URL].add_error_message(str(translate_error(exc, "listing", settings)))
        return
    for table in whitelist:
        if table not in existing:
            continue  # picked up once it is created
        try:
            columns = {c.name: c for c in reflect_columns(connection, table, schema)}
        except ConnectException as exc:
            by_name[TABLE_WHITELIST].add_error_message(str(exc))
            continue
        if mode.endswith("incrementing") and inc:
            _check_column(by_name, INCREMENTING_COLUMN, table, inc, columns, non_null)
            found = columns.get(inc)
            if found is not None and not found.sql_type.is_integer:
                by_name[INCREMENTING_COLUMN].add_error_message(
                    f"Column {table}.{inc} is {found.type_text}, not an integer column"
                )
        if mode.startswith("timestamp"):
            for stamp in stamps:
                _check_column(by_name, TIMESTAMP_COLUMN, table, stamp, columns, non_null)


def _check_column(
    by_name: dict[str, ConfigValue],
    key: str,
    table: str,
    name: str,
    columns: dict[str, Any],
    non_null: bool,
) -> None:
    column = columns.get(name)
    if column is None:
        by_name[key].add_error_message(
            f"Table {table} has no column {name!r}; its columns are {sorted(columns)}"
        )
    elif non_null and column.nullable:
        by_name[key].add_error_message(
            f"Column {table}.{name} is nullable; declare it NOT NULL or set validate.non.null=false"
        )
