"""Exactly-once source throughput against the same source at least once, in one run.

The generator test source (JsonConverter, schemas on, ``batch.size`` records per ``poll()``)
writes N records to a fresh topic on a distributed driver whose one worker runs on a thread of
this process (no Spark: the exactly-once machinery is the driver's and the worker's), on the
embedded broker, three ways, alternating, each on a cluster of its own:

- ``at-least-once``: ``exactly.once.source.support=disabled`` (the at-least-once runner);
- ``eos poll``: ``enabled``, ``transaction.boundary=poll`` (a transaction per ``poll()``);
- ``eos interval 1s``: ``enabled``, ``transaction.boundary=interval``,
  ``transaction.boundary.interval.ms=1000``.

Throughput is N records over the time from the connector's creation (REST create, through the
herder) to the N-th record read by a ``read_committed`` consumer (so an exactly-once record
counts once its transaction committed, and a transaction that holds many polls is not credited
with the time before its commit); the start of the task (for exactly-once, its producer's
``init_transactions``) is in it, so take N large (each run several seconds). Beside it, the
steady rate: the records between the 10% and the 90% marks over the time between them (no
start, no last interval), and the CPU seconds per 100,000 records of this process (the driver,
its worker thread and the consumer) and of the broker; on a machine whose cores are all busy
the throughput goes as the inverse of that CPU, so the at-least-once run's CPU over the
exactly-once run's of the same round (``cpu ratio``) is the figure least moved by other load.

The modes are interleaved run by run (at least once, eos poll, eos interval, at least once,
...), so a change of the machine's load hits each mode alike; each run records the 1-minute load
average at its start and end. The figures are medians over ``--runs`` rounds, with their min and
max, and each exactly-once run's ratio to the at-least-once run of its round (paired), whose
median is the figure to compare with the aims of issue 28: eos poll >= 0.7x, eos interval >=
0.9x of at-least-once. :func:`measure` returns the runs per mode, :func:`summarize` the
figures (plain dicts, for a JSON export).

Run with ``.venv/bin/python bench/eos_vs_at_least_once.py [--records N] [--batch B] [--runs R]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))  # the test connectors live in tests/connectors

import _results  # noqa: E402  (bench/, first on sys.path: the benchmark page's results)
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition  # noqa: E402

from cdk.kafka import EmbeddedKafka, create_topics  # noqa: E402
from cdk.runtime import ConnectorTaskId, DistributedWorker  # noqa: E402
from harness.certify._eos_worker import ThreadPlacement  # noqa: E402

JSON = "org.apache.kafka.connect.json.JsonConverter"
GENERATOR = "tests.connectors.generator.GeneratorSourceConnector"
TIMEOUT = 600.0
MODES: dict[str, tuple[str, dict[str, str]]] = {
    "at-least-once": ("disabled", {}),
    "eos poll": ("enabled", {"transaction.boundary": "poll"}),
    "eos interval 1s": (
        "enabled",
        {"transaction.boundary": "interval", "transaction.boundary.interval.ms": "1000"},
    ),
}


def _wait(condition: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(0.05)


def _props(bootstrap: str, support: str) -> dict[str, str]:
    group = f"bench-eos-{uuid.uuid4().hex[:8]}"
    return {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "config.storage.topic": f"{group}-configs",
        "offset.storage.topic": f"{group}-offsets",
        "status.storage.topic": f"{group}-status",
        "config.storage.replication.factor": "1",
        "offset.storage.replication.factor": "1",
        "status.storage.replication.factor": "1",
        "offset.storage.partitions": "5",
        "status.storage.partitions": "1",
        "key.converter": JSON,
        "value.converter": JSON,
        "offset.flush.interval.ms": "1000",
        "exactly.once.source.support": support,
        "session.timeout.ms": "6000",
        "heartbeat.interval.ms": "500",
        "listeners": "http://127.0.0.1:0",
    }


def _cpu_self() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _cpu_of(pid: int | None) -> float:
    """The CPU seconds of process ``pid`` so far (0 when it cannot be read)."""
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_once(
    bootstrap: str, mode: str, records: int, batch: int, broker_pid: int | None = None
) -> dict[str, float]:
    """One run of ``mode``: records/s end to end and steady, CPU per 100k records, load."""
    support, extra = MODES[mode]
    topic = f"bench-eos-{uuid.uuid4().hex[:8]}"
    create_topics(bootstrap, [topic], partitions=1)
    load_before = os.getloadavg()[0]
    placement = ThreadPlacement()
    driver = DistributedWorker(
        _props(bootstrap, support), placement=placement, rest=False, cluster_id_timeout=0
    )
    driver.start()
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"bench-{uuid.uuid4().hex}",
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
            "fetch.wait.max.ms": 20,
        }
    )
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    try:
        _wait(lambda: driver.await_leader(1) and driver.leading, 60, "the driver to lead")
        _wait(lambda: driver.herder.workers(), 60, "the worker to heartbeat")
        cpu_before, broker_before = _cpu_self(), _cpu_of(broker_pid)
        started = time.monotonic()
        driver.herder.create_connector(
            "gen",
            {
                "connector.class": GENERATOR,
                "tasks.max": "1",
                "topic": topic,
                "records": str(records),
                "batch.size": str(batch),
                **extra,
            },
        )
        count = 0
        low, high = records // 10, records - records // 10
        low_at = high_at = 0.0
        deadline = time.monotonic() + TIMEOUT
        while count < records:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{mode}: {count} of {records} records after {TIMEOUT:g}s")
            for message in consumer.consume(10000, 0.1):
                if message.error() is None:
                    count += 1
            now = time.monotonic()
            if not low_at and count >= low:
                low_at, low_count = now, count
            if not high_at and count >= high:
                high_at, high_count = now, count
        elapsed = time.monotonic() - started
        cpu = _cpu_self() - cpu_before
        broker = _cpu_of(broker_pid) - broker_before
        commits = _commits(placement)
        return {
            **commits,
            "rate": records / elapsed,
            "steady rate": (high_count - low_count) / max(high_at - low_at, 1e-6),
            "seconds": elapsed,
            "cpu per 100k": cpu * 100_000 / records,
            "broker cpu per 100k": broker * 100_000 / records,
            "load before": load_before,
            "load after": os.getloadavg()[0],
        }
    finally:
        consumer.close()
        driver.stop()


def _commits(placement: ThreadPlacement) -> dict[str, float]:
    """The task's commits: transactions (exactly once), commit time avg and max (last window).

    A commit is, with exactly once, the offsets records and ``commit_transaction`` (its
    ``EndTxn``; the first record of a transaction on each partition adds an
    ``AddPartitionsToTxn``); at least once, an offset flush.
    """
    cluster = placement._worker  # the bench reads the worker on its own thread
    worker = None if cluster is None else cluster.worker
    runner = None if worker is None else worker.task_runner(ConnectorTaskId("gen", 0))
    if runner is None:
        return {"transactions": 0.0, "commit avg ms": 0.0, "commit max ms": 0.0}
    now = runner.metrics.clock()
    stat = runner.metrics.task.commit_time
    return {
        "transactions": float(len(getattr(runner, "transaction_sizes", ()))),
        "commit avg ms": stat.avg(now),
        "commit max ms": stat.max(now),
    }


def measure(
    bootstrap: str,
    records: int,
    batch: int,
    runs: int,
    broker_pid: int | None = None,
    report: Callable[[int, str, dict[str, float]], None] | None = None,
    on_round: Callable[[int], None] | None = None,
) -> dict[str, list[dict[str, float]]]:
    """``runs`` rounds of every mode, interleaved; the runs of each mode (see :func:`run_once`).

    ``on_round`` is called before each round (the benchmark page marks its runs with it).
    """
    results: dict[str, list[dict[str, float]]] = {mode: [] for mode in MODES}
    for run in range(runs):
        if on_round is not None:
            on_round(run)
        for mode in MODES:
            result = run_once(bootstrap, mode, records, batch, broker_pid)
            results[mode].append(result)
            if report is not None:
                report(run, mode, result)
    return results


def _spread(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def _cpu(run: dict[str, float]) -> float:
    return run["cpu per 100k"] + run["broker cpu per 100k"]


def summarize(results: dict[str, list[dict[str, float]]]) -> dict[str, dict[str, Any]]:
    """Per mode: median, min and max of each figure; ratios to at-least-once, paired by round."""
    base = results["at-least-once"]
    out: dict[str, dict[str, Any]] = {}
    for mode, runs in results.items():
        figures: dict[str, Any] = {
            name: _spread([r[name] for r in runs])
            for name in (
                "rate",
                "steady rate",
                "cpu per 100k",
                "broker cpu per 100k",
                "transactions",
                "commit avg ms",
                "commit max ms",
            )
        }
        figures["load"] = _spread([r[k] for r in runs for k in ("load before", "load after")])
        for name in ("rate", "steady rate"):
            figures[f"{name} ratio"] = _spread(
                [r[name] / b[name] for r, b in zip(runs, base, strict=True)]
            )
        # on a CPU-bound machine throughput goes as 1 / CPU per record: the at-least-once run's
        # CPU (this process and the broker) over this one's, paired by round; less sensitive to
        # what else the machine runs than the rates
        figures["cpu ratio"] = _spread([_cpu(b) / _cpu(r) for r, b in zip(runs, base, strict=True)])
        figures["ratio of medians"] = figures["rate"]["median"] / statistics.median(
            [b["rate"] for b in base]
        )
        out[mode] = figures
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=300_000)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    _results.add_option(parser, "eos_vs_at_least_once")
    args = parser.parse_args()
    page = _results.Results.from_args("eos_vs_at_least_once", args)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # the broker stops with the script

    def report(run: int, mode: str, r: dict[str, float]) -> None:
        print(
            f"run {run + 1} {mode:>16}: {r['rate']:8.0f} rec/s ({r['seconds']:5.1f} s), steady "
            f"{r['steady rate']:8.0f}, cpu/100k {r['cpu per 100k']:5.2f} s + broker "
            f"{r['broker cpu per 100k']:5.2f} s, {r['transactions']:.0f} transactions, commit avg "
            f"{r['commit avg ms']:.0f} ms max {r['commit max ms']:.0f} ms, load "
            f"{r['load before']:.1f}->{r['load after']:.1f}",
            flush=True,
        )

    with EmbeddedKafka() as kafka:
        results = measure(
            kafka.bootstrap_servers,
            args.records,
            args.batch,
            args.runs,
            kafka.pid,
            report,
            on_round=lambda _run: page.run(),
        )
    figures = summarize(results)
    print(
        f"\n{args.records} records, {args.batch} per poll, {args.runs} rounds (median [min-max]):"
    )
    for mode, f in figures.items():
        rate, steady, ratio, sratio = (
            f["rate"],
            f["steady rate"],
            f["rate ratio"],
            f["steady rate ratio"],
        )
        print(
            f"{mode:>16}: {rate['median']:8.0f} [{rate['min']:.0f}-{rate['max']:.0f}] rec/s, "
            f"paired ratio {ratio['median']:.2f}x [{ratio['min']:.2f}-{ratio['max']:.2f}] "
            f"(of medians {f['ratio of medians']:.2f}x); steady {steady['median']:.0f} rec/s, "
            f"ratio {sratio['median']:.2f}x [{sratio['min']:.2f}-{sratio['max']:.2f}]; cpu/100k "
            f"{f['cpu per 100k']['median']:.2f} s + broker {f['broker cpu per 100k']['median']:.2f}"
            f" s, cpu ratio {f['cpu ratio']['median']:.2f}x [{f['cpu ratio']['min']:.2f}-"
            f"{f['cpu ratio']['max']:.2f}]; load {f['load']['min']:.1f}-{f['load']['max']:.1f}"
        )
    rates = {mode: [r["rate"] for r in runs] for mode, runs in results.items()}

    page.ratios(  # the benchmark page (bench/report.py)
        rates,
        [
            (
                "eos.poll",
                "exactly once (transaction.boundary=poll) / at least once",
                "eos poll",
                "at-least-once",
                ">=",
                0.7,
            ),
            (
                "eos.interval",
                "exactly once (transaction.boundary=interval, 1 s) / at least once",
                "eos interval 1s",
                "at-least-once",
                ">=",
                0.9,
            ),
        ],
        unit="rec/s",
        note=f"{args.records:,} records, {args.batch} per poll",
    )
    page.write()


if __name__ == "__main__":
    main()
