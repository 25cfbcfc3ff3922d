"""Source flows of the OFF suite: writing records, reading them back, resume points."""

from __future__ import annotations

import contextlib
import json
import time
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cdk.api import SourceConnector, SourceRecord
from cdk.converters import JsonConverter
from harness._driver import SourceDriver
from harness.certify._checks import CheckFailed
from harness.certify._context import CheckContext
from harness.certify._probe import SourceProbe, offset_key
from harness.certify._rest import RestClient
from harness.certify.suites.off._common import (
    _DELIVERY_TIMEOUT,
    _fail_on_failed_task,
    _ids,
    _norm,
    _rest_offsets,
    _show,
)

__all__: list[str] = []


def _write(ctx: CheckContext, d: SourceDriver, count: int, *, stream: int = 0) -> list[int]:
    ids = ctx.ids(count)
    d.write_records(ids, stream=stream)
    return ids


def _source_class(ctx: CheckContext) -> type[SourceConnector]:
    cls = ctx.connector_class
    if not issubclass(cls, SourceConnector):
        raise CheckFailed("a source connector", f"{ctx.connector_class_name} is not one")
    return cls


def _wait_source_ids(
    ctx: CheckContext,
    d: SourceDriver,
    topic: str,
    ids: Sequence[Hashable],
    what: str,
    rest: RestClient,
    name: str,
) -> list[Hashable]:
    """Wait until every id of ``ids`` is in Kafka; return every id read (in topic order).

    Raises:
        CheckFailed: a task FAILED meanwhile, or ids are still missing at the deadline.
    """
    expected = f"the source to deliver {what} ({len(ids)} records)"
    wanted = set(ids)
    deadline = time.monotonic() + _DELIVERY_TIMEOUT
    need = len(ids)
    while True:
        records = ctx.read_records(topic, min_records=need, timeout=5.0, idle=1.0)
        got = ctx.source_ids(d, records)
        if wanted <= set(got):
            return got
        _fail_on_failed_task(rest, name, expected)
        if time.monotonic() >= deadline:
            missing = sorted(wanted - set(got), key=repr)
            raise CheckFailed(
                expected,
                f"after {_DELIVERY_TIMEOUT:g}s {len(missing)} never arrived (ids {_ids(missing)}); "
                f"Kafka has {len(got)} records",
            )
        need = max(need, len(records) + 1)


def _source_delivery(
    ctx: CheckContext,
    d: SourceDriver,
    topic: str,
    want: Sequence[Hashable],
    rest: RestClient,
    name: str,
) -> list[Hashable]:
    """The ids in Kafka once every id of ``want`` arrived (or the deadline passed).

    Read once more until no record arrived for a second, so late duplicates are counted too.

    Raises:
        CheckFailed: a task FAILED before every id arrived.
    """
    deadline = time.monotonic() + _DELIVERY_TIMEOUT
    need = len(want)
    wanted = set(want)
    while True:
        records = ctx.read_records(topic, min_records=need, timeout=5.0, idle=1.0)
        if wanted <= set(ctx.source_ids(d, records)):
            break
        _fail_on_failed_task(rest, name, f"the source to deliver the {len(want)} records")
        if time.monotonic() >= deadline:
            break
        need = max(need, len(records) + 1)
    return ctx.source_ids(d, ctx.read_records(topic, idle=1.0, timeout=15.0))


def _write_until_committed(
    ctx: CheckContext, d: SourceDriver, rest: RestClient, name: str, written: list[int]
) -> list[dict[str, Any]]:
    """Write records steadily until offsets were committed and a few more batches followed.

    Returns the last offsets GET /connectors/{c}/offsets showed (just before the kill).
    """
    deadline = time.monotonic() + _DELIVERY_TIMEOUT
    observed: list[dict[str, Any]] = []
    batches_after = 0
    while True:
        written += _write(ctx, d, 5)
        current = _rest_offsets(rest, name)
        if current:
            observed = current
            batches_after += 1
            if batches_after >= 4:  # the last batches are in flight at the kill
                return observed
        else:
            _fail_on_failed_task(rest, name, "the source to deliver records and commit offsets")
            if time.monotonic() >= deadline:
                raise CheckFailed(
                    "the worker to commit source offsets (GET /connectors/{c}/offsets)",
                    f"after {_DELIVERY_TIMEOUT:g}s and {len(written)} records written it shows "
                    "none",
                )
        time.sleep(0.05)  # pacing of the writes (load), not synchronisation


def _covered_records(
    ctx: CheckContext, config: Mapping[str, str], observed: list[dict[str, Any]], written: int
) -> tuple[int, str]:
    """How many records the committed ``observed`` offsets cover, and how that was found.

    The connector reads the source in-process from scratch; an offset covers the records of its
    partition up to the first one carrying it (the fewest it can stand for).
    """
    try:
        records = _probe_records(
            _source_class(ctx), config, None, count=written, what="from scratch"
        )
    except CheckFailed as failure:
        return 0, f"the offsets could not be matched to records: {failure.actual}"
    positions: dict[tuple[str, str], int] = {}
    per_partition: Counter[str] = Counter()
    for record in records:
        if record.source_partition is None or record.source_offset is None:
            continue
        key = offset_key(record.source_partition)
        per_partition[key] += 1
        # the first record carrying an offset: the fewest records it can stand for
        positions.setdefault((key, _norm(record.source_offset)), per_partition[key])
    covered = 0
    unmatched = []
    for entry in observed:
        partition, offset = entry.get("partition"), entry.get("offset")
        if not isinstance(partition, dict) or not isinstance(offset, dict):
            continue
        found = positions.get((offset_key(partition), _norm(offset)))
        if found is None:
            unmatched.append(offset)
        else:
            covered += found
    if unmatched:
        return covered, (
            f"the committed offsets {_show(unmatched)} match no record the connector emits, so "
            "they count as covering none"
        )
    return covered, f"offsets {_show([e.get('offset') for e in observed])}"


