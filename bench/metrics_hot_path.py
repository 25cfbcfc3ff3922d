"""The metrics' own cost per record, without Kafka: the calls the task runners make per batch.

A source task's loop makes, per ``poll()`` batch: two clock reads, ``record_poll``,
``record_batch`` and (after the producer's delivery reports) ``record_write``; nothing per
record (an ack group's size is the difference of two batch indexes). A sink task's loop makes,
per batch: ``record_read``, the active-count update, two clock reads around ``put``,
``record_put`` and ``record_batch``.
This times exactly those calls and divides by the batch size, so the figure can be set against
the worker's CPU per record that ``worker_throughput.py`` reports (tens of microseconds here).
Noise-free where the end-to-end comparison (``metrics_overhead.py``) is not.

    .venv/bin/python bench/metrics_hot_path.py [--batch 500]
"""

from __future__ import annotations

import argparse
import sys
import time
import timeit
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from cdk.runtime._status import ConnectorTaskId  # noqa: E402
from cdk.runtime.metrics import TaskMetrics  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--batch", type=int, default=500, help="records per batch")
    args = parser.parse_args()
    batch = args.batch
    clock = time.monotonic
    source = TaskMetrics(ConnectorTaskId("bench", 0), "source")
    sink = TaskMetrics(ConnectorTaskId("bench", 0), "sink")
    assert source.source is not None
    assert sink.sink is not None
    src, snk = source.source, sink.sink

    def source_batch() -> None:
        started = clock()
        now = clock()
        src.record_poll(batch, now - started, now)
        source.task.record_batch(batch, now)
        src.record_write(batch, batch, clock())

    def sink_batch() -> None:
        snk.record_read(batch, clock())
        snk.active.record(0, clock())
        started = clock()
        now = clock()
        snk.record_put(batch, now - started, now)
        sink.task.record_batch(batch, now)

    print(f"Metrics calls per batch of {batch} records (median of 5 timings)")
    print()
    print("| task | us per batch | ns per record |")
    print("|---|---:|---:|")
    for name, fn in (("source", source_batch), ("sink", sink_batch)):
        per_batch = sorted(timeit.repeat(fn, number=2000, repeat=5))[2] / 2000
        print(f"| {name} | {per_batch * 1e6:.2f} | {per_batch * 1e9 / batch:.1f} |")


if __name__ == "__main__":
    main()
