"""``cdk standalone`` as a real subprocess against the session's embedded broker."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx

from tests._wait import wait_until

CDK = Path(sys.executable).with_name("cdk")


def write_worker(tmp_path: Path, bootstrap: str, **extra: str) -> Path:
    props = {
        "bootstrap.servers": bootstrap,
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        "offset.storage.file.filename": str(tmp_path / "offsets.dat"),
        "offset.flush.interval.ms": "200",
        "listeners": "http://127.0.0.1:0",
        **extra,
    }
    path = tmp_path / "worker.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()), encoding="utf-8")
    return path


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CDK), "standalone", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_runs_filestream_source_to_sink_and_stops_on_sigterm(
    tmp_path: Path, kafka_bootstrap: str
) -> None:
    topic = f"cli-{uuid.uuid4().hex[:8]}"
    source_file = tmp_path / "in.txt"
    source_file.write_text("one\ntwo\nthree\n", encoding="utf-8")
    sink_file = tmp_path / "out.txt"
    source = tmp_path / "source.json"
    source.write_text(
        json.dumps(
            {
                "name": "file-source",
                "config": {
                    "connector.class": "FileStreamSource",
                    "tasks.max": 1,
                    "file": str(source_file),
                    "topic": topic,
                },
            }
        ),
        encoding="utf-8",
    )
    sink = tmp_path / "sink.properties"
    sink.write_text(
        f"name=file-sink\nconnector.class=FileStreamSink\ntopics={topic}\nfile={sink_file}\n",
        encoding="utf-8",
    )
    process = subprocess.Popen(
        [
            str(CDK),
            "standalone",
            str(write_worker(tmp_path, kafka_bootstrap)),
            str(source),
            str(sink),
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
            lambda: next(
                (line for line in list(lines) if "cdk standalone: REST API at" in line), None
            ),
            60,
            message=lambda: "startup banner; stderr:\n" + "".join(lines),
        )
        match = re.search(r"REST API at (http://\S+);", banner)
        assert match, banner
        assert "connectors: file-source, file-sink" in banner
        url = match.group(1)
        with httpx.Client(base_url=url, timeout=10) as client:
            assert client.get("/connectors").json() == ["file-source", "file-sink"]
            wait_until(
                lambda: (
                    sink_file.exists()
                    and sink_file.read_text(encoding="utf-8") == "one\ntwo\nthree\n"
                ),
                60,
                message="the sink wrote the three lines",
            )
            status = client.get("/connectors/file-sink/status").json()
            assert status["connector"]["state"] == "RUNNING"
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        reader.join(timeout=10)
        assert process.stderr is not None
        process.stderr.close()
    output = "".join(lines)
    assert "Traceback" not in output
    assert "cdk standalone: stopped" in output
    assert (tmp_path / "offsets.dat").exists()


def test_missing_file_is_a_clear_error(tmp_path: Path, kafka_bootstrap: str) -> None:
    result = run(tmp_path / "nope.properties")
    assert result.returncode == 1
    assert "nope.properties" in result.stderr
    assert "Traceback" not in result.stderr
    worker = write_worker(tmp_path, kafka_bootstrap)
    result = run(worker, tmp_path / "missing.json")
    assert result.returncode == 1
    assert "missing.json" in result.stderr


def test_invalid_configs_name_the_keys(tmp_path: Path, kafka_bootstrap: str) -> None:
    worker = write_worker(tmp_path, kafka_bootstrap)
    broken_worker = tmp_path / "broken.properties"
    broken_worker.write_text(
        worker.read_text(encoding="utf-8").replace("value.converter=", "#"), encoding="utf-8"
    )
    result = run(broken_worker)
    assert result.returncode == 1
    assert '"value.converter"' in result.stderr
    assert "Traceback" not in result.stderr
    connector = tmp_path / "bad.properties"
    connector.write_text(
        "name=bad\nconnector.class=FileStreamSource\ntasks.max=0\ntopic=t\n", encoding="utf-8"
    )
    result = run(worker, connector)
    assert result.returncode == 1
    assert "tasks.max" in result.stderr
    assert "Connector configuration is invalid" in result.stderr
    assert "Traceback" not in result.stderr
    nameless = tmp_path / "nameless.json"
    nameless.write_text(json.dumps({"config": {"connector.class": "FileStreamSource"}}), "utf-8")
    result = run(worker, nameless)
    assert result.returncode == 1
    assert "has no name" in result.stderr


class Standalone:
    """A ``cdk standalone`` process whose standard error is read as it comes."""

    def __init__(self, *args: str | Path, env: dict[str, str] | None = None) -> None:
        self.lines: list[str] = []
        self.process = subprocess.Popen(
            [str(CDK), "standalone", *map(str, args)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        stderr = self.process.stderr
        assert stderr is not None
        self._reader = threading.Thread(
            target=lambda: self.lines.extend(iter(stderr.readline, "")), name="stderr-reader"
        )
        self._reader.start()

    @property
    def output(self) -> str:
        return "".join(list(self.lines))

    def banner(self, timeout: float = 60) -> str:
        """The startup line (``cdk standalone: REST API at ...; connectors: ...``)."""
        return wait_until(
            lambda: next(
                (line for line in list(self.lines) if "cdk standalone: REST API at" in line), None
            ),
            timeout,
            message=lambda: "startup banner; stderr:\n" + self.output,
        )

    def stop(self) -> int:
        """SIGTERM, then its exit status (killed after 60 s)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=60)
        finally:
            self.close()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self._reader.join(timeout=10)
        assert self.process.stderr is not None
        self.process.stderr.close()


