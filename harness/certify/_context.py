"""What a check works with: its driver, Kafka, workers, records, waits and reports.

One :class:`CheckContext` is made for each check run against one driver. It owns a fresh working
directory and everything it starts (drivers, embedded workers, ``cdk standalone`` processes), and
stops all of it when the check ends, whatever the outcome.
"""

from __future__ import annotations

import contextlib
import http.client
import itertools
import json
import logging
import os
import signal
import subprocess
import sys
import time
import traceback
import uuid
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from confluent_kafka import OFFSET_BEGINNING, KafkaError, TopicPartition

from cdk.api import Connector
from cdk.converters import JsonConverter
from cdk.data import Schema, SchemaAndValue
from cdk.errors import ConnectException
from cdk.kafka import (
    consumer_config,
    create_topics,
    free_port,
    list_topics,
    new_consumer,
    new_producer,
    producer_config,
)
from cdk.runtime import EmbeddedWorker
from harness._driver import ConnectorDriver, SinkDriver, SourceDriver, SourceKind, source_streams
from harness.certify._checks import (
    Check,
    CheckFailed,
    CheckNotVerified,
    CheckSkipped,
    Kind,
    Metric,
    Series,
)
from harness.certify._evidence import mask_config, plain, redact_value
from harness.certify._probe import SourceProbe
from harness.certify._project import Project
from harness.certify._rest import RestClient
from harness.providers.kafka import Stall

__all__ = ["CheckContext", "DecodedRecord", "ProcessWorker", "WorkerHandle"]

T = TypeVar("T")

JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"
#: Consumer settings that make a group join quick. Tansu answers a join after about half the
#: session timeout (6000 ms: 3 s, 2000 ms: 1 s), so on the embedded broker the sinks' consumers
#: get :data:`EMBEDDED_GROUP`; a Kafka broker refuses a session timeout under its
#: ``group.min.session.timeout.ms`` (6000 ms by default), so any other cluster gets this.
FAST_GROUP = {"session.timeout.ms": "6000", "heartbeat.interval.ms": "500"}
#: librdkafka heartbeats from a thread of its own, not held up by a busy interpreter: four
#: beats fit in the session even on a loaded machine.
EMBEDDED_GROUP = {"session.timeout.ms": "2000", "heartbeat.interval.ms": "500"}

_log = logging.getLogger("harness.certify")


@dataclass(frozen=True)
class DecodedRecord:
    """A record read back from Kafka, decoded with a JsonConverter (schemas on)."""

    topic: str
    partition: int
    offset: int
    key_schema: Schema | None
    key: Any
    value_schema: Schema | None
    value: Any
    headers: tuple[tuple[str, bytes | None], ...]
    raw_key: bytes | None
    raw_value: bytes | None


