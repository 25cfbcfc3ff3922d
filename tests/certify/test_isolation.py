"""``cdk certify`` runs connector code in child processes: a connector cannot hang or kill it.

Each test certifies a small broken project with the real CLI (a subprocess, on the session
broker) and ``--only`` a few quick checks: a connector that leaks a non-daemon thread, one whose
``validate()`` never returns, one whose task hangs in ``stop()``, one whose task ends the
process (``os._exit``, SIGSEGV). The run must end within its bound, say what it abandoned and
why, and keep running the checks after the broken one.
"""

from __future__ import annotations

import dataclasses
import io
import json
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from harness.certify import Outcome
from harness.certify._child import leaked_threads, read_frame, result_fields, write_frame

CDK = Path(sys.executable).with_name("cdk")

PYPROJECT = """\
[project]
name = "broken-isolation"
version = "0.0.1"

[tool.cdk]
drivers = ["{module}:{driver}", "reference_connectors.filestream.certify:FileStreamSinkDriver"]
"""

# Every broken source is a FileStream source with one defect; its driver is the FileStream
# source driver pointed at it.
HEADER = """\
from __future__ import annotations

import os
import signal
import threading
from typing import ClassVar

from cdk.config import Config
from reference_connectors.filestream import FileStreamSourceConnector
from reference_connectors.filestream._source import FileStreamSourceTask
from reference_connectors.filestream.certify import FileStreamSourceDriver
"""

LEAKS_A_THREAD = """
class LeakyTask(FileStreamSourceTask):
    def start(self, props):
        super().start(props)
        forever = threading.Event()
        threading.Thread(target=forever.wait, name="leaked-poller", daemon=False).start()


class Leaky(FileStreamSourceConnector):
    def task_class(self):
        return LeakyTask


class Driver(FileStreamSourceDriver):
    connector: ClassVar[type] = Leaky
"""

HANGS_IN_VALIDATE = """
class Stuck(FileStreamSourceConnector):
    def validate(self, props) -> Config:
        threading.Event().wait()
        raise AssertionError("unreachable")


class Driver(FileStreamSourceDriver):
    connector: ClassVar[type] = Stuck
"""

HANGS_IN_CONFIG = """
class Stuck(FileStreamSourceConnector):
    def config(self):
        threading.Event().wait()


class Driver(FileStreamSourceDriver):
    connector: ClassVar[type] = Stuck
"""

HANGS_IN_STOP = """
class StuckTask(FileStreamSourceTask):
    def stop(self):
        threading.Event().wait()


class Stuck(FileStreamSourceConnector):
    def task_class(self):
        return StuckTask


class Driver(FileStreamSourceDriver):
    connector: ClassVar[type] = Stuck
"""

CRASHES = """
class CrashingTask(FileStreamSourceTask):
    def poll(self):
        records = super().poll()
        if records:
            {crash}
        return records


class Crashing(FileStreamSourceConnector):
    def task_class(self):
        return CrashingTask


class Driver(FileStreamSourceDriver):
    connector: ClassVar[type] = Crashing
"""


def make_project(tmp_path: Path, body: str) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text(
        PYPROJECT.format(module="broken_isolation", driver="Driver"), encoding="utf-8"
    )
    (root / "broken_isolation.py").write_text(HEADER + textwrap.dedent(body), encoding="utf-8")
    return root


