"""The SQL the sink runs, per dialect: INSERT, upsert, UPDATE, DELETE, CREATE and ALTER TABLE.

Statements take positional parameters in the driver's own style (``?`` for SQLite, ``%s`` for
psycopg and PyMySQL) and run through ``exec_driver_sql``, so a batch is one DB-API
``executemany`` with no SQL compilation per row. Identifiers are always quoted.

Upserts: PostgreSQL and SQLite ``INSERT ... ON CONFLICT (key) DO UPDATE SET c = excluded.c``
(they need a primary key or unique index on exactly the key columns); MariaDB/MySQL
``INSERT ... ON DUPLICATE KEY UPDATE c = VALUES(c)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlalchemy as sa

__all__ = ["ColumnDef", "Dialect"]


@dataclass(frozen=True)
class ColumnDef:
    """A column of a CREATE TABLE or ALTER TABLE ADD COLUMN.

    Attributes:
        name: the column's name.
        type: its DDL type.
        not_null: whether it is declared NOT NULL.
        default: a SQL literal for a DEFAULT clause, or None.
    """

    name: str
    type: str
    not_null: bool = False
    default: str | None = None


class Dialect:
    """Builds statements for one database (``postgresql``, ``mysql`` or ``sqlite``)."""

    def __init__(self, name: str, preparer: sa.sql.compiler.IdentifierPreparer) -> None:
        self.name = name
        self._preparer = preparer
        self.marker = "?" if name == "sqlite" else "%s"

    @classmethod
    def of(cls, engine: sa.Engine) -> Dialect:
        """The dialect of an engine."""
        backend = engine.dialect.name
        name = "mysql" if backend in ("mysql", "mariadb") else backend
        return cls(name, engine.dialect.identifier_preparer)

    def quote(self, name: str) -> str:
        """``name`` as a quoted identifier."""
        return str(self._preparer.quote_identifier(name))

    def _markers(self, count: int) -> str:
        return ", ".join([self.marker] * count)

    def insert(self, table: str, columns: Sequence[str]) -> str:
        """``INSERT INTO table (columns) VALUES (...)``."""
        names = ", ".join(self.quote(c) for c in columns)
        return f"INSERT INTO {self.quote(table)} ({names}) VALUES ({self._markers(len(columns))})"

    def upsert(self, table: str, keys: Sequence[str], others: Sequence[str]) -> str:
        """Insert a row, or update the row with the same key; parameters: keys, then others."""
        sql = self.insert(table, [*keys, *others])
        if self.name == "mysql":
            updates = [f"{self.quote(c)} = VALUES({self.quote(c)})" for c in others]
            if not updates:  # nothing but the key: leave the row as it is
                updates = [f"{self.quote(keys[0])} = {self.quote(keys[0])}"]
            return f"{sql} ON DUPLICATE KEY UPDATE {', '.join(updates)}"
        target = ", ".join(self.quote(k) for k in keys)
        if not others:
            return f"{sql} ON CONFLICT ({target}) DO NOTHING"
        updates = [f"{self.quote(c)} = excluded.{self.quote(c)}" for c in others]
        return f"{sql} ON CONFLICT ({target}) DO UPDATE SET {', '.join(updates)}"

    def update(self, table: str, keys: Sequence[str], others: Sequence[str]) -> str:
        """``UPDATE table SET others WHERE keys``; parameters: others, then keys."""
        sets = ", ".join(f"{self.quote(c)} = {self.marker}" for c in others)
        return f"UPDATE {self.quote(table)} SET {sets} WHERE {self._where(keys)}"

    def delete(self, table: str, keys: Sequence[str]) -> str:
        """``DELETE FROM table WHERE keys``."""
        return f"DELETE FROM {self.quote(table)} WHERE {self._where(keys)}"

    def _where(self, keys: Sequence[str]) -> str:
        return " AND ".join(f"{self.quote(k)} = {self.marker}" for k in keys)

    def create_table(self, table: str, columns: Sequence[ColumnDef], keys: Sequence[str]) -> str:
        """``CREATE TABLE`` with the columns and the primary key."""
        parts = [self._column(c) for c in columns]
        if keys:
            parts.append(f"PRIMARY KEY ({', '.join(self.quote(k) for k in keys)})")
        return f"CREATE TABLE {self.quote(table)} ({', '.join(parts)})"

    def add_column(self, table: str, column: ColumnDef) -> str:
        """``ALTER TABLE table ADD COLUMN ...``."""
        return f"ALTER TABLE {self.quote(table)} ADD COLUMN {self._column(column)}"

    def _column(self, column: ColumnDef) -> str:
        text = f"{self.quote(column.name)} {column.type}"
        if column.default is not None:
            text += f" DEFAULT {column.default}"
        if column.not_null:
            text += " NOT NULL"
        return text
