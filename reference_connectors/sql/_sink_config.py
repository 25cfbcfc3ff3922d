"""The SQL sink's configuration: the JDBC sink connector's keys, names and defaults.

The ``connection.*`` keys come from the shared layer (:mod:`._connection`). The rest are the
keys a Confluent JDBC sink user knows (``insert.mode``, ``pk.mode``, ``pk.fields``,
``delete.enabled``, ``auto.create``, ``auto.evolve``, ``batch.size``, ``table.name.format``,
``fields.whitelist``, ``db.timezone``, ``max.retries``, ``retry.backoff.ms``), with the JDBC
sink's defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cdk import ConfigDef, Importance, Type, Width
from cdk.config.validators import CaseInsensitiveValidString, NonEmptyString, Range
from reference_connectors.sql._connection import define_connection
from reference_connectors.sql._source_config import TimeZone

__all__ = [
    "AUTO_CREATE",
    "AUTO_EVOLVE",
    "BATCH_SIZE",
    "DB_TIMEZONE",
    "DELETE_ENABLED",
    "FIELDS_WHITELIST",
    "INSERT_MODE",
    "INSERT_MODES",
    "KAFKA_PK_FIELDS",
    "MAX_RETRIES",
    "PK_FIELDS",
    "PK_MODE",
    "PK_MODES",
    "RETRY_BACKOFF_MS",
    "SINK_CONFIG_DEF",
    "TABLE_NAME_FORMAT",
    "sink_config_problems",
]

INSERT_MODE = "insert.mode"
BATCH_SIZE = "batch.size"
DELETE_ENABLED = "delete.enabled"
TABLE_NAME_FORMAT = "table.name.format"
PK_MODE = "pk.mode"
PK_FIELDS = "pk.fields"
FIELDS_WHITELIST = "fields.whitelist"
DB_TIMEZONE = "db.timezone"
AUTO_CREATE = "auto.create"
AUTO_EVOLVE = "auto.evolve"
MAX_RETRIES = "max.retries"
RETRY_BACKOFF_MS = "retry.backoff.ms"

INSERT_MODES = ("insert", "upsert", "update")
PK_MODES = ("none", "kafka", "record_key", "record_value")
#: The primary key columns of ``pk.mode=kafka`` when ``pk.fields`` is empty (as the JDBC sink).
KAFKA_PK_FIELDS = ("__connect_topic", "__connect_partition", "__connect_offset")

_WRITES = "Writes"
_MAPPING = "Data Mapping"
_DDL = "DDL Support"
_RETRIES = "Retries"

SINK_CONFIG_DEF = (
    define_connection(ConfigDef())
    .define(
        INSERT_MODE,
        Type.STRING,
        "insert",
        CaseInsensitiveValidString.of(*INSERT_MODES),
        Importance.HIGH,
        "How rows are written. insert: INSERT (a record whose key is already stored fails). "
        "upsert: insert, or update the row with the same primary key (PostgreSQL and SQLite "
        "INSERT ... ON CONFLICT, MariaDB/MySQL INSERT ... ON DUPLICATE KEY UPDATE); needs a "
        "pk.mode other than none. update: UPDATE the row with the record's primary key (a "
        "record without a row changes nothing).",
        group=_WRITES,
        order_in_group=1,
        width=Width.MEDIUM,
        display_name="Insert Mode",
    )
    .define(
        BATCH_SIZE,
        Type.INT,
        3000,
        Range.at_least(1),
        Importance.MEDIUM,
        "How many rows are sent to the database in one statement batch (executemany). All the "
        "records of one put() are written in one transaction, together with their offsets.",
        group=_WRITES,
        order_in_group=2,
        width=Width.SHORT,
        display_name="Batch Size",
    )
    .define(
        DELETE_ENABLED,
        Type.BOOLEAN,
        False,
        None,
        Importance.MEDIUM,
        "Whether a record with a null value (a tombstone) deletes the row with its key. Needs "
        "pk.mode=record_key. When false, a tombstone is skipped.",
        group=_WRITES,
        order_in_group=3,
        width=Width.SHORT,
        display_name="Enable deletes",
    )
    .define(
        TABLE_NAME_FORMAT,
        Type.STRING,
        "${topic}",
        NonEmptyString(),
        Importance.MEDIUM,
        "The table a record is written to; ${topic} is replaced by the record's topic (e.g. "
        "kafka_${topic} writes topic orders to table kafka_orders). Names are quoted, so any "
        "topic name works.",
        group=_MAPPING,
        order_in_group=1,
        width=Width.LONG,
        display_name="Table Name Format",
    )
    .define(
        PK_MODE,
        Type.STRING,
        "none",
        CaseInsensitiveValidString.of(*PK_MODES),
        Importance.HIGH,
        "Where the primary key comes from. none: no key. kafka: the record's topic, partition "
        "and offset (columns __connect_topic, __connect_partition, __connect_offset, or the "
        "three names in pk.fields). record_key: the record key (a primitive key is stored in "
        "the one column pk.fields names; for a struct key, the fields pk.fields names, or all "
        "of them). record_value: the value fields pk.fields names (all when empty).",
        group=_MAPPING,
        order_in_group=2,
        width=Width.MEDIUM,
        display_name="Primary Key Mode",
    )
    .define(
        PK_FIELDS,
        Type.LIST,
        "",
        None,
        Importance.MEDIUM,
        "The primary key fields (columns); what they mean depends on pk.mode.",
        group=_MAPPING,
        order_in_group=3,
        width=Width.LONG,
        display_name="Primary Key Fields",
    )
    .define(
        FIELDS_WHITELIST,
        Type.LIST,
        "",
        None,
        Importance.MEDIUM,
        "The value fields to write (the primary key fields are always written); empty writes "
        "them all.",
        group=_MAPPING,
        order_in_group=4,
        width=Width.LONG,
        display_name="Fields Whitelist",
    )
    .define(
        DB_TIMEZONE,
        Type.STRING,
        "UTC",
        TimeZone(),
        Importance.MEDIUM,
        "The time zone Timestamp values are written in (columns without a time zone).",
        group=_MAPPING,
        order_in_group=5,
        width=Width.MEDIUM,
        display_name="DB Time Zone",
    )
    .define(
        AUTO_CREATE,
        Type.BOOLEAN,
        False,
        None,
        Importance.MEDIUM,
        "Whether to create a missing table from the record's schema (CREATE TABLE with the "
        "primary key and NOT NULL for required fields).",
        group=_DDL,
        order_in_group=1,
        width=Width.SHORT,
        display_name="Auto-Create",
    )
    .define(
        AUTO_EVOLVE,
        Type.BOOLEAN,
        False,
        None,
        Importance.MEDIUM,
        "Whether to add a nullable column (ALTER TABLE ADD COLUMN) for a field the table does "
        "not have. Only optional fields and fields with a default can be added; a required "
        "field without a default, or a field whose type does not fit its column, fails with "
        "an error naming the field and the table.",
        group=_DDL,
        order_in_group=2,
        width=Width.SHORT,
        display_name="Auto-Evolve",
    )
    .define(
        MAX_RETRIES,
        Type.INT,
        10,
        Range.at_least(0),
        Importance.MEDIUM,
        "How many times in a row a batch is retried after a transient database error "
        "(unreachable, locked, deadlock) before the task fails.",
        group=_RETRIES,
        order_in_group=1,
        width=Width.SHORT,
        display_name="Maximum Retries",
    )
    .define(
        RETRY_BACKOFF_MS,
        Type.INT,
        3000,
        Range.at_least(0),
        Importance.MEDIUM,
        "How long, in milliseconds, to wait before a batch is retried after a transient "
        "database error.",
        group=_RETRIES,
        order_in_group=2,
        width=Width.SHORT,
        display_name="Retry Backoff (ms)",
    )
)


def sink_config_problems(values: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Problems that span several keys, as ``(key, message)`` pairs.

    Args:
        values: parsed values by key; keys that did not parse are absent.
    """
    problems: list[tuple[str, str]] = []
    insert_mode = str(values.get(INSERT_MODE) or "").lower()
    pk_mode = str(values.get(PK_MODE) or "").lower()
    pk_fields = [str(f).strip() for f in values.get(PK_FIELDS) or [] if str(f).strip()]
    if insert_mode in ("upsert", "update") and pk_mode == "none":
        problems.append(
            (
                PK_MODE,
                f"insert.mode={insert_mode} needs a primary key: set pk.mode to kafka, "
                "record_key or record_value",
            )
        )
    if values.get(DELETE_ENABLED) is True and pk_mode and pk_mode != "record_key":
        problems.append(
            (
                DELETE_ENABLED,
                "delete.enabled=true needs pk.mode=record_key (a tombstone has only its key), "
                f"but pk.mode is {pk_mode}",
            )
        )
    if pk_mode == "kafka" and pk_fields and len(pk_fields) != 3:
        problems.append(
            (
                PK_FIELDS,
                "pk.mode=kafka takes exactly three pk.fields (the columns of the topic, the "
                f"partition and the offset), or none for {', '.join(KAFKA_PK_FIELDS)}; got "
                f"{pk_fields}",
            )
        )
    if pk_mode == "none" and pk_fields:
        problems.append((PK_FIELDS, "pk.fields is set but pk.mode=none uses no key"))
    return problems