@dataclass
class CheckContext:
    """Everything one check run needs. Made by the runner; checks only use it.

    Attributes:
        check: the check being run.
        project: the connector project.
        driver_class: the driver this run is for.
        bootstrap_servers: the Kafka cluster of the run.
        kafka_config: the cluster's client security settings (``security.protocol``,
            ``ssl.*``, ``sasl.*``; empty for a plaintext cluster), which every client the check
            makes and every worker it starts gets.
        kafka_kind: ``embedded``, ``testcontainers`` or ``external``.
        environment: what the run provides (``kafka``, ...).
        workdir: a fresh directory for this check.
        recorded: the evidence recorded so far (:meth:`evidence`), by name.
        teardown_errors: the traces of the driver ``teardown()`` calls that raised (the
            check then ends in ERROR, see :meth:`driver`).
        broker: stalls the run's broker (SIGSTOP/SIGCONT, docker pause; in a child process of
            ``cdk certify``, granted by the parent), or None where it cannot be stalled (an
            existing cluster).
        spark_dir: the folder of the run's standalone Spark cluster (distributed runtime), which
            :func:`harness.certify._distributed.spark_cluster` attaches to; None otherwise.
        seed: the run's seed for generated values (SCH-09's hostile values; ``cdk certify
            --seed`` sets it to rerun a run's values).
    """

    check: Check
    project: Project
    driver_class: type[ConnectorDriver]
    bootstrap_servers: str
    kafka_kind: str
    environment: frozenset[str]
    workdir: Path
    broker: Stall | None = None
    spark_dir: str | None = None
    seed: int = 0
    kafka_config: dict[str, str] = field(default_factory=dict)
    metrics: list[Metric] = field(default_factory=list)
    series: list[Series] = field(default_factory=list)
    secrets: set[str] = field(default_factory=set)
    log_lines: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    recorded: dict[str, Any] = field(default_factory=dict)
    teardown_errors: list[str] = field(default_factory=list)
    _stack: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _names: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _decoders: tuple[JsonConverter, JsonConverter] | None = None
    _configs: list[dict[str, Any]] = field(default_factory=list)
    _secret_keys: frozenset[str] | None = None

    # ------------------------------------------------------------------ identity
    @property
    def kind(self) -> Kind:
        """``source`` or ``sink``."""
        return "source" if issubclass(self.driver_class, SourceDriver) else "sink"

    @property
    def connector_class(self) -> type[Connector]:
        """The connector class the driver names (imported on first use)."""
        target = self.driver_class.connector
        if isinstance(target, type):
            return target
        from cdk.runtime import Plugins

        return Plugins().connector_class(target)

    @property
    def connector_class_name(self) -> str:
        """The connector's class path (``package.module.Class``), usable in any config."""
        cls = self.connector_class
        return f"{cls.__module__}.{cls.__qualname__}"

    def close(self) -> None:
        """Stop and remove everything this context started."""
        self._stack.close()

    # ------------------------------------------------------------------ names and ids
    def unique(self, prefix: str) -> str:
        """A name no other check uses (topics, connectors, groups)."""
        return f"{prefix}-{self.check.id.lower()}-{uuid.uuid4().hex[:8]}"

    def topic(self) -> str:
        """A fresh topic name (prefix) for this check."""
        return self.unique("certify")

    def ids(self, count: int) -> list[int]:
        """``count`` fresh record ids, increasing across calls."""
        return [next(self._ids) for _ in range(count)]

    # ------------------------------------------------------------------ the external system
    @contextlib.contextmanager
    def driver(self) -> Iterator[Any]:
        """A driver instance with its external system set up in a fresh directory.

        Typed ``Any`` so checks can call the source or sink methods; use :attr:`kind`.
        """
        directory = self.workdir / f"driver-{next(self._names)}"
        directory.mkdir(parents=True)
        instance = self.driver_class(directory)
        instance.setup()
        try:
            yield instance
        finally:
            try:
                instance.teardown()
            except Exception:  # noqa: BLE001 - recorded: the check ends in ERROR (the runner)
                # Not raised here: an exception of the check's own, on its way out, must not be
                # hidden by it. A check that otherwise passed ends in ERROR; one that failed
                # keeps its failure; both carry the trace in their evidence.
                _log.exception("Driver %s failed to tear down", self.driver_class.__name__)
                trace = traceback.format_exc()
                self.teardown_errors.append(trace)
                self.evidence("driver teardown() failed", trace.strip().splitlines()[-1])
                self.evidence("driver teardown() trace", trace)

    def require(self, capability: str) -> None:
        """Stop the check, not verified, unless the driver implements ``capability``.

        Raises:
            CheckNotVerified: the driver keeps the base class's (not implemented) method.
        """
        base = SourceDriver if self.kind == "source" else SinkDriver
        mine = getattr(self.driver_class, capability, None)
        theirs = getattr(base, capability, None)
        if mine is None or mine is theirs:
            raise CheckNotVerified(
                f"the driver {self.driver_class.__name__} does not implement {capability}(), "
                "which this check needs: the connector is not verified here (implement it, see "
                "the driver contract, or waive the check in [tool.cdk.certify] waive with the "
                "reason it cannot exist)"
            )

    def require_external_system(self) -> None:
        """Skip the check when the driver declares that the connector has no external system.

        Raises:
            CheckSkipped: the driver sets ``external_system = False`` (the reason says so).
        """
        if not self.driver_class.external_system:
            raise CheckSkipped(
                f"not applicable: the driver {self.driver_class.__name__} declares "
                "external_system = False (the connector talks to no external system, so there "
                "is nothing that can fail or become unavailable)",
                because="no-external-system",
            )

    def require_replayable_source(self) -> None:
        """Skip the check for a source whose driver declares it acknowledging (a queue).

        Raises:
            CheckSkipped: ``source_kind`` is ``ACKNOWLEDGING`` (the reason says so).
            TypeError: a replayable source's driver declares ``records_carry_offsets = False``.
        """
        skip = source_kind_skip(SourceKind.REPLAYABLE, self.driver_class)
        if skip is not None:
            raise skip

    def require_acknowledging_source(self) -> None:
        """Skip the check for a replayable source (the default kind).

        Raises:
            CheckSkipped: ``source_kind`` is ``REPLAYABLE`` (the reason says so).
        """
        skip = source_kind_skip(SourceKind.ACKNOWLEDGING, self.driver_class)
        if skip is not None:
            raise skip

    def source_streams(self) -> int:
        """The input streams a source driver declares (``streams``: an attribute or a property).

        A property is read on an instance that is not set up (in a scratch directory).

        Raises:
            TypeError: ``streams`` is not a positive int (the message says what it is).
        """
        driver = self.driver_class
        if not issubclass(driver, SourceDriver):
            raise TypeError(f"{driver.__name__} is not a SourceDriver: it has no input streams")
        return source_streams(driver, self.workdir / "streams")

    def connector_config(
        self, driver: SourceDriver | SinkDriver, topic: str, *, tasks_max: int = 1, **overrides: str
    ) -> dict[str, str]:
        """The full connector config: the driver's example config plus class and tasks.max.

        ``overrides`` use ``_`` for ``.`` in keys (``errors_tolerance="all"``); values are
        strings.
        """
        config = {
            "connector.class": self.connector_class_name,
            "tasks.max": str(tasks_max),
        }
        config.update(driver.example_config(topic))
        if self.kind == "sink" and "topics" not in config and "topics.regex" not in config:
            config["topics"] = topic
        config.update({key.replace("_", "."): str(value) for key, value in overrides.items()})
        return config

    # ------------------------------------------------------------------ Kafka
    @property
    def admin_config(self) -> dict[str, Any]:
        """An admin client config for the run's cluster (with its security settings)."""
        return {"bootstrap.servers": self.bootstrap_servers, **self.kafka_config}

    def create_topic(self, name: str, partitions: int = 1) -> str:
        """Create ``name`` with ``partitions`` partitions; return it."""
        create_topics(self.admin_config, [name], partitions=partitions)
        return name

    def read_records(
        self,
        prefix: str,
        *,
        min_records: int | None = None,
        timeout: float = 30.0,
        idle: float = 1.5,
    ) -> list[DecodedRecord]:
        """Read every topic whose name starts with ``prefix`` from the beginning (no group).

        Stops once ``min_records`` are read, or (without it, or at the deadline) once nothing
        new arrived for ``idle`` seconds. Never raises for too few records: the check compares.
        """
        deadline = time.monotonic() + timeout
        config = consumer_config(
            self.bootstrap_servers,
            overrides={"fetch.wait.max.ms": 50, "enable.partition.eof": True, **self.kafka_config},
        )
        consumer = new_consumer(config)
        holes_checked = -1  # how many records were read when the holes were last read again
        raw: list[Any] = []
        assigned: set[str] = set()
        last_new = time.monotonic()
        next_listing = 0.0
        try:
            while True:
                now = time.monotonic()
                if now >= next_listing:
                    next_listing = now + 1.0
                    new = {
                        t for t in list_topics(self.admin_config) if t.startswith(prefix)
                    } - assigned
                    if new:
                        assigned |= new
                        partitions = self._partitions(consumer, sorted(new))
                        consumer.incremental_assign(partitions)
                        last_new = now
                if min_records is not None and len(raw) >= min_records:
                    break
                if holes_checked != len(raw) and now - last_new >= idle:
                    holes_checked = len(raw)  # a fetch may have skipped what is still missing
                    found = read_holes_again(config, raw)
                    if found:
                        raw.extend(found)
                        last_new = now
                        continue
                if (min_records is None or now >= deadline) and now - last_new >= idle:
                    break
                if now >= deadline + idle:
                    break
                for msg in consumer.consume(500, timeout=0.1):
                    error = msg.error()
                    if error is not None:
                        if error.code() != KafkaError._PARTITION_EOF:
                            _log.warning("Reading %s: %s", msg.topic(), error)
                        continue
                    raw.append(msg)
                    last_new = time.monotonic()
        finally:
            consumer.close()
        records = [self._decode(msg) for msg in raw]
        records.sort(key=lambda r: (r.topic, r.partition, r.offset))
        return records

    def _partitions(self, consumer: Any, topics: Sequence[str]) -> list[TopicPartition]:
        out: list[TopicPartition] = []
        for topic in topics:
            meta = consumer.list_topics(topic, timeout=10).topics.get(topic)
            count = len(meta.partitions) if meta is not None and meta.partitions else 1
            out.extend(TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(count))
        return out

    def _decode(self, msg: Any) -> DecodedRecord:
        topic = msg.topic()
        if self._decoders is None:
            self._decoders = (_json_converter(is_key=True), _json_converter(is_key=False))
        key = self._decoders[0].to_connect_data(topic, msg.key())
        value = self._decoders[1].to_connect_data(topic, msg.value())
        return DecodedRecord(
            topic=topic,
            partition=msg.partition() or 0,
            offset=msg.offset() or 0,
            key_schema=key.schema,
            key=key.value,
            value_schema=value.schema,
            value=value.value,
            headers=tuple(
                (str(k), v.encode() if isinstance(v, str) else v) for k, v in msg.headers() or ()
            ),
            raw_key=msg.key(),
            raw_value=msg.value(),
        )

    def source_ids(self, driver: SourceDriver, records: Iterable[DecodedRecord]) -> list[Hashable]:
        """The ids of records a source emitted (by the driver's ``record_id``).

        Raises:
            CheckFailed: the driver cannot find an id in a record (it says which).
        """
        out: list[Hashable] = []
        for record in records:
            try:
                out.append(driver.record_id(record.key, record.value))
            except Exception as exc:  # noqa: BLE001 - any driver error is reported as such
                raise CheckFailed(
                    "every emitted record to carry the id the driver wrote",
                    f"the driver cannot find an id in {record.topic}[{record.partition}]"
                    f"@{record.offset}: {exc}",
                ) from None
        return out

    def produce(
        self,
        topic: str,
        records: Iterable[tuple[SchemaAndValue, SchemaAndValue]],
        *,
        converter: str = JSON_CONVERTER,
        converter_config: Mapping[str, str] | None = None,
        partition: int | None = None,
    ) -> list[tuple[int, int]]:
        """Produce (key, value) Connect data encoded by ``converter``; wait for every ack.

        Returns the (partition, offset) of each record, in order.
        """
        from cdk.runtime import Plugins

        plugins = Plugins()
        settings = {"schemas.enable": "true", **(converter_config or {})}
        key_conv: Any = plugins.load(converter)()
        key_conv.configure(settings, True)
        value_conv: Any = plugins.load(converter)()
        value_conv.configure(settings, False)
        payload = [
            (
                key_conv.from_connect_data(topic, key.schema, key.value),
                value_conv.from_connect_data(topic, value.schema, value.value),
            )
            for key, value in records
        ]
        return self.produce_raw(topic, payload, partition=partition)

    def produce_raw(
        self,
        topic: str,
        payload: Iterable[tuple[bytes | None, bytes | None]],
        *,
        partition: int | None = None,
    ) -> list[tuple[int, int]]:
        """Produce raw (key, value) bytes in order; wait for every ack.

        Returns the (partition, offset) of each record, in order.

        Raises:
            ConnectException: a record was not acknowledged (the harness could not produce).
        """
        producer = new_producer(
            producer_config(self.bootstrap_servers, {"linger.ms": 5, **self.kafka_config})
        )
        results: list[tuple[int, int] | None] = []
        errors: list[str] = []

        def deliver(index: int) -> Callable[[Any, Any], None]:
            def on_delivery(err: Any, msg: Any) -> None:
                if err is not None:
                    errors.append(str(err))
                else:
                    results[index] = (msg.partition(), msg.offset())

            return on_delivery

        extra: dict[str, Any] = {} if partition is None else {"partition": partition}
        for index, (key_bytes, value_bytes) in enumerate(payload):
            results.append(None)
            while True:
                try:
                    producer.produce(
                        topic, key=key_bytes, value=value_bytes, on_delivery=deliver(index), **extra
                    )
                    break
                except BufferError:
                    producer.poll(0.1)
            producer.poll(0)
        remaining = producer.flush(60)
        if remaining or errors or any(r is None for r in results):
            raise ConnectException(
                f"the harness could not produce to {topic}: {remaining} unacknowledged, "
                f"errors {errors[:3]}"
            )
        return [r for r in results if r is not None]

    def sink_records(
        self, driver: SinkDriver, ids: Iterable[int], value_schema: Schema | None = None
    ) -> list[tuple[SchemaAndValue, SchemaAndValue]]:
        """The (key, value) Connect data of records ``ids`` as the sink driver shapes them."""
        schema = value_schema if value_schema is not None else driver.value_schema()
        key_schema = driver.key_schema()
        return [
            (
                SchemaAndValue(key_schema, driver.key(i)),
                SchemaAndValue(schema, driver.value(i, schema)),
            )
            for i in ids
        ]

    def committed_offsets(self, group: str, topic: str) -> dict[int, int]:
        """The offsets consumer group ``group`` committed on ``topic``, by partition."""
        consumer = new_consumer(
            consumer_config(
                self.bootstrap_servers, overrides={"group.id": group, **self.kafka_config}
            )
        )
        try:
            meta = consumer.list_topics(topic, timeout=10).topics.get(topic)
            count = len(meta.partitions) if meta is not None and meta.partitions else 1
            committed = consumer.committed(
                [TopicPartition(topic, p) for p in range(count)], timeout=10
            )
        finally:
            consumer.close()
        found = {tp.partition: tp.offset for tp in committed if tp.offset >= 0}
        self.evidence("committed offsets", {f"{topic}[{p}]": o for p, o in sorted(found.items())})
        return found

    def probe(
        self,
        connector_class: type[Any],
        config: Mapping[str, str],
        *,
        offsets: Mapping[str, Mapping[str, Any]] | None = None,
        max_tasks: int = 1,
    ) -> SourceProbe:
        """A :class:`~harness.certify.SourceProbe` that records its evidence in this check.

        The config (PASSWORD values hidden) and the offsets it resumes from are recorded
        now; the tasks started, the records polled and the ``stop()`` times as they happen.
        """
        self.evidence_config(config)
        if offsets:
            self.evidence("resumed from offsets", {k: dict(v) for k, v in offsets.items()})
        return SourceProbe(
            connector_class, config, offsets=offsets, max_tasks=max_tasks, report=self.evidence
        )

    # ------------------------------------------------------------------ workers
    def worker_properties(self, **overrides: str) -> dict[str, str]:
        """Worker properties for checks: JSON converters, an offsets file, fast commits.

        The cluster's security settings go in as Kafka reads them: unprefixed (the worker's
        admin clients and internal topics) and with the ``producer.`` and ``consumer.``
        prefixes (the tasks' clients).
        """
        security = {
            f"{prefix}{key}": value
            for prefix in ("", "producer.", "consumer.")
            for key, value in self.kafka_config.items()
        }
        props = {
            **security,
            "bootstrap.servers": self.bootstrap_servers,
            "key.converter": JSON_CONVERTER,
            "value.converter": JSON_CONVERTER,
            "offset.storage.file.filename": str(self.workdir / f"offsets-{uuid.uuid4().hex}.json"),
            "offset.flush.interval.ms": "500",
            "listeners": "http://127.0.0.1:0",
            "task.shutdown.graceful.timeout.ms": "10000",
            **{f"consumer.{k}": v for k, v in self.group_timing().items()},
        }
        props.update(overrides)
        return props

    def group_timing(self) -> dict[str, str]:
        """The session timeout and heartbeat the sinks' consumers get on this run's cluster."""
        return EMBEDDED_GROUP if self.kafka_kind == "embedded" else FAST_GROUP

    @contextlib.contextmanager
    def worker(self, props: Mapping[str, str] | None = None) -> Iterator[WorkerHandle]:
        """An embedded worker with its REST API (stopped when the block ends)."""
        worker = EmbeddedWorker(
            dict(props) if props is not None else self.worker_properties(),
            rest=True,
            extra_plugins=[self.connector_class],
        )
        worker.start()
        try:
            assert worker.rest_url is not None
            yield WorkerHandle(worker, RestClient(worker.rest_url), self)
        finally:
            worker.stop()

    @contextlib.contextmanager
    def standalone(
        self, connectors: Mapping[str, Mapping[str, str]], props: Mapping[str, str] | None = None
    ) -> Iterator[ProcessWorker]:
        """``cdk standalone`` as a subprocess running ``connectors`` (name → config).

        Killed (SIGKILL) if it is still running when the block ends. Its REST port is a free
        one; when another process took it before the worker could bind it (on a loaded machine
        a broker or worker started at the same moment may), the worker starts again on another.
        """
        worker_props = dict(props) if props is not None else self.worker_properties()
        for attempt in range(1, _PORT_ATTEMPTS + 1):
            handle = self._start_standalone(connectors, worker_props)
            try:
                handle.wait_ready()
            except CheckFailed:
                handle.stop()
                if attempt < _PORT_ATTEMPTS and _PORT_TAKEN in handle.log_text():
                    continue
                raise
            except BaseException:
                handle.stop()
                raise
            break
        try:
            yield handle
        finally:
            handle.stop()

    def _start_standalone(
        self, connectors: Mapping[str, Mapping[str, str]], props: Mapping[str, str]
    ) -> ProcessWorker:
        port = free_port()
        worker_props = {**props, "listeners": f"http://127.0.0.1:{port}"}
        number = next(self._names)
        props_file = self.workdir / f"worker-{number}.properties"
        props_file.write_text(
            "".join(f"{k}={_escape(v)}\n" for k, v in worker_props.items()), encoding="utf-8"
        )
        files = []
        for name, config in connectors.items():
            self.evidence_config(config)
            path = self.workdir / f"connector-{number}-{name}.json"
            path.write_text(json.dumps({"name": name, "config": dict(config)}), encoding="utf-8")
            files.append(str(path))
        log_file = self.workdir / f"standalone-{number}.log"
        env = dict(os.environ)
        roots = [str(p) for p in self.project.import_roots] + [
            p for p in sys.path if p and Path(p).is_dir()
        ]
        env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(roots))
        command = [
            sys.executable,
            "-c",
            "import sys; from cdk.cli import main; main(sys.argv[1:])",
            "standalone",
            str(props_file),
            *files,
        ]
        with log_file.open("wb") as out:
            proc = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env
            )
        return ProcessWorker(proc, RestClient(f"http://127.0.0.1:{port}"), log_file, self)

    # ------------------------------------------------------------------ waiting and comparing
    def wait_for(
        self,
        predicate: Callable[[], T | None],
        timeout: float,
        *,
        expected: str,
        actual: Callable[[], str],
        interval: float = 0.1,
    ) -> T:
        """Poll ``predicate`` until truthy; at the deadline fail with ``expected``/``actual()``."""
        deadline = time.monotonic() + timeout
        while True:
            result = predicate()
            if result:
                return result
            if time.monotonic() >= deadline:
                raise CheckFailed(expected, f"after {timeout:g}s {actual()}")
            time.sleep(interval)

    def compare_ids(
        self,
        expected: Iterable[Hashable],
        actual: Iterable[Hashable],
        *,
        what: str,
        allow_duplicates: bool = False,
        max_duplicates: int | None = None,
    ) -> int:
        """Compare delivered ids with the expected ones; return the number of duplicates.

        Fails on a missing id, an unexpected id, or a duplicate (unless ``allow_duplicates``,
        up to ``max_duplicates``).
        """
        want = Counter(expected)
        got = Counter(actual)
        missing = sorted((want - got).keys(), key=_id_order)
        unexpected = sorted(set(got) - set(want), key=_id_order)
        duplicates = {k: n - 1 for k, n in got.items() if n > 1 and k in want}
        dup_count = sum(duplicates.values())
        self.evidence(
            what,
            {
                "sent": sum(want.values()),
                "delivered" if self.kind == "source" else "stored": sum(got.values()),
                "duplicates": dup_count,
                "lost": len(missing),
                **({"unexpected": len(unexpected)} if unexpected else {}),
            },
        )
        problems = []
        if missing:
            problems.append(f"{len(missing)} missing (ids {_sample(missing)})")
        if unexpected:
            problems.append(f"{len(unexpected)} unexpected (ids {_sample(unexpected)})")
        too_many = max_duplicates is not None and dup_count > max_duplicates
        if dup_count and (not allow_duplicates or too_many):
            bound = f", more than the bound of {max_duplicates}" if too_many else ""
            problems.append(
                f"{dup_count} duplicates{bound} (ids {_sample(sorted(duplicates, key=_id_order))})"
            )
        if problems:
            raise CheckFailed(
                f"{what}: each of the {len(want)} records exactly "
                + ("once or more" if allow_duplicates else "once"),
                f"got {sum(got.values())} records: " + "; ".join(problems),
            )
        return dup_count

    # ------------------------------------------------------------------ reporting
    def evidence(self, name: str, value: Any) -> None:
        """Record what the check saw, for every report format (passed checks included).

        ``value`` is a figure, a text, a list or a mapping of those (stored as plain JSON data,
        see :func:`~harness.certify._evidence.plain`); recording ``name`` again replaces it.
        Name a count by a plural noun or a participle (``sent``, ``stored``, ``duplicates``):
        the reports print it as ``100 sent``; any other figure as ``name: value``. A mapping of
        counts is one line of the report (what :meth:`compare_ids` records under its
        ``what``). Registered secrets (:meth:`secret`) are replaced by ``[hidden]``; record a
        config with :meth:`evidence_config`, which also hides PASSWORD values.
        """
        self.recorded[str(name)] = redact_value(plain(value), self.secrets)

    def evidence_config(self, config: Mapping[str, Any], name: str | None = None) -> None:
        """Record a connector config the check used, PASSWORD values hidden.

        The first config is recorded as ``config``; a later one that differs as
        ``config 2 (changes)``..., with only the keys that changed (a removed key as None).
        Given ``name``, the whole config is recorded under that name.
        """
        masked = mask_config(config, self._password_keys())
        if name is not None:
            self.evidence(name, masked)
            return
        if masked in self._configs:
            return
        self._configs.append(masked)
        if len(self._configs) == 1:
            self.evidence("config", masked)
            return
        first = self._configs[0]
        changes = {k: v for k, v in masked.items() if first.get(k) != v}
        changes.update({k: None for k in first if k not in masked})
        self.evidence(f"config {len(self._configs)} (changes)", changes)

    def _password_keys(self) -> frozenset[str]:
        """The connector's PASSWORD keys (none when its ConfigDef cannot be read)."""
        if self._secret_keys is None:
            from cdk.config import Type

            try:
                keys = self.connector_class().config().config_keys().values()
                self._secret_keys = frozenset(k.name for k in keys if k.type is Type.PASSWORD)
            except Exception:  # noqa: BLE001 - the CFG checks report a broken config()
                self._secret_keys = frozenset()
        return self._secret_keys

    def metric(
        self,
        name: str,
        value: float,
        unit: str,
        *,
        higher_is_better: bool = True,
    ) -> Metric:
        """Report a measured figure; its threshold comes from the project's settings."""
        found = Metric(name, value, unit, self.project.thresholds.get(name), higher_is_better)
        self.metrics.append(found)
        return found

    def note(self, text: str) -> None:
        """Say what a passing check accepted on the driver's word (shown next to the result).

        For a declaration that shaped the check, with its reason (``unstored_fields``...).
        """
        if text not in self.notes:
            self.notes.append(text)

    def plot(
        self, name: str, x_label: str, y_label: str, points: Iterable[tuple[float, float]]
    ) -> None:
        """Add a series of points, drawn as a plot in the HTML report."""
        self.series.append(Series(name, x_label, y_label, tuple(points)))

    def secret(self, value: str) -> str:
        """Register a secret value: it is redacted from the report, and leak checks look for it."""
        if value:
            self.secrets.add(value)
        return value


