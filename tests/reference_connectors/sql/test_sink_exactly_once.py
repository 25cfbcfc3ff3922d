"""Exactly-once into the database across ``kill -9`` of ``cdk standalone``.

The worker commits consumer offsets only every ``offset.flush.interval.ms``, set far beyond the
test, so Kafka's commit never happens: the worker is killed after the sink wrote the records
(and their offsets, in the same transaction) and before Kafka's commit. The restarted worker's
consumer group has no committed offset and would start from the beginning; the sink seeds it
from the offsets in the database instead. The sink runs with ``insert.mode=insert`` and
``pk.mode=none``, so a record written twice would be a second row: the table must hold each
record exactly once.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka import TopicPartition as KafkaTopicPartition

from cdk import Schema
from cdk.converters import JsonConverter
from harness import default_sink_value, default_sink_value_schema
from tests._wait import wait_until
from tests.integration._support import (
    cdk_command,
    free_port,
    make_topic,
    worker_props,
    write_properties,
)
from tests.reference_connectors.sql._databases import TestDatabase, make_database

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

_SCHEMA = default_sink_value_schema()


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[TestDatabase]:
    yield from make_database(request.param, tmp_path)


def _produce(bootstrap: str, topic: str, ids: range) -> None:
    converter = JsonConverter()
    converter.configure({"schemas.enable": "true"}, False)
    producer = Producer({"bootstrap.servers": bootstrap})
    for i in ids:
        value = converter.from_connect_data(topic, _SCHEMA, default_sink_value(i, _SCHEMA))
        key = converter.from_connect_data(topic, Schema.INT64_SCHEMA, i)
        producer.produce(topic, value=value, key=key)
    assert producer.flush(30) == 0


def _committed(bootstrap: str, group: str, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        (tp,) = consumer.committed([KafkaTopicPartition(topic, 0)], timeout=30)
        return int(tp.offset)
    finally:
        consumer.close()


def _count(db: TestDatabase, table: str) -> tuple[int, int]:
    """(rows, distinct ids) of the sink's table; (0, 0) before it exists."""
    try:
        ((total, distinct),) = db.rows(
            f"SELECT COUNT(*), COUNT(DISTINCT id) FROM {db.quote(table)}"
        )
    except Exception:  # noqa: BLE001 - the table is created by the sink's first write
        return (0, 0)
    return int(total), int(distinct)


class _Worker:
    """A ``cdk standalone`` process (stopped by the test that starts it)."""

    def __init__(self, tmp_path: Path, worker: Path, connector: Path, run: int) -> None:
        self.log = tmp_path / f"worker-{run}.log"
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(
                cdk_command("standalone", str(worker), str(connector)),
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
            )

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.kill()


def test_kill_between_the_database_commit_and_kafkas_leaves_no_duplicate(
    kafka_bootstrap: str, database: TestDatabase, tmp_path: Path
) -> None:
    _kill_and_resume(kafka_bootstrap, database, tmp_path, routed=False)


def test_offsets_are_stored_by_the_topic_read_when_a_regex_router_renames_it(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    # KIP-793: the table is named after the routed topic, the stored offsets after the one
    # the consumer reads; keyed by the routed one, the restarted sink would find none and
    # write every record again
    for database in make_database("sqlite", tmp_path):
        _kill_and_resume(kafka_bootstrap, database, tmp_path, routed=True)


def _kill_and_resume(
    kafka_bootstrap: str, database: TestDatabase, tmp_path: Path, *, routed: bool
) -> None:
    topic = make_topic(kafka_bootstrap, prefix="sql-eos")
    name = f"eos-{topic[-10:]}"
    worker = write_properties(
        tmp_path / "worker.properties",
        worker_props(
            kafka_bootstrap,
            tmp_path / "offsets",
            free_port(),
            **{"offset.flush.interval.ms": "3600000"},  # Kafka's commit never comes
        ),
    )
    connector = write_properties(
        tmp_path / "sink.properties",
        {
            "name": name,
            "connector.class": "SqlSink",
            "tasks.max": "1",
            "topics": topic,
            **database.config(),
            "auto.create": "true",
            "insert.mode": "insert",
            "pk.mode": "none",
            "batch.size": "50",
            **(
                {
                    "transforms": "route",
                    "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
                    "transforms.route.regex": "(.*)",
                    "transforms.route.replacement": "$1_routed",
                }
                if routed
                else {}
            ),
        },
    )
    table = f"{topic}_routed" if routed else topic
    _produce(kafka_bootstrap, topic, range(300))
    first = _Worker(tmp_path, worker, connector, 1)
    try:
        wait_until(
            lambda: _count(database, table)[0] >= 300,
            timeout=90,
            message=lambda: f"300 rows; have {_count(database, table)}; log: {first.tail()}",
        )
        first.kill()  # after the database commit, before Kafka's
    finally:
        first.stop()
    assert _committed(kafka_bootstrap, f"connect-{name}", topic) < 0  # nothing committed
    assert _count(database, table) == (300, 300)

    _produce(kafka_bootstrap, topic, range(300, 400))
    second = _Worker(tmp_path, worker, connector, 2)
    try:
        wait_until(
            lambda: _count(database, table)[1] >= 400,
            timeout=90,
            message=lambda: f"400 ids; have {_count(database, table)}; log: {second.tail()}",
        )
        assert "Resuming from the offsets stored in the database" in second.tail() or (
            "Resuming" in second.log.read_text(errors="replace")
        )
    finally:
        second.stop()
    assert second.proc.returncode is not None
    assert _count(database, table) == (400, 400)  # no duplicate, nothing lost
