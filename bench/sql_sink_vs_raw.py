"""The SQL sink (topic → PostgreSQL table, upsert) under ``cdk standalone`` against a raw loop.

In one run, on one embedded Tansu broker and the machine's PostgreSQL (``CDK_TEST_POSTGRES_URL``,
default ``postgres@127.0.0.1:5432``), a topic of N JSON-envelope records (JsonConverter with
schemas: an INT64 key, a struct value of id, name, qty, price and a Timestamp) is written to a
table of a fresh database:

- kit: ``cdk standalone`` with SqlSink (``insert.mode=upsert``, ``pk.mode=record_value`` on
  ``id``, ``auto.create``), its offsets in the database (exactly-once);
- raw: a confluent-kafka consumer with the worker's sink consumer settings, ``json.loads`` of
  each value, and a psycopg ``executemany`` of ``INSERT ... ON CONFLICT (id) DO UPDATE`` per
  consumed batch (``batch.size`` rows at most), committed per batch.

Throughput is the steady rate between 1% and 99% of the rows committed: for the kit, read from
its offsets table (``__connect_offsets``) every 20 ms; for the raw loop, timed at its commits.
Each figure is the median of ``--runs`` runs. Run with
``.venv/bin/python bench/sql_sink_vs_raw.py [--records 200000] [--runs 3] [--profile out.txt]``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
for path in (REPO_ROOT, REPO_ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import _results  # noqa: E402  (bench/, first on sys.path: the page's results)
import psycopg  # noqa: E402
from confluent_kafka import Consumer, Producer  # noqa: E402
from filestream_vs_raw import HIGH, LOW, MAX_POLL_RECORDS, Standalone, cpu_seconds  # noqa: E402

from cdk.kafka import EmbeddedKafka, create_topics  # noqa: E402

SERVER = os.environ.get("CDK_TEST_POSTGRES_URL") or "postgresql://postgres@127.0.0.1:5432/postgres"
_UTC = dt.timezone.utc
_TIMESTAMP = "org.apache.kafka.connect.data.Timestamp"
KEY_SCHEMA = {"type": "int64", "optional": False}
VALUE_SCHEMA = {
    "type": "struct",
    "fields": [
        {"type": "int64", "optional": False, "field": "id"},
        {"type": "string", "optional": False, "field": "name"},
        {"type": "int32", "optional": True, "field": "qty"},
        {"type": "double", "optional": True, "field": "price"},
        {"type": "int64", "optional": True, "name": _TIMESTAMP, "version": 1, "field": "created"},
    ],
    "optional": False,
    "name": "orders",
}
_DDL = (
    "(id BIGINT NOT NULL PRIMARY KEY, name TEXT NOT NULL, qty INTEGER, "
    "price DOUBLE PRECISION, created TIMESTAMP)"
)
_UPSERT = (
    "INSERT INTO {table} (id, name, qty, price, created) VALUES (%s, %s, %s, %s, %s) "
    "ON CONFLICT (id) DO UPDATE SET name = excluded.name, qty = excluded.qty, "
    "price = excluded.price, created = excluded.created"
)
BATCH_SIZE = 3000  # the sink's batch.size default


def _plain(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://")


def make_database() -> str:
    name = f"cdk_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(_plain(SERVER), autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    return _plain(SERVER).rsplit("/", 1)[0] + "/" + name


def drop_database(url: str) -> None:
    name = url.rsplit("/", 1)[1]
    with psycopg.connect(_plain(SERVER), autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def produce(bootstrap: str, topic: str, n: int) -> None:
    base = int(dt.datetime(2026, 1, 1, tzinfo=_UTC).timestamp() * 1000)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20})
    for i in range(n):
        payload = {
            "id": i,
            "name": f"order-{i}",
            "qty": i % 100,
            "price": i * 0.25,
            "created": base + i * 1000,
        }
        key = json.dumps({"schema": KEY_SCHEMA, "payload": i}, separators=(",", ":"))
        value = json.dumps({"schema": VALUE_SCHEMA, "payload": payload}, separators=(",", ":"))
        while True:
            try:
                producer.produce(topic, value.encode(), key.encode())
                break
            except BufferError:
                producer.poll(0.05)
    producer.flush(60)


def _commits(url: str) -> int:
    """Transactions committed in the database so far (PostgreSQL's statistics)."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        row = conn.execute(
            "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
        ).fetchone()
    return int(row[0]) if row else 0


