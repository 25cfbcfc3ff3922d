"""The SQL source's configuration: the JDBC source connector's keys, where they apply."""

from __future__ import annotations

import zoneinfo
from collections.abc import Mapping
from typing import Any

from cdk import NO_DEFAULT, ConfigDef, ConfigException, Importance, Type, Width
from cdk.config.validators import CaseInsensitiveValidString, NonEmptyString, Range, Validator
from reference_connectors.sql._connection import define_connection
from reference_connectors.sql._types_in import NUMERIC_MAPPINGS

__all__ = [
    "BATCH_MAX_ROWS",
    "DB_TIMEZONE",
    "INCREMENTING_COLUMN",
    "MODE",
    "MODES",
    "NUMERIC_MAPPING",
    "POLL_INTERVAL_MS",
    "QUERY",
    "SCHEMA_PATTERN",
    "SOURCE_CONFIG_DEF",
    "SOURCE_TASK_CONFIG_DEF",
    "TABLE_BLACKLIST",
    "TABLE_POLL_INTERVAL_MS",
    "TABLE_TYPES",
    "TABLE_WHITELIST",
    "TASK_TABLES",
    "TIMESTAMP_COLUMN",
    "TIMESTAMP_DELAY_MS",
    "TIMESTAMP_INITIAL",
    "TOPIC_PREFIX",
    "VALIDATE_NON_NULL",
    "VERSION",
    "source_config_problems",
]

VERSION = "0.1.0"

TABLE_WHITELIST = "table.whitelist"
TABLE_BLACKLIST = "table.blacklist"
SCHEMA_PATTERN = "schema.pattern"
TABLE_TYPES = "table.types"
NUMERIC_MAPPING = "numeric.mapping"
TABLE_POLL_INTERVAL_MS = "table.poll.interval.ms"
MODE = "mode"
INCREMENTING_COLUMN = "incrementing.column.name"
TIMESTAMP_COLUMN = "timestamp.column.name"
TIMESTAMP_INITIAL = "timestamp.initial"
VALIDATE_NON_NULL = "validate.non.null"
QUERY = "query"
TOPIC_PREFIX = "topic.prefix"
POLL_INTERVAL_MS = "poll.interval.ms"
BATCH_MAX_ROWS = "batch.max.rows"
TIMESTAMP_DELAY_MS = "timestamp.delay.interval.ms"
DB_TIMEZONE = "db.timezone"
TASK_TABLES = "tables"  # set by the connector in each task config

MODES = ("bulk", "timestamp", "incrementing", "timestamp+incrementing")


class TimeZone(Validator):
    """A time zone name (``UTC``, ``Europe/Paris``)."""

    def ensure_valid(self, name: str, value: Any) -> None:
        if value is None:
            return
        try:
            zoneinfo.ZoneInfo(str(value))
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            raise ConfigException(name, value, "not a known time zone") from None

    def __str__(self) -> str:
        return "a time zone name, e.g. UTC or Europe/Paris"


_DB = "Database"
_MODE = "Mode"
_CONNECTOR = "Connector"

