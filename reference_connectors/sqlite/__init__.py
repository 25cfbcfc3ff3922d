"""SQLite source and sink: reference connectors modelled on Confluent's JDBC connectors.

``SqliteSourceConnector`` copies new rows of SQLite tables to Kafka in *incrementing* mode (one
topic per table, resuming from the last id stored in its offsets); ``SqliteSinkConnector``
writes records to tables, creating and evolving them from the record schemas, with idempotent
upserts. Both use only the standard library's :mod:`sqlite3` and the public ``cdk`` API. The
certification drivers live in :mod:`reference_connectors.sqlite.certify`.
"""

from __future__ import annotations

from reference_connectors.sqlite._config import SINK_CONFIG_DEF, SOURCE_CONFIG_DEF, VERSION
from reference_connectors.sqlite._sink import SqliteSinkConnector, SqliteSinkTask
from reference_connectors.sqlite._source import SqliteSourceConnector, SqliteSourceTask

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