def _compare_bounded(
    ctx: CheckContext,
    expected: Sequence[Hashable],
    actual: Sequence[Hashable],
    bound: int,
    *,
    what: str,
    why: str,
) -> int:
    try:
        return ctx.compare_ids(
            expected, actual, what=what, allow_duplicates=bound > 0, max_duplicates=bound
        )
    except CheckFailed as failure:
        allowed = f"at most {bound} duplicates" if bound else "no duplicate"
        raise CheckFailed(
            f"{failure.expected}, with {allowed} ({why})",
            failure.actual,
            details=failure.details,
        ) from None


def _probe_records(
    connector: type[SourceConnector],
    config: Mapping[str, str],
    offsets: Mapping[str, Mapping[str, Any]] | None,
    *,
    count: int | None,
    what: str,
    idle: float = 0.3,
) -> list[SourceRecord]:
    """Run the connector's tasks in-process from ``offsets``; every record they emit.

    With ``count``, polls until that many arrived (at most 20 s, or 3 s without any), then
    until none came for ``idle`` seconds, so extra records are seen too.

    Raises:
        CheckFailed: the connector or a task raised (the message says where and what).
    """
    probe = SourceProbe(connector, config, offsets=offsets)
    try:
        probe.start()
        records: list[SourceRecord] = []
        if count:
            records += probe.poll(count=count, idle=3.0, timeout=20.0)
        records += probe.poll(idle=idle, timeout=20.0)
    except Exception as exc:  # noqa: BLE001 - the connector's error is the finding
        raise CheckFailed(
            "the task to run without error",
            f"the task {what} raised {type(exc).__name__}: {exc}",
        ) from None
    finally:
        with contextlib.suppress(Exception):
            probe.stop()
    errors = probe.context.errors
    if errors:
        raise CheckFailed(
            "the task to run without error",
            f"the connector {what} reported {type(errors[0]).__name__}: {errors[0]}",
        )
    return records


_KEY_CONVERTER = JsonConverter()
_KEY_CONVERTER.configure({"schemas.enable": "true"}, True)
_VALUE_CONVERTER = JsonConverter()
_VALUE_CONVERTER.configure({"schemas.enable": "true"}, False)


def _source_record_id(d: SourceDriver, record: SourceRecord) -> Hashable:
    """The id of a record emitted in-process, as the driver finds it after a JSON round trip."""
    topic = record.topic
    key = _KEY_CONVERTER.to_connect_data(
        topic, _KEY_CONVERTER.from_connect_data(topic, record.key_schema, record.key)
    )
    value = _VALUE_CONVERTER.to_connect_data(
        topic, _VALUE_CONVERTER.from_connect_data(topic, record.value_schema, record.value)
    )
    try:
        return d.record_id(key.value, value.value)
    except Exception as exc:  # noqa: BLE001 - any driver error is reported as such
        raise CheckFailed(
            "every emitted record to carry the id the driver wrote",
            f"the driver cannot find an id in a record for {topic}: {exc}",
        ) from None


@dataclass(frozen=True)
class _ResumePoint:
    partition: dict[str, Any]
    offset: dict[str, Any]
    record_id: Hashable
    done: frozenset[Hashable]  # the ids of that partition up to and including record_id


def _resume_points(records: Sequence[SourceRecord], ids: Sequence[Hashable]) -> list[_ResumePoint]:
    """Every distinct (partition, offset) in emission order, at the first record carrying it.

    A worker commits the offset of the last record Kafka acknowledged: when several records
    carry the same offset, committing it after the first says the others are done too.
    """
    seen: dict[str, list[Hashable]] = {}
    points: dict[tuple[str, str], _ResumePoint] = {}
    for record, id_ in zip(records, ids, strict=True):
        if record.source_partition is None or record.source_offset is None:
            continue
        partition = dict(record.source_partition)
        key = offset_key(partition)
        done = seen.setdefault(key, [])
        done.append(id_)
        offset = json.loads(json.dumps(dict(record.source_offset), default=str))
        point_key = (key, _norm(offset))
        if point_key not in points:
            points[point_key] = _ResumePoint(partition, offset, id_, frozenset(done))
    return list(points.values())


def _spread(points: Sequence[_ResumePoint], limit: int) -> list[_ResumePoint]:
    """At most ``limit`` points spread evenly, the first and the last included."""
    if len(points) <= limit:
        return list(points)
    step = (len(points) - 1) / (limit - 1)
    return [points[round(n * step)] for n in range(limit)]


def _numeric_fields(offset: Mapping[str, Any]) -> list[str]:
    return [k for k, v in offset.items() if isinstance(v, (int, float)) and not isinstance(v, bool)]


def _pushed(offset: Mapping[str, Any]) -> dict[str, Any]:
    """``offset`` with every numeric field far ahead (kept within the 64-bit range)."""
    out = dict(offset)
    for key in _numeric_fields(offset):
        value = offset[key]
        out[key] = min(value + 10**9, 2**62) if isinstance(value, int) else value + 1e9
    return out
