"""``cdk distributed`` as a real subprocess against the session's embedded broker."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import httpx
import pytest

from tests._wait import wait_until
from tests.integration._support import reading

CDK = Path(sys.executable).with_name("cdk")
JSON = "org.apache.kafka.connect.json.JsonConverter"


def write_worker(tmp_path: Path, bootstrap: str, **extra: str) -> Path:
    group = f"cli-{uuid.uuid4().hex[:8]}"
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
        "listeners": "http://127.0.0.1:0",
        "spark.master": "local[2]",
        "spark.ui.enabled": "false",
        **extra,
    }
    path = tmp_path / "worker.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items() if v), encoding="utf-8")
    return path


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CDK), "distributed", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_missing_required_keys_are_named(tmp_path: Path, kafka_bootstrap: str) -> None:
    result = run(write_worker(tmp_path, kafka_bootstrap, **{"group.id": ""}))
    assert result.returncode == 1
    assert 'Missing required configuration "group.id"' in result.stderr
    assert "Traceback" not in result.stderr
    result = run(tmp_path / "nope.properties")
    assert result.returncode == 1
    assert "nope.properties" in result.stderr
    assert "Traceback" not in result.stderr


def test_without_pyspark_it_says_what_to_install(tmp_path: Path, kafka_bootstrap: str) -> None:
    # a pyspark package first on the path that fails to import, as an absent one does
    shadow = tmp_path / "no-pyspark" / "pyspark"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'pyspark'\", name='pyspark')\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(shadow.parent), *sys.path])}
    result = subprocess.run(
        [str(CDK), "distributed", str(write_worker(tmp_path, kafka_bootstrap))],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )
    assert result.returncode == 1, result.stderr
    assert "pip install 'connect-cdk[spark]'" in result.stderr
    assert "Traceback" not in result.stderr


def _spark_placement_available() -> bool:
    if importlib.util.find_spec("pyspark") is None:
        return False
    import cdk.spark

    return hasattr(cdk.spark, "SparkPlacement")


@pytest.mark.slow
@pytest.mark.timeout(900)  # a JVM of its own: its start takes minutes on a loaded machine
@pytest.mark.xdist_group("spark-cli")
@pytest.mark.skipif(not _spark_placement_available(), reason="needs pyspark and cdk.spark")
def test_runs_a_connector_on_local_spark_and_stops_on_sigterm(
    tmp_path: Path, kafka_bootstrap: str
) -> None:
    topic = f"cli-{uuid.uuid4().hex[:8]}"
    process = subprocess.Popen(
        [str(CDK), "distributed", str(write_worker(tmp_path, kafka_bootstrap))],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    reader = threading.Thread(
        target=lambda: lines.extend(iter(process.stderr.readline, "")),  # type: ignore[union-attr]
        name="stderr-reader",
    )
    reader.start()
    try:
        banner = wait_until(
            lambda: next((x for x in list(lines) if "cdk distributed: REST API at" in x), None),
            600,
            message=lambda: "startup banner; stderr:\n" + "".join(lines),
        )
        assert "spark.master=local[2]" in banner
        match = re.search(r"REST API at (http://\S+);", banner)
        assert match, banner
        source = tmp_path / "in.txt"
        source.write_text("one\ntwo\nthree\n", encoding="utf-8")
        config = {"connector.class": "FileStreamSource", "file": str(source), "topic": topic}
        with httpx.Client(base_url=match.group(1), timeout=60) as client:
            r = client.post("/connectors", json={"name": "gen", "config": config})
            assert r.status_code == 201, r.text

            def running() -> bool:
                status = client.get("/connectors/gen/status").json()
                return [t["state"] for t in status.get("tasks", [])] == ["RUNNING"]

            wait_until(running, 120, 0.2, "the task RUNNING on a Spark executor")
            with reading(kafka_bootstrap, topic) as records:
                values = [json.loads(m.value)["payload"] for m in records.wait_for(3)]
            assert values == ["one", "two", "three"]
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=300) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        reader.join(timeout=10)
        assert process.stderr is not None
        process.stderr.close()
    output = "".join(lines)
    assert "Traceback" not in output
    assert "cdk distributed: stopped" in output


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.xdist_group("spark-cli")
@pytest.mark.skipif(not _spark_placement_available(), reason="needs pyspark and cdk.spark")
def test_a_new_topic_reaches_a_sink_on_local_spark_in_seconds_and_task_lines_carry_context(
    tmp_path: Path, kafka_bootstrap: str
) -> None:
    """The quickstart pattern on local[2], with ``--log-format json``.

    The sink is created first, on a topic the source is about to create; once its consumer has
    found the topic missing, the source: the records must reach the sink's file within seconds
    (they used to wait for librdkafka's five-minute metadata refresh). The tasks run in Spark's
    Python workers: their lines carry the connector context, in the driver's format.
    """
    topic = f"cli-new-{uuid.uuid4().hex[:8]}"
    process = subprocess.Popen(
        [
            str(CDK),
            "distributed",
            "--log-format",
            "json",
            str(write_worker(tmp_path, kafka_bootstrap)),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    reader = threading.Thread(
        target=lambda: lines.extend(iter(process.stderr.readline, "")),  # type: ignore[union-attr]
        name="stderr-reader",
    )
    reader.start()
    try:
        banner = wait_until(
            lambda: next((x for x in list(lines) if "cdk distributed: REST API at" in x), None),
            600,
            message=lambda: "startup banner; stderr:\n" + "".join(lines),
        )
        match = re.search(r"REST API at (http://\S+);", banner)
        assert match, banner
        source_file, sink_file = tmp_path / "in.txt", tmp_path / "out.txt"
        expected = [f"line {i}" for i in range(10)]
        source_file.write_text("".join(f"{x}\n" for x in expected), encoding="utf-8")
        sink = {"connector.class": "FileStreamSink", "file": str(sink_file), "topics": topic}
        source = {"connector.class": "FileStreamSource", "file": str(source_file), "topic": topic}
        with httpx.Client(base_url=match.group(1), timeout=60) as client:
            assert client.post("/connectors", json={"name": "sink", "config": sink}).is_success
            # the sink's consumer finds the topic missing: the case that idled for minutes
            wait_until(
                lambda: any(f"Subscribed topic not available: {topic}" in x for x in list(lines)),
                120,
                message=lambda: "the sink to find its topic missing; stderr:\n" + "".join(lines),
            )
            assert client.post("/connectors", json={"name": "src", "config": source}).is_success

            def written() -> list[str]:
                return sink_file.read_text("utf-8").splitlines() if sink_file.exists() else []

            wait_until(
                lambda: written() == expected,
                60,  # the tasks' start on the executors included; minutes before the fix
                message=lambda: f"the sink's file; has {written()}; stderr:\n" + "".join(lines),
            )
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=300) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        reader.join(timeout=10)
        assert process.stderr is not None
        process.stderr.close()
    records = []
    for line in lines:
        if line.startswith("{"):
            with contextlib.suppress(json.JSONDecodeError):  # Spark's own output interleaves
                records.append(json.loads(line))
    by_task = {
        (r["connector"], r["task"])
        for r in records
        if r["logger"].startswith("cdk.runtime") and r["connector"] is not None
    }
    # the tasks' lines come from Spark's Python workers, with Kafka's context
    assert ("sink", "task-0") in by_task, by_task
    assert ("src", "task-0") in by_task, by_task
    assert ("src", "worker") in by_task, by_task
