"""SQL source and sink: reference connectors modelled on Confluent's JDBC connectors.

They reach SQLite (the embedded default), PostgreSQL and MariaDB/MySQL through SQLAlchemy Core
(the ``sql`` extra: ``pip install 'connect-cdk[sql]'``). ``SqlSourceConnector`` copies tables
(or a custom query) to topics in the JDBC source's modes (bulk, incrementing, timestamp,
timestamp+incrementing). The certification drivers live in
:mod:`reference_connectors.sql.certify`.
"""

from __future__ import annotations

from reference_connectors.sql._sink import SqlSinkConnector, SqlSinkTask
from reference_connectors.sql._sink_config import SINK_CONFIG_DEF
from reference_connectors.sql._source import SqlSourceConnector, SqlSourceTask
from reference_connectors.sql._source_config import SOURCE_CONFIG_DEF, VERSION
from reference_connectors.sql._sqlite import (
    SQLITE_SINK_CONFIG_DEF,
    SQLITE_SOURCE_CONFIG_DEF,
    SqliteSinkConnector,
    SqliteSinkTask,
    SqliteSourceConnector,
    SqliteSourceTask,
)

__version__ = VERSION

__all__ = [
    "__version__",
    "SqlSinkConnector",
    "SqlSinkTask",
    "SINK_CONFIG_DEF",
    "SqlSourceConnector",
    "SqlSourceTask",
    "SqliteSinkConnector",
    "SqliteSinkTask",
    "SqliteSourceConnector",
    "SqliteSourceTask",
    "SOURCE_CONFIG_DEF",
    "SQLITE_SINK_CONFIG_DEF",
    "SQLITE_SOURCE_CONFIG_DEF",
]