@contextlib.contextmanager
def standalone(*args: str | Path, env: dict[str, str] | None = None) -> Iterator[Standalone]:
    running = Standalone(*args, env=env)
    try:
        yield running
    finally:
        running.close()


def test_unknown_connector_class_suggests_the_closest_name(
    tmp_path: Path, kafka_bootstrap: str
) -> None:
    worker = write_worker(tmp_path, kafka_bootstrap)
    connector = tmp_path / "typo.properties"
    connector.write_text(
        "name=typo\nconnector.class=FileStreamSorce\nfile=in.txt\ntopic=t\n", encoding="utf-8"
    )
    result = run(worker, connector)
    assert result.returncode == 1
    assert "which name matches FileStreamSorce" in result.stderr
    assert "Did you mean FileStreamSource?" in result.stderr
    assert "Traceback" not in result.stderr


FAILING_CONNECTOR = """
from cdk import ConfigDef, ConnectException, SourceConnector, SourceTask


class FailingTask(SourceTask):
    def start(self, props):
        pass

    def poll(self):
        return None

    def stop(self):
        pass


class FailingSourceConnector(SourceConnector):
    def version(self):
        return "1.0"

    def config(self):
        return ConfigDef()

    def start(self, props):
        raise ConnectException("cannot reach the ACME API at https://acme.invalid")

    def task_class(self):
        return FailingTask

    def task_configs(self, max_tasks):
        return [{}]

    def stop(self):
        pass
"""


