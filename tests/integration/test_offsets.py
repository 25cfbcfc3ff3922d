"""Source offsets survive a clean stop (no loss, no duplicates) and a ``kill -9`` of ``cdk
standalone`` (no loss, duplicates bounded by what was not yet committed)."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

import httpx

from tests._wait import wait_until
from tests.connectors.recording import read_store
from tests.integration._support import (
    REPO_ROOT,
    Connect,
    all_keys,
    cdk_command,
    free_port,
    generator_config,
    make_topic,
    reading,
    recording_config,
    stop_process,
    unique,
    wait_store_keys,
    worker_props,
    write_properties,
)


def test_resume_after_clean_stop_no_loss_no_duplicates(
    connect: Callable[..., Connect], kafka_bootstrap: str
) -> None:
    topic = make_topic(kafka_bootstrap, partitions=2)
    name = unique("gen")
    # ~500 records/s per stream: the stop lands mid-run
    config = generator_config(
        topic, records=1500, partitions=2, tasks_max=2, batch_size=5, poll_interval_ms=10
    )
    first = connect()
    first.rest.create(name, config)
    with reading(kafka_bootstrap, topic) as reader:
        reader.wait_for(300)
        first.stop()  # clean: tasks stopped, offsets committed
        reader.poll(0.5)
        before = len(reader.messages)
        assert before < 3000, "the generator finished before the stop; nothing to resume"

        second = connect()
        second.rest.create(name, config)
        reader.wait_for(3000)
        reader.poll(0.5)
        assert reader.keys() == all_keys(2, 1500)  # every record exactly once


RECORDS = 2000  # per stream; ~500 records/s per stream, so the kill lands mid-run


def _standalone(tmp_path: Path, bootstrap: str, topic: str, store: Path, port: int) -> list[str]:
    worker = write_properties(
        tmp_path / "worker.properties",
        worker_props(
            bootstrap,
            tmp_path / "standalone.offsets",
            port,
            **{"offset.flush.interval.ms": "300"},
        ),
    )
    source = write_properties(
        tmp_path / "source.properties",
        {
            "name": "kill-gen",
            **generator_config(
                topic, records=RECORDS, partitions=2, batch_size=10, poll_interval_ms=20
            ),
        },
    )
    sink = write_properties(
        tmp_path / "sink.properties",
        {"name": "kill-rec", **recording_config(topic, store)},
    )
    return cdk_command("standalone", str(worker), str(source), str(sink))


def _spawn(command: list[str], log: Path) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    with log.open("ab") as out:
        return subprocess.Popen(command, cwd=REPO_ROOT, env=env, stdout=out, stderr=out)


def _rest_up(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/connectors", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def test_kill_9_standalone_then_restart_loses_nothing(kafka_bootstrap: str, tmp_path: Path) -> None:
    topic = make_topic(kafka_bootstrap, partitions=2)
    store = tmp_path / "store"
    log = tmp_path / "standalone.log"
    port = free_port()
    command = _standalone(tmp_path, kafka_bootstrap, topic, store, port)
    total = 2 * RECORDS

    proc = _spawn(command, log)
    try:
        wait_until(lambda: _rest_up(port), 60, 0.1, lambda: f"REST up; log:\n{log.read_text()}")
        with reading(kafka_bootstrap, topic) as reader:
            reader.wait_for(800)
            wait_until(
                lambda: (
                    (tmp_path / "standalone.offsets").exists()
                    and len(read_store(store).records) > 200
                ),
                30,
                message=lambda: f"offsets committed and sink writing; log:\n{log.read_text()}",
            )
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)
            reader.poll(0.5)
            at_kill = len(reader.messages)
            assert at_kill < total, "the generator finished before the kill"

            port2 = free_port()
            command = _standalone(tmp_path, kafka_bootstrap, topic, store, port2)
            proc = _spawn(command, log)
            reader.wait_for(total, timeout=90)
            wait_until(
                lambda: reader.poll() and set(reader.keys()) == set(all_keys(2, RECORDS)),
                60,
                message="every key in the topic",
            )
            produced = reader.keys()
        assert set(produced) == set(all_keys(2, RECORDS))  # no loss
        duplicates = sum(produced.values()) - total
        # only what was produced after the last offset commit before the kill is re-sent
        assert duplicates < at_kill, (duplicates, at_kill)

        got = wait_store_keys(store, all_keys(2, RECORDS), timeout=90)
        assert set(got.keys()) == set(all_keys(2, RECORDS))  # the sink lost nothing either
    finally:
        stop_process(proc)
