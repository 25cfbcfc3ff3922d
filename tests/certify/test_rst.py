"""The RST suite proves itself: the reference connectors pass it, each broken connector fails.

The broken connectors (tests/certify/broken/rst.py) get one restart, pause or stop thing wrong
each; the test asserts that the check about it fails with a message naming the defect.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from harness import ConnectorDriver
from harness.certify import Outcome
from harness.certify.suites import _flows as flows
from harness.certify.suites import rst as rst_suite
from reference_connectors.filestream.certify import FileStreamSinkDriver, FileStreamSourceDriver
from tests.certify import _support
from tests.certify.broken import rst as broken

pytestmark = pytest.mark.slow

RST_IDS = [f"RST-0{n}" for n in range(1, 6)]


@pytest.mark.parametrize(
    "drivers",
    [
        [FileStreamSourceDriver, FileStreamSinkDriver],
        # The SQL connectors pass every check in test_certify_sql.py and
        # test_certify_reference.py (full runs: embedded, testcontainers); here the FileStream
        # ones, which skip different checks.
    ],
    ids=["filestream"],
)
def test_correct_connectors_pass(
    drivers: list[type[ConnectorDriver]], kafka_bootstrap: str, tmp_path: Path
) -> None:
    project = _support.project_for(tmp_path, *drivers)
    run = _support.run_checks(project, ["RST"], kafka_bootstrap, tmp_path)
    results = _support.embedded_results(run)
    assert len(results) == len(RST_IDS) * len(drivers), _support.describe(run)
    for result in results:
        _support.assert_outcome(run, result.id, Outcome.PASSED, subject=result.subject)


@pytest.fixture
def read_ahead_bootstrap(kafka_bootstrap: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """Point the read-ahead sink's own consumer at the session broker."""
    monkeypatch.setattr(broken.ReadAheadSinkTask, "bootstrap_servers", kafka_bootstrap)
    return kafka_bootstrap


@pytest.fixture
def release_leaked_threads() -> Iterator[None]:
    """Let the threads the leaky sink leaves behind end once the test is done."""
    broken.RELEASE_LEAKED.clear()
    yield
    broken.RELEASE_LEAKED.set()


@pytest.fixture
def short_deadlines(monkeypatch: pytest.MonkeyPatch) -> None:
    """Broken connectors fail at a deadline: shorter deadlines keep these tests quick.

    The checks read their deadlines when they run; what fails, and how, is unchanged.
    """
    monkeypatch.setattr(flows, "DELIVERY_TIMEOUT_S", 12.0)
    monkeypatch.setattr(rst_suite, "PAUSE_TIMEOUT_S", 10.0)
    monkeypatch.setattr(rst_suite, "THREAD_GRACE_S", 3.0)


BROKEN = [
    # a restart in the same process fails: the first instance's lock file is still there
    ("RST-01", broken.LockingConnectorDriver, ["the connector FAILED", ".connector.lock"]),
    ("RST-02", broken.LockingTaskDriver, ["task 0 FAILED", ".task.lock"]),
    # the failed batch was bookmarked before Kafka had it: skipped after the restart
    ("RST-03", broken.BookmarkDriver, ["40 of the 40 records written when the task failed"]),
    # poll() never returns without data: the task cannot be paused
    ("RST-04", broken.BlockingPollDriver, ["to be PAUSED", "task 0 RUNNING"]),
    # its own consumer keeps writing while the connector is paused
    ("RST-04", broken.ReadAheadDriver, ["records written while PAUSED were delivered"]),
    # lines written while paused go stale in its buffer and are dropped
    ("RST-04", broken.DroppingDriver, ["40 of the 40 records written while PAUSED"]),
    ("RST-05", broken.SlowStopDriver, ["task 0 stop() took 7"]),
    ("RST-05", broken.LeakyThreadDriver, ["'leaky-flusher' (non-daemon)", "3s after stop()"]),
]


@pytest.mark.usefixtures("read_ahead_bootstrap", "release_leaked_threads", "short_deadlines")
@pytest.mark.parametrize(
    ("check_id", "driver", "fragments"),
    BROKEN,
    ids=[f"{check_id}-{driver.__name__}" for check_id, driver, _ in BROKEN],
)
def test_broken_connector_fails(
    check_id: str,
    driver: type[ConnectorDriver],
    fragments: list[str],
    kafka_bootstrap: str,
    tmp_path: Path,
) -> None:
    _support.assert_broken_fails(check_id, driver, fragments, kafka_bootstrap, tmp_path)


def test_every_rst_check_has_a_broken_connector() -> None:
    assert {check_id for check_id, _, _ in BROKEN} == set(RST_IDS)