def test_a_connector_whose_start_raises_is_reported_failed_with_the_reason(
    tmp_path: Path, kafka_bootstrap: str
) -> None:
    (tmp_path / "failing_connectors.py").write_text(FAILING_CONNECTOR, encoding="utf-8")
    connector = tmp_path / "failing.properties"
    connector.write_text(
        "name=failing\nconnector.class=failing_connectors:FailingSourceConnector\n",
        encoding="utf-8",
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    with standalone(write_worker(tmp_path, kafka_bootstrap), connector, env=env) as worker:
        banner = worker.banner()
        reason = "cdk.errors.ConnectException: cannot reach the ACME API at https://acme.invalid"
        assert f"connectors: failing (FAILED: {reason})" in banner
        match = re.search(r"REST API at (http://\S+);", banner)
        assert match, banner
        status = httpx.get(f"{match.group(1)}/connectors/failing/status", timeout=10).json()
        assert status["connector"]["state"] == "FAILED"
        assert worker.stop() == 0
    output = worker.output
    assert f"ERROR cdk.cli.standalone: Connector failing FAILED: {reason}" in output
    assert "Created connector failing" not in output


def test_an_unreachable_broker_is_one_warning_naming_the_bootstrap_servers(
    tmp_path: Path,
) -> None:
    with socket.socket() as probe:  # a loopback port nothing listens on: connections refused
        probe.bind(("127.0.0.1", 0))
        unreachable = f"127.0.0.1:{probe.getsockname()[1]}"
    source_file = tmp_path / "in.txt"
    source_file.write_text("one\n", encoding="utf-8")
    connector = tmp_path / "source.properties"
    connector.write_text(
        f"name=src\nconnector.class=FileStreamSource\nfile={source_file}\ntopic=t\n",
        encoding="utf-8",
    )
    with standalone(write_worker(tmp_path, unreachable), connector) as worker:
        # the worker waits up to 10 s for the cluster id first: its admin client retries the
        # broker all that time (librdkafka logged about 200 lines at INFO for it before)
        worker.banner()
        assert worker.stop() == 0
    output = worker.output
    warnings = [
        line for line in output.splitlines() if "Kafka broker unreachable at bootstrap" in line
    ]
    assert len(warnings) == 1, output
    assert (
        f"WARNING cdk.kafka: Kafka broker unreachable at bootstrap servers '{unreachable}'"
        in (warnings[0])
    )
    assert "rdkafka" not in output  # librdkafka's lines for each attempt went to DEBUG
    assert "Traceback" not in output


LOGGING_CONNECTOR = """
import logging
import threading

from cdk import ConfigDef, ConnectException, SourceConnector, SourceTask

log = logging.getLogger("acme.connector")


class ChattyTask(SourceTask):
    def start(self, props):
        self._stop = threading.Event()
        self._n = 0

    def poll(self):
        self._n += 1
        if self._n == 1:
            log.info("polling the ACME API")
        if self._n == 2:
            try:
                raise ValueError("a bad page")
            except ValueError:
                log.exception("could not read a page")
        self._stop.wait(0.05)
        return None

    def stop(self):
        self._stop.set()


class ChattySourceConnector(SourceConnector):
    def version(self):
        return "1.0"

    def config(self):
        return ConfigDef()

    def start(self, props):
        log.info("connector starting")

    def task_class(self):
        return ChattyTask

    def task_configs(self, max_tasks):
        return [{} for _ in range(max_tasks)]

    def stop(self):
        pass
"""


def _chatty(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    (tmp_path / "chatty_connectors.py").write_text(LOGGING_CONNECTOR, encoding="utf-8")
    connector = tmp_path / "chatty.properties"
    connector.write_text(
        "name=chatty\nconnector.class=chatty_connectors:ChattySourceConnector\ntasks.max=2\n",
        encoding="utf-8",
    )
    return connector, {**os.environ, "PYTHONPATH": str(tmp_path)}


def test_a_connectors_own_log_lines_carry_its_context(tmp_path: Path, kafka_bootstrap: str) -> None:
    connector, env = _chatty(tmp_path)
    with standalone(write_worker(tmp_path, kafka_bootstrap), connector, env=env) as worker:
        worker.banner()
        for task in (0, 1):
            wait_until(
                lambda task=task: (
                    f"acme.connector: [chatty|task-{task}] polling the ACME API" in worker.output
                ),
                30,
                message=lambda: "the task's line with its context; stderr:\n" + worker.output,
            )
        assert worker.stop() == 0
    output = worker.output
    assert "INFO acme.connector: [chatty|worker] connector starting" in output
    # the kit's own lines on the task's thread carry it too
    assert "INFO cdk.runtime.worker: [chatty|task-0] Creating task chatty-0" in output
    assert "INFO cdk.runtime.worker: [chatty|task-1] Stopping task chatty-1" in output


def test_log_format_json_gives_one_object_a_line(tmp_path: Path, kafka_bootstrap: str) -> None:
    connector, env = _chatty(tmp_path)
    worker_file = write_worker(tmp_path, kafka_bootstrap)
    with standalone("--log-format", "json", worker_file, connector, env=env) as worker:
        worker.banner()

        def records() -> list[dict[str, object]]:
            lines = [line for line in list(worker.lines) if line.startswith("{")]
            return [json.loads(line) for line in lines]

        failed = wait_until(
            lambda: next((r for r in records() if r["message"] == "could not read a page"), None),
            30,
            message=lambda: "the task's exception line; stderr:\n" + worker.output,
        )
        assert worker.stop() == 0
    assert set(failed) == {"time", "level", "logger", "connector", "task", "message", "exception"}
    assert failed["level"] == "ERROR"
    assert failed["logger"] == "acme.connector"
    assert failed["connector"] == "chatty"
    assert failed["task"] in ("task-0", "task-1")
    assert "ValueError: a bad page" in str(failed["exception"])
    started = next(r for r in records() if r["message"] == "connector starting")
    assert (started["connector"], started["task"]) == ("chatty", "worker")
    plain = next(r for r in records() if r["logger"] == "cdk.cli.standalone")
    assert (plain["connector"], plain["task"], plain["exception"]) == (None, None, None)
    # every line but click's banner is JSON
    others = [x for x in worker.output.splitlines() if x and not x.startswith("{")]
    assert all(x.startswith("cdk standalone:") for x in others), others
