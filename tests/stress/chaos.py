"""Chaos for distributed mode: kill -9 of Spark workers, executors and the leading driver, and
broker stalls, under a source and a sink of several tasks. Reports records lost (must be 0) and
duplicates.

The setup, all on this machine: the embedded broker; a standalone Spark cluster of 2 workers (2
cores each) from the pyspark wheel; two ``cdk distributed`` drivers in processes of their own,
one group (one leads, the other stands by), each a Spark application of 2 cores (so each hosts 2
workers); a generator source of 3 tasks writing ``--records`` records per stream, throttled, and
a recording sink of 2 tasks storing them in files. For ``--minutes`` minutes, every few seconds,
one of:

- SIGKILL of a Spark worker (its executors and their Python workers die with it), started
  again a little later;
- SIGKILL of one executor (the Spark worker stays and starts a new one);
- SIGKILL of the leading driver (its application and workers end), started again a little
  later as a standby;
- a stall of the broker (SIGSTOP, 2-5 s, SIGCONT).

Then the chaos stops, everything is let run until the source has written every record and the
sink has stored every one, and the run reports: records lost (in the topic and in the sink's
store: must be 0), duplicates in each (allowed: within what was sent after the last offset
commit before each kill), the events, and how long each recovery took: the time from the event
until every stream of the source that had records left committed one more record to the topic
(sampled every half second by a reader of the topic's committed records).

With ``--exactly-once`` the drivers run with ``exactly.once.source.support=enabled`` and the
source with ``exactly.once.support=required`` (the generator declares it with
``eos.support=SUPPORTED``; its offsets, ``{"seq": n}`` per stream, identify its records): each
task writes its records and offsets in one transaction per poll. The topic is then counted with
the harness's ``read_committed`` reader (``harness/certify/_committed.py``, which hides aborted
transactions from their markers: the embedded broker does not), and the run fails unless it
finds every record exactly once: 0 duplicates and 0 lost. The librdkafka consumer's count and
the sink's (both see the aborted transactions' records on the embedded broker) are reported
beside it.

    .venv/bin/python -m tests.stress.chaos --minutes 3 --out /tmp/chaos.json
    .venv/bin/python -m tests.stress.chaos --minutes 3 --exactly-once --records 60000
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from cdk.kafka import EmbeddedKafka, create_topics, free_port
from cdk.runtime.util import CommittedReader, UnsupportedFetch, read_committed
from harness.providers.kafka import broker_stall
from harness.providers.spark import StandaloneSpark
from tests.connectors.recording import read_store
from tests.integration._support import JSON, TopicReader, all_keys, decode_key

REPO = Path(__file__).resolve().parents[2]
CDK = Path(sys.executable).with_name("cdk")
STREAMS = 3


class Driver:
    """A ``cdk distributed`` process."""

    def __init__(self, name: str, props: dict[str, str], workdir: Path) -> None:
        self.name = name
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.props = {**props, "listeners": self.url}
        self.path = workdir / f"{name}.properties"
        self.path.write_text("".join(f"{k}={v}\n" for k, v in self.props.items()))
        self.log = workdir / f"{name}.log"
        self.process: subprocess.Popen[bytes] | None = None
        #: killed by the chaos (not to be restarted by the supervisor)
        self.killed = False
        self.exits = 0
        self.http = httpx.Client(base_url=self.url, timeout=30)

    def start(self) -> None:
        self.killed = False
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [str(CDK), "distributed", str(self.path)],
                cwd=REPO,
                stdout=log,
                stderr=log,
                env={**os.environ, "PYTHONPATH": str(REPO)},  # the test connectors
            )

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def up(self) -> bool:
        try:
            return self.http.get("/").status_code == 200
        except httpx.HTTPError:
            return False

    def exited(self) -> int | None:
        """The exit code of a driver that ended by itself (not killed, not stopped)."""
        if self.killed or self.process is None:
            return None
        return self.process.poll()

    def last_error(self) -> str:
        lines = self.log.read_text(errors="replace").splitlines()
        errors = [line for line in lines if line.startswith("Error:")]
        return errors[-1][:300] if errors else (lines[-1][:300] if lines else "")

    def kill(self) -> None:
        self.killed = True
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(30)

    def stop(self) -> None:
        self.killed = True
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(90)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(30)
        self.http.close()


def wait(condition: Any, timeout: float, what: str) -> float:
    start = time.monotonic()
    while True:
        if condition():
            return time.monotonic() - start
        if time.monotonic() - start > timeout:
            raise TimeoutError(what)
        time.sleep(0.2)  # polling a REST API or a file store


def leader_of(drivers: list[Driver], name: str) -> Driver | None:
    """The driver whose id the connector's status names (the leader runs the connectors)."""
    for driver in drivers:
        if not driver.alive():
            continue
        try:
            body = driver.http.get(f"/connectors/{name}/status").json()
        except (httpx.HTTPError, ValueError):
            continue
        worker = body.get("connector", {}).get("worker_id", "")
        for other in drivers:
            if other.url.endswith(worker.rpartition(":")[2]) and other.alive():
                return other
    return None


