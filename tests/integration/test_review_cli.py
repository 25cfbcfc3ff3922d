"""``cdk standalone`` as a subprocess (shutdown with a misbehaving task)."""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests._wait import wait_until

REPO_ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_sigterm_exits_despite_hanging_task_stop(kafka_bootstrap: str, tmp_path: Path) -> None:
    """SIGTERM stops ``cdk standalone`` within the graceful timeout even when a source task's
    stop() hangs (Kafka runs SourceTask.stop() on the task thread and gives up after
    task.shutdown.graceful.timeout.ms)."""
    port = _free_port()
    worker = tmp_path / "worker.properties"
    worker.write_text(
        f"bootstrap.servers={kafka_bootstrap}\n"
        "key.converter=org.apache.kafka.connect.storage.StringConverter\n"
        "value.converter=org.apache.kafka.connect.storage.StringConverter\n"
        f"offset.storage.file.filename={tmp_path / 'offsets'}\n"
        f"listeners=http://127.0.0.1:{port}\n"
        "task.shutdown.graceful.timeout.ms=1000\n"
    )
    connector = tmp_path / "hang.properties"
    connector.write_text(
        "name=hang\nconnector.class=tests.integration.test_review_runtime.HangingStopTaskSource\n"
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    cdk = Path(sys.executable).parent / "cdk"
    proc = subprocess.Popen(
        [str(cdk), "standalone", str(worker), str(connector)],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:

        def running() -> bool:
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/connectors/hang/status", timeout=2)
            except httpx.HTTPError:
                return False
            return r.status_code == 200 and [t["state"] for t in r.json()["tasks"]] == ["RUNNING"]

        wait_until(running, 15, 0.1, "the hang connector's task RUNNING")
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(8)
        except subprocess.TimeoutExpired:
            raise AssertionError(
                "cdk standalone did not exit 8 s after SIGTERM: SourceTask.stop() hangs the "
                "herder's shutdown"
            ) from None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        if proc.stderr is not None:
            proc.stderr.close()


def test_json_null_value_is_refused(tmp_path: Path) -> None:
    """A JSON connector file with ``null`` values: Kafka refuses them ("Null value can not be
    supplied as the configuration value"); it must not run with the text "null"."""
    from click.testing import CliRunner

    from cdk.cli._main import cli
    from cdk.cli._standalone import read_connector_file
    from cdk.errors import ConfigException

    connector = tmp_path / "nulls.json"
    connector.write_text(
        '{"name": "n", "config": {"connector.class": "FileStreamSource", "file": null, '
        '"topic": "t"}}',
        encoding="utf-8",
    )
    with pytest.raises(ConfigException, match=r"Null value can not be supplied.*\bfile\b"):
        read_connector_file(connector)
    worker = tmp_path / "worker.properties"
    worker.write_text(
        "bootstrap.servers=127.0.0.1:1\n"
        "key.converter=org.apache.kafka.connect.storage.StringConverter\n"
        "value.converter=org.apache.kafka.connect.storage.StringConverter\n",
        encoding="utf-8",
    )
    handlers, level = logging.root.handlers[:], logging.root.level
    try:  # the command configures logging: leave the test process's as it was
        result = CliRunner().invoke(cli, ["standalone", str(worker), str(connector)])
    finally:
        logging.root.handlers[:] = handlers
        logging.root.setLevel(level)
    assert result.exit_code == 1, result.output
    assert "Null value can not be supplied as the configuration value" in result.output
    assert "Traceback" not in result.output
