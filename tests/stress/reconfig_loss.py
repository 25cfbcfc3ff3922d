"""Run the source reconfiguration scenario (2 -> 4 streams) many times and count lost records.

The scenario is ``tests/integration/test_lifecycle.py::
test_request_task_reconfiguration_adds_streams_without_loss``: a generator source with
``tasks.max=4`` starts on 2 streams (600 records each, 10 per poll every 10 ms); once 100
records arrived the stream count goes to 4, the connector calls
``context.request_task_reconfiguration()``, the 2 tasks stop (committing their offsets) and 4
new ones resume from the committed offsets. Every key of every stream must be on the topic.

Not part of ``make test``: run it by hand, in batches, e.g.::

    .venv/bin/python -m tests.stress.reconfig_loss --runs 50 --out /tmp/batch1.jsonl
    .venv/bin/python -m tests.stress.reconfig_loss --runs 50 --hog 2 --out /tmp/batch2.jsonl

Each run uses a fresh worker (fresh offsets file), topic and connector on one embedded broker
(or ``--bootstrap``). A run that loses records also records the offsets the worker committed
for each stream (``GET /connectors/{name}/offsets``) and reads the topic again with a fresh
consumer, to tell a record that never reached the broker from a read that missed it. With
``--hog N`` the script runs N busy-loop processes for the whole batch (stopped at the end).
One JSON line per run goes to ``--out``; the summary goes to stdout.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import logging
import multiprocessing
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

from tests.integration._support import (
    Connect,
    Message,
    TopicReader,
    all_keys,
    decode_key,
    generator_config,
    make_topic,
    unique,
    worker_props,
)

STREAMS_BEFORE = 2
STREAMS_AFTER = 4
RECORDS = 600
#: How long a run may take to deliver every record before it counts the missing ones.
DELIVERY_TIMEOUT_S = 30.0


class _Captured(logging.Handler):
    """Keeps the runtime's warnings and errors of one run."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.levelname} {record.name}: {record.getMessage()}")


class _Ring(logging.Handler):
    """Keeps a live reader's librdkafka fetch log lines about its topic."""

    def __init__(self, topic: str, lines: collections.deque[str]) -> None:
        super().__init__(logging.DEBUG)
        self.topic = topic
        self.lines = lines

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if self.topic in text:
            self.lines.append(text)