class Progress:
    """Follows the topic's committed records on a thread: when each stream committed more."""

    def __init__(self, bootstrap: str, topic: str, t0: float) -> None:
        host, port = bootstrap.split(",")[0].rsplit(":", 1)
        address = (host, int(port))
        self._reader = CommittedReader(topic, lambda _p, _refresh: address, timeout_s=10)
        self._t0 = t0
        self.keys: Counter[str] = Counter()
        #: per stream: the times (s since t0) of the samples in which it committed more
        self.commits: dict[str, list[float]] = {}
        self.errors = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="chaos-progress", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.5):  # the sampling period of the recovery times
            now = round(time.monotonic() - self._t0, 2)
            grew: set[str] = set()
            try:
                # what is committed now, not what comes meanwhile
                for message in self._reader.read(range(STREAMS), time.monotonic() + 10):
                    key = decode_key(message.key())
                    with self._lock:
                        self.keys[key] += 1
                    grew.add(key.rpartition("-")[0])
            except (OSError, UnsupportedFetch):
                self.errors += 1  # a broker stall: the next sample reads on
            for stream in grew:
                self.commits.setdefault(stream, []).append(now)

    def count(self) -> int:
        with self._lock:
            return sum(self.keys.values())

    def key_set(self) -> set[str]:
        with self._lock:
            return set(self.keys)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)
        self._reader.close()

    def recovery(self, at: float, finished: dict[str, float]) -> float | None:
        """Seconds from ``at`` until every stream not finished by then committed again."""
        latest = 0.0
        for stream in (f"p{i}" for i in range(STREAMS)):
            if finished.get(stream, float("inf")) <= at:
                continue
            after = [t for t in self.commits.get(stream, []) if t > at]
            if not after:
                return None
            latest = max(latest, after[0] - at)
        return round(latest, 1)