def _rate(times: list[float], n: int) -> float:
    t1, t99 = times[0], times[1]
    return n * (HIGH - LOW) / (t99 - t1)


def _steady_us(cpus: list[float], n: int) -> float:
    """CPU microseconds per record between the 1% and 99% marks."""
    return (cpus[1] - cpus[0]) / (n * (HIGH - LOW)) * 1e6


def kit_sink(
    bootstrap: str, workdir: Path, url: str, topic: str, n: int, profile: str | None
) -> dict[str, float]:
    name = f"sink-{uuid.uuid4().hex[:6]}"
    table = f"kit_{uuid.uuid4().hex[:6]}"
    connector = {
        "name": name,
        "connector.class": "SqlSink",
        "connection.url": url,
        "topics": topic,
        "table.name.format": table,
        "insert.mode": "upsert",
        "pk.mode": "record_value",
        "pk.fields": "id",
        "auto.create": "true",
        "batch.size": str(BATCH_SIZE),
    }
    marks = [max(int(n * LOW), 1), int(n * HIGH), n]
    times: list[float] = []
    cpus: list[float] = []
    commits = _commits(url)
    worker = Standalone(bootstrap, workdir, connector, profile=profile)
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            deadline = time.monotonic() + 600
            while len(times) < len(marks) and time.monotonic() < deadline:
                if worker.proc.poll() is not None:
                    raise RuntimeError(f"cdk standalone exited: see {worker.log.name}")
                try:
                    row = conn.execute(
                        'SELECT COALESCE(SUM("offset"), 0) FROM __connect_offsets '
                        "WHERE connector = %s",
                        (name,),
                    ).fetchone()
                    done = int(row[0]) if row else 0
                except psycopg.errors.UndefinedTable:
                    done = 0
                now = time.time()
                while len(times) < len(marks) and done >= marks[len(times)]:
                    times.append(now)
                    cpus.append(cpu_seconds(worker.proc.pid))
                time.sleep(0.02)
    finally:
        cpu = worker.stop()
    if len(times) < len(marks):
        raise RuntimeError(f"the sink did not write {n} rows: see {worker.log.name}")
    with psycopg.connect(url) as conn:
        row = conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()
        if row is None or row[0] != n:
            raise RuntimeError(f"{table} has {row} rows, expected {n}")
    return {
        "steady": _rate(times, n),
        "cpu": cpu,
        "us": _steady_us(cpus, n),
        "commits": _commits(url) - commits,
    }


