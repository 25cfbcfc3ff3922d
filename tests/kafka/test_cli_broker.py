"""``cdk broker`` as a real subprocess."""

from __future__ import annotations

import re
import selectors
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cdk.kafka import BrokerUnreachableException, check_connection, create_topics, free_port
from harness.providers.kafka import consume_all, produce

CDK = Path(sys.executable).with_name("cdk")
READY = re.compile(r"Kafka broker \(Tansu ([\w.-]+)\) listening on (127\.0\.0\.1:\d+) ")


def read_line(proc: subprocess.Popen[str], timeout: float) -> str:
    """The next stdout line of ``proc``, waiting at most ``timeout`` seconds."""
    assert proc.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ)
        if not selector.select(timeout):
            raise AssertionError(f"no output from {proc.args} within {timeout}s")
    return proc.stdout.readline()


@pytest.fixture
def broker_process() -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        [str(CDK), "broker", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_cdk_broker_serves_until_signalled(
    broker_process: subprocess.Popen[str], sig: signal.Signals
) -> None:
    line = read_line(broker_process, timeout=30)
    match = READY.match(line)
    assert match, line
    assert match.group(1) == "0.6.0"
    bootstrap = match.group(2)
    create_topics(bootstrap, ["cli-topic"])
    produce(bootstrap, "cli-topic", [b"x", b"y"])
    assert [r.value for r in consume_all(bootstrap, "cli-topic", min_records=2)] == [b"x", b"y"]

    broker_process.send_signal(sig)
    _, err = broker_process.communicate(timeout=30)
    assert broker_process.returncode == 0, err
    assert f"Received {sig.name}: stopping the broker" in err
    with pytest.raises(BrokerUnreachableException):
        check_connection(bootstrap, timeout=1)  # the broker process is gone with it


def test_cdk_broker_on_a_busy_port_fails_clearly(kafka_bootstrap: str) -> None:
    port = kafka_bootstrap.rsplit(":", 1)[1]
    result = subprocess.run(
        [str(CDK), "broker", "--port", port], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1
    assert f"127.0.0.1:{port}" in result.stderr
    assert "in use" in result.stderr


def test_cdk_broker_fixed_port(tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "broker.log"
    proc = subprocess.Popen(
        [str(CDK), "broker", "--port", str(port), "--log-file", str(log)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert f"listening on 127.0.0.1:{port} " in read_line(proc, timeout=30)
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
        assert proc.returncode == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=30)
    assert "tansu broker" in log.read_text()


def test_cdk_help_lists_broker() -> None:
    result = subprocess.run([str(CDK), "broker", "--help"], capture_output=True, text=True)
    assert result.returncode == 0
    assert "--port" in result.stdout
    assert "Ctrl-C" in result.stdout
