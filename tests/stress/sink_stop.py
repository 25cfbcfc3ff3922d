"""How long stopping a worker with 8 sink tasks takes, per ``sink.tasks.leave.mode``.

Each run starts an in-process worker (REST on a free port) with one recording sink of
``tasks.max=8`` on an 8-partition topic, waits until every task holds a partition and every
record is delivered, then times ``EmbeddedWorker.stop()`` (every task stops and commits). It
checks the consumer group's committed offsets afterwards (every record) and, for
``concurrent``, whether a new task that joins the same group gets the partitions (Tansu may
keep a departed leader; see ``cdk/runtime/_leave_order.py``).

    .venv/bin/python -m tests.stress.sink_stop --runs 3
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from cdk.runtime._sink_runner import consumer_group_id
from tests.connectors.recording import read_store
from tests.integration._support import (
    STRING,
    Connect,
    make_topic,
    recording_config,
    unique,
    worker_props,
)
from tests.integration.test_sink_leave import RECORDS_PER_PARTITION, _committed, _opened, _produce

TASKS = 8
#: How long a task that joins after a concurrent stop may take to get every partition.
JOIN_TIMEOUT_S = 30.0


def _wait(predicate: object, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


def run_once(bootstrap: str, mode: str, workdir: Path) -> dict[str, object]:
    store = workdir / "store"
    topic = make_topic(bootstrap, partitions=TASKS)
    _produce(bootstrap, topic, TASKS)
    name = unique("rec")
    config = recording_config(topic, store, tasks_max=TASKS)
    config.update({"key.converter": STRING, "value.converter": STRING})
    worker = Connect(
        worker_props(bootstrap, workdir / "offsets", 0, **{"sink.tasks.leave.mode": mode})
    )
    try:
        worker.rest.create(name, config)

        def settled() -> bool:
            got = read_store(store)
            owners = [p for p in _opened(got.events).values() if p]
            return len(owners) == TASKS and len(got.records) == TASKS * RECORDS_PER_PARTITION

        if not _wait(settled, 120):
            raise RuntimeError(f"the {TASKS} tasks did not get a partition each")
        started = time.monotonic()
        worker.stop()
        took = time.monotonic() - started
    finally:
        worker.stop()
    committed = _committed(bootstrap, consumer_group_id(name), topic, TASKS)
    result: dict[str, object] = {
        "mode": mode,
        "stop_s": round(took, 2),
        "all_committed": committed == [RECORDS_PER_PARTITION] * TASKS,
    }
    # does the group still work? one new task of the same connector name joins it
    again = Connect(worker_props(bootstrap, workdir / "offsets2", 0))
    try:
        again.rest.create(name, {**config, "tasks.max": "1", "store.dir": str(workdir / "s2")})
        everything = {(topic, p) for p in range(TASKS)}
        joined = _wait(
            lambda: everything in _opened(read_store(workdir / "s2").events).values(),
            JOIN_TIMEOUT_S,
        )
        result["rejoin_got_every_partition"] = joined
    finally:
        again.stop()
    return result


@contextlib.contextmanager
def _broker(bootstrap: str | None) -> Iterator[str]:
    if bootstrap:
        yield bootstrap
        return
    from cdk.kafka import EmbeddedKafka

    with EmbeddedKafka() as kafka:
        yield kafka.bootstrap_servers


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per mode (alternating)")
    parser.add_argument("--bootstrap", help="an existing broker (default: an embedded Tansu)")
    args = parser.parse_args(argv)
    times: dict[str, list[float]] = {"sequential": [], "concurrent": []}
    with _broker(args.bootstrap) as bootstrap:
        for number in range(args.runs):
            for mode in (
                ("sequential", "concurrent") if number % 2 == 0 else ("concurrent", "sequential")
            ):
                with tempfile.TemporaryDirectory(prefix="cdk-sinkstop-") as tmp:
                    result = run_once(bootstrap, mode, Path(tmp))
                times[mode].append(float(result["stop_s"]))  # type: ignore[arg-type]
                print(result, flush=True)
    for mode, values in times.items():
        print(
            f"{mode}: stop of a worker with {TASKS} sink tasks, median "
            f"{statistics.median(values):.2f} s over {values}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