def declared_source_kind(driver: type[ConnectorDriver]) -> SourceKind:
    """The kind a source driver declares (``source_kind``), checked.

    Raises:
        TypeError: it is not a :class:`~harness.SourceKind`, or a replayable source declares
            ``records_carry_offsets = False``.
    """
    kind = getattr(driver, "source_kind", SourceKind.REPLAYABLE)
    if not isinstance(kind, SourceKind):
        raise TypeError(
            f"{driver.__name__}.source_kind must be a harness.SourceKind "
            f"(REPLAYABLE or ACKNOWLEDGING), not {kind!r}"
        )
    if kind is SourceKind.REPLAYABLE and not getattr(driver, "records_carry_offsets", True):
        raise TypeError(
            f"{driver.__name__} declares records_carry_offsets = False for a replayable "
            "source, which resumes from its offsets: declare source_kind = "
            "SourceKind.ACKNOWLEDGING for a source whose system redelivers instead"
        )
    return kind


def source_kind_skip(wanted: SourceKind, driver: type[ConnectorDriver]) -> CheckSkipped | None:
    """Why a check of ``wanted`` sources does not apply to ``driver``'s (None: it applies)."""
    if declared_source_kind(driver) is wanted:
        return None
    if wanted is SourceKind.REPLAYABLE:
        return CheckSkipped(
            f"not applicable: the driver {driver.__name__} declares source_kind "
            "= ACKNOWLEDGING (the source system redelivers what the connector did not "
            "acknowledge and cannot replay from a stored offset; the ACK checks verify it)",
            because="acknowledging-source",
        )
    return CheckSkipped(
        f"not applicable: the source of {driver.__name__} is replayable (it "
        "resumes from stored offsets and acknowledges nothing in the source system; "
        "a driver declares source_kind = ACKNOWLEDGING for a queue)",
        because="replayable-source",
    )


