"""The driver contract: what a connector project tells the harness about its external system.

The harness derives everything it can from the connector itself (its ConfigDef, task configs,
records, offsets). What it cannot know, a project declares in a small driver class named in
``pyproject.toml``::

    [tool.cdk]
    drivers = ["my_connector.certify:MySourceDriver", "my_connector.certify:MySinkDriver"]

A driver instance is made fresh for every check, in a fresh working directory, and owns one
instance of the external system: :meth:`ConnectorDriver.setup` creates it empty and
:meth:`ConnectorDriver.teardown` removes it. Records are named by integer ids that the harness
chooses; a source driver writes records with those ids into the external system and recognises
them in what the connector emits, a sink driver reads back the ids the connector stored.

Capabilities (failure injection, stored values, the values a source was given, writing given
values, a future offset, schema evolution, several or new streams) raise
:class:`NotImplementedError` or keep their default by default; a required check that needs one
the driver lacks is then *not verified*, never passed, and the run is INCOMPLETE unless the
project waives the check with a written reason (``[tool.cdk.certify] waive``). Declarations
that make a check not applicable (``external_system = False``, ``accepts_any_schema``,
``unstored_fields``) and the value limits of the external system (``value_limits``,
:class:`~harness.Limit`) carry their reason into the report.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import decimal
import enum
import inspect
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from cdk.api import Connector
from cdk.data import Date, Decimal, Schema, SchemaBuilder, Struct, Time, Timestamp
from harness._limits import Limit

__all__ = [
    "ConnectorDriver",
    "Delivery",
    "SinkDriver",
    "SourceDriver",
    "SourceKind",
    "default_sink_value_schema",
    "default_sink_value",
    "source_streams",
]


class Delivery(str, enum.Enum):
    """The delivery guarantee a connector claims."""

    AT_LEAST_ONCE = "at-least-once"
    EXACTLY_ONCE = "exactly-once"

    def __str__(self) -> str:
        return self.value


class SourceKind(str, enum.Enum):
    """How a source system keeps the position of what a connector has read.

    ``REPLAYABLE``: the source can be read again from a stored position (a table read by an
    incrementing column, a file, a log, a stream): the connector's records carry source
    offsets and a task resumes from the committed ones (the OFF checks).

    ``ACKNOWLEDGING``: the source system hands each message out and forgets it only once the
    connector acknowledges it, and redelivers what was not acknowledged (a queue: RabbitMQ,
    MQTT, JMS, SQS, Pub/Sub). The connector acknowledges a message in
    :meth:`cdk.SourceTask.commit_record` (or :meth:`~cdk.SourceTask.commit`), once Kafka has
    acknowledged its record; it cannot resume from an offset, so the checks that replay from
    one do not apply and the ACK checks do.
    """

    REPLAYABLE = "replayable"
    ACKNOWLEDGING = "acknowledging"

    def __str__(self) -> str:
        return self.value


class ConnectorDriver:
    """What the harness needs to know about a connector's external system.

    Subclass :class:`SourceDriver` or :class:`SinkDriver`, not this class.

    Attributes:
        connector: the connector class, or its import path (``package.module:Class``).
        delivery: the delivery guarantee the connector claims. ``EXACTLY_ONCE`` makes the
            harness count any duplicate as a failure, also after a crash.
        external_system: the connector talks to an external system (a database, files, a
            service), so it must survive an outage and fail clearly when the system breaks:
            :meth:`outage` and :meth:`break_external_system` are then required (ERR-01/02 are
            not verified without them). Set it to False only for a connector that talks to
            nothing (a generator): the error-handling checks then do not apply, and the report
            says so.
        value_limits: the values the external system cannot hold, one
            :class:`~harness.Limit` each, with its reason (a maximum string length, a
            character set, NUL, a timestamp range...): SCH-09 sends no value beyond them and
            lists them in the report. A class attribute, or a property (it may depend on the
            instance, e.g. the database it uses). Anything not declared must come back exactly.
        workdir: a fresh, empty directory for this driver instance (given by the harness).
    """

    connector: ClassVar[type[Connector] | str]
    delivery: ClassVar[Delivery] = Delivery.AT_LEAST_ONCE
    external_system: ClassVar[bool] = True

    @property
    def value_limits(self) -> Sequence[Limit]:
        """What the external system cannot hold (see the class docstring); none by default."""
        return ()

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir

    # ------------------------------------------------------------------ lifecycle
    def setup(self) -> None:
        """Create the external system, empty (called once, before the check uses the driver)."""

    def teardown(self) -> None:
        """Remove the external system (called once, also when the check failed)."""

    # ------------------------------------------------------------------ failure injection
    def break_external_system(self) -> None:
        """Make the external system fail from now on, for good (a fatal error).

        The connector is expected to fail its task with a ConnectException that says what
        went wrong. Required when :attr:`external_system` is true: without it (the default
        raises :class:`NotImplementedError`) ERR-02 is not verified.
        """
        raise NotImplementedError

    def outage(self) -> contextlib.AbstractContextManager[None]:
        """Make the external system unavailable while the block runs (a transient error).

        The connector is expected to raise :class:`cdk.RetriableException` (or retry itself)
        and to lose nothing once the system is back. Implement it with
        :func:`contextlib.contextmanager`. The harness may call ``write_records`` and
        ``read_back`` while the outage lasts: they must not fail (the data may become visible
        only when it ends). Required when :attr:`external_system` is true, like
        :meth:`break_external_system` (ERR-01 is not verified without it).
        """
        raise NotImplementedError


class SourceDriver(ConnectorDriver):
    """A source connector's external system: the harness writes records into it.

    Attributes:
        streams: how many independent input streams (tables, files, feeds) the external
            system can hold at once: a class attribute or a property (read on an instance that
            is not set up). More than one lets the harness check tasks.max changes and
            rebalancing with work for every task (RBL-01/02 are not verified with one).
        detects_new_streams: the connector notices a stream created while it runs (and calls
            ``context.request_task_reconfiguration()``); RBL-03 is not verified without it.
        source_kind: how the source system keeps position (:class:`SourceKind`):
            ``REPLAYABLE`` (the default: offsets) or ``ACKNOWLEDGING`` (a queue that redelivers
            what the connector did not acknowledge). An acknowledging source gets the ACK
            checks, which need :meth:`pending_ids`; the checks that replay from a stored offset
            (OFF-02 to OFF-04, the source part of OFF-08, OFF-10, OFF-11) do not apply to it.
        records_carry_offsets: the connector's records carry source partitions and offsets.
            Kafka Connect allows records without them; only an acknowledging source may
            declare ``False`` (a replayable one resumes from its offsets).
    """

    streams: ClassVar[int] = 1
    detects_new_streams: ClassVar[bool] = False
    source_kind: ClassVar[SourceKind] = SourceKind.REPLAYABLE
    records_carry_offsets: ClassVar[bool] = True

    def example_config(self, topic: str) -> dict[str, str]:
        """The connector's config for this external system, writing to topics named ``topic*``.

        Every record must go to a topic whose name starts with ``topic``; a single-topic
        connector writes to ``topic`` itself. ``name``, ``connector.class`` and ``tasks.max``
        are added by the harness.
        """
        raise NotImplementedError

    def write_records(self, ids: Sequence[int], *, stream: int = 0) -> None:
        """Write one record for each id into input stream ``stream`` (creating the stream).

        Ids are unique across streams and increase from call to call. Records must reach the
        connector in the order given within one stream.
        """
        raise NotImplementedError

    def record_id(self, key: Any, value: Any) -> Hashable:
        """The id of a record the connector emitted, from its key and value.

        ``key`` and ``value`` are Connect values as a JsonConverter with schemas reads them back
        (a :class:`cdk.Struct`, a dict, a str...). The default finds a field ``id`` in the
        value (Struct or dict), else uses the key when it is an int.
        """
        for candidate in (value, key):
            if isinstance(candidate, Struct) and "id" in _field_names(candidate):
                return _as_id(candidate.get("id"))
            if isinstance(candidate, Mapping) and "id" in candidate:
                return _as_id(candidate["id"])
        if isinstance(key, int) and not isinstance(key, bool):
            return key
        raise ValueError(f"cannot find a record id in key={key!r} value={value!r}")

    def expected_value(self, record_id: int) -> Any:
        """The value the connector must emit for record ``record_id``, as written.

        As Connect values (:class:`decimal.Decimal`, aware :class:`datetime.datetime`, bytes...):
        a mapping of every field to its value when the connector emits structs (or maps), else
        the value itself (a line of text...). A field added by :meth:`evolve_schema` belongs to
        the records written after it. The SCH round-trip checks (SCH-02, SCH-04) compare every
        field of every emitted value with it, so a source that emits wrong values fails; they
        are not verified without it.
        """
        raise NotImplementedError

    def value_schema(self) -> Schema:
        """The schema of the values :meth:`write_values` takes (and the connector then emits).

        The Connect schema a record of the external system has, as the connector emits it
        (e.g. a table's columns as a STRUCT). SCH-09 is not verified without it and
        :meth:`write_values`.
        """
        raise NotImplementedError

    def write_values(self, values: Sequence[Any], *, stream: int = 0) -> list[Hashable]:
        """Write a record for each of ``values`` into input stream ``stream``; return their ids.

        SCH-09 hands the driver hostile values in :meth:`value_schema` (a :class:`cdk.Struct`
        each when it is a STRUCT, else the value itself: a line of text...), inside the
        driver's :attr:`value_limits`; the driver writes them as they are, in order, and returns
        for each the id that :meth:`record_id` will find in the record the connector emits for
        it. When the schema has a field ``id``, the harness fills it with a fresh increasing
        id (an int, or its text for a STRING field), which the driver should keep. The
        connector must then emit every field exactly as given. Values that are not structs
        are all different, so a driver can recognise its records by the value itself.
        """
        raise NotImplementedError

    def future_offset(
        self, partition: Mapping[str, Any], offset: Mapping[str, Any]
    ) -> Mapping[str, Any]:
        """An offset of source partition ``partition`` beyond ``offset`` and beyond all data.

        ``offset`` is the last offset the connector emitted for ``partition``; the result must
        be an offset the connector would commit for a record written much later (a Redis
        stream id ahead of the clock, a cursor past the end, a later GTID). OFF-04 starts a
        task from it and expects no record and no error. Without it, OFF-04 pushes every
        numeric field of the offset far ahead itself, and is not verified for offsets with no
        numeric field.
        """
        raise NotImplementedError

    def pending_ids(self) -> list[Hashable]:
        """The ids of the messages the source system still holds for the connector.

        For an acknowledging source (:attr:`source_kind`): every message written with
        :meth:`write_records` or :meth:`write_values` that the connector has not acknowledged
        yet, ready or delivered-but-unacknowledged, one entry per message, in any order, across
        every stream. The harness calls it only while no worker runs the connector (after a
        stop or a ``kill -9``): a driver may wait, within a few seconds, until the source system
        has taken back what the connector's closed connection held (a queue with no consumer
        left). It must read without consuming or changing anything: the connector reads the
        same messages afterwards (e.g. fetch every message unacknowledged and let the system
        requeue them when the driver's channel closes). The ACK checks are not verified
        without it.
        """
        raise NotImplementedError

    def evolve_schema(self, *, stream: int = 0) -> str:
        """Change the external system's schema of ``stream``: add an optional field.

        Records written afterwards carry the new field; return its name. SCH-05 is not
        verified without it.
        """
        raise NotImplementedError


class SinkDriver(ConnectorDriver):
    """A sink connector's external system: the harness reads back what the connector wrote.

    Attributes:
        accepts_any_schema: the sink stores any record whatever its value schema (lines in a
            file, documents), so the incompatible-schema check (SCH-08) does not apply. What
            counts is what SCH-08 sends: STRUCT values of the driver's value schema with one
            field's type changed to STRING (``id`` 17 becomes ``"x17"``), or with a required
            field missing. A sink that stores those (a document store that takes any struct or
            map, though not a bare number) declares it; a sink that must reject them does not.
            With a value schema that is not a STRUCT, SCH-06/07 do not apply either (there is
            no field to add or drop).
        unstored_fields: the fields of the harness's values the sink does not store by
            design, each with the reason (``{"score": "the table has no column for it"}``).
            :meth:`read_values` may leave them out; the report names them with the reason.
            Any other field missing from what the sink stored fails the check.
    """

    accepts_any_schema: ClassVar[bool] = False
    unstored_fields: ClassVar[Mapping[str, str]] = {}

    def example_config(self, topics: str) -> dict[str, str]:
        """The connector's config for this external system, consuming ``topics``.

        ``name``, ``connector.class`` and ``tasks.max`` are added by the harness.
        """
        raise NotImplementedError

    def value_schema(self) -> Schema:
        """The schema of the values the harness sends (default: :func:`default_sink_value_schema`).

        The schema-migration checks derive a newer schema (an added optional field) and an
        older one (without the last optional field) from it.
        """
        return default_sink_value_schema()

    def value(self, record_id: int, schema: Schema) -> Any:
        """The value of record ``record_id`` in ``schema`` (default: :func:`default_sink_value`).

        SCH-09 starts from it: it keeps the field ``id`` (and any field declared
        :meth:`Limit.fixed <harness.Limit.fixed>` or :meth:`Limit.server_assigned
        <harness.Limit.server_assigned>`, the latter not compared) and draws every other
        field; for a value
        that is not a STRUCT, it appends hostile text (STRING), bytes (BYTES), elements
        (ARRAY) or entries (MAP) to this value, so :meth:`read_values` must find the id in
        what the value starts with, whatever follows (end it with a delimiter:
        ``"record-17;"``).
        """
        return default_sink_value(record_id, schema)

    def key_schema(self) -> Schema | None:
        """The schema of the record keys the harness sends (default INT64: the id)."""
        return Schema.INT64_SCHEMA

    def key(self, record_id: int) -> Any:
        """The key of record ``record_id`` (default: the id)."""
        return record_id

    def read_back(self) -> list[Hashable]:
        """The ids of the records the connector stored, one entry per stored copy."""
        raise NotImplementedError

    def read_values(self) -> dict[Hashable, Any]:
        """The stored fields of each record by id, as Connect values (Decimal, datetime...).

        A mapping of field names to values for each record (for a value that is not a struct,
        the stored value itself), read from the external system: what it holds, never what
        :meth:`value` returned (SCH-09 sends values that :meth:`value` did not make). The
        harness calls :meth:`value` and :meth:`read_values` on the same driver instance within
        a check, but a driver must not rely on it.

        Every field the harness sent must be there and equal what was sent, except the
        :attr:`unstored_fields`. Records sent without a schema (SCH-03: JSON with
        ``schemas.enable=false``) reach the sink as plain data (a dict for a struct, numbers,
        strings, lists); read them back the same way as the others, as the values the sink
        stored: for a sink that stores text (a line per record), the stored text itself; for
        one that stores fields, a mapping of field names to the stored values. SCH-03 compares
        only what JSON without schemas keeps exactly (strings, integers, doubles, booleans),
        so a Decimal stored as a number or a timestamp stored as epoch milliseconds is not
        held against the sink there. The SCH checks that send values (SCH-02, SCH-03, SCH-04,
        SCH-06, SCH-07, SCH-09) are not verified without it.
        """
        raise NotImplementedError


def source_streams(driver_class: type[SourceDriver], scratch: Path) -> int:
    """The ``streams`` a source driver declares, as a class attribute or a property.

    A property is read on an instance made in ``scratch`` and not set up.

    Raises:
        TypeError: ``streams`` is neither a positive int nor a property returning one.
    """
    declared = inspect.getattr_static(driver_class, "streams", 1)
    form = "class attribute"
    if isinstance(declared, property):
        form = "property"
        declared = driver_class(scratch).streams
    if isinstance(declared, bool) or not isinstance(declared, int) or declared < 1:
        raise TypeError(
            f"{driver_class.__name__}.streams must be a positive int (a class attribute "
            f"`streams = 4` or a property returning one), but the {form} gives {declared!r}"
        )
    return declared


# ---------------------------------------------------------------------------------------------
# The default record shape for sinks.

_INTEGERS = frozenset({"INT8", "INT16", "INT32", "INT64"})
_DECIMAL = Decimal.builder(2).optional().build()
_TIMESTAMP = Timestamp.builder().optional().build()


def default_sink_value_schema() -> Schema:
    """The default record schema, ``cdk.certify.Record``.

    Fields: id (INT64), name (STRING), and the optional amount (Decimal, scale 2), created
    (Timestamp), active (BOOLEAN) and score (FLOAT64).
    """
    return (
        SchemaBuilder.struct()
        .name("cdk.certify.Record")
        .field("id", Schema.INT64_SCHEMA)
        .field("name", Schema.STRING_SCHEMA)
        .field("amount", _DECIMAL)
        .field("created", _TIMESTAMP)
        .field("active", Schema.OPTIONAL_BOOLEAN_SCHEMA)
        .field("score", Schema.OPTIONAL_FLOAT64_SCHEMA)
        .build()
    )


def default_sink_value(record_id: int, schema: Schema) -> Struct:
    """A deterministic Struct for ``record_id`` in any struct ``schema``.

    Every field gets a value derived from the id and the field's type; ``id`` is the id.
    """
    struct = Struct(schema)
    for field in schema.fields:
        struct.put(field.name, _field_value(record_id, field.name, field.schema))
    return struct


def _field_value(record_id: int, name: str, schema: Schema) -> Any:
    kind = schema.type.name
    if name == "id":
        if kind not in _INTEGERS:
            return str(record_id)
        bits = {"INT8": 7, "INT16": 15, "INT32": 31, "INT64": 63}[kind]
        if record_id >= 2**bits:
            raise ValueError(f"record id {record_id} does not fit the {kind} field 'id'")
        return record_id
    logical = schema.name
    if logical == Decimal.LOGICAL_NAME:
        if record_id % 5 == 0 and schema.optional:
            return None
        scale = int(schema.parameters.get("scale", "0"))
        return decimal.Decimal(record_id * 7 + 1).scaleb(-scale)
    if logical == Timestamp.LOGICAL_NAME:
        base = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
        return base + dt.timedelta(seconds=record_id * 61, milliseconds=record_id % 1000)
    if logical == Date.LOGICAL_NAME:
        return dt.date(2026, 1, 1) + dt.timedelta(days=record_id % 3650)
    if logical == Time.LOGICAL_NAME:
        millis = (record_id * 1_234) % 86_400_000
        return (dt.datetime(2026, 1, 1) + dt.timedelta(milliseconds=millis)).time()
    if kind == "STRING":
        return f"{name}-{record_id}"
    if kind == "BOOLEAN":
        return record_id % 2 == 0
    if kind in {"FLOAT32", "FLOAT64"}:
        return record_id / 4
    if kind in _INTEGERS:
        return record_id % 100
    if kind == "BYTES":
        return f"{name}-{record_id}".encode()
    if schema.optional:
        return None
    raise ValueError(f"no default value for field {name!r} of type {kind}; override value()")


def _field_names(struct: Struct) -> set[str]:
    return {field.name for field in struct.schema.fields}


def _as_id(value: Any) -> Hashable:
    if isinstance(value, str) and value.lstrip("-").isascii() and value.lstrip("-").isdigit():
        return int(value)
    if isinstance(value, Hashable):
        return value
    raise ValueError(f"record id {value!r} is not hashable")
