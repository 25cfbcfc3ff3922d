"""Source flows of the SCH suite: the connector in-process, its records through converters."""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any

from cdk.api import SourceConnector, SourceRecord
from cdk.converters import (
    AvroConverter,
    Converter,
    JsonConverter,
    JsonSchemaConverter,
    ProtobufConverter,
)
from cdk.data import (
    Schema,
    Struct,
    validate_value,
)
from cdk.errors import ConnectException
from harness._driver import SourceDriver
from harness.certify._checks import CheckFailed, CheckSkipped
from harness.certify._context import CheckContext
from harness.certify._probe import SourceProbe
from harness.certify.suites.sch._common import (
    _RECORDS,
    _SCHEMALESS,
    _SOURCE_TIMEOUT,
    _describe,
    _error,
    _fail_on,
    _is_struct,
    _sample,
)
from harness.certify.suites.sch._values import _canon, _canon_json, _difference

__all__: list[str] = []


def _source_round_trip(
    ctx: CheckContext, converter_name: str, make: Callable[[bool], Converter]
) -> None:
    """Emitted values equal what the driver wrote; through the converters and back, unchanged."""
    ctx.require("expected_value")
    with ctx.driver() as d:
        records = _emitted(ctx, d, ctx.ids(_RECORDS))
        _fail_on(
            _stated_problems(d, records),
            len(records),
            "every emitted value to equal what the driver wrote (expected_value()), field by "
            "field (Decimal value and scale, Timestamp to the millisecond, bytes exactly)",
        )
    converters = {"key": make(True), "value": make(False)}
    avro = converter_name != "JsonConverter"  # the registry converters need schemas
    problems, compared = [], 0
    for index, record in enumerate(records):
        parts = list(_parts(record))
        if avro and any(schema is None and value is not None for _, schema, value in parts):
            continue  # schemaless: Avro, Protobuf and JSON Schema need a schema
        compared += 1
        for part, schema, value in parts:
            problem: str | None
            try:
                data = converters[part].from_connect_data(record.topic, schema, value)
                back = converters[part].to_connect_data(record.topic, data).value
            except Exception as exc:  # noqa: BLE001 - a converter refusing the record is the finding
                problem = f"the {converter_name} cannot convert the {part}: {_error(exc)}"
            else:
                problem = _difference(_canon(schema, value), _canon(schema, back), part)
            if problem is not None:
                problems.append(f"{_label(d, record, index)}: {problem}")
                break
    ctx.evidence(f"records through the {converter_name} and back", compared)
    ctx.evidence("records that changed", len(problems))
    if not compared:
        raise CheckSkipped(
            f"the source emits schemaless records only: the {converter_name} needs schemas",
            because="schemaless-source",
        )
    _fail_on(
        problems,
        compared,
        f"every emitted key and value to come back unchanged through the {converter_name} "
        "(Decimal value and scale, Timestamp to the millisecond, bytes exactly)",
    )


def _stated_problems(d: SourceDriver, records: Sequence[SourceRecord]) -> list[str]:
    """How each emitted value differs from the driver's ``expected_value`` for its id."""
    problems = []
    for index, record in enumerate(records):
        record_id = _record_id(d, record)
        if record_id is None or isinstance(record_id, bool) or not isinstance(record_id, int):
            problems.append(f"{_label(d, record, index)}: the driver finds no record id in it")
            continue
        stated = d.expected_value(record_id)
        problem = _stated_problem(record.value_schema, record.value, stated)
        if problem is not None:
            problems.append(f"{_label(d, record, index)}: {problem}")
    return problems


def _stated_problem(schema: Schema | None, value: Any, stated: Any) -> str | None:
    if isinstance(stated, Mapping) and schema is not None and _is_struct(schema):
        emitted = {f.name for f in schema.fields}
        unknown = sorted(set(stated) - emitted)
        if unknown:
            return (
                f"value: the driver wrote the fields {unknown}, which the emitted value "
                f"({_describe(schema)}) does not have"
            )
    return _difference(_canon(schema, stated), _canon(schema, value), "value", "emitted", "wrote")


def _source_schemaless(ctx: CheckContext) -> None:
    """Emitted records through a JsonConverter without schemas give their plain data."""
    with ctx.driver() as d:
        records = _emitted(ctx, d, ctx.ids(_RECORDS))
    converters = {part: JsonConverter() for part in ("key", "value")}
    for part, converter in converters.items():
        converter.configure(_SCHEMALESS, part == "key")
    problems = []
    for index, record in enumerate(records):
        for part, schema, value in _parts(record):
            problem: str | None
            try:
                data = converters[part].from_connect_data(record.topic, schema, value)
                back = converters[part].to_connect_data(record.topic, data).value
            except Exception as exc:  # noqa: BLE001 - a converter refusing the record is the finding
                problem = f"the JsonConverter without schemas cannot convert the {part}: " + (
                    _error(exc)
                )
            else:
                problem = _difference(_canon_json(schema, value), _canon(None, back), part)
            if problem is not None:
                problems.append(f"{_label(d, record, index)}: {problem}")
                break
    ctx.evidence("records through JSON without schemas and back", len(records))
    ctx.evidence("records that changed", len(problems))
    _fail_on(
        problems,
        len(records),
        "every emitted key and value to read back from JSON without schemas as its plain data "
        "(structs as maps, Decimal as a number, Timestamp/Date/Time as epoch numbers, bytes as "
        "base64)",
    )


