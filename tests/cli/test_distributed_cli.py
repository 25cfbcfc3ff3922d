"""``cdk distributed`` as a real subprocess against the session's embedded broker."""

from __future__ import annotations

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
@pytest.mark.xdist_group("spark")
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
