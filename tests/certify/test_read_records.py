"""What a check reads back from Kafka holds the records a skipping fetch of the broker left out.

The embedded broker sometimes answers a fetch with records that begin past the offset asked for
(``cdk.runtime.util.FetchGaps``); :class:`tests._fetch_skip.SkippingConsumer` makes a real
consumer of the real broker do it on demand.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer

import harness.certify._context as context_module
from reference_connectors.filestream.certify import FileStreamSourceDriver
from tests._fetch_skip import SkippingConsumer, skipping_factory
from tests.certify._support import context_for
from tests.integration._support import make_topic


def _envelope(payload: object) -> bytes:
    return json.dumps({"schema": None, "payload": payload}).encode()


@pytest.mark.parametrize("min_records", [None, 30])
def test_records_a_fetch_skipped_are_read_again(
    tmp_path: Path,
    kafka_bootstrap: str,
    monkeypatch: pytest.MonkeyPatch,
    min_records: int | None,
) -> None:
    topic = make_topic(kafka_bootstrap, partitions=2, prefix="holes")
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    for n in range(30):
        producer.produce(topic, _envelope({"n": n}), _envelope(n), partition=n % 2)
    assert producer.flush(10) == 0
    made: list[SkippingConsumer] = []
    skipping = skipping_factory([(topic, 1, 3, 4)], made)

    def first_skips(config: Mapping[str, Any]) -> Consumer:
        return skipping(config) if not made else Consumer(dict(config))

    monkeypatch.setattr(context_module, "new_consumer", first_skips)
    records = context_for(tmp_path, FileStreamSourceDriver, kafka_bootstrap).read_records(
        topic, min_records=min_records, timeout=10, idle=0.5
    )
    assert made[0].left_out == [(topic, 1, o) for o in range(3, 7)]  # the skip happened
    assert sorted(r.key for r in records) == list(range(30))
    assert [r.offset for r in records if r.partition == 1] == list(range(15))
    assert len(made) == 1  # the read again was a consumer of its own