def _evolved_problem(schema: Schema | None, old: Schema | None, added: str) -> str | None:
    if schema is None or not _is_struct(schema):
        return f"the value schema is {_describe(schema)}, not a STRUCT that can carry {added!r}"
    names = [f.name for f in schema.fields]
    new = schema.field(added)
    if new is None:
        return f"the value schema has no field {added!r} (its fields: {names})"
    if not new.schema.optional:
        return f"the new field {added!r} is required; a field added to existing data is optional"
    for before in old.fields if old is not None and _is_struct(old) else ():
        now = schema.field(before.name)
        if now is None:
            return f"the old field {before.name!r} is gone (fields now: {names})"
        if now.schema != before.schema:
            return (
                f"the old field {before.name!r} changed from {_describe(before.schema)} to "
                f"{_describe(now.schema)}"
            )
    return None


def _source_class(ctx: CheckContext) -> type[SourceConnector]:
    cls = ctx.connector_class
    if not issubclass(cls, SourceConnector):
        raise CheckFailed("the driver's connector to be a SourceConnector", f"{cls} is not")
    return cls


def _source_config(ctx: CheckContext, d: SourceDriver) -> dict[str, str]:
    return {"name": ctx.unique("sch"), **ctx.connector_config(d, ctx.topic())}


def _emitted(ctx: CheckContext, d: SourceDriver, ids: Sequence[int]) -> list[SourceRecord]:
    """Write ``ids``, then poll the connector in-process until it emitted all of them."""
    d.write_records(ids)
    with ctx.probe(_source_class(ctx), _source_config(ctx, d)) as probe:
        return _collect(probe, d, ids)


def _collect(probe: SourceProbe, d: SourceDriver, ids: Sequence[int]) -> list[SourceRecord]:
    """Poll until every id in ``ids`` was emitted; fail at the deadline with what is missing."""
    wanted, seen = set(ids), set[Hashable]()
    records: list[SourceRecord] = []
    deadline = time.monotonic() + _SOURCE_TIMEOUT
    while not wanted <= seen:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise CheckFailed(
                f"the source to emit the {len(ids)} records written",
                f"after {_SOURCE_TIMEOUT:g}s it emitted {len(records)} records, "
                f"{len(wanted & seen)} of the ids written (missing "
                f"{_sample(sorted(wanted - seen))})",
            )
        for record in probe.poll(idle=0.5, timeout=min(remaining, 5.0)):
            records.append(record)
            seen.add(_record_id(d, record))
    return records


def _record_id(d: SourceDriver, record: SourceRecord) -> Hashable:
    try:
        return d.record_id(record.key, record.value)
    except Exception:  # noqa: BLE001 - a record without an id is named by its position instead
        return None


def _label(d: SourceDriver, record: SourceRecord, index: int) -> str:
    found = _record_id(d, record)
    return f"record id {found!r}" if found is not None else f"record #{index + 1} ({record.topic})"


def _parts(record: SourceRecord) -> Iterable[tuple[str, Schema | None, Any]]:
    yield "key", record.key_schema, record.key
    yield "value", record.value_schema, record.value


def _schema_problem(schema: Schema | None, value: Any) -> str | None:
    """Why ``value`` is not valid for ``schema`` (None when it is)."""
    if schema is None:
        if isinstance(value, Struct):
            return f"a Struct of schema {_describe(value.schema)}, but the record declares none"
        return None
    try:
        validate_value(schema, value)
    except ConnectException as exc:
        return f"{exc} (schema {_describe(schema)}, value {value!r:.200})"
    return None


def _json_converter(is_key: bool) -> Converter:
    converter = JsonConverter()
    converter.configure({"schemas.enable": "true"}, is_key)
    return converter


def _avro_converter(url: str, is_key: bool) -> Converter:
    converter = AvroConverter()
    converter.configure({"schema.registry.url": url}, is_key)
    return converter


def _protobuf_converter(url: str, settings: Mapping[str, str], is_key: bool) -> Converter:
    converter = ProtobufConverter()
    converter.configure({"schema.registry.url": url, **settings}, is_key)
    return converter


def _json_schema_converter(url: str, is_key: bool) -> Converter:
    converter = JsonSchemaConverter()
    converter.configure({"schema.registry.url": url}, is_key)
    return converter