@dataclass
class WorkerHandle:
    """An embedded worker under test, driven through its REST API like an operator would."""

    embedded: EmbeddedWorker
    rest: RestClient
    ctx: CheckContext

    def create(self, name: str, config: Mapping[str, str]) -> None:
        """Create connector ``name`` through ``POST /connectors``.

        Raises:
            CheckFailed: the API refused it (the response says why).
        """
        self.ctx.evidence_config(config)
        answer = self.rest.post("/connectors", {"name": name, "config": dict(config)})
        if answer.status != 201:
            raise CheckFailed(
                "the example config to be accepted by POST /connectors",
                f"the worker answered {answer.status}: {answer.text[:500]}",
            )

    def pause(self, name: str) -> None:
        """``PUT /connectors/{name}/pause``, then wait until it and its tasks are PAUSED."""
        self._put_state(name, "pause")
        self.wait_state(name, "PAUSED")

    def resume(self, name: str) -> None:
        """``PUT /connectors/{name}/resume`` (not waiting: the caller times from here)."""
        self._put_state(name, "resume")

    def _put_state(self, name: str, verb: str) -> None:
        answer = self.rest.put(f"/connectors/{name}/{verb}")
        if answer.status != 202:
            raise CheckFailed(
                f"PUT /connectors/{name}/{verb} to be accepted (202)",
                f"the worker answered {answer.status}: {answer.text[:500]}",
            )

    def status(self, name: str) -> dict[str, Any]:
        """``GET /connectors/{name}/status`` (an empty dict when it is not there)."""
        answer = self.rest.get(f"/connectors/{name}/status")
        return dict(answer.json) if answer.status == 200 and answer.json else {}

    def wait_state(
        self, name: str, state: str, *, tasks: int | None = None, timeout: float = 60.0
    ) -> dict[str, Any]:
        """Wait until the connector and all its tasks are ``state``.

        With ``tasks``, there must be exactly that many tasks. Fails the check with the last
        status at the deadline.
        """

        def reached() -> dict[str, Any] | None:
            status = self.status(name)
            if not status or status["connector"]["state"] != state:
                return None
            states = [t["state"] for t in status.get("tasks", [])]
            if any(s != state for s in states) or (tasks is not None and len(states) != tasks):
                return None
            return status

        return self.ctx.wait_for(
            reached,
            timeout,
            expected=f"connector {name} and {tasks if tasks is not None else 'all'} tasks "
            f"to be {state}",
            actual=lambda: f"the status is {_brief_status(self.status(name))}",
        )

    def wait_task_state(
        self, name: str, task: int, state: str, *, timeout: float = 60.0
    ) -> dict[str, Any]:
        """Wait until task ``task`` of ``name`` is ``state``; return that task's status."""

        def reached() -> dict[str, Any] | None:
            for t in self.status(name).get("tasks", []):
                if t["id"] == task and t["state"] == state:
                    return dict(t)
            return None

        return self.ctx.wait_for(
            reached,
            timeout,
            expected=f"task {task} of {name} to be {state}",
            actual=lambda: f"the status is {_brief_status(self.status(name))}",
        )