def raw_sink(bootstrap: str, url: str, topic: str, n: int) -> dict[str, float]:
    from cdk.runtime._sink_runner import CONSUMER_DEFAULTS
    from cdk.runtime._worker_config import WorkerConfig

    worker_props = {
        "bootstrap.servers": bootstrap,
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "offset.storage.file.filename": "/nonexistent",
    }
    group = f"raw-{uuid.uuid4().hex}"
    props = {**CONSUMER_DEFAULTS, **WorkerConfig(worker_props).consumer_props(group)}
    table = f"raw_{uuid.uuid4().hex[:6]}"
    sql = _UPSERT.format(table=table)
    marks = [max(int(n * LOW), 1), int(n * HIGH), n]
    times: list[float] = []
    cpus: list[float] = []
    commits = _commits(url)
    cpu0 = time.process_time()
    loads = json.loads
    fromtimestamp = dt.datetime.fromtimestamp
    with psycopg.connect(url) as conn:
        conn.execute(f"CREATE TABLE {table} {_DDL}")
        conn.commit()
        consumer = Consumer(props)
        consumer.subscribe([topic])
        done = 0
        try:
            with conn.cursor() as cursor:
                while done < n:
                    rows = []
                    for msg in consumer.consume(MAX_POLL_RECORDS, 0.1):
                        if msg.error() is None:
                            p = loads(msg.value())["payload"]  # type: ignore[arg-type]
                            created = p["created"]
                            if created is not None:
                                created = fromtimestamp(created / 1000, _UTC).replace(tzinfo=None)
                            rows.append((p["id"], p["name"], p["qty"], p["price"], created))
                    if not rows:
                        continue
                    for start in range(0, len(rows), BATCH_SIZE):
                        cursor.executemany(sql, rows[start : start + BATCH_SIZE])
                    conn.commit()
                    done += len(rows)
                    now = time.time()
                    while len(times) < len(marks) and done >= marks[len(times)]:
                        times.append(now)
                        cpus.append(time.process_time())
        finally:
            consumer.close()
    cpu = time.process_time() - cpu0
    return {
        "steady": _rate(times, n),
        "cpu": cpu,
        "us": _steady_us(cpus, n),
        "commits": _commits(url) - commits,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--profile", help="py-spy raw stacks of the last kit run to this file")
    _results.add_option(parser, "sql_sink_vs_raw")
    args = parser.parse_args()
    page = _results.Results.from_args("sql_sink_vs_raw", args)
    url = make_database()
    kit: list[dict[str, float]] = []
    raw: list[dict[str, float]] = []
    try:
        with EmbeddedKafka() as kafka, tempfile.TemporaryDirectory() as tmp:
            bootstrap = kafka.bootstrap_servers
            topic = f"orders-{uuid.uuid4().hex[:6]}"
            create_topics(bootstrap, [topic])
            produce(bootstrap, topic, args.records)
            for run in range(args.runs):
                page.run()
                last = run == args.runs - 1
                profile = args.profile if last else None
                # Alternate which side goes first (as the other benches do).
                for side in ("raw", "kit") if run % 2 == 0 else ("kit", "raw"):
                    if side == "raw":
                        raw.append(raw_sink(bootstrap, url, topic, args.records))
                    else:
                        kit.append(
                            kit_sink(bootstrap, Path(tmp), url, topic, args.records, profile)
                        )
                print(
                    f"run {run + 1}: raw {raw[-1]['steady']:,.0f} rows/s "
                    f"({raw[-1]['commits']:.0f} transactions, {raw[-1]['us']:.1f} us CPU/row), "
                    f"kit {kit[-1]['steady']:,.0f} rows/s ({kit[-1]['commits']:.0f} transactions, "
                    f"{kit[-1]['us']:.1f} us CPU/row)",
                    flush=True,
                )
    finally:
        drop_database(url)
    raw_rate = statistics.median(r["steady"] for r in raw)
    kit_rate = statistics.median(r["steady"] for r in kit)
    print(f"\nTopic of {args.records:,} records -> PostgreSQL upsert, medians of {args.runs}")
    print(f"{'':36}{'rows/s':>12}")
    print(f"{'raw (consume + json.loads + upsert)':36}{raw_rate:>12,.0f}")
    print(f"{'kit (cdk standalone, SqlSink)':36}{kit_rate:>12,.0f}")
    print(f"ratio kit/raw: {kit_rate / raw_rate:.2f} (aim: at least 0.7)")
    ratios = ", ".join(f"{k['steady'] / r['steady']:.2f}" for k, r in zip(kit, raw, strict=True))
    print(f"per-run ratios: {ratios}")
    kit_cpu = statistics.median(r["cpu"] for r in kit) / args.records * 1e6
    raw_cpu = statistics.median(r["cpu"] for r in raw) / args.records * 1e6
    print(
        f"CPU per record, whole run: kit {kit_cpu:.1f} us (the worker process, start-up, "
        f"imports and group join included), raw {raw_cpu:.1f} us (the loop)"
    )
    kit_us = statistics.median(r["us"] for r in kit)
    raw_us = statistics.median(r["us"] for r in raw)
    cpu_ratios = ", ".join(f"{k['us'] / r['us']:.2f}" for k, r in zip(kit, raw, strict=True))
    print(
        f"CPU per record, 1% -> 99%: kit {kit_us:.1f} us, raw {raw_us:.1f} us, "
        f"kit/raw {statistics.median(k['us'] / r['us'] for k, r in zip(kit, raw, strict=True)):.2f}"
        f" (aim: at most 1.3; per run {cpu_ratios}); load average {os.getloadavg()[0]:.2f}"
    )
    page.figure(
        "sql_sink.cpu",
        "SQL sink CPU per record / raw loop's, 1% -> 99%",
        "us/record",
        [k["us"] for k in kit],
        baseline=[r["us"] for r in raw],
        baseline_name="consume + json.loads + upsert loop",
        kit_name="SqlSink under cdk standalone",
        aim=_results.ratio_aim("<=", 1.3),
        higher_is_better=False,
        note=f"topic of {args.records:,} records -> PostgreSQL upsert",
    )
    page.figure(
        "sql_sink.steady",
        "SQL sink (PostgreSQL) / raw loop",
        "rows/s",
        [k["steady"] for k in kit],
        baseline=[r["steady"] for r in raw],
        baseline_name="consume + json.loads + upsert loop",
        kit_name="SqlSink under cdk standalone",
        aim=_results.ratio_aim(">=", 0.7),
    )
    page.write()


if __name__ == "__main__":
    main()
