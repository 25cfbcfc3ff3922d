"""Exactly once across ``kill -9`` of a worker and of the leading driver (no Spark).

Two drivers of one cluster with ``exactly.once.source.support=enabled``, each in a process of
its own with one worker on a thread (``python -m harness.certify._eos_worker``, what OFF-13
runs), share a generator source of 2 tasks. The leader is killed with SIGKILL (its worker and
tasks die with it), the standby takes the lead and the tasks, the killed one comes back; then
the new leader is killed the same way. A ``read_committed`` reader (the harness's, which hides
aborted transactions itself: the embedded broker does not) must then find each record of each
stream once, with no gap, after a clean stop.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from harness.certify._committed import read_committed
from tests._wait import wait_until
from tests.integration._support import decode_key, generator_config, make_topic
from tests.runtime.distributed._support import distributed_props

pytestmark = [pytest.mark.slow, pytest.mark.skipif(os.name != "posix", reason="signals")]

REPO = Path(__file__).resolve().parents[3]
GENERATOR = "tests.connectors.generator:GeneratorSourceConnector"


class Driver:
    """An ``_eos_worker`` process: a driver and its worker."""

    def __init__(self, props: dict[str, str], tmp_path: Path, name: str) -> None:
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(props), encoding="utf-8")
        self.log_path = tmp_path / f"{name}.log"
        with self.log_path.open("w", encoding="utf-8") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "harness.certify._eos_worker", str(path), GENERATOR],
                cwd=REPO,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
            )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line.startswith("READY "), f"{name} did not start: {self.log()}"
        self.http = httpx.Client(base_url=line.split()[1], timeout=30)

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")[-3000:]

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(30)

    def close(self) -> None:
        self.http.close()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.kill()
        if self.process.stdout is not None:
            self.process.stdout.close()


@pytest.fixture
def drivers(tmp_path: Path) -> Iterator[list[Driver]]:
    started: list[Driver] = []
    yield started
    for driver in started:
        driver.close()


def _committed_keys(bootstrap: str, topic: str) -> Counter[str]:
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    keys: Counter[str] = Counter()
    for partition in range(2):
        for message in read_committed(host, int(port), topic, partition):
            keys[decode_key(message.key())] += 1
    return keys


def _running(driver: Driver, name: str) -> bool:
    try:
        status = driver.http.get(f"/connectors/{name}/status").json()
    except (httpx.HTTPError, ValueError):
        return False
    tasks = status.get("tasks", [])
    return len(tasks) == 2 and all(t["state"] == "RUNNING" for t in tasks)


def test_each_record_once_across_kills_of_the_leader_and_its_workers(
    drivers: list[Driver], kafka_bootstrap: str, tmp_path: Path
) -> None:
    props = distributed_props(
        kafka_bootstrap, prefix="eosfo", **{"exactly.once.source.support": "enabled"}
    )
    topic = make_topic(kafka_bootstrap, partitions=2)
    first = Driver(props, tmp_path, "first")
    drivers.append(first)
    second = Driver(props, tmp_path, "second")
    drivers.append(second)
    config = generator_config(
        topic, tasks_max=2, partitions=2, records=-1, batch_size=10, poll_interval_ms=100
    )
    created = first.http.post("/connectors", json={"name": "gen", "config": config})
    assert created.status_code == 201, created.text
    wait_until(lambda: _running(first, "gen"), 60, message=lambda: f"gen RUNNING: {first.log()}")

    kills = 0
    for victim_index in (0, 1):  # the leader first (it was started first), then the new one
        victim = drivers[victim_index]
        before = sum(_committed_keys(kafka_bootstrap, topic).values())
        wait_until(
            lambda before=before: (
                sum(_committed_keys(kafka_bootstrap, topic).values()) > before + 200
            ),
            60,
            1.0,
            message="records to flow before the kill",
        )
        victim.kill()  # the driver (leading or not), its worker and its tasks: kill -9
        kills += 1
        survivor = drivers[1 - victim_index]
        wait_until(
            lambda survivor=survivor: _running(survivor, "gen"),
            90,
            message=lambda survivor=survivor: f"the tasks to run again: {survivor.log()}",
        )
        replacement = Driver(props, tmp_path, f"again-{kills}")
        drivers[victim_index] = replacement
        drivers.append(victim)  # closed at teardown (already dead)

    # more records after the last restart, then a clean stop (the tasks commit and end)
    before = sum(_committed_keys(kafka_bootstrap, topic).values())
    wait_until(
        lambda: sum(_committed_keys(kafka_bootstrap, topic).values()) > before + 200,
        90,
        1.0,
        message="records to flow after the last restart",
    )
    leader = drivers[1]
    # The driver asked may have just started and still forward to a leader that was killed
    # (503) or be in a rebalance (409): an operator's client asks again.
    answers: list[int] = []
    wait_until(
        lambda: (
            answers.append(leader.http.put("/connectors/gen/stop").status_code)
            or answers[-1] in (202, 204)
        ),
        60,
        1.0,
        message=lambda: f"PUT /connectors/gen/stop to be accepted; answers {answers}",
    )
    assert set(answers[:-1]) <= {409, 503}, answers
    wait_until(
        lambda: leader.http.get("/connectors/gen/status").json().get("tasks") == [],
        60,
        message="the connector to stop",
    )
    keys = _committed_keys(kafka_bootstrap, topic)
    duplicates = {k: n for k, n in keys.items() if n > 1}
    assert not duplicates, f"{len(duplicates)} duplicated: {sorted(duplicates)[:10]}"
    for stream in ("p0", "p1"):
        seqs = sorted(int(k.rsplit("-", 1)[1]) for k in keys if k.startswith(f"{stream}-"))
        assert seqs, stream
        lost = sorted(set(range(seqs[-1] + 1)) - set(seqs))
        assert not lost, f"{stream}: {len(lost)} lost: {lost[:10]}"
    assert kills == 2
