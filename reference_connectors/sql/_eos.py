"""Exactly-once into the database: the consumed offsets live in the database, next to the rows.

The sink keeps a table ``__connect_offsets`` in the target database::

    connector  VARCHAR(255)   the connector's name (several connectors can share a database)
    topic      VARCHAR(255)
    partition  INTEGER
    offset     BIGINT         the next offset to consume (the last one written plus one)
    PRIMARY KEY (connector, topic, partition)

Every ``put()`` upserts the offsets of its records in the same database transaction as the rows
themselves. So the database always holds exactly the rows of the records below the offsets it
records: a crash (``kill -9``) before the transaction commits loses both, a crash after it keeps
both. When a task is given partitions (``open()``), it reads their offsets from this table and
asks the framework to consume from there (``SinkTaskContext.offset``). Records the database
already holds are therefore never written again, even when Kafka's consumer group never saw the
commit (the worker died between the database commit and the offset commit): the results are
exactly-once, whatever ``insert.mode``. The consumer group's offsets are still committed as
usual, for monitoring.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from cdk import TopicPartition
from reference_connectors.sql._dialects import ColumnDef, Dialect

if TYPE_CHECKING:
    import sqlalchemy as sa

__all__ = ["OFFSETS_TABLE", "OffsetsTable"]

#: The table of the consumed offsets, in the sink's database.
OFFSETS_TABLE = "__connect_offsets"
_KEYS = ("connector", "topic", "partition")


class OffsetsTable:
    """Reads and writes one connector's offsets in the offsets table of a database."""

    def __init__(self, dialect: Dialect, connector: str) -> None:
        self._dialect = dialect
        self._connector = connector
        quote = dialect.quote
        self._select = (
            f"SELECT {quote('topic')}, {quote('partition')}, {quote('offset')} "
            f"FROM {quote(OFFSETS_TABLE)} WHERE {quote('connector')} = {dialect.marker}"
        )
        self._upsert = dialect.upsert(OFFSETS_TABLE, _KEYS, ["offset"])

    def create(self, connection: sa.Connection) -> None:
        """Create the table unless it exists (and commit)."""
        import sqlalchemy as sa

        if sa.inspect(connection).has_table(OFFSETS_TABLE):
            return
        text = "VARCHAR(255)"
        sql = self._dialect.create_table(
            OFFSETS_TABLE,
            [
                ColumnDef("connector", text, not_null=True),
                ColumnDef("topic", text, not_null=True),
                ColumnDef("partition", "INTEGER", not_null=True),
                ColumnDef("offset", "BIGINT", not_null=True),
            ],
            _KEYS,
        )
        try:
            connection.exec_driver_sql(sql)
            connection.commit()
        except sa.exc.SQLAlchemyError:
            connection.rollback()
            if not sa.inspect(connection).has_table(OFFSETS_TABLE):  # another task made it
                raise

    def read(
        self, connection: sa.Connection, partitions: Iterable[TopicPartition]
    ) -> dict[TopicPartition, int]:
        """The next offsets to consume of those ``partitions`` the table knows."""
        wanted = set(partitions)
        rows = connection.exec_driver_sql(self._select, (self._connector,)).fetchall()
        found = {TopicPartition(str(t), int(p)): int(o) for t, p, o in rows}
        return {tp: offset for tp, offset in found.items() if tp in wanted}

    def alter(
        self, connection: sa.Connection, offsets: Mapping[TopicPartition, int | None]
    ) -> None:
        """Set (an int) or forget (None) offsets, inside the caller's transaction.

        When every offset is None (a reset of the connector's offsets), every row of the
        connector is deleted, also of partitions the consumer group does not know.
        """
        if all(offset is None for offset in offsets.values()):
            delete_all = self._dialect.delete(OFFSETS_TABLE, _KEYS[:1])
            connection.exec_driver_sql(delete_all, (self._connector,))
            return
        delete = self._dialect.delete(OFFSETS_TABLE, _KEYS)
        for tp, offset in offsets.items():
            if offset is None:
                connection.exec_driver_sql(delete, (self._connector, tp.topic, tp.partition))
            else:
                self.write(connection, {tp: offset})

    def write(self, connection: sa.Connection, offsets: Mapping[TopicPartition, int]) -> None:
        """Record the next offsets to consume (inside the caller's transaction)."""
        rows = [(self._connector, tp.topic, tp.partition, o) for tp, o in offsets.items()]
        if len(rows) == 1:
            connection.exec_driver_sql(self._upsert, rows[0])
        elif rows:
            connection.exec_driver_sql(self._upsert, rows)