class _TracedReader(TopicReader):
    """A :class:`TopicReader` whose consumer logs its fetches (librdkafka ``debug=fetch``)."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.topic = topic
        self.messages = []
        self.fetch_log: collections.deque[str] = collections.deque(maxlen=50000)
        logger = logging.getLogger(f"stress.fetch.{topic}")
        logger.propagate = False
        logger.setLevel(logging.DEBUG)
        logger.addHandler(_Ring(topic, self.fetch_log))
        self._consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": unique("reader"),
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "debug": "fetch",
                "logger": logger,
            }
        )
        partitions = self._consumer.list_topics(topic, timeout=10).topics[topic].partitions
        self._consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])

    def around(self, partition: int, offset: int, lines: int = 12) -> list[str]:
        """The fetch log lines of ``partition`` around the first one naming ``offset``."""
        mine = [t for t in self.fetch_log if f"[{partition}]" in t]
        for index, text in enumerate(mine):
            if f"offset {offset}" in text or f"Offset {offset}" in text:
                return mine[max(0, index - lines) : index + lines]
        return mine[-lines:]


def _busy() -> None:  # pragma: no cover - runs in a child process
    while True:
        pass


@contextlib.contextmanager
def _cpu_hogs(count: int) -> Iterator[None]:
    hogs = [multiprocessing.Process(target=_busy, daemon=True) for _ in range(count)]
    for hog in hogs:
        hog.start()
    try:
        yield
    finally:
        for hog in hogs:
            hog.terminate()
        for hog in hogs:
            hog.join(10)


def _wait(predicate: Any, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


def _reread(bootstrap: str, topic: str, expected: int) -> list[Message]:
    """Read the whole topic again with a fresh consumer (no group)."""
    reader = TopicReader(bootstrap, topic)
    try:
        _wait(lambda: reader.poll(0.2) >= expected, 10.0)
        reader.poll(0.5)
        return reader.messages
    finally:
        reader.close()


def _skipped(live: list[Message], again: list[Message], missing: list[str]) -> dict[str, Any]:
    """Where the missing records are on the topic, and what the live reader read around them.

    The broker assigns every record an offset; a live reader that never saw offsets the fresh
    reader finds was served a fetch that skipped them.
    """
    where = {decode_key(m.key): (m.partition, m.offset) for m in again}
    coordinates = sorted(where[k] for k in missing if k in where)
    seen: dict[int, set[int]] = {}
    for m in live:
        seen.setdefault(m.partition, set()).add(m.offset)
    gaps = {}
    for partition, offsets in seen.items():
        top = max(offsets)
        gaps[partition] = sorted(set(range(top + 1)) - offsets)
    return {"missing_at": coordinates, "live_reader_offset_gaps": gaps}


def run_once(bootstrap: str, workdir: Path, trace: bool = False) -> dict[str, Any]:
    """One scenario on a fresh worker; returns what it saw."""
    started = time.monotonic()
    captured = _Captured()
    logging.getLogger("cdk").addHandler(captured)
    topic = make_topic(bootstrap, partitions=2)
    streams = workdir / "streams"
    streams.write_text(str(STREAMS_BEFORE))
    name = unique("gen")
    worker = Connect(worker_props(bootstrap, workdir / "offsets", 0))
    expected = all_keys(STREAMS_AFTER, RECORDS)
    result: dict[str, Any] = {"topic": topic, "connector": name}
    try:
        worker.rest.create(
            name,
            generator_config(
                topic,
                records=RECORDS,
                tasks_max=STREAMS_AFTER,
                batch_size=10,
                poll_interval_ms=10,
                streams_file=streams,
            ),
        )
        worker.rest.wait_state(name, "RUNNING", tasks=STREAMS_BEFORE)
        reader = _TracedReader(bootstrap, topic) if trace else TopicReader(bootstrap, topic)
        try:
            if not _wait(lambda: reader.poll(0.05) >= 100, DELIVERY_TIMEOUT_S):
                raise RuntimeError("the first 100 records did not arrive")
            streams.write_text(str(STREAMS_AFTER))
            worker.rest.wait_state(name, "RUNNING", tasks=STREAMS_AFTER)
            complete = _wait(
                lambda: reader.poll(0.05) >= len(expected) and not expected - reader.keys(),
                DELIVERY_TIMEOUT_S,
            )
            # drain what is in flight (duplicates), then judge
            quiet_since, count = time.monotonic(), reader.poll(0.05)
            while time.monotonic() - quiet_since < 0.3:
                now = reader.poll(0.05)
                if now != count:
                    quiet_since, count = time.monotonic(), now
            keys = reader.keys()
            live = list(reader.messages)
            if isinstance(reader, _TracedReader) and expected - keys:
                gaps = _skipped(live, live, [])["live_reader_offset_gaps"]
                result["fetch_log"] = {
                    p: reader.around(p, offsets[0]) for p, offsets in gaps.items() if offsets
                }
        finally:
            reader.close()
        missing = sorted((expected - keys).elements())
        result.update(
            complete=complete,
            read=sum(keys.values()),
            missing=missing,
            duplicates=sum(n - 1 for n in keys.values() if n > 1),
        )
        if missing:
            r = worker.rest.call("GET", f"/connectors/{name}/offsets", 200)
            result["committed"] = r.json()
            again = _reread(bootstrap, topic, len(expected))
            found = Counter(decode_key(m.key) for m in again)
            result["missing_on_reread"] = sorted((expected - found).elements())
            result.update(_skipped(live, again, missing))
            result["status"] = worker.rest.status(name)
    except Exception as exc:  # noqa: BLE001 - a run that breaks is reported, the batch goes on
        result["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        worker.stop()
        logging.getLogger("cdk").removeHandler(captured)
    result["log"] = captured.lines[-50:]
    result["seconds"] = round(time.monotonic() - started, 2)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--hog", type=int, default=0, help="busy-loop processes to run")
    parser.add_argument("--bootstrap", help="an existing broker (default: an embedded Tansu)")
    parser.add_argument("--out", type=Path, required=True, help="JSON lines, one per run")
    parser.add_argument(
        "--trace-fetch",
        action="store_true",
        help="log the live reader's fetches (librdkafka debug=fetch); kept for runs with gaps",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)

    with contextlib.ExitStack() as stack:
        bootstrap = args.bootstrap
        if bootstrap is None:
            from cdk.kafka import EmbeddedKafka

            bootstrap = stack.enter_context(EmbeddedKafka()).bootstrap_servers
        stack.enter_context(_cpu_hogs(args.hog))
        lost = skipped = errors = 0
        with args.out.open("a") as out:
            for number in range(1, args.runs + 1):
                with tempfile.TemporaryDirectory(prefix="cdk-reconfig-") as tmp:
                    result = run_once(bootstrap, Path(tmp), args.trace_fetch)
                result.update(run=number, hog=args.hog)
                out.write(json.dumps(result) + "\n")
                out.flush()
                lost += bool(result.get("missing_on_reread"))
                skipped += bool(result.get("missing")) and not result.get("missing_on_reread")
                errors += "error" in result
                print(
                    f"run {number}: {result['seconds']} s, read {result.get('read')}, "
                    f"missing {len(result.get('missing', []))} "
                    f"(on re-read {len(result.get('missing_on_reread', []))}), "
                    f"dups {result.get('duplicates')}, {result.get('error', 'ok')}",
                    flush=True,
                )
    print(
        f"{args.runs} runs (hog {args.hog}): {lost} with records missing from the topic, "
        f"{skipped} where only the live reader missed records (a fresh reader found them), "
        f"{errors} errors"
    )
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())
