"""The PRF suite: throughput and latency of the connector on the broker.

The checks measure and report; they fail only when the project configures a threshold that the
measurement misses (``[tool.cdk.certify.thresholds]``, by metric name), or when there is nothing
to measure (no record arrives, the task fails). The figures come from an embedded worker in the
harness's own process on whatever machine runs the certification, so they characterise the
connector, they do not benchmark it.

Throughput (PRF-01) is timed, after a warm-up record proved the connector is running and
assigned, for a burst of records: for a source, the connector is paused while the driver writes
the whole burst into the external system (one ``write_records()`` call: a driver whose API has a
bulk write uses it there; the time it took is in the evidence, not in the figure), then resumed,
and the time runs from the resume until the last record is in Kafka; for a sink, from the moment
the harness starts producing the burst until the last record is in the external system.
Latency (PRF-02) sends one record at a time and times each until it arrives.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import Any

from cdk.converters import JsonConverter
from cdk.data import SchemaAndValue
from cdk.kafka import consumer_config, list_topics, new_consumer, new_producer, producer_config
from harness.certify._checks import CheckFailed, check
from harness.certify._context import CheckContext, WorkerHandle

__all__ = ["latency", "throughput"]

#: Records in the throughput burst.
RECORDS = 5000
#: Latency samples.
SAMPLES = 20
#: Sampling stops after this many seconds once ``MIN_SAMPLES`` were taken (slow connectors).
SAMPLING_BUDGET_S = 12.0
#: The fewest latency samples taken.
MIN_SAMPLES = 5
#: The longest a throughput measurement runs.
WINDOW_S = 45.0
#: How long a measurement that ran out of time may read what had arrived by then.
_CATCH_UP_S = 1.0
#: The longest one latency sample may take.
SAMPLE_TIMEOUT_S = 10.0
#: The longest the connector may take to deliver its warm-up record (includes the group join).
WARM_UP_S = 60.0


@check(
    "PRF-01",
    "Throughput is measured (records/s), against a threshold when one is set",
    fix=(
        "Work in batches: return many records from each ``poll()`` and write many in each "
        "``put()``, avoid a round trip per record, and never sleep while data is waiting. "
        "Thresholds are set in ``[tool.cdk.certify.thresholds]``."
    ),
    exclusive=True,  # measured with nothing else running
)
def throughput(ctx: CheckContext) -> None:
    """Time a burst of 5000 records through the connector and report records per second.

    After a warm-up record shows the connector is running, the harness pauses a source
    connector, has the driver write 5000 records into the source system, resumes it and times
    from the resume until the last one is in Kafka (the driver's write is not timed); a sink's
    burst is produced to its topic, encoded beforehand, and timed until the last one is read
    back from the sink's system. The metric is
    ``source.throughput`` / ``sink.throughput`` in records/s, with a plot of the records
    delivered over time. With a threshold configured, the measurement stops as soon as the
    threshold can no longer be met (5000 / threshold seconds) and reports the rate reached.
    """
    metric = f"{ctx.kind}.throughput"
    threshold = ctx.project.thresholds.get(metric)
    window = WINDOW_S if not threshold else min(WINDOW_S, RECORDS / threshold * 1.1 + 0.5)
    with ctx.driver() as d, ctx.worker() as w:
        name = ctx.unique("prf")
        if ctx.kind == "source":
            with _Tail(ctx, ctx.topic()) as tail:
                _start_source(ctx, d, w, name, tail)
                ids = ctx.ids(RECORDS)
                # the driver's write is not the connector's speed: the burst is in the external
                # system before the connector, paused meanwhile, may read any of it
                w.pause(name)
                written = time.monotonic()
                d.write_records(ids)
                ctx.evidence("driver wrote the burst in (s)", round(time.monotonic() - written, 3))
                start = time.monotonic()
                w.resume(name)
                base = tail.count_before_burst
                points = _measure(
                    ctx, w, name, start, window, lambda: tail.poll(0.02) - base, RECORDS
                )
                delivered = tail.ids_since(d, base)
        else:
            topic = ctx.create_topic(ctx.topic())
            producer = _Producer(ctx, d, topic)
            _start_sink(ctx, d, w, name, topic, producer)
            ids = ctx.ids(RECORDS)
            payload = producer.encode(ids)
            wanted = set(ids)
            start = time.monotonic()
            producer.send(payload)

            def stored() -> int:
                return len(wanted.intersection(d.read_back()))

            points = _measure(ctx, w, name, start, window, stored, RECORDS, interval=0.1)
            delivered = [i for i in d.read_back() if i in wanted]
    count = int(points[-1][1]) if points else 0  # a count, whatever the plot's points hold
    elapsed = points[-1][0] if points else window
    ctx.evidence("sent", RECORDS)
    ctx.evidence("delivered" if ctx.kind == "source" else "stored", count)
    ctx.evidence("burst took (s)", round(elapsed, 3))
    ctx.evidence("measurement window (s)", round(window, 1))
    ctx.plot(
        "records delivered over time",
        "seconds since the burst started",
        "records delivered",
        _thin(points),
    )
    if count >= RECORDS:
        missing = set(ids) - set(delivered)
        if missing:
            ctx.compare_ids(ids, delivered, what="the throughput burst", allow_duplicates=True)
        ctx.metric(metric, RECORDS / max(elapsed, 1e-6), "records/s")
        return
    if count == 0:
        raise CheckFailed(
            f"some of the {RECORDS} records to be delivered, to measure the throughput",
            f"none arrived within {window:.1f}s",
        )
    found = ctx.metric(metric, count / max(elapsed, 1e-6), "records/s")
    if found.threshold is None:
        raise CheckFailed(
            f"all {RECORDS} records to be delivered within {WINDOW_S:g}s",
            f"only {count} arrived ({found.value:.0f} records/s)",
        )


@check(
    "PRF-02",
    "Latency is measured (p50/p95 ms), against thresholds when set",
    fix=(
        "Do not wait for a batch to fill before returning records from ``poll()`` or writing "
        "them in ``put()``; wait on the external system with short timeouts, not fixed "
        "sleeps."
    ),
    exclusive=True,  # measured with nothing else running
)
def latency(ctx: CheckContext) -> None:
    """Send 20 records one at a time and report the p50 and p95 latency in milliseconds.

    Each record is written into the source system (or produced to the sink's topic) only after
    the previous one arrived, and timed until it is in Kafka (or read back from the sink's
    system). A slow connector gets fewer samples (at least 5): sampling stops after 12 s. The
    metrics are ``<kind>.latency.p50`` and ``<kind>.latency.p95`` in ms (lower is better), with
    a plot of every sample. A record that takes longer than 10 s fails the check.
    """
    samples: list[float] = []
    with ctx.driver() as d, ctx.worker() as w:
        name = ctx.unique("prf")
        if ctx.kind == "source":
            with _Tail(ctx, ctx.topic()) as tail:
                _start_source(ctx, d, w, name, tail)
                budget = time.monotonic() + SAMPLING_BUDGET_S
                for _ in _sample_slots(budget):
                    (record_id,) = ctx.ids(1)
                    base = len(tail.messages)
                    start = time.monotonic()
                    d.write_records([record_id])

                    def arrived(rid: int = record_id, base: int = base) -> float | None:
                        tail.poll(0.01)
                        return tail.arrival_of(d, rid, base)

                    at = _sample(ctx, w, name, record_id, arrived)
                    samples.append((at - start) * 1000)
        else:
            topic = ctx.create_topic(ctx.topic())
            producer = _Producer(ctx, d, topic)
            _start_sink(ctx, d, w, name, topic, producer)
            budget = time.monotonic() + SAMPLING_BUDGET_S
            for _ in _sample_slots(budget):
                (record_id,) = ctx.ids(1)
                payload = producer.encode([record_id])
                start = time.monotonic()
                producer.send(payload)

                def stored(rid: int = record_id) -> float | None:
                    return time.monotonic() if rid in d.read_back() else None

                at = _sample(ctx, w, name, record_id, stored)
                samples.append((at - start) * 1000)
    ctx.plot(
        "latency per record", "sample", "latency (ms)", [(n + 1, v) for n, v in enumerate(samples)]
    )
    ctx.evidence("samples", len(samples))
    if samples:
        ctx.evidence("latency range (ms)", [round(min(samples), 2), round(max(samples), 2)])
    ctx.metric(f"{ctx.kind}.latency.p50", _percentile(samples, 50), "ms", higher_is_better=False)
    ctx.metric(f"{ctx.kind}.latency.p95", _percentile(samples, 95), "ms", higher_is_better=False)


# ---------------------------------------------------------------------------------------------
# Starting the connector with a warm-up record.


def _start_source(ctx: CheckContext, d: Any, w: WorkerHandle, name: str, tail: _Tail) -> None:
    warm = ctx.ids(1)
    d.write_records(warm)
    w.create(name, ctx.connector_config(d, tail.prefix))
    w.wait_state(name, "RUNNING", tasks=1)

    def warmed() -> bool:
        tail.poll(0.1)
        _fail_if_task_failed(w, name)
        return bool(tail.messages)

    ctx.wait_for(
        warmed,
        WARM_UP_S,
        expected="the warm-up record to arrive in Kafka before the measurement",
        actual=lambda: "it did not arrive",
    )
    tail.count_before_burst = len(tail.messages)


def _start_sink(
    ctx: CheckContext, d: Any, w: WorkerHandle, name: str, topic: str, producer: _Producer
) -> None:
    w.create(name, ctx.connector_config(d, topic))
    w.wait_state(name, "RUNNING", tasks=1)
    warm = ctx.ids(1)
    producer.send(producer.encode(warm))

    def warmed() -> bool:
        _fail_if_task_failed(w, name)
        return warm[0] in d.read_back()

    ctx.wait_for(
        warmed,
        WARM_UP_S,
        expected="the warm-up record to be stored before the measurement",
        actual=lambda: f"read_back() shows {len(d.read_back())} records",
        interval=0.2,
    )


# ---------------------------------------------------------------------------------------------
# Measuring.


def _measure(
    ctx: CheckContext,
    w: WorkerHandle,
    name: str,
    start: float,
    window: float,
    delivered: Callable[[], int],
    total: int,
    *,
    interval: float = 0.0,
) -> list[tuple[float, float]]:
    """Sample ``delivered()`` until it reaches ``total`` or ``window`` seconds passed.

    A measurement window, not a synchronisation wait: it returns the (seconds, count) points;
    it fails the check only if the task fails meanwhile.
    """
    points: list[tuple[float, float]] = [(0.0, 0.0)]
    next_status = start + 1.0
    while True:
        count = delivered()
        now = time.monotonic()
        if count != points[-1][1] or count >= total:
            points.append((now - start, float(count)))
        if count >= total or now - start >= window:
            if count < total:
                # what arrived counts however the reader batches it (a Kafka tail reads 1000
                # at a time, and sampled only after a slow write it is far behind): catch up
                count = _caught_up(delivered, count)
                points.append((time.monotonic() - start, float(count)))
            return points
        if now >= next_status:
            _fail_if_task_failed(w, name)
            next_status = now + 1.0
        if interval:
            time.sleep(interval)  # the sampling period of the external system


def _caught_up(delivered: Callable[[], int], count: int) -> int:
    """``delivered()`` once it stops growing: what had arrived, read to its end (within 1 s)."""
    deadline = time.monotonic() + _CATCH_UP_S
    while time.monotonic() < deadline:
        now = delivered()
        if now == count:
            break
        count = now
    return count


def _sample_slots(budget: float) -> Iterator[int]:
    """Sample numbers: ``SAMPLES`` of them, fewer (not below ``MIN_SAMPLES``) past ``budget``."""
    for number in range(SAMPLES):
        if number >= MIN_SAMPLES and time.monotonic() >= budget:
            return
        yield number


def _sample(
    ctx: CheckContext,
    w: WorkerHandle,
    name: str,
    record_id: int,
    arrived: Callable[[], float | None],
) -> float:
    """Wait for one latency sample; return its arrival time (monotonic)."""
    checked = [time.monotonic()]

    def poll() -> float | None:
        at = arrived()
        if at is None and time.monotonic() - checked[0] > 1.0:
            checked[0] = time.monotonic()
            _fail_if_task_failed(w, name)
        return at

    return ctx.wait_for(
        poll,
        SAMPLE_TIMEOUT_S,
        expected=f"record {record_id} to arrive within {SAMPLE_TIMEOUT_S:g}s to time it",
        actual=lambda: "it did not arrive",
        interval=0.005,
    )


def _fail_if_task_failed(w: WorkerHandle, name: str) -> None:
    status = w.status(name)
    for task in status.get("tasks", []):
        if task.get("state") == "FAILED":
            trace = str(task.get("trace") or "")
            last = [line for line in trace.strip().splitlines() if line.strip()][-1:]
            raise CheckFailed(
                "the connector to keep running while it is measured",
                f"task {task.get('id')} FAILED: {last[0] if last else 'no trace'}",
                details=trace or None,
            )


def _percentile(values: Sequence[float], percent: float) -> float:
    """The nearest-rank percentile of ``values``."""
    ordered = sorted(values)
    rank = max(1, math.ceil(percent / 100 * len(ordered)))
    return ordered[rank - 1]


def _thin(points: Sequence[tuple[float, float]], limit: int = 200) -> list[tuple[float, float]]:
    if len(points) <= limit:
        return list(points)
    step = math.ceil(len(points) / limit)
    kept = list(points[::step])
    if kept[-1] != points[-1]:
        kept.append(points[-1])
    return kept


# ---------------------------------------------------------------------------------------------
# Kafka helpers: a tail on the source's topics and a pre-encoding producer for sinks.


class _Tail:
    """Reads every topic starting with ``prefix`` from the beginning, keeping raw messages."""

    def __init__(self, ctx: CheckContext, prefix: str) -> None:
        self.ctx = ctx
        self.prefix = prefix
        self.messages: list[Any] = []
        self.arrivals: list[float] = []
        self.count_before_burst = 0
        self._assigned: set[str] = set()
        self._next_listing = 0.0
        self._key = _json(is_key=True)
        self._value = _json(is_key=False)
        self._consumer = new_consumer(
            consumer_config(
                ctx.bootstrap_servers,
                overrides={
                    "fetch.wait.max.ms": 10,
                    "enable.partition.eof": False,
                    **ctx.kafka_config,
                },
            )
        )

    def __enter__(self) -> _Tail:
        return self

    def __exit__(self, *exc: object) -> None:
        self._consumer.close()

    def poll(self, timeout: float) -> int:
        """Consume what arrived (waiting up to ``timeout``); return the total message count."""
        from confluent_kafka import OFFSET_BEGINNING, TopicPartition

        now = time.monotonic()
        if now >= self._next_listing:
            self._next_listing = now + 1.0
            new = {
                t for t in list_topics(self.ctx.admin_config) if t.startswith(self.prefix)
            } - self._assigned
            for topic in sorted(new):
                meta = self._consumer.list_topics(topic, timeout=10).topics.get(topic)
                count = len(meta.partitions) if meta is not None and meta.partitions else 1
                self._consumer.incremental_assign(
                    [TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(count)]
                )
                self._assigned.add(topic)
        batch = self._consumer.consume(1000, timeout=timeout)
        at = time.monotonic()
        for msg in batch:
            if msg.error() is None:
                self.messages.append(msg)
                self.arrivals.append(at)
        return len(self.messages)

    def record_id(self, driver: Any, msg: Any) -> Hashable:
        """The id the driver finds in a raw message (decoded with a JsonConverter)."""
        topic = msg.topic()
        key = self._key.to_connect_data(topic, msg.key())
        value = self._value.to_connect_data(topic, msg.value())
        try:
            return driver.record_id(key.value, value.value)  # type: ignore[no-any-return]
        except Exception as exc:  # noqa: BLE001 - any driver error is reported as such
            raise CheckFailed(
                "every emitted record to carry the id the driver wrote",
                f"the driver cannot find an id in {topic}[{msg.partition()}]@{msg.offset()}: {exc}",
            ) from None

    def ids_since(self, driver: Any, base: int) -> list[Hashable]:
        """The ids of the messages from index ``base`` on."""
        return [self.record_id(driver, msg) for msg in self.messages[base:]]

    def arrival_of(self, driver: Any, record_id: int, base: int) -> float | None:
        """When the record ``record_id`` arrived (among messages from ``base`` on), or None."""
        for index in range(base, len(self.messages)):
            if self.record_id(driver, self.messages[index]) == record_id:
                return self.arrivals[index]
        return None


class _Producer:
    """Encodes sink records beforehand (JsonConverter, schemas on) and produces the bytes.

    It keeps one producer, warmed up by the warm-up record, so that latency samples do not pay
    for a new client's connection and metadata requests.
    """

    def __init__(self, ctx: CheckContext, driver: Any, topic: str) -> None:
        self.ctx = ctx
        self.driver = driver
        self.topic = topic
        self._key = _json(is_key=True)
        self._value = _json(is_key=False)
        # One producer for the whole check: a new one takes ~0.5 s for its first record.
        self._producer = new_producer(
            producer_config(ctx.bootstrap_servers, {"linger.ms": 0, **ctx.kafka_config})
        )

    def encode(self, ids: Sequence[int]) -> list[tuple[bytes | None, bytes | None]]:
        """The key and value bytes of records ``ids`` as the sink driver shapes them."""
        records: list[tuple[SchemaAndValue, SchemaAndValue]] = self.ctx.sink_records(
            self.driver, ids
        )
        return [
            (
                self._key.from_connect_data(self.topic, k.schema, k.value),
                self._value.from_connect_data(self.topic, v.schema, v.value),
            )
            for k, v in records
        ]

    def send(self, payload: Sequence[tuple[bytes | None, bytes | None]]) -> None:
        """Produce ``payload`` and wait until every record is acknowledged."""
        producer = self._producer
        errors: list[str] = []

        def on_delivery(err: Any, msg: Any) -> None:
            if err is not None:
                errors.append(str(err))

        for key, value in payload:
            while True:
                try:
                    producer.produce(self.topic, key=key, value=value, on_delivery=on_delivery)
                    break
                except BufferError:
                    producer.poll(0.05)
        remaining = producer.flush(60)
        if remaining or errors:
            raise RuntimeError(
                f"the harness could not produce to {self.topic}: {remaining} unacknowledged, "
                f"errors {errors[:3]}"
            )


def _json(*, is_key: bool) -> JsonConverter:
    converter = JsonConverter()
    converter.configure({"schemas.enable": "true"}, is_key)
    return converter
