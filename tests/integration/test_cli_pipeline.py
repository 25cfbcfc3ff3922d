"""The issue's "done when": ``cdk standalone`` runs the test connectors end to end against
``cdk broker`` — both real subprocesses, managed through the REST API."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import httpx

from tests._wait import wait_until
from tests.connectors.recording import read_store
from tests.integration._support import (
    REPO_ROOT,
    all_keys,
    cdk_command,
    free_port,
    generator_config,
    recording_config,
    stop_process,
    worker_props,
    write_properties,
)

READY = re.compile(r"listening on (127\.0\.0\.1:\d+)")


def _spawn(command: list[str], log: Path) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    with log.open("ab") as out:
        return subprocess.Popen(command, cwd=REPO_ROOT, env=env, stdout=out, stderr=out)


def test_cdk_standalone_runs_the_test_connectors_against_cdk_broker(tmp_path: Path) -> None:
    broker_log, worker_log = tmp_path / "broker.log", tmp_path / "worker.log"
    broker = _spawn(cdk_command("broker", "--port", "0"), broker_log)
    worker: subprocess.Popen[bytes] | None = None
    try:
        match = wait_until(
            lambda: READY.search(broker_log.read_text()), 30, message="cdk broker to listen"
        )
        bootstrap = match.group(1)
        port = free_port()
        store = tmp_path / "store"
        worker_file = write_properties(
            tmp_path / "worker.properties",
            worker_props(
                bootstrap,
                tmp_path / "connect.offsets",
                port,
                **{"offset.flush.interval.ms": "300"},
            ),
        )
        source = write_properties(
            tmp_path / "source.properties",
            {
                "name": "gen",
                **generator_config("cli-topic", records=300, partitions=3, tasks_max=2),
            },
        )
        sink = write_properties(
            tmp_path / "sink.properties",
            {"name": "rec", **recording_config("cli-topic", store)},
        )
        worker = _spawn(
            cdk_command("standalone", str(worker_file), str(source), str(sink)), worker_log
        )
        expected = all_keys(3, 300)
        wait_until(
            lambda: worker.poll() is not None or set(read_store(store).keys()) >= set(expected),
            90,
            0.1,
            message=lambda: (
                f"the sink to receive {len(expected)} keys; log:\n{worker_log.read_text()}"
            ),
        )
        assert worker.poll() is None, f"cdk standalone exited:\n{worker_log.read_text()}"
        got = read_store(store)
        assert got.keys() == expected  # every record exactly once

        statuses = httpx.get(f"http://127.0.0.1:{port}/connectors?expand=status", timeout=5).json()
        assert statuses["gen"]["status"]["connector"]["state"] == "RUNNING"
        assert [t["state"] for t in statuses["gen"]["status"]["tasks"]] == ["RUNNING", "RUNNING"]
        assert statuses["rec"]["status"]["type"] == "sink"
    finally:
        if worker is not None:
            stop_process(worker)
        stop_process(broker)
    assert worker is not None
    assert worker.returncode == 0, worker_log.read_text()
    assert broker.returncode == 0, broker_log.read_text()
