"""Kafka's FileStream connectors under ``cdk standalone`` against raw confluent-kafka loops.

The Python side of issue 12's comparison with Java Kafka Connect 3.9 (whose figures are quoted
from the issue, Java not being installed here). In one run, on one embedded Tansu broker:

- source: ``cdk standalone`` with FileStreamSource (JsonConverter, schemas on) reading a file of
  N lines of L bytes into a topic, against a raw loop producing ``json.dumps`` of the same
  envelope with the worker's source producer settings;
- sink: ``cdk standalone`` with FileStreamSink reading the topic the raw loop wrote into a file,
  against a raw loop consuming the topic the worker wrote with ``json.loads`` of each value.

Run with ``.venv/bin/python bench/filestream_vs_raw.py [--records N] [--runs 3]``; see
bench/README.md for how to read the table.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

import _results  # noqa: E402  (bench/, first on sys.path: the page's results)
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition  # noqa: E402

from cdk.kafka import EmbeddedKafka, create_topics, free_port  # noqa: E402

JSON = "org.apache.kafka.connect.json.JsonConverter"
SOURCE = "reference_connectors.filestream.FileStreamSourceConnector"
SINK = "reference_connectors.filestream.FileStreamSinkConnector"
MAX_POLL_RECORDS = 500  # the worker's max.poll.records default, used by the raw consume loop
LOW, HIGH = 0.01, 0.99  # the steady window: from 1% to 99% of the records
_CLK_TCK = os.sysconf("SC_CLK_TCK")

# The issue's figures for Java Kafka Connect 3.9 and its run (same kind of machine).
JAVA = {"source": 157_000.0, "sink": 202_000.0, "running": 2.51, "sink_last": 6.9}
ISSUE = {"source": (186_000.0, 213_000.0), "sink": (128_000.0, 154_000.0)}
AIMS = {"source": 0.9, "sink": 1.3}


# ---------------------------------------------------------------------------------- counting
def count_topic(bootstrap: str, topic: str, expected: int, pidfile: str) -> None:
    """Child process: count the topic's records; print when 1%, 99% and 100% had arrived.

    With each time goes the CPU time the producing process (its pid in ``pidfile``) had used.
    """
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"count-{uuid.uuid4().hex}",
            "enable.auto.commit": False,
            "fetch.wait.max.ms": 10,
        }
    )
    partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
    print("ready", flush=True)
    marks = [max(int(expected * LOW), 1), int(expected * HIGH), expected]
    times: list[float] = []
    cpus: list[float] = []
    seen = 0
    while seen < expected:
        for msg in consumer.consume(10000, 0.05):
            if msg.error() is None:
                seen += 1
        now = time.time()
        while len(times) < len(marks) and seen >= marks[len(times)]:
            times.append(now)
            cpus.append(cpu_seconds(int(Path(pidfile).read_text())))
    print("done " + " ".join(f"{t:.6f}" for t in times + cpus), flush=True)
    consumer.close()


class Counter:
    """A counting consumer in another process (it takes no CPU time from the measured loop)."""

    def __init__(self, bootstrap: str, topic: str, expected: int, pidfile: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--count", bootstrap, topic, str(expected), str(pidfile)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if line != "ready":
            self.proc.kill()
            raise RuntimeError(f"counter did not start: {line!r}")

    def marks(self, timeout: float = 600.0) -> tuple[list[float], list[float]]:
        """Times at which 1%, 99% and 100% of the records were on the topic, and CPU times."""
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().split()
        self.proc.wait(timeout)
        if len(line) != 7 or line[0] != "done":
            raise RuntimeError(f"counter failed: {line!r}")
        values = [float(x) for x in line[1:]]
        return values[:3], values[3:]


class FileWatcher(threading.Thread):
    """Stamps when an output file of fixed-length lines reaches 1%, 99% and 100% of them."""

    def __init__(self, path: Path, line_bytes: int, expected: int) -> None:
        super().__init__(daemon=True)
        self.path = path
        self.pid = 0  # the writing process, whose CPU time is read at each mark
        self.cpus: list[float] = []
        self.sizes = [
            max(int(expected * LOW), 1) * line_bytes,
            int(expected * HIGH) * line_bytes,
            expected * line_bytes,
        ]
        self.times: list[float] = []
        self.done = threading.Event()

    def run(self) -> None:
        while len(self.times) < len(self.sizes):
            try:
                size = self.path.stat().st_size
            except FileNotFoundError:
                size = 0
            now = time.time()
            while len(self.times) < len(self.sizes) and size >= self.sizes[len(self.times)]:
                self.times.append(now)
                self.cpus.append(cpu_seconds(self.pid))
            time.sleep(0.005)
        self.done.set()


def ready_producer(props: dict[str, object]) -> Producer:
    """A producer that has its connection and (idempotent) producer id before the clock runs.

    A fresh idempotent producer holds its first records back until the broker has given it a
    producer id (up to a second on Tansu). A raw loop that starts producing at once fills
    librdkafka's queue during that wait (200,000 records fit in it), so that the consumer's 1%
    to 99% window would time how fast the broker takes the queued records, not the loop. The
    worker fetches the topic's metadata before its first record, for the same reason; here one
    record to a scratch topic is produced and flushed.
    """
    producer = Producer(props)
    producer.produce(f"warm-{uuid.uuid4().hex[:8]}", b"")
    if producer.flush(30):
        raise RuntimeError("the raw loop's producer could not deliver its warm-up record")
    return producer


# ------------------------------------------------------------------------------------ worker
def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a running process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _CLK_TCK


class Standalone:
    """``cdk standalone`` in a subprocess, with one connector, its REST API on a free port."""

    def __init__(
        self,
        bootstrap: str,
        workdir: Path,
        connector: dict[str, str],
        src: Path = REPO_ROOT,
        profile: str | None = None,
    ) -> None:
        self.port = free_port()
        self.name = connector["name"]
        worker = workdir / f"worker-{self.name}.properties"
        worker.write_text(
            f"bootstrap.servers={bootstrap}\n"
            f"key.converter={JSON}\nvalue.converter={JSON}\n"
            f"offset.storage.file.filename={workdir / ('offsets-' + self.name)}\n"
            f"listeners=http://127.0.0.1:{self.port}\n"
        )
        props = workdir / f"{self.name}.properties"
        props.write_text("".join(f"{k}={v}\n" for k, v in connector.items()))
        env = {**os.environ, "PYTHONPATH": str(src)}  # ahead of the editable install
        cdk = Path(sys.executable).with_name("cdk")
        self.log = (workdir / f"{self.name}.log").open("w")
        self.launched = time.time()
        self.proc = subprocess.Popen(
            [str(cdk), "standalone", "--log-level", "warning", str(worker), str(props)],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=workdir,
        )
        self.spy = None
        if profile:  # py-spy's collapsed stacks of every thread, until stop()
            spy = Path(sys.executable).with_name("py-spy")
            self.spy = subprocess.Popen(
                [
                    *(str(spy), "record", "-o", profile, "--format", "raw", "--threads"),
                    *("--rate", "200", "--pid", str(self.proc.pid)),
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )

    def wait_running(self, timeout: float = 60.0) -> float:
        """Seconds from launch until the connector reported RUNNING on the REST API."""
        import httpx

        url = f"http://127.0.0.1:{self.port}/connectors/{self.name}/status"
        deadline = time.monotonic() + timeout
        with httpx.Client(timeout=2) as http:
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"cdk standalone exited: see {self.log.name}")
                try:
                    r = http.get(url)
                    if r.status_code == 200 and r.json()["connector"]["state"] == "RUNNING":
                        return time.time() - self.launched
                except httpx.TransportError:
                    pass
                time.sleep(0.01)
        raise RuntimeError(f"{self.name} not RUNNING within {timeout} s")

    def stop(self) -> float:
        """Stop the worker (SIGTERM, as Ctrl-C); return its CPU seconds until then."""
        cpu = cpu_seconds(self.proc.pid)
        if self.spy is not None:
            self.spy.send_signal(signal.SIGINT)
            self.spy.wait(60)
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        self.log.close()
        return cpu


def _worker_props(bootstrap: str) -> dict[str, str]:
    return {
        "bootstrap.servers": bootstrap,
        "key.converter": JSON,
        "value.converter": JSON,
        "offset.storage.file.filename": "/nonexistent",
    }


def envelope(line: str) -> bytes:
    """What JsonConverter writes for a STRING value: the same bytes as the worker's."""
    doc = {"schema": {"type": "string", "optional": False}, "payload": line}
    return json.dumps(doc, separators=(",", ":")).encode()


