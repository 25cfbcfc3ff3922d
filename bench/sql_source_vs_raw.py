"""The SQL source (PostgreSQL table → topic) under ``cdk standalone`` against a raw loop.

In one run, on one embedded Tansu broker and the machine's PostgreSQL (``CDK_TEST_POSTGRES_URL``,
default ``postgres@127.0.0.1:5432``):

- kit: ``cdk standalone`` with SqlSource (``mode=incrementing``, JsonConverter with schemas)
  copying a table of N rows into a topic;
- raw: a loop reading the same table through a psycopg server-side cursor (``fetchmany``),
  ``json.dumps`` of the same JsonConverter envelope for each row, and a confluent-kafka
  producer with the worker's source producer settings.

Throughput is the steady rate between 1% and 99% of the records on the topic (counted by a
consumer in another process); each figure is the median of ``--runs`` runs. Run with
``.venv/bin/python bench/sql_source_vs_raw.py [--rows 200000] [--runs 3]``.
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
from filestream_vs_raw import (  # noqa: E402
    HIGH,
    LOW,
    Counter,
    Standalone,
    ready_producer,
)

from cdk.kafka import EmbeddedKafka, create_topics  # noqa: E402

SERVER = os.environ.get("CDK_TEST_POSTGRES_URL") or "postgresql://postgres@127.0.0.1:5432/postgres"
TABLE = "bench_orders"
_EPOCH = dt.datetime(1970, 1, 1)
SCHEMA = {
    "type": "struct",
    "fields": [
        {"type": "int64", "optional": False, "field": "id"},
        {"type": "string", "optional": False, "field": "name"},
        {"type": "int32", "optional": True, "field": "qty"},
        {"type": "double", "optional": True, "field": "price"},
        {
            "type": "int64",
            "optional": True,
            "name": "org.apache.kafka.connect.data.Timestamp",
            "version": 1,
            "field": "created",
        },
    ],
    "optional": False,
    "name": TABLE,
    "version": 1,
}


def _plain(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://")


def make_database(rows: int) -> str:
    """A fresh database with the table of ``rows`` rows; its libpq URL."""
    name = f"cdk_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(_plain(SERVER), autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    url = _plain(SERVER).rsplit("/", 1)[0] + "/" + name
    try:
        _fill(url, rows)
    except BaseException:
        drop_database(url)
        raise
    return url


def _fill(url: str, rows: int) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            f"CREATE TABLE {TABLE} (id BIGINT NOT NULL PRIMARY KEY, name VARCHAR(40) NOT NULL, "
            "qty INTEGER, price DOUBLE PRECISION, created TIMESTAMP(3))"
        )
        conn.execute(
            f"INSERT INTO {TABLE} SELECT i, 'order-' || i, i %% 100, i * 0.25, "
            "timestamp '2026-01-01' + i * interval '1 second' FROM generate_series(1, %s) i",
            (rows,),
        )
        conn.execute(f"ANALYZE {TABLE}")


def drop_database(url: str) -> None:
    name = url.rsplit("/", 1)[1]
    with psycopg.connect(_plain(SERVER), autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def kit_source(
    bootstrap: str, workdir: Path, url: str, n: int, batch: int, profile: str | None = None
) -> dict[str, float]:
    prefix = f"kit-{uuid.uuid4().hex[:6]}-"
    topic = prefix + TABLE
    create_topics(bootstrap, [topic])
    pidfile = workdir / f"pid-{uuid.uuid4().hex[:6]}"
    pidfile.write_text(str(os.getpid()))
    counter = Counter(bootstrap, topic, n, pidfile)
    connector = {
        "name": f"sql-{uuid.uuid4().hex[:6]}",
        "connector.class": "SqlSource",
        "connection.url": url,
        "mode": "incrementing",
        "incrementing.column.name": "id",
        "table.whitelist": TABLE,
        "topic.prefix": prefix,
        "batch.max.rows": str(batch),
        "poll.interval.ms": "1000",
    }
    worker = Standalone(bootstrap, workdir, connector, profile=profile)
    pidfile.write_text(str(worker.proc.pid))
    try:
        worker.wait_running()
        (t1, t99, _), (c1, c99, _) = counter.marks()
    finally:
        cpu = worker.stop()
    return {
        "steady": n * (HIGH - LOW) / max(t99 - t1, 1e-6),
        "us": (c99 - c1) / (n * (HIGH - LOW)) * 1e6,
        "cpu": cpu,
    }


def envelope(row: tuple) -> bytes:
    rid, name, qty, price, created = row
    millis = None if created is None else int((created - _EPOCH).total_seconds() * 1000)
    payload = {"id": rid, "name": name, "qty": qty, "price": price, "created": millis}
    return json.dumps({"schema": SCHEMA, "payload": payload}, separators=(",", ":")).encode()


def raw_source(bootstrap: str, workdir: Path, url: str, n: int, batch: int) -> dict[str, float]:
    from cdk.runtime._source_runner import PRODUCER_DEFAULTS
    from cdk.runtime._worker_config import WorkerConfig

    worker_props = {
        "bootstrap.servers": bootstrap,
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "offset.storage.file.filename": "/nonexistent",
    }
    props = {**PRODUCER_DEFAULTS, **WorkerConfig(worker_props).producer_props()}
    topic = f"raw-{uuid.uuid4().hex[:6]}"
    create_topics(bootstrap, [topic])
    pidfile = workdir / f"pid-{uuid.uuid4().hex[:6]}"
    pidfile.write_text(str(os.getpid()))
    counter = Counter(bootstrap, topic, n, pidfile)
    cpu0 = time.process_time()
    producer = ready_producer(props)
    with psycopg.connect(url) as conn, conn.cursor(name="bench") as cursor:
        cursor.execute(f"SELECT id, name, qty, price, created FROM {TABLE} ORDER BY id")
        while rows := cursor.fetchmany(batch):
            for row in rows:
                value = envelope(row)
                while True:
                    try:
                        producer.produce(topic, value)
                        break
                    except BufferError:
                        producer.poll(0.01)
            producer.poll(0)
    producer.flush(60)
    cpu = time.process_time() - cpu0
    (t1, t99, _), (c1, c99, _) = counter.marks()
    return {
        "steady": n * (HIGH - LOW) / max(t99 - t1, 1e-6),
        "us": (c99 - c1) / (n * (HIGH - LOW)) * 1e6,
        "cpu": cpu,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=1000, help="batch.max.rows / fetchmany")
    parser.add_argument(
        "--profile",
        help="py-spy record the first run's worker into this file (collapsed stacks; needs "
        "py-spy in the venv)",
    )
    _results.add_option(parser, "sql_source_vs_raw")
    args = parser.parse_args()
    results = _results.Results.from_args("sql_source_vs_raw", args)
    print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    url = make_database(args.rows)
    kit: list[dict[str, float]] = []
    raw: list[dict[str, float]] = []
    try:
        with EmbeddedKafka() as kafka, tempfile.TemporaryDirectory() as tmp:
            bootstrap = kafka.bootstrap_servers
            for run in range(args.runs):
                results.run()
                # Alternate which side goes first: the broker keeps every record in memory.
                profile = args.profile if run == 0 else None
                for side in ("raw", "kit") if run % 2 == 0 else ("kit", "raw"):
                    if side == "raw":
                        raw.append(raw_source(bootstrap, Path(tmp), url, args.rows, args.batch))
                    else:
                        kit.append(
                            kit_source(bootstrap, Path(tmp), url, args.rows, args.batch, profile)
                        )
                print(
                    f"run {run + 1} ({'raw' if run % 2 == 0 else 'kit'} first): "
                    f"raw {raw[-1]['steady']:,.0f} rows/s, kit {kit[-1]['steady']:,.0f} rows/s "
                    f"({kit[-1]['steady'] / raw[-1]['steady']:.2f}x); CPU per row 1% -> 99%: "
                    f"raw {raw[-1]['us']:.2f} us, kit {kit[-1]['us']:.2f} us",
                    flush=True,
                )
    finally:
        drop_database(url)
    raw_rate = statistics.median(r["steady"] for r in raw)
    kit_rate = statistics.median(r["steady"] for r in kit)
    ratios = [k["steady"] / r["steady"] for k, r in zip(kit, raw, strict=True)]
    cpu_ratios = [k["us"] / r["us"] for k, r in zip(kit, raw, strict=True)]
    print(
        f"\nPostgreSQL table of {args.rows:,} rows -> topic, batch {args.batch}, "
        f"medians of {args.runs}, load average after: {os.getloadavg()[0]:.2f}"
    )
    print(f"{'':28}{'rows/s':>12}{'CPU us/row':>12}")
    print(
        f"{'raw (cursor + json.dumps)':28}{raw_rate:>12,.0f}"
        f"{statistics.median(r['us'] for r in raw):>12.2f}"
    )
    print(
        f"{'kit (cdk standalone)':28}{kit_rate:>12,.0f}"
        f"{statistics.median(r['us'] for r in kit):>12.2f}"
    )
    print(
        f"ratio kit/raw: {statistics.median(ratios):.2f} (aim: at least 0.7); per run: "
        + ", ".join(f"{r:.2f}" for r in ratios)
    )
    print(
        f"CPU per row kit/raw: {statistics.median(cpu_ratios):.2f}; per run: "
        + ", ".join(f"{r:.2f}" for r in cpu_ratios)
    )
    results.figure(
        "sql_source.steady",
        "SQL source (PostgreSQL) / raw loop",
        "rows/s",
        [k["steady"] for k in kit],
        baseline=[r["steady"] for r in raw],
        baseline_name="psycopg cursor + json.dumps + producer",
        kit_name="SqlSource under cdk standalone",
        aim=_results.ratio_aim(">=", 0.7),
        note=f"{args.rows:,} rows, batch {args.batch}; steady rate, 1% -> 99% of the records",
    )
    results.figure(
        "sql_source.cpu",
        "SQL source CPU per row / raw loop's, 1% -> 99%",
        "us/row",
        [k["us"] for k in kit],
        baseline=[r["us"] for r in raw],
        baseline_name="raw loop",
        kit_name="SqlSource",
        higher_is_better=False,
    )
    results.write()


if __name__ == "__main__":
    main()