SOURCE_CONFIG_DEF = (
    define_connection(ConfigDef(), group=_DB)
    .define(
        TABLE_WHITELIST,
        Type.LIST,
        "",
        None,
        Importance.MEDIUM,
        "The tables to copy; empty copies every table (of table.types, in the schema). A table "
        "that does not exist yet is picked up once it is created. Use table.whitelist or "
        "table.blacklist, not both.",
        group=_DB,
        order_in_group=6,
        width=Width.LONG,
        display_name="Table Whitelist",
    )
    .define(
        TABLE_BLACKLIST,
        Type.LIST,
        "",
        None,
        Importance.MEDIUM,
        "The tables not to copy; every other table is copied.",
        group=_DB,
        order_in_group=7,
        width=Width.LONG,
        display_name="Table Blacklist",
    )
    .define(
        SCHEMA_PATTERN,
        Type.STRING,
        None,
        None,
        Importance.MEDIUM,
        "The schema (PostgreSQL) whose tables are copied; empty uses the connection's default "
        "schema (the first of PostgreSQL's search_path, MariaDB's database of the URL, "
        "SQLite's main). Unlike the JDBC connector's, this is a name, not a LIKE pattern.",
        group=_DB,
        order_in_group=8,
        width=Width.MEDIUM,
        display_name="Schema pattern",
    )
    .define(
        TABLE_TYPES,
        Type.LIST,
        "TABLE",
        None,
        Importance.LOW,
        "The kinds of tables to copy: TABLE, VIEW, or both.",
        group=_DB,
        order_in_group=9,
        width=Width.SHORT,
        display_name="Table Types",
    )
    .define(
        NUMERIC_MAPPING,
        Type.STRING,
        "none",
        CaseInsensitiveValidString.of(*NUMERIC_MAPPINGS),
        Importance.LOW,
        "How DECIMAL and NUMERIC columns map to Connect types. none: Decimal (exact). "
        "precision_only: INT8..INT64 for a scale of 0 and a precision up to 18, else Decimal. "
        "best_fit: as precision_only, and FLOAT64 for a scale above 0 and a precision up to "
        "18. best_fit_eager_double: as best_fit, and FLOAT64 for any scale above 0.",
        group=_DB,
        order_in_group=10,
        width=Width.SHORT,
        display_name="Map Numeric Values By Precision",
    )
    .define(
        DB_TIMEZONE,
        Type.STRING,
        "UTC",
        TimeZone(),
        Importance.MEDIUM,
        "The time zone of timestamps stored without one (and of the database session).",
        group=_DB,
        order_in_group=11,
        width=Width.MEDIUM,
        display_name="DB time zone",
    )
    .define(
        TABLE_POLL_INTERVAL_MS,
        Type.LONG,
        60_000,
        Range.at_least(1),
        Importance.LOW,
        "How often, in milliseconds, to look for new or removed tables; a change reconfigures "
        "the tasks.",
        group=_CONNECTOR,
        order_in_group=5,
        width=Width.SHORT,
        display_name="Metadata Change Monitoring Interval (ms)",
    )
    .define(
        MODE,
        Type.STRING,
        NO_DEFAULT,
        CaseInsensitiveValidString.of(*MODES),
        Importance.HIGH,
        "How tables are read. bulk: the whole table at every poll. incrementing: the rows "
        "whose incrementing column is above the last one read (new rows only). timestamp: the "
        "rows whose timestamp column is later than the last one read (new and updated rows). "
        "timestamp+incrementing: both, the most reliable way to copy new and updated rows.",
        group=_MODE,
        order_in_group=1,
        width=Width.MEDIUM,
        display_name="Table Loading Mode",
    )
    .define(
        INCREMENTING_COLUMN,
        Type.STRING,
        "",
        None,
        Importance.MEDIUM,
        "The strictly increasing integer column (incrementing modes); empty picks the "
        "table's auto-increment column (PostgreSQL serial or identity, MariaDB "
        "AUTO_INCREMENT, SQLite INTEGER PRIMARY KEY).",
        group=_MODE,
        order_in_group=2,
        width=Width.MEDIUM,
        display_name="Incrementing Column Name",
    )
    .define(
        TIMESTAMP_COLUMN,
        Type.LIST,
        "",
        None,
        Importance.MEDIUM,
        "The timestamp columns (timestamp modes); with several, the first non-null one of a "
        "row counts (COALESCE).",
        group=_MODE,
        order_in_group=3,
        width=Width.MEDIUM,
        display_name="Timestamp Column Name",
    )
    .define(
        TIMESTAMP_INITIAL,
        Type.LONG,
        None,
        None,
        Importance.LOW,
        "Where timestamp modes start when there is no offset yet, in milliseconds since the "
        "epoch; -1 is the current time. Empty reads every row.",
        group=_MODE,
        order_in_group=4,
        width=Width.MEDIUM,
        display_name="Unix time value of initial timestamp",
    )
    .define(
        VALIDATE_NON_NULL,
        Type.BOOLEAN,
        True,
        None,
        Importance.LOW,
        "Whether to check that the incrementing and timestamp columns are NOT NULL (a row "
        "with NULL there is never copied).",
        group=_MODE,
        order_in_group=5,
        width=Width.SHORT,
        display_name="Validate Non Null",
    )
    .define(
        QUERY,
        Type.STRING,
        "",
        None,
        Importance.MEDIUM,
        "A custom SELECT to copy instead of tables (one partition, one task, topic "
        "topic.prefix). The mode's condition is applied to its result, so it may join and "
        "filter as it likes. Do not combine it with table.whitelist or table.blacklist.",
        group=_MODE,
        order_in_group=6,
        width=Width.LONG,
        display_name="Query",
    )
    .define(
        TOPIC_PREFIX,
        Type.STRING,
        NO_DEFAULT,
        NonEmptyString(),
        Importance.HIGH,
        "Prefix of the topic names: the rows of table t go to topic <topic.prefix>t; with a "
        "custom query, topic.prefix is the topic.",
        group=_CONNECTOR,
        order_in_group=1,
        width=Width.MEDIUM,
        display_name="Topic Prefix",
    )
    .define(
        POLL_INTERVAL_MS,
        Type.INT,
        5000,
        Range.at_least(1),
        Importance.HIGH,
        "How long, in milliseconds, to wait before a table is queried again once all its new "
        "rows were read.",
        group=_CONNECTOR,
        order_in_group=2,
        width=Width.SHORT,
        display_name="Poll Interval (ms)",
    )
    .define(
        BATCH_MAX_ROWS,
        Type.INT,
        100,
        Range.at_least(1),
        Importance.LOW,
        "The maximum number of rows one poll returns.",
        group=_CONNECTOR,
        order_in_group=3,
        width=Width.SHORT,
        display_name="Max Rows Per Batch",
    )
    .define(
        TIMESTAMP_DELAY_MS,
        Type.LONG,
        0,
        Range.at_least(0),
        Importance.HIGH,
        "How long, in milliseconds, a row must be old (by its timestamp) before it is "
        "copied, so that transactions writing earlier timestamps can commit first.",
        group=_CONNECTOR,
        order_in_group=4,
        width=Width.MEDIUM,
        display_name="Delay Interval (ms)",
    )
)

