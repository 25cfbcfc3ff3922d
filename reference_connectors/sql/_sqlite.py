"""``SqliteSource``: the SQL source with the SQLite source connector's defaults.

The kit's first SQL reference was a SQLite-only source in *incrementing* mode on column ``id``,
whose records carried the id as their key. Configs written for it keep working through this
subclass: ``mode`` defaults to ``incrementing``, ``incrementing.column.name`` to ``id``,
``poll.interval.ms`` to 1000, ``validate.non.null`` to false (SQLite's INTEGER PRIMARY KEY need
not be declared NOT NULL), and each record's key is its incrementing value (INT64). Every other
key of the SQL source applies too.
"""

from __future__ import annotations

from typing import Any, ClassVar

from typing_extensions import override

from cdk import ConfigDef
from cdk.config import ConfigKey
from reference_connectors.sql._source import SqlSourceConnector, SqlSourceTask
from reference_connectors.sql._source_config import (
    INCREMENTING_COLUMN,
    MODE,
    POLL_INTERVAL_MS,
    SOURCE_CONFIG_DEF,
    SOURCE_TASK_CONFIG_DEF,
    VALIDATE_NON_NULL,
)

__all__ = ["SQLITE_SOURCE_CONFIG_DEF", "SqliteSourceConnector", "SqliteSourceTask"]

_DEFAULTS: dict[str, Any] = {
    MODE: "incrementing",
    INCREMENTING_COLUMN: "id",
    POLL_INTERVAL_MS: 1000,
    VALIDATE_NON_NULL: False,
}


def _with_defaults(base: ConfigDef) -> ConfigDef:
    result = ConfigDef()
    for key in base.config_keys().values():
        default = _DEFAULTS.get(key.name, key.default_value)
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


SQLITE_SOURCE_CONFIG_DEF = _with_defaults(SOURCE_CONFIG_DEF)
_SQLITE_TASK_CONFIG_DEF = _with_defaults(SOURCE_TASK_CONFIG_DEF)


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