# ------------------------------------------------------------------------------ measurements
def kit_source(
    bootstrap: str,
    workdir: Path,
    infile: Path,
    topic: str,
    n: int,
    src: Path,
    profile: str | None,
) -> dict[str, float]:
    pidfile = workdir / f"pid-{uuid.uuid4().hex[:6]}"
    pidfile.write_text(str(os.getpid()))  # replaced by the worker's once it runs
    counter = Counter(bootstrap, topic, n, pidfile)
    name = f"src-{uuid.uuid4().hex[:6]}"
    worker = Standalone(
        bootstrap,
        workdir,
        {"name": name, "connector.class": SOURCE, "file": str(infile), "topic": topic},
        src,
        profile,
    )
    pidfile.write_text(str(worker.proc.pid))
    try:
        running = worker.wait_running()
        cpu_running = cpu_seconds(worker.proc.pid)
        (t1, t99, t100), (_, _, c100) = counter.marks()
    finally:
        cpu = worker.stop()
    return {
        "steady": n * (HIGH - LOW) / (t99 - t1),
        "us": (c100 - cpu_running) / n * 1e6,  # every record, start-up left out
        "running": running,
        "last": t100 - worker.launched,
        "cpu": cpu,
    }


def raw_source(bootstrap: str, workdir: Path, infile: Path, topic: str, n: int) -> dict[str, float]:
    from cdk.runtime._source_runner import PRODUCER_DEFAULTS
    from cdk.runtime._worker_config import WorkerConfig

    props = {**PRODUCER_DEFAULTS, **WorkerConfig(_worker_props(bootstrap)).producer_props()}
    pidfile = workdir / f"pid-{uuid.uuid4().hex[:6]}"
    pidfile.write_text(str(os.getpid()))
    counter = Counter(bootstrap, topic, n, pidfile)
    start = time.time()
    cpu0 = time.process_time()
    producer = ready_producer(props)
    with infile.open(encoding="utf-8") as lines:
        for i, line in enumerate(lines):
            value = envelope(line.rstrip("\n"))
            while True:
                try:
                    producer.produce(topic, value)
                    break
                except BufferError:
                    producer.poll(0.01)
            if i % MAX_POLL_RECORDS == 0:
                producer.poll(0)  # serve delivery reports now and then, as the worker does
    producer.flush(60)
    cpu = time.process_time() - cpu0  # every record
    (t1, t99, t100), _ = counter.marks()
    return {
        "steady": n * (HIGH - LOW) / (t99 - t1),
        "us": cpu / n * 1e6,
        "last": t100 - start,
        "cpu": cpu,
    }


