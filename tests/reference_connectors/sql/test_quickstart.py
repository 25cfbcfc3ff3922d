"""The README's quickstart: a PostgreSQL table copied into MariaDB by the real ``cdk standalone``.

The README's properties (source: timestamp+incrementing; sink: upsert with auto.create), run by
the CLI as a subprocess against the session's broker, each database a fresh one.
"""

from __future__ import annotations

import decimal
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests._wait import wait_until
from tests.reference_connectors.sql._databases import TestDatabase, make_database

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def postgres(tmp_path: Path) -> Iterator[TestDatabase]:
    yield from make_database("postgresql", tmp_path / "pg")


@pytest.fixture
def mariadb(tmp_path: Path) -> Iterator[TestDatabase]:
    yield from make_database("mariadb", tmp_path / "my")


def _props(path: Path, values: dict[str, str]) -> Path:
    path.write_text("".join(f"{k}={v}\n" for k, v in values.items()), encoding="utf-8")
    return path


@pytest.mark.slow
def test_a_postgresql_table_is_copied_into_mariadb(
    postgres: TestDatabase, mariadb: TestDatabase, kafka_bootstrap: str, tmp_path: Path
) -> None:
    postgres.execute(
        "CREATE TABLE orders (id SERIAL PRIMARY KEY, item TEXT NOT NULL, price NUMERIC(8,2), "
        "placed TIMESTAMP(3) NOT NULL DEFAULT now())",
        "INSERT INTO orders (item, price) VALUES ('tea', 4.20)",
    )
    topic = f"shop{os.getpid()}-"
    worker = _props(
        tmp_path / "worker.properties",
        {
            "bootstrap.servers": kafka_bootstrap,
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "offset.storage.file.filename": str(tmp_path / "offsets.json"),
            "listeners": "http://127.0.0.1:0",
        },
    )
    source = _props(
        tmp_path / "pg-source.properties",
        {
            "name": "pg-source",
            "connector.class": "SqlSource",
            "tasks.max": "1",
            **postgres.config(),
            "mode": "timestamp+incrementing",
            "incrementing.column.name": "id",
            "timestamp.column.name": "placed",
            "table.whitelist": "orders",
            "topic.prefix": topic,
            "poll.interval.ms": "200",
        },
    )
    sink = _props(
        tmp_path / "mariadb-sink.properties",
        {
            "name": "mariadb-sink",
            "connector.class": "SqlSink",
            "tasks.max": "1",
            "topics": topic + "orders",
            **mariadb.config(),
            "table.name.format": "orders",
            "insert.mode": "upsert",
            "pk.mode": "record_value",
            "pk.fields": "id",
            "auto.create": "true",
        },
    )
    cdk = Path(sys.executable).with_name("cdk")
    log = (tmp_path / "standalone.log").open("w")
    proc = subprocess.Popen(
        [str(cdk), "standalone", str(worker), str(source), str(sink)],
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )

    def copied() -> list[tuple[object, ...]]:
        if proc.poll() is not None:
            raise AssertionError((tmp_path / "standalone.log").read_text()[-3000:])
        try:
            return mariadb.rows("SELECT id, item, price FROM orders ORDER BY id")
        except Exception:  # noqa: BLE001 - the sink has not created the table yet
            return []

    try:
        wait_until(lambda: len(copied()) == 1, 90, 0.2, "the first order in MariaDB")
        postgres.execute("INSERT INTO orders (item, price) VALUES ('cake', 3.50)")
        wait_until(lambda: len(copied()) == 2, 60, 0.2, "the second order in MariaDB")
        rows = copied()
        assert rows == [(1, "tea", decimal.Decimal("4.20")), (2, "cake", decimal.Decimal("3.50"))]
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        log.close()