def committed_keys(bootstrap: str, topic: str) -> Counter[str]:
    """Each key of the topic as a Kafka ``read_committed`` consumer on Kafka reads it."""
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    keys: Counter[str] = Counter()
    for partition in range(STREAMS):
        for message in read_committed(host, int(port), topic, partition, timeout_s=300):
            keys[decode_key(message.key())] += 1
    return keys


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=3.0)
    parser.add_argument("--records", type=int, default=40_000, help="per stream")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--exactly-once",
        action="store_true",
        help="exactly.once.source.support=enabled; the topic counted read_committed",
    )
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    workdir = Path(tempfile.mkdtemp(prefix="cdk-chaos-"))
    events: list[dict[str, Any]] = []
    t0 = time.monotonic()

    progress: Progress | None = None

    def event(kind: str, **detail: Any) -> None:
        entry = {"t": round(time.monotonic() - t0, 1), "event": kind, **detail}
        if progress is not None:
            entry["committed"] = progress.count()
        events.append(entry)
        print(json.dumps(entry), flush=True)

    with (
        EmbeddedKafka() as kafka,
        StandaloneSpark(2, cores=2, workdir=workdir / "spark", startup_timeout=600) as spark,
        contextlib.ExitStack() as stops,
    ):
        bootstrap = kafka.bootstrap_servers
        group = f"chaos-{uuid.uuid4().hex[:6]}"
        topic = f"{group}-data"
        create_topics(bootstrap, [topic], partitions=STREAMS)
        props = {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "config.storage.topic": f"{group}-configs",
            "offset.storage.topic": f"{group}-offsets",
            "status.storage.topic": f"{group}-status",
            "config.storage.replication.factor": "1",
            "offset.storage.replication.factor": "1",
            "status.storage.replication.factor": "1",
            "key.converter": JSON,
            "value.converter": JSON,
            "offset.flush.interval.ms": "1000",
            "session.timeout.ms": "6000",
            "heartbeat.interval.ms": "1000",
            "consumer.session.timeout.ms": "6000",
            "consumer.heartbeat.interval.ms": "500",
            **spark.spark_properties(),
            "spark.cores.max": "2",
            "spark.task.maxFailures": "50",
        }
        if args.exactly_once:
            props["exactly.once.source.support"] = "enabled"
        drivers = [Driver("a", props, workdir), Driver("b", props, workdir)]
        for driver in drivers:
            stops.callback(driver.stop)  # on the way out, whatever happened
        supervising = threading.Event()

        def supervise() -> None:
            """Start again a driver that ended by itself (as a service manager would)."""
            while not supervising.wait(2.0):
                for driver in drivers:
                    code = driver.exited()
                    if code is not None:
                        driver.exits += 1
                        event(
                            "driver exited",
                            driver=driver.name,
                            code=code,
                            error=driver.last_error(),
                        )
                        driver.start()

        supervisor = threading.Thread(target=supervise, name="chaos-supervisor", daemon=True)
        for driver in drivers:
            driver.start()
            wait(driver.up, 600, f"driver {driver.name} up")  # a loaded machine
        store = workdir / "store"
        source = {
            "connector.class": "tests.connectors.generator.GeneratorSourceConnector",
            "topic": topic,
            "tasks.max": str(STREAMS),
            "partitions": str(STREAMS),
            "records": str(args.records),
            "batch.size": "20",
            "poll.interval.ms": "20",
        }
        if args.exactly_once:
            source["exactly.once.support"] = "required"
            source["eos.support"] = "SUPPORTED"  # the generator's offsets identify its records
        sink = {
            "connector.class": "tests.connectors.recording.RecordingSinkConnector",
            "topics": topic,
            "tasks.max": "2",
            "store.dir": str(store),
        }
        answer = drivers[1].http.post("/connectors", json={"name": "src", "config": source})
        if answer.status_code != 201:
            raise SystemExit(f"creating the source failed: {answer.status_code} {answer.text}")
        answer = drivers[1].http.post("/connectors", json={"name": "sink", "config": sink})
        answer.raise_for_status()
        event(
            "created",
            source_tasks=STREAMS,
            sink_tasks=2,
            seed=seed,
            exactly_once=args.exactly_once,
        )
        progress = Progress(bootstrap, topic, t0)
        stops.callback(progress.stop)
        supervisor.start()
        stops.callback(supervisor.join, 10)
        stops.callback(supervising.set)
        stall = broker_stall(kafka)
        end = time.monotonic() + args.minutes * 60
        down: list[tuple[float, Any]] = []
        killed_workers: set[int] = set()

        def restart_worker(index: int) -> None:
            # without waiting for the master to list it: on a loaded machine a worker's JVM
            # can take minutes to register, and the chaos goes on meanwhile
            spark.start_worker(index, wait=False)
            killed_workers.discard(index)

        while time.monotonic() < end:
            time.sleep(rng.uniform(4, 10))  # the pace of the chaos, not a wait for a condition
            for due, restart in list(down):
                if time.monotonic() >= due:
                    restart()
                    down.remove((due, restart))
            action = rng.choice(["spark-worker", "executor", "leader", "broker"])
            if action == "spark-worker":
                alive = [w.index for w in spark.workers if w.index not in killed_workers]
                if len(alive) < 2:
                    continue
                index = rng.choice(alive)
                spark.kill_worker(index, wait=False)
                killed_workers.add(index)
                event("kill -9 spark worker", index=index)
                due = time.monotonic() + rng.uniform(5, 20)
                down.append((due, lambda i=index: restart_worker(i)))
            elif action == "executor":
                pids = _executor_pids()
                if not pids:
                    continue
                pid = rng.choice(pids)
                os.kill(pid, signal.SIGKILL)
                event("kill -9 executor", pid=pid)
            elif action == "leader":
                leader = leader_of(drivers, "src")
                if leader is None or sum(d.alive() for d in drivers) < 2:
                    continue
                leader.kill()
                event("kill -9 leading driver", driver=leader.name)
                down.append((time.monotonic() + rng.uniform(10, 25), leader.start))
            elif action == "broker" and stall is not None:
                seconds = rng.uniform(2, 5)
                with stall.stalled():
                    time.sleep(seconds)  # the stall itself
                event("broker stall", seconds=round(seconds, 1))
        for _due, restart in down:
            restart()
        event("chaos over")
        expected = set(all_keys(STREAMS, args.records))
        reader = TopicReader(bootstrap, topic)
        try:
            produced = reader.wait_for_keys(expected, timeout=1800)
        finally:
            reader.close()
        event("every record in the topic")
        if args.exactly_once:
            wait(lambda: expected <= progress.key_set(), 1800, "every record committed")
            event("every record committed")

        def stored() -> bool:
            return expected <= set(read_store(store).keys())

        wait(stored, 900, "every record in the sink's store")
        event("every record in the sink's store")
        sunk: Counter[str] = read_store(store).keys()
        progress.stop()
        result: dict[str, Any] = {
            "seed": seed,
            "minutes": args.minutes,
            "exactly once": args.exactly_once,
            "records": len(expected),
            "lost in the topic": len(expected - set(produced)),
            "lost in the sink": len(expected - set(sunk)),
            "duplicates in the topic": sum(produced.values()) - len(set(produced)),
            "duplicates in the sink": sum(sunk.values()) - len(set(sunk)),
        }
        ok = result["lost in the topic"] == 0 and result["lost in the sink"] == 0
        if args.exactly_once:
            committed = committed_keys(bootstrap, topic)
            lost = sorted(expected - set(committed))
            duplicated = sorted(k for k, n in committed.items() if n > 1)
            extra = sorted(set(committed) - expected)
            result["read_committed: lost"] = len(lost)
            result["read_committed: duplicates"] = sum(committed[k] - 1 for k in duplicated)
            result["read_committed: unexpected keys"] = len(extra)
            result["read_committed: first lost"] = lost[:10]
            result["read_committed: first duplicated"] = duplicated[:10]
            ok = ok and not lost and not duplicated and not extra
        result.update(_summary(events, progress))
        result["drivers that exited by themselves"] = sum(d.exits for d in drivers)
        result["events"] = events
    print(json.dumps({k: v for k, v in result.items() if k != "events"}, indent=2))
    if args.out is not None:
        args.out.write_text(json.dumps(result, indent=2))
    sys.exit(0 if ok else 1)


