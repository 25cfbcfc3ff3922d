"""A small, correct SQLite source and sink: the baseline the broken connectors derive from.

This is a test fixture, not a product connector. It was the kit's first SQLite reference
(``reference_connectors/sqlite``), retired in favour of :mod:`reference_connectors.sql`, whose
``SqliteSource``/``SqliteSink`` aliases keep its configs working. The certify-suite tests keep it
because the broken variants in :mod:`tests.certify.broken` subclass its internals to break one
behaviour each, and a correct baseline must pass the very checks they fail.

``SqliteSourceConnector`` copies new rows of SQLite tables to Kafka in *incrementing* mode (one
topic per table, resuming from the last id stored in its offsets); ``SqliteSinkConnector``
writes records to tables, creating and evolving them from the record schemas, with idempotent
upserts. Both use only the standard library's :mod:`sqlite3` and the public ``cdk`` API. The
certification drivers live in :mod:`tests.certify.broken._sqlite_base.certify`.
"""

from __future__ import annotations

from tests.certify.broken._sqlite_base._config import SINK_CONFIG_DEF, SOURCE_CONFIG_DEF, VERSION
from tests.certify.broken._sqlite_base._sink import SqliteSinkConnector, SqliteSinkTask
from tests.certify.broken._sqlite_base._source import SqliteSourceConnector, SqliteSourceTask

__version__ = VERSION

__all__ = [
    "__version__",
    "SqliteSourceConnector",
    "SqliteSourceTask",
    "SqliteSinkConnector",
    "SqliteSinkTask",
    "SOURCE_CONFIG_DEF",
    "SINK_CONFIG_DEF",
]