def kit_sink(
    bootstrap: str,
    workdir: Path,
    topic: str,
    n: int,
    line_bytes: int,
    profile: str | None,
    src: Path,
) -> dict[str, float]:
    outfile = workdir / f"sink-{uuid.uuid4().hex[:6]}.txt"
    watcher = FileWatcher(outfile, line_bytes, n)
    name = f"sink-{uuid.uuid4().hex[:6]}"
    worker = Standalone(
        bootstrap,
        workdir,
        {"name": name, "connector.class": SINK, "file": str(outfile), "topics": topic},
        src,
        profile,
    )
    watcher.pid = worker.proc.pid
    watcher.start()
    try:
        if not watcher.done.wait(600):
            raise RuntimeError(f"the sink wrote {outfile.stat().st_size // line_bytes} lines")
    finally:
        cpu = worker.stop()
    t1, t99, t100 = watcher.times
    c1, c99, _ = watcher.cpus
    outfile.unlink()
    return {
        "steady": n * (HIGH - LOW) / (t99 - t1),
        "us": (c99 - c1) / (n * (HIGH - LOW)) * 1e6,
        "last": t100 - worker.launched,
        "cpu": cpu,
    }


def raw_sink(bootstrap: str, topic: str, n: int, settings: str) -> dict[str, float]:
    from cdk.runtime._sink_runner import CONSUMER_DEFAULTS
    from cdk.runtime._worker_config import WorkerConfig

    group = f"raw-{uuid.uuid4().hex}"
    if settings == "worker":  # the worker's sink consumer settings
        props = {
            **CONSUMER_DEFAULTS,
            **WorkerConfig(_worker_props(bootstrap)).consumer_props(group),
        }
    else:  # a plain loop: librdkafka's defaults, the worker's group timing (same join time)
        props = {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 500,
        }
    start = time.time()
    cpu0 = time.process_time()
    consumer = Consumer(props)
    consumer.subscribe([topic])
    marks = [max(int(n * LOW), 1), int(n * HIGH), n]
    times: list[float] = []
    cpus: list[float] = []
    seen = 0
    loads = json.loads
    while seen < n:
        for msg in consumer.consume(MAX_POLL_RECORDS, 0.1):
            if msg.error() is None:
                loads(msg.value())  # type: ignore[arg-type]
                seen += 1
        now = time.time()
        while len(times) < len(marks) and seen >= marks[len(times)]:
            times.append(now)
            cpus.append(time.process_time())
    consumer.close()
    t1, t99, t100 = times
    c1, c99, _ = cpus
    return {
        "steady": n * (HIGH - LOW) / (t99 - t1),
        "us": (c99 - c1) / (n * (HIGH - LOW)) * 1e6,
        "last": t100 - start,
        "cpu": time.process_time() - cpu0,
    }