CHAOS = ("kill -9 spark worker", "kill -9 executor", "kill -9 leading driver", "broker stall")


def _summary(events: list[dict[str, Any]], progress: Progress) -> dict[str, Any]:
    """Each chaos event's recovery time (in its entry), and per kind: count, median, max."""
    finished: dict[str, float] = {}
    for stream, times in progress.commits.items():
        if times:
            finished[stream] = times[-1]  # its last commit: nothing to recover after it
    out: dict[str, Any] = {}
    for kind in CHAOS:
        times = []
        for entry in events:
            if entry["event"] != kind:
                continue
            recovery = progress.recovery(entry["t"], finished)
            entry["recovery_s"] = recovery
            if recovery is not None:
                times.append(recovery)
        count = sum(entry["event"] == kind for entry in events)
        out[kind] = {
            "count": count,
            "recovery median s": statistics.median(times) if times else None,
            "recovery max s": max(times) if times else None,
        }
    out["progress reader errors"] = progress.errors
    return out


def _executor_pids() -> list[int]:
    """The JVMs of Spark executors on this machine."""
    out = subprocess.run(
        ["pgrep", "-f", "CoarseGrainedExecutorBackend"], capture_output=True, text=True
    )
    return [int(p) for p in out.stdout.split()]


if __name__ == "__main__":
    main()
