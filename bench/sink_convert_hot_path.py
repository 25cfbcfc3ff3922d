"""The sink task runner's per-record step, timed alone: this checkout against an earlier commit.

The sink runner's loop turns each batch the consumer returns into ``SinkRecord`` objects
(``WorkerSinkTask._convert_messages``: per record, the checks on its offset, the converters,
the record itself). End to end (``worker_throughput.py``, ``metrics_overhead.py``) a change of a
few hundred nanoseconds per record drowns in the noise of a shared machine; this times that step
alone, on real confluent-kafka messages read once from an embedded broker: ``--records``
records of a 4-field JSON envelope (about 350 bytes, a header), in batches of 500 (the worker's
``max.poll.records``) over ``--partitions`` partitions, as the consumer hands them out, through
JsonConverter (or ``--values bytes``: ByteArrayConverter, where the runner's own steps weigh
most).

It exports ``--base-rev`` with ``git archive`` and runs this script's ``--child`` mode in a fresh
interpreter with each tree's ``cdk`` first on the path, alternating (base, this, this, base,
...), ``--runs`` times each; a child prints the best of 7 timings of the whole set in
nanoseconds per record, timed in the thread's CPU time (``time.thread_time``: what other
processes do to the wall clock is left out, not what they do to the caches). The table has the
medians per tree and the change.

    .venv/bin/python bench/sink_convert_hot_path.py --base-rev ad68885 [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]

BATCH = 500
REPEATS = 7
VALUE = (
    b'{"schema":{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"},'
    b'{"type":"string","optional":true,"field":"name"},{"type":"double","optional":false,'
    b'"field":"score"},{"type":"boolean","optional":false,"field":"ok"}],"optional":false},'
    b'"payload":{"id":%d,"name":"name-%d","score":1.5,"ok":true}}'
)


def child(bootstrap: str, topic: str, records: int, partitions: int, values: str) -> None:
    """Read the topic's messages, then time the runner's convert step on them."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    from cdk.converters import (
        ByteArrayConverter,
        JsonConverter,
        SimpleHeaderConverter,
        StringConverter,
    )
    from cdk.runtime._sink_runner import WorkerSinkTask
    from cdk.runtime._status import ConnectorTaskId, StatusStore, TargetState
    from cdk.runtime.errors import ErrorHandlingConfig, RetryWithToleranceOperator
    from cdk.transforms import TransformationChain

    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"bench-{uuid.uuid4().hex[:8]}"}
    )
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
    batches: list[list[Any]] = []
    got = 0
    deadline = time.monotonic() + 120
    while got < records and time.monotonic() < deadline:
        batch = [m for m in consumer.consume(BATCH, 1.0) if m.error() is None]
        if batch:
            batches.append(batch)
            got += len(batch)
    consumer.close()
    if got < records:
        raise SystemExit(f"read {got} of {records} records")

    key = StringConverter()
    value = JsonConverter() if values == "json" else ByteArrayConverter()
    key.configure({}, True)
    value.configure({}, False)
    runner = WorkerSinkTask(
        ConnectorTaskId("bench", 0),
        None,  # type: ignore[arg-type]  # the task is never started
        {"topics": topic},
        worker_id="bench:0",
        status_store=StatusStore(),
        target=TargetState.STARTED,
        key_converter=key,
        value_converter=value,
        header_converter=SimpleHeaderConverter(),
        transformation_chain=TransformationChain.from_config({}),
        operator=RetryWithToleranceOperator(ErrorHandlingConfig.from_props({})),
        consumer_config={"bootstrap.servers": bootstrap},
    )
    start = {(topic, p): 0 for p in range(partitions)}

    def once() -> float:
        # as after an assignment from committed offsets at the log start
        runner._current = dict(start)
        runner._batch_positions = {}
        began = time.thread_time()
        for batch in batches:
            runner._convert_messages(batch)
            # what delivering the batch does to the runner's state
            runner._current.update(runner._batch_positions)
            runner._batch_positions.clear()
            runner._batch.clear()
        return time.thread_time() - began

    once()  # warm up
    best = min(once() for _ in range(REPEATS))
    print(f"{best / got * 1e9:.1f}")


def _produce(bootstrap: str, topic: str, records: int, partitions: int) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for n in range(records):
        producer.produce(
            topic,
            VALUE % (n, n),
            f"key-{n}".encode(),
            partition=n % partitions,
            headers=[("h", b"42")],
        )
        if n % 10000 == 0:
            producer.poll(0)
    assert producer.flush(60) == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--base-rev", help="the commit to compare with")
    parser.add_argument("--records", type=int, default=50_000)
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--runs", type=int, default=5, help="runs per tree")
    parser.add_argument(
        "--values",
        choices=("json", "bytes"),
        default="json",
        help="the value converter: JsonConverter, or ByteArrayConverter (the least work per "
        "record, where the runner's own steps weigh most)",
    )
    parser.add_argument("--child", nargs=2, metavar=("BOOTSTRAP", "TOPIC"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1], args.records, args.partitions, args.values)
        return
    if not args.base_rev:
        parser.error("--base-rev is required")

    sys.path.insert(0, str(REPO_ROOT))
    from cdk.kafka import EmbeddedKafka, create_topics

    with tempfile.TemporaryDirectory() as tmp, EmbeddedKafka() as broker:
        bootstrap = broker.bootstrap_servers
        topic = f"hot-{uuid.uuid4().hex[:8]}"
        create_topics(bootstrap, [topic], partitions=args.partitions)
        _produce(bootstrap, topic, args.records, args.partitions)
        base = Path(tmp) / "base"
        base.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "archive", args.base_rev], capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive.stdout, check=True)
        shutil.copy(Path(__file__), base / "bench")  # the same measurement for both
        trees = {"base": base, "this": REPO_ROOT}
        results: dict[str, list[float]] = {"base": [], "this": []}
        order: list[str] = []
        for run in range(args.runs):
            order += ["base", "this"] if run % 2 == 0 else ["this", "base"]
        for label in order:
            tree = trees[label]
            done = subprocess.run(
                [
                    sys.executable,
                    str(tree / "bench" / Path(__file__).name),
                    "--child",
                    bootstrap,
                    topic,
                    "--records",
                    str(args.records),
                    "--partitions",
                    str(args.partitions),
                    "--values",
                    args.values,
                ],
                cwd=tree,
                env={**os.environ, "PYTHONPATH": str(tree)},
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
            if done.returncode != 0:
                raise SystemExit(f"{label}: {done.stdout}\n{done.stderr}")
            ns = float(done.stdout.strip().splitlines()[-1])
            results[label].append(ns)
            print(f"{label}: {ns:.1f} ns/record", file=sys.stderr, flush=True)
    b = statistics.median(results["base"])
    t = statistics.median(results["this"])
    print()
    print(
        f"Sink convert step ({args.values} values), {args.records:,} records over "
        f"{args.partitions} partitions in "
        f"batches of {BATCH}; thread CPU time, best of {REPEATS} per run, median of "
        f"{args.runs} runs; base = {args.base_rev}"
    )
    print()
    print("| tree | ns per record | runs |")
    print("|---|---:|---|")
    print(f"| base | {b:.0f} | {', '.join(f'{v:.0f}' for v in results['base'])} |")
    print(f"| this | {t:.0f} | {', '.join(f'{v:.0f}' for v in results['this'])} |")
    print(f"| change | {t - b:+.0f} ({t / b - 1:+.1%}) | |")


if __name__ == "__main__":
    main()
