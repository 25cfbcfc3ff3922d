"""``SqliteSource`` and ``SqliteSink``: the SQL connectors with the SQLite connectors' defaults.

The kit's first SQL references were a SQLite-only source and sink. Configs written for them keep
working through these subclasses:

- the source ran in *incrementing* mode on column ``id`` and keyed its records by the id:
  ``mode`` defaults to ``incrementing``, ``incrementing.column.name`` to ``id``,
  ``poll.interval.ms`` to 1000, ``validate.non.null`` to false (SQLite's INTEGER PRIMARY KEY
  need not be declared NOT NULL), and each record's key is its incrementing value (INT64);
- the sink upserted on the value's ``id`` and created and evolved its tables: ``insert.mode``
  defaults to ``upsert``, ``pk.mode`` to ``record_value``, ``pk.fields`` to ``id``, and
  ``auto.create`` and ``auto.evolve`` to true.

Every other key of the SQL connectors applies too, with its default.
"""

from __future__ import annotations

from typing import Any, ClassVar

from typing_extensions import override

from cdk import ConfigDef
from cdk.config import ConfigKey
from reference_connectors.sql._sink import SqlSinkConnector, SqlSinkTask
from reference_connectors.sql._sink_config import (
    AUTO_CREATE,
    AUTO_EVOLVE,
    INSERT_MODE,
    PK_FIELDS,
    PK_MODE,
    SINK_CONFIG_DEF,
)
from reference_connectors.sql._source import SqlSourceConnector, SqlSourceTask
from reference_connectors.sql._source_config import (
    INCREMENTING_COLUMN,
    MODE,
    POLL_INTERVAL_MS,
    SOURCE_CONFIG_DEF,
    SOURCE_TASK_CONFIG_DEF,
    VALIDATE_NON_NULL,
)

__all__ = [
    "SQLITE_SINK_CONFIG_DEF",
    "SQLITE_SOURCE_CONFIG_DEF",
    "SqliteSinkConnector",
    "SqliteSinkTask",
    "SqliteSourceConnector",
    "SqliteSourceTask",
]

_SOURCE_DEFAULTS: dict[str, Any] = {
    MODE: "incrementing",
    INCREMENTING_COLUMN: "id",
    POLL_INTERVAL_MS: 1000,
    VALIDATE_NON_NULL: False,
}
_SINK_DEFAULTS: dict[str, Any] = {
    INSERT_MODE: "upsert",
    PK_MODE: "record_value",
    PK_FIELDS: ["id"],
    AUTO_CREATE: True,
    AUTO_EVOLVE: True,
}


def _with_defaults(base: ConfigDef, defaults: dict[str, Any]) -> ConfigDef:
    result = ConfigDef()
    for key in base.config_keys().values():
        default = defaults.get(key.name, key.default_value)
        result.define(
            ConfigKey(
                key.name,
                key.type,
                default,
                key.validator,
                key.importance,
                key.documentation,
                key.group,
                key.order_in_group,
                key.width,
                key.display_name,
                key.dependents,
                key.recommender,
                key.internal_config,
                key.alternative_string,
            )
        )
    return result


SQLITE_SOURCE_CONFIG_DEF = _with_defaults(SOURCE_CONFIG_DEF, _SOURCE_DEFAULTS)
_SQLITE_TASK_CONFIG_DEF = _with_defaults(SOURCE_TASK_CONFIG_DEF, _SOURCE_DEFAULTS)
SQLITE_SINK_CONFIG_DEF = _with_defaults(SINK_CONFIG_DEF, _SINK_DEFAULTS)


class SqliteSourceTask(SqlSourceTask):
    """The SQL source task with the SQLite defaults; keys records by their incrementing value."""

    config_def: ClassVar[ConfigDef] = _SQLITE_TASK_CONFIG_DEF
    key_by_incrementing: ClassVar[bool] = True


class SqliteSourceConnector(SqlSourceConnector):
    """The SQL source with the defaults of the kit's SQLite source (alias ``SqliteSource``)."""

    @override
    def config(self) -> ConfigDef:
        return SQLITE_SOURCE_CONFIG_DEF

    @override
    def task_class(self) -> type[SqliteSourceTask]:
        return SqliteSourceTask


class SqliteSinkTask(SqlSinkTask):
    """The SQL sink task with the SQLite sink's defaults (upserts on ``id``, auto DDL)."""

    config_def: ClassVar[ConfigDef] = SQLITE_SINK_CONFIG_DEF


class SqliteSinkConnector(SqlSinkConnector):
    """The SQL sink with the defaults of the kit's SQLite sink (alias ``SqliteSink``)."""

    @override
    def task_class(self) -> type[SqliteSinkTask]:
        return SqliteSinkTask