# ------------------------------------------------------------------------------------- main
def median(runs: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def ratio(kit: list[dict[str, float]], raw: list[dict[str, float]], key: str) -> float:
    """The median of the per-run kit / raw ratios."""
    return statistics.median(k[key] / r[key] for k, r in zip(kit, raw, strict=True))


def cpu_row(what: str, kit: list[dict[str, float]], raw: list[dict[str, float]]) -> str:
    return (
        f"| {what} (us) | {median(kit, 'us'):.2f} | "
        f"{median(raw, 'us'):.2f} | {ratio(kit, raw, 'us'):.2f}x | | | |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=200_000, help="lines per measurement")
    parser.add_argument("--line-bytes", type=int, default=150, help="bytes per line")
    parser.add_argument("--runs", type=int, default=3, help="runs (medians are reported)")
    parser.add_argument("--only", choices=("source", "sink"), help="measure one direction")
    parser.add_argument("--bootstrap", help="an existing broker (default: an embedded one)")
    parser.add_argument(
        "--profile",
        metavar="PREFIX",
        help="py-spy record the first run's workers into PREFIX-source.txt and PREFIX-sink.txt "
        "(collapsed stacks; needs py-spy in the venv)",
    )
    parser.add_argument(
        "--kit-src",
        type=Path,
        default=REPO_ROOT,
        help="the checkout whose cdk and reference_connectors the worker runs (default: this one)",
    )
    parser.add_argument(
        "--raw-consumer",
        choices=("plain", "worker"),
        default="plain",
        help="the raw consume loop's settings: librdkafka's defaults (a plain loop, default) or "
        "the worker's sink consumer settings",
    )
    parser.add_argument("--count", nargs=4, help=argparse.SUPPRESS)
    _results.add_option(parser, "filestream_vs_raw")
    args = parser.parse_args()
    if args.count:
        count_topic(args.count[0], args.count[1], int(args.count[2]), args.count[3])
        return
    page = _results.Results.from_args("filestream_vs_raw", args)

    n, length = args.records, args.line_bytes
    broker = None if args.bootstrap else EmbeddedKafka().start()
    bootstrap = args.bootstrap or broker.bootstrap_servers  # type: ignore[union-attr]
    results: dict[str, list[dict[str, float]]] = {k: [] for k in ("ks", "rs", "kk", "rk")}
    directions = [args.only] if args.only else ["source", "sink"]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            workdir = Path(tmp)
            infile = workdir / "input.txt"
            with infile.open("w", encoding="utf-8") as out:
                for i in range(n):
                    out.write(f"{i:010d} ".ljust(length, "x") + "\n")
            for run in range(args.runs):
                page.run()
                kit_first = run % 2 == 0  # alternate: the broker keeps every record in memory
                kit_topic, raw_topic = (f"fs-{uuid.uuid4().hex[:8]}" for _ in range(2))
                create_topics(bootstrap, [kit_topic, raw_topic], partitions=1)
                figures = []
                # The sources fill both topics even with --only sink (the sinks read them).
                for who in ("kit", "raw") if kit_first else ("raw", "kit"):
                    if who == "kit":
                        results["ks"].append(
                            kit_source(
                                bootstrap,
                                workdir,
                                infile,
                                kit_topic,
                                n,
                                args.kit_src,
                                f"{args.profile}-source.txt" if args.profile and run == 0 else None,
                            )
                        )
                    else:
                        results["rs"].append(raw_source(bootstrap, workdir, infile, raw_topic, n))
                if "source" in directions:
                    ks, rs = results["ks"][-1], results["rs"][-1]
                    figures.append(
                        f"source {ks['steady']:,.0f}/{rs['steady']:,.0f} "
                        f"({ks['steady'] / rs['steady']:.2f}x)"
                    )
                if "sink" in directions:
                    profile = f"{args.profile}-sink.txt" if args.profile and run == 0 else None
                    for who in ("kit", "raw") if kit_first else ("raw", "kit"):
                        if who == "kit":  # each sink reads the topic the other side wrote
                            results["kk"].append(
                                kit_sink(
                                    bootstrap,
                                    workdir,
                                    raw_topic,
                                    n,
                                    length + 1,
                                    profile,
                                    args.kit_src,
                                )
                            )
                        else:
                            results["rk"].append(
                                raw_sink(bootstrap, kit_topic, n, args.raw_consumer)
                            )
                    kk, rk = results["kk"][-1], results["rk"][-1]
                    figures.append(
                        f"sink {kk['steady']:,.0f}/{rk['steady']:,.0f} "
                        f"({kk['steady'] / rk['steady']:.2f}x), kit last line "
                        f"{kk['last']:.2f} s"
                    )
                print(
                    f"run {run + 1} ({'kit' if kit_first else 'raw'} first): "
                    + "; ".join(figures)
                    + " (kit/raw)",
                    file=sys.stderr,
                    flush=True,
                )
    finally:
        if broker is not None:
            broker.stop()

    print(
        f"FileStream connectors under cdk standalone vs raw confluent-kafka loops: {n:,} lines of "
        f"{length} bytes,"
    )
    print(
        f"JsonConverter (schemas on), one task, embedded Tansu; medians of {args.runs} run(s), "
        "alternating order."
    )
    print(f"Kit: {args.kit_src}; raw consume loop settings: {args.raw_consumer}")
    print("Java Kafka Connect 3.9 and the issue's figures are quoted from issue 12, not measured.")
    print()
    print("| | kit | raw Python loop | kit / raw | aim | Java 3.9 (issue) | issue: kit / raw |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    if "source" in directions:
        kit, raw = median(results["ks"], "steady"), median(results["rs"], "steady")
        ratios = statistics.median(
            k["steady"] / r["steady"] for k, r in zip(results["ks"], results["rs"], strict=True)
        )
        print(
            f"| source steady (rec/s) | {kit:,.0f} | {raw:,.0f} | {ratios:.2f}x | "
            f">= {AIMS['source']}x | {JAVA['source']:,.0f} | "
            f"{ISSUE['source'][0] / ISSUE['source'][1]:.2f}x |"
        )
        print(
            cpu_row(
                "source CPU per record, RUNNING -> all on the topic", results["ks"], results["rs"]
            )
        )
        print(
            f"| source, launch -> connector RUNNING (s) | {median(results['ks'], 'running'):.2f} "
            f"| | | | {JAVA['running']} | |"
        )
        print(
            "| source, launch -> last record on the topic (s) | "
            f"{median(results['ks'], 'last'):.2f} | {median(results['rs'], 'last'):.2f} | | | | |"
        )
    if "sink" in directions:
        kit, raw = median(results["kk"], "steady"), median(results["rk"], "steady")
        ratios = statistics.median(
            k["steady"] / r["steady"] for k, r in zip(results["kk"], results["rk"], strict=True)
        )
        print(
            f"| sink steady, 1% -> 99% (rec/s) | {kit:,.0f} | {raw:,.0f} | {ratios:.2f}x | "
            f">= {AIMS['sink']}x | {JAVA['sink']:,.0f} | "
            f"{ISSUE['sink'][0] / ISSUE['sink'][1]:.2f}x |"
        )
        print(cpu_row("sink CPU per record, 1% -> 99%", results["kk"], results["rk"]))
        print(
            f"| sink, launch -> last line (s) | {median(results['kk'], 'last'):.2f} | "
            f"{median(results['rk'], 'last'):.2f} | | | {JAVA['sink_last']} | |"
        )
    cpu = []
    if "source" in directions:
        cpu.append(f"source kit {median(results['ks'], 'cpu'):.2f} s")
        cpu.append(f"raw {median(results['rs'], 'cpu'):.2f} s")
    if "sink" in directions:
        cpu.append(f"sink kit {median(results['kk'], 'cpu'):.2f} s")
        cpu.append(f"raw {median(results['rk'], 'cpu'):.2f} s")
    print()
    print(
        f"CPU for the {n:,} (kit: the whole worker process, start-up included): " + ", ".join(cpu)
    )
    what = f"{n:,} lines of {length} bytes; steady rate, 1% -> 99% of the records"
    for key, kit_key, raw_key, title, raw_name in (
        ("source", "ks", "rs", "FileStream source / raw produce loop", "raw produce loop"),
        ("sink", "kk", "rk", "FileStream sink / raw consume loop", "raw consume loop"),
    ):
        if key not in directions:
            continue
        page.figure(
            f"filestream.{key}",
            title,
            "rec/s",
            [k["steady"] for k in results[kit_key]],
            baseline=[r["steady"] for r in results[raw_key]],
            baseline_name=f"{raw_name} ({args.raw_consumer})" if key == "sink" else raw_name,
            kit_name=f"FileStream{key.capitalize()} under cdk standalone",
            aim=_results.ratio_aim(">=", AIMS[key]),
            note=what,
        )
        page.figure(
            f"filestream.{key}.cpu",
            f"FileStream {key} CPU per record / the raw loop's",
            "us/record",
            [k["us"] for k in results[kit_key]],
            baseline=[r["us"] for r in results[raw_key]],
            baseline_name=raw_name,
            kit_name=f"FileStream{key.capitalize()}",
            higher_is_better=False,
        )
    page.write()


if __name__ == "__main__":
    main()