def certify(
    root: Path, kafka: str, *args: str, bound: float
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """Run ``cdk certify`` on ``root``; fail if it has not exited after ``bound`` seconds."""
    try:
        answer = subprocess.run(
            [str(CDK), "certify", str(root), "--kafka", kafka, *args],
            capture_output=True,
            text=True,
            timeout=bound,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"cdk certify did not exit within {bound}s; output so far:\n{exc.stdout!r}")
    summary_file = root / "certification-report" / "summary.json"
    assert summary_file.is_file(), answer.stdout + answer.stderr
    return answer, json.loads(summary_file.read_text(encoding="utf-8"))


def outcomes(summary: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(c["id"], c["subject"]): c for c in summary["checks"]}


def test_a_leaked_non_daemon_thread_is_named_and_cannot_hang_the_run(
    tmp_path: Path, kafka_bootstrap: str
) -> None:
    root = make_project(tmp_path, LEAKS_A_THREAD)
    answer, summary = certify(root, kafka_bootstrap, "--only", "OFF-01,CFG-01", bound=120)
    output = answer.stdout + answer.stderr
    assert answer.returncode == 1, output
    found = outcomes(summary)
    leaky = found[("OFF-01", "Driver")]
    assert leaky["outcome"] == "error", leaky
    assert "non-daemon threads" in leaky["message"], leaky
    assert "leaked-poller" in leaky["message"], leaky
    # the check after it ran, in a fresh process
    assert found[("CFG-01", "FileStreamSinkDriver")]["outcome"] == "passed", output
    assert "Abandoned (1):" in answer.stdout, output
    assert "OFF-01 [Driver]: left non-daemon threads running: leaked-poller" in answer.stdout
    (abandoned,) = summary["abandoned"]
    assert abandoned.startswith("OFF-01 [Driver]: left non-daemon threads running: leaked-poller")
    assert "Verdict: FAILED" in answer.stdout, output


def test_a_check_overrunning_its_deadline_is_abandoned_with_a_thread_dump(
    tmp_path: Path, kafka_bootstrap: str
) -> None:
    root = make_project(tmp_path, HANGS_IN_VALIDATE)
    answer, summary = certify(
        root, kafka_bootstrap, "--only", "CFG-02", "--check-timeout", "4", bound=90
    )
    output = answer.stdout + answer.stderr
    assert answer.returncode == 1, output
    found = outcomes(summary)
    stuck = found[("CFG-02", "Driver")]
    assert stuck["outcome"] == "error", stuck
    assert "overran its deadline of 4s" in stuck["message"], stuck
    # the dump shows where the connector was stuck
    assert "broken_isolation.py" in (stuck["details"] or ""), stuck
    assert "in validate" in (stuck["details"] or ""), stuck
    assert found[("CFG-02", "FileStreamSinkDriver")]["outcome"] == "passed", output
    assert "CFG-02 [Driver]: the check overran its deadline of 4s" in answer.stdout, output


def test_a_connector_config_that_never_returns_stops_the_run_with_a_clear_error(
    tmp_path: Path, kafka_bootstrap: str
) -> None:
    # the child generates the config references before its first check: connector code
    root = make_project(tmp_path, HANGS_IN_CONFIG)
    args = ["--kafka", kafka_bootstrap, "--only", "CFG-01", "--check-timeout", "4"]
    try:
        answer = subprocess.run(
            [str(CDK), "certify", str(root), *args],
            capture_output=True,
            text=True,
            timeout=90,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"cdk certify did not exit within 90s; output so far:\n{exc.stdout!r}")
    assert answer.returncode == 2, answer.stdout + answer.stderr
    assert "did not start a check within 10s" in answer.stderr, answer.stderr
    assert "config()" in answer.stderr, answer.stderr
    assert "Traceback" not in answer.stderr, answer.stderr


def test_a_task_hanging_in_stop_cannot_hang_the_run(tmp_path: Path, kafka_bootstrap: str) -> None:
    root = make_project(tmp_path, HANGS_IN_STOP)
    answer, summary = certify(root, kafka_bootstrap, "--only", "RST-05", bound=150)
    output = answer.stdout + answer.stderr
    assert answer.returncode == 1, output
    found = outcomes(summary)
    stuck = found[("RST-05", "Driver")]
    assert stuck["outcome"] == "failed", stuck
    assert "stop()" in stuck["message"], stuck
    assert found[("RST-05", "FileStreamSinkDriver")]["outcome"] == "passed", output
    assert "Verdict: FAILED" in answer.stdout, output


@pytest.mark.parametrize(
    ("crash", "why"),
    [
        ("os._exit(3)", "its process exited with code 3"),
        ("os.kill(os.getpid(), signal.SIGSEGV)", "its process was killed by SIGSEGV"),
    ],
)
def test_a_task_ending_the_process_is_an_error_and_the_next_checks_run(
    tmp_path: Path, kafka_bootstrap: str, crash: str, why: str
) -> None:
    root = make_project(tmp_path, CRASHES.replace("{crash}", crash))
    answer, summary = certify(root, kafka_bootstrap, "--only", "CFG-01,OFF-01", bound=120)
    output = answer.stdout + answer.stderr
    assert answer.returncode == 1, output
    found = outcomes(summary)
    assert found[("CFG-01", "Driver")]["outcome"] == "passed", output
    crashed = found[("OFF-01", "Driver")]
    assert crashed["outcome"] == "error", crashed
    assert why in crashed["message"], crashed
    assert found[("CFG-01", "FileStreamSinkDriver")]["outcome"] == "passed", output
    assert "Verdict: FAILED" in answer.stdout, output
    assert "Exit status: 1" in answer.stdout, output


def test_results_cross_the_process_boundary_field_by_field() -> None:
    # every field but the check crosses, whatever fields CheckResult has; a value that cannot
    # be pickled crosses as its text rather than losing the result
    @dataclasses.dataclass
    class Result:
        check: object
        outcome: Outcome
        evidence: dict[str, Any]
        handle: object

    lock = threading.Lock()
    fields = result_fields(Result(object(), Outcome.PASSED, {"sent": 100, "stored": 100}, lock))
    assert set(fields) == {"outcome", "evidence", "handle"}
    assert fields["outcome"] is Outcome.PASSED
    assert fields["evidence"] == {"sent": 100, "stored": 100}
    assert fields["handle"] == repr(lock)
    buffer = io.BytesIO()
    write_frame(buffer, ("result", 1, fields))
    buffer.seek(0)
    assert read_frame(buffer) == ("result", 1, fields)
    with pytest.raises(EOFError):
        read_frame(buffer)


def test_a_leaked_thread_is_named_with_where_it_is() -> None:
    before = set(threading.enumerate())
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait, name="left-behind")
    thread.start()
    try:
        (leaked,) = leaked_threads(before, grace=0.2)
        assert leaked.startswith("left-behind (at ")
        assert "in wait" in leaked
    finally:
        stop.set()
        thread.join()
    assert leaked_threads(before, grace=0.2) == []