#: How often :meth:`CheckContext.standalone` starts a worker whose REST port was taken.
_PORT_ATTEMPTS = 3
#: What ``cdk standalone`` says when it cannot bind its REST port.
_PORT_TAKEN = "Address already in use"


@dataclass
class ProcessWorker:
    """A ``cdk standalone`` subprocess (for crash checks)."""

    proc: subprocess.Popen[bytes]
    rest: RestClient
    log_file: Path
    ctx: CheckContext

    def wait_ready(self, timeout: float = 60.0) -> None:
        """Wait until the REST API answers; fail with the log tail if the process died."""

        def ready() -> bool:
            if self.proc.poll() is not None:
                raise CheckFailed(
                    "cdk standalone to start with the connector",
                    f"it exited with code {self.proc.returncode}: {self.log_tail()}",
                )
            try:
                return self.rest.get("/").status == 200
            except (OSError, http.client.HTTPException):
                # not up yet, or what answers is not HTTP: another process's port, which the
                # worker will fail to bind (and exit)
                return False

        self.ctx.wait_for(
            ready,
            timeout,
            expected="cdk standalone to serve its REST API",
            actual=lambda: f"it does not answer; log: {self.log_tail()}",
            interval=0.2,
        )

    def kill(self) -> None:
        """``kill -9`` the worker and wait for it to be gone."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(30)

    def stop(self, timeout: float = 60.0) -> int:
        """SIGTERM (a clean stop with a final commit); SIGKILL after ``timeout`` seconds."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        return self.proc.returncode

    def log_text(self) -> str:
        """Everything the process wrote so far."""
        try:
            return self.log_file.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def log_tail(self, lines: int = 20) -> str:
        """The last ``lines`` lines of its output."""
        return "\n".join(self.log_text().splitlines()[-lines:])


