"""Fetches that skip records: FetchGaps' decisions, and KafkaBasedLog on the embedded broker.

The broker's skips cannot be had on demand (``tests/stress/fetch_gap.py`` catches them under
load), so the log's consumer is moved past the next record it would read, as such a fetch does;
the records it passed are on the broker, and a re-read must find them. Transactions give the
genuine holes: each commit marker holds an offset no consumer is given.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator

import pytest
from confluent_kafka import Producer, TopicPartition

from cdk.kafka import create_topics
from cdk.runtime.util import FetchGaps, KafkaBasedLog
from cdk.runtime.util._kafka_log import LogRecord

LOGGER = "cdk.runtime.fetchgaps"


def _messages(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER and r.levelno == level]


# -- the decisions --------------------------------------------------------------------------------
def test_a_jump_is_read_again_and_a_heal_is_counted_and_warned_once_per_partition(
    caplog: pytest.LogCaptureFixture,
) -> None:
    heals: list[int] = []
    gaps = FetchGaps("reader", on_heal=lambda: heals.append(1))
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    key = ("t", 0)
    assert gaps.check(key, 10, 10)  # in order
    assert not gaps.rereading
    assert not gaps.check(key, 10, 25)  # a jump: read again from 10
    assert gaps.rereading
    assert gaps.check(key, 10, 10)  # the re-read began where expected: healed
    assert not gaps.rereading
    assert (gaps.healed, len(heals)) == (1, 1)
    assert not gaps.check(key, 40, 45)
    assert gaps.check(key, 40, 40)  # a second heal of the same partition
    assert gaps.healed == 2
    warnings = _messages(caplog, logging.WARNING)
    assert warnings == [
        "reader the broker skipped records of t-0: a fetch from offset 10 returned records from "
        "offset 25; read again from 10, they came (15 offsets). Later gaps of this partition "
        "are healed the same way and logged at DEBUG"
    ]
    assert not gaps.check(("t", 1), 0, 3)  # another partition warns again
    assert gaps.check(("t", 1), 0, 0)
    assert len(_messages(caplog, logging.WARNING)) == 2


def test_a_gap_the_re_read_confirms_is_taken_once_and_not_counted() -> None:
    gaps = FetchGaps("reader")
    key = ("t", 0)
    assert not gaps.check(key, 5, 6)
    assert gaps.check(key, 5, 6)  # the re-read began past 5 again: offsets 5 are empty
    assert not gaps.rereading
    assert gaps.healed == 0
    assert not gaps.check(key, 11, 12)  # the next hole is read again once more: no loop
    assert gaps.check(key, 11, 12)
    assert (gaps.healed, gaps.confirmed) == (0, 2)


def test_a_reader_that_moved_drops_its_re_reads() -> None:
    gaps = FetchGaps("reader")
    assert not gaps.check(("t", 0), 5, 9)
    assert not gaps.check(("t", 1), 5, 9)
    gaps.forget([("t", 0)])
    assert gaps.rereading  # partition 1 still
    # a rewind of partition 1 to 2 (the expected offset changed): its re-read is moot
    assert gaps.check(("t", 1), 2, 2)
    assert gaps.healed == 0
    assert not gaps.rereading
    assert not gaps.check(("t", 0), 5, 9)
    gaps.forget()
    assert not gaps.rereading
    assert gaps.check(("t", 0), 7, 3)  # behind the expected offset: the reader moved back


# -- KafkaBasedLog on the embedded broker ---------------------------------------------------------
class _Log:
    """A KafkaBasedLog that keeps what it read: (partition, offset, value)."""

    def __init__(
        self, bootstrap: str, topic: str, *, create: bool = True, transactional: bool = False
    ) -> None:
        self.read: list[tuple[int, int, bytes | None]] = []
        self.log = KafkaBasedLog(
            topic,
            bootstrap,
            self._on_record,
            replication_factor=1,
            purpose="config storage",
            timeout_s=15,
            create=create,
            transactional_writes=transactional,
        )

    def _on_record(self, record: LogRecord) -> None:
        _key, value, partition, offset = record
        self.read.append((partition, offset, value))


@pytest.fixture
def topic(kafka_bootstrap: str) -> str:
    name = f"log-{uuid.uuid4().hex[:10]}"
    create_topics(kafka_bootstrap, [name], partitions=1, config={"cleanup.policy": "compact"})
    return name


@pytest.fixture
def reader(kafka_bootstrap: str, topic: str, request: pytest.FixtureRequest) -> Iterator[_Log]:
    """The log; parametrized indirectly, whether it is told its topic is written in transactions."""
    log = _Log(kafka_bootstrap, topic, create=False, transactional=getattr(request, "param", False))
    yield log
    log.log.stop()


def _produce(bootstrap: str, topic: str, values: range) -> None:
    # One record per batch: Tansu's ListOffsets answers the base offset of the last batch + 1
    # as the end of a partition, which read_to_end takes as the end.
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for n in values:
        producer.produce(topic, str(n).encode(), f"k{n}".encode())
        assert producer.flush(10) == 0


@pytest.mark.parametrize("reader", [False, True], ids=["plain", "transactional"], indirect=True)
def test_the_log_reads_again_what_a_fetch_skipped(
    kafka_bootstrap: str, topic: str, reader: _Log, caplog: pytest.LogCaptureFixture
) -> None:
    _produce(kafka_bootstrap, topic, range(5))
    reader.log.start()
    assert [o for _p, o, _v in reader.read] == list(range(5))
    _produce(kafka_bootstrap, topic, range(5, 20))
    # A fetch that begins past the next record (offset 5): the consumer is moved to offset 12,
    # as the broker's answer moves it; offsets 5-11 are on the broker.
    consumer = reader.log._consumer
    consumer.seek(TopicPartition(topic, 0, 12))
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    reader.log.read_to_end()
    assert reader.read == [(0, o, str(o).encode()) for o in range(20)]
    assert reader.log.healed_gaps == 1
    warnings = _messages(caplog, logging.WARNING)
    assert len(warnings) == 1
    assert f"{topic}-0: a fetch from offset 5 returned records from offset 12" in warnings[0]
    assert "KafkaBasedLog" in warnings[0]


@pytest.mark.parametrize("reader", [False, True], ids=["plain", "transactional"], indirect=True)
def test_the_log_takes_transaction_markers_after_one_re_read_each(
    kafka_bootstrap: str, topic: str, reader: _Log, caplog: pytest.LogCaptureFixture
) -> None:
    """Told that its topic is written in transactions, the log finds the markers in the raw
    batches and reads none of them again."""
    producer = Producer({"bootstrap.servers": kafka_bootstrap, "transactional.id": f"tx-{topic}"})
    producer.init_transactions(10)

    def transaction(first: int) -> None:
        producer.begin_transaction()
        for n in range(first, first + 4):
            producer.produce(topic, str(n).encode(), f"k{n}".encode())
        producer.commit_transaction(10)

    transaction(0)
    transaction(4)
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    reader.log.start()
    # records at 0-3 and 5-8; the commit markers hold 4 and 9
    assert [(o, v) for _p, o, v in reader.read] == [
        (o, str(n).encode()) for n, o in enumerate([0, 1, 2, 3, 5, 6, 7, 8])
    ]
    transaction(8)
    transaction(12)
    reader.log.read_to_end()  # the marker at 9 is followed now; 14 has its marker at 15
    assert [o for _p, o, _v in reader.read] == [o for o in range(19) if o % 5 != 4]
    assert [v for _p, _o, v in reader.read] == [str(n).encode() for n in range(16)]
    assert reader.log.healed_gaps == 0
    assert _messages(caplog, logging.WARNING) == []
    rereads = [m for m in _messages(caplog, logging.DEBUG) if "reading again" in m]
    if reader.log._transactional:
        assert rereads == []
    else:
        assert len(rereads) == 3, rereads  # 4, 9 and 14: once each
