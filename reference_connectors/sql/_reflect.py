"""What the source learns from the database catalog: its tables, and a table's columns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reference_connectors.sql._types_in import (
    Kind,
    SqlType,
    UnsupportedColumnType,
    from_declared_sqlite,
    from_reflected,
    quiet_reflection,
)

if TYPE_CHECKING:
    import sqlalchemy as sa

__all__ = [
    "Column",
    "default_schema",
    "list_tables",
    "quote",
    "reflect_columns",
    "select_column",
    "table_exists",
]


@dataclass(frozen=True)
class Column:
    """A column of a table, as the source maps it.

    Attributes:
        name: the column's name.
        sql_type: its Connect meaning (before ``numeric.mapping``).
        nullable: whether it may hold NULL.
        type_text: its database type, for messages.
        autoincrement: whether the database numbers it (serial, AUTO_INCREMENT, rowid).
    """

    name: str
    sql_type: SqlType
    nullable: bool
    type_text: str
    autoincrement: bool = False


def quote(connection: sa.Connection, name: str) -> str:
    """``name`` quoted as an identifier of the connection's dialect (always quoted)."""
    preparer = connection.dialect.identifier_preparer
    return str(preparer.quote_identifier(name))


def select_column(connection: sa.Connection, name: str, sql_type: SqlType) -> str:
    """How to select column ``name`` so that its value arrives whole.

    MySQL and MariaDB send a FLOAT as text of 6 significant digits, which loses most 32-bit
    values (16777216 arrives as 16777200): it is selected as a DOUBLE, which holds it exactly.
    """
    quoted = quote(connection, name)
    if connection.dialect.name in ("mysql", "mariadb") and sql_type.kind is Kind.FLOAT32:
        return f"({quoted} + 0E0) AS {quoted}"
    return quoted


def default_schema(connection: sa.Connection, schema: str | None) -> str | None:
    """The schema to read: the configured one, else the connection's default."""
    if schema:
        return schema
    if connection.dialect.name == "sqlite":
        return None
    return connection.dialect.default_schema_name


def list_tables(connection: sa.Connection, schema: str | None, types: list[str]) -> list[str]:
    """The names of the tables (and views, when asked) in ``schema``, sorted."""
    import sqlalchemy as sa

    inspector = sa.inspect(connection)
    kinds = {t.strip().upper() for t in types}
    names: set[str] = set()
    schema = default_schema(connection, schema)
    if "TABLE" in kinds:
        names.update(inspector.get_table_names(schema=schema))
    if "VIEW" in kinds:
        names.update(inspector.get_view_names(schema=schema))
    if connection.dialect.name == "sqlite":
        names = {n for n in names if not n.startswith("sqlite_")}
    return sorted(names)


def table_exists(connection: sa.Connection, table: str, schema: str | None) -> bool:
    """Whether ``table`` (or a view of that name) exists."""
    import sqlalchemy as sa

    inspector = sa.inspect(connection)
    schema = default_schema(connection, schema)
    return bool(inspector.has_table(table, schema=schema)) or table in inspector.get_view_names(
        schema=schema
    )


def reflect_columns(connection: sa.Connection, table: str, schema: str | None) -> list[Column]:
    """The columns of ``table`` in order; empty when the table does not exist.

    Raises:
        UnsupportedColumnType: a column's type has no Connect type.
    """
    if connection.dialect.name == "sqlite":
        return _sqlite_columns(connection, table)
    import sqlalchemy as sa

    schema = default_schema(connection, schema)
    inspector = sa.inspect(connection)
    try:
        with quiet_reflection():
            reflected = inspector.get_columns(table, schema=schema)
    except sa.exc.NoSuchTableError:
        return []
    dialect = "mysql" if connection.dialect.name in ("mysql", "mariadb") else "postgresql"
    columns = []
    for info in reflected:
        sa_type = info["type"]
        try:
            type_text = str(sa_type.compile(dialect=connection.dialect))
        except sa.exc.CompileError:
            type_text = type(sa_type).__name__
        sql_type = from_reflected(dialect, sa_type)
        if sql_type is None:
            if isinstance(sa_type, sa.types.NullType):  # a type SQLAlchemy does not know
                type_text = _catalog_type(connection, table, info["name"], schema) or type_text
            raise UnsupportedColumnType(table, info["name"], type_text)
        auto = info.get("autoincrement") is True or (
            dialect == "postgresql"
            and (bool(info.get("identity")) or "nextval(" in str(info.get("default") or ""))
        )
        columns.append(Column(info["name"], sql_type, bool(info["nullable"]), type_text, auto))
    return columns


def _sqlite_columns(connection: sa.Connection, table: str) -> list[Column]:
    import sqlalchemy as sa

    quoted = quote(connection, table)
    rows: list[Any] = list(connection.execute(sa.text(f"PRAGMA table_info({quoted})")))
    primary_keys = sum(1 for row in rows if row[5])
    columns = []
    for _, name, declared, not_null, _, pk in rows:
        sql_type = from_declared_sqlite(declared or "")
        if sql_type is None:
            raise UnsupportedColumnType(table, name, declared or "(no type)")
        # A single INTEGER PRIMARY KEY is the rowid: numbered by SQLite, never NULL.
        rowid = bool(pk) and primary_keys == 1 and str(declared).upper() == "INTEGER"
        columns.append(Column(name, sql_type, not (not_null or rowid), declared or "", rowid))
    return columns


def _catalog_type(
    connection: sa.Connection, table: str, column: str, schema: str | None
) -> str | None:
    """The type name the information schema gives a column (for messages)."""
    import sqlalchemy as sa

    query = sa.text(
        "SELECT data_type FROM information_schema.columns WHERE table_name = :t "
        "AND column_name = :c AND table_schema = :s"
    )
    try:
        found = connection.execute(query, {"t": table, "c": column, "s": schema}).scalar()
    except sa.exc.SQLAlchemyError:
        return None
    return str(found).upper() if found else None