# ---------------------------------------------------------------------------------------------


#: How long a read of the holes in a partition's offsets may take (see read_holes_again).
_HOLES_TIMEOUT_S = 5.0


def read_holes_again(config: Mapping[str, Any], raw: Sequence[Any]) -> list[Any]:
    """Read each partition again from its first hole in offsets; the records found there.

    The embedded broker sometimes answers a fetch with records that begin past the offset
    asked for although it holds the ones in between (``cdk.runtime.util.FetchGaps``), and a
    check that counted what it read would blame the connector for records the broker has. A
    hole is also a transaction marker or a compacted record; reading again from it finds
    nothing new then, at the cost of one fetch per partition with holes. A consumer of its own
    (``config``) reads, so the caller's goes on where it was.
    """
    offsets: dict[tuple[str, int], list[int]] = {}
    for msg in raw:
        offsets.setdefault((msg.topic(), msg.partition()), []).append(msg.offset())
    starts: dict[tuple[str, int], int] = {}
    ends: dict[tuple[str, int], int] = {}
    for key, seen in offsets.items():
        seen.sort()
        for before, after in itertools.pairwise(seen):
            if after > before + 1:
                starts[key] = before + 1
                ends[key] = seen[-1]
                break
    if not starts:
        return []
    consumer = new_consumer(dict(config))
    try:
        found = _read_from(consumer, starts, ends, raw)
    finally:
        consumer.close()
    if found:
        _log.warning(
            "Read %d records again that a fetch of the broker had skipped (%s)",
            len(found),
            ", ".join(f"{t}[{p}]" for t, p in sorted({(m.topic(), m.partition()) for m in found})),
        )
    return found


