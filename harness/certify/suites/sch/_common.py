"""What the SCH checks share: converters and their settings, sizes and deadlines, wording."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cdk.data import (
    Date,
    Decimal,
    Field,
    Schema,
    SchemaType,
    Time,
    Timestamp,
)
from harness.certify._checks import CheckFailed

__all__: list[str] = []


JSON = "org.apache.kafka.connect.json.JsonConverter"
AVRO = "io.confluent.connect.avro.AvroConverter"
PROTOBUF = "io.confluent.connect.protobuf.ProtobufConverter"
JSON_SCHEMA = "io.confluent.connect.json.JsonSchemaConverter"
#: SCH-10's ProtobufConverter settings besides the registry: proto3 ``optional`` fields, so a
#: null in an optional primitive field stays null (without it Protobuf reads the type's default).
_PROTOBUF_SETTINGS = {"optional.for.nullables": "true"}

#: Records per source check and per sink round trip.
_RECORDS = 40
#: Records per batch of the sink migration checks (two batches each).
_BATCH = 15
#: How long a source may take to emit what was written, and a sink to store it (or fail).
_SOURCE_TIMEOUT = 30.0
_SINK_TIMEOUT = 45.0
#: How long a batch of an incompatible schema may stay neither rejected nor stored.
_REJECT_TIMEOUT = 30.0
#: The field the newer-schema check adds.
_ADDED_FIELD = "certify_added"
#: JSON without schemas: decimals as numbers, so the plain data reads naturally.
_SCHEMALESS = {"schemas.enable": "false", "decimal.format": "NUMERIC"}


def _fail_on(problems: Sequence[str], total: int, expected: str) -> None:
    if problems:
        raise CheckFailed(
            expected,
            f"{len(problems)} of {total} records do not; the first: {problems[0]}",
            details="\n".join(problems[:50]),
        )


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _is_struct(schema: Schema | None) -> bool:
    return schema is not None and schema.type is SchemaType.STRUCT


def _field(schema: Schema | None, name: str) -> Field | None:
    return schema.field(name) if schema is not None and _is_struct(schema) else None


def _describe(schema: Schema | None) -> str:
    if schema is None:
        return "no schema"
    if schema.name == Decimal.LOGICAL_NAME:
        return f"Decimal(scale={schema.parameters.get(Decimal.SCALE_FIELD, '?')})"
    if schema.name in (Timestamp.LOGICAL_NAME, Date.LOGICAL_NAME, Time.LOGICAL_NAME):
        return str(schema.name).rsplit(".", 1)[-1]
    named = f" {schema.name}" if schema.name else ""
    return f"{'optional ' if schema.optional else ''}{schema.type.name}{named}"


def _sample(items: Sequence[Any], limit: int = 10) -> str:
    shown = ", ".join(repr(i) for i in items[:limit])
    return shown + (f", … ({len(items) - limit} more)" if len(items) > limit else "")


def _brief(status: Mapping[str, Any]) -> str:
    if not status:
        return "the connector is not found"
    tasks = ", ".join(f"task {t.get('id')} {t.get('state')}" for t in status.get("tasks", []))
    state = status.get("connector", {}).get("state")
    return f"connector {state}; {tasks or 'no tasks'}"