#: The task's configuration: the connector's, plus the tables assigned to it.
SOURCE_TASK_CONFIG_DEF = ConfigDef(SOURCE_CONFIG_DEF).define(
    TASK_TABLES,
    Type.STRING,
    "[]",
    None,
    Importance.HIGH,
    "The tables this task copies, as a JSON array (set by the connector for each task).",
)


def source_config_problems(values: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Problems that span several keys, as ``(key, message)`` pairs."""
    problems: list[tuple[str, str]] = []
    mode = str(values.get(MODE) or "").lower()
    query = str(values.get(QUERY) or "").strip()
    whitelist = values.get(TABLE_WHITELIST) or []
    blacklist = values.get(TABLE_BLACKLIST) or []
    if whitelist and blacklist:
        problems.append((TABLE_BLACKLIST, "set table.whitelist or table.blacklist, not both"))
    if query and (whitelist or blacklist):
        problems.append(
            (QUERY, "a custom query copies no tables: leave table.whitelist/blacklist empty")
        )
    if mode.startswith("timestamp") and not (values.get(TIMESTAMP_COLUMN) or []):
        problems.append(
            (TIMESTAMP_COLUMN, f"mode={mode} needs the timestamp column(s) in {TIMESTAMP_COLUMN}")
        )
    if query and mode.endswith("incrementing") and not values.get(INCREMENTING_COLUMN):
        problems.append(
            (
                INCREMENTING_COLUMN,
                f"mode={mode} with a custom query needs {INCREMENTING_COLUMN} (a query has "
                "no auto-increment column)",
            )
        )
    return problems