def _read_from(
    consumer: Any,
    starts: Mapping[tuple[str, int], int],
    ends: Mapping[tuple[str, int], int],
    raw: Sequence[Any],
) -> list[Any]:
    """The records of ``raw``'s partitions from ``starts`` up to ``ends`` that it lacks."""
    consumer.assign([TopicPartition(t, p, start) for (t, p), start in starts.items()])
    known = {(msg.topic(), msg.partition(), msg.offset()) for msg in raw}
    found: list[Any] = []
    waiting = set(starts)
    deadline = time.monotonic() + _HOLES_TIMEOUT_S
    while waiting and time.monotonic() < deadline:
        for msg in consumer.consume(500, timeout=0.1):
            key = (msg.topic(), msg.partition())
            if msg.error() is not None:
                if msg.error().code() == KafkaError._PARTITION_EOF:
                    waiting.discard(key)
                continue
            if msg.offset() >= ends.get(key, -1):
                waiting.discard(key)
            if (*key, msg.offset()) not in known:
                found.append(msg)
    return found


def _json_converter(*, is_key: bool) -> JsonConverter:
    converter = JsonConverter()
    converter.configure({"schemas.enable": "true"}, is_key)
    return converter


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n")


def _id_order(value: Hashable) -> tuple[int, float, str]:
    # ints in numeric order first, anything else by its text
    if isinstance(value, int) and not isinstance(value, bool):
        return (0, float(value), "")
    return (1, 0.0, repr(value))


def _sample(items: Sequence[Any], limit: int = 10) -> str:
    shown = ", ".join(repr(i) for i in items[:limit])
    return shown + (f", … ({len(items) - limit} more)" if len(items) > limit else "")


def _brief_status(status: Mapping[str, Any]) -> str:
    if not status:
        return "not found"
    tasks = ", ".join(f"task {t['id']} {t['state']}" for t in status.get("tasks", []))
    return f"connector {status['connector']['state']}" + (f"; {tasks}" if tasks else "; no tasks")
