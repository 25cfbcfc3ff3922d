"""The RBL suite proves itself: the reference connectors pass it, each broken connector fails.

The broken connectors (tests/certify/broken/rbl.py) get one rebalance thing wrong each; the test
asserts that the check about it fails with a message naming the defect.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import ConnectorDriver
from harness._driver import source_streams
from harness.certify import Outcome
from harness.certify.suites import _flows as flows
from harness.certify.suites import rbl as rbl_suite
from harness.certify.suites import rst as rst_suite
from reference_connectors.filestream.certify import FileStreamSinkDriver, FileStreamSourceDriver
from tests.certify import _support
from tests.certify.broken import rbl as broken
from tests.certify.broken._sqlite_base.certify import SqliteSourceDriver

pytestmark = pytest.mark.slow

RBL_IDS = ["RBL-01", "RBL-02", "RBL-03", "RBL-04"]

#: What the correct connectors leave not verified, with the reason's key words (anything else
#: must pass).
EXPECTED_NOT_VERIFIED = {
    ("RBL-01", "FileStreamSourceDriver"): "declares 1 input stream",
    ("RBL-02", "FileStreamSourceDriver"): "declares 1 input stream",
    ("RBL-03", "FileStreamSourceDriver"): "does not declare detects_new_streams",
}


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
    run = _support.run_checks(project, ["RBL"], kafka_bootstrap, tmp_path)
    # RBL-03 is for sources only, RBL-04 for sinks only
    results = _support.embedded_results(run)
    assert len(results) == 3 * len(drivers), _support.describe(run)
    for result in results:
        reason = EXPECTED_NOT_VERIFIED.get((result.id, result.subject))
        if reason is not None:
            _support.assert_outcome(run, result.id, Outcome.NOT_VERIFIED, subject=result.subject)
            assert reason in result.message, _support.describe(run)
        else:
            _support.assert_outcome(run, result.id, Outcome.PASSED, subject=result.subject)


@pytest.fixture
def short_deadlines(monkeypatch: pytest.MonkeyPatch) -> None:
    """Broken connectors fail at a deadline: shorter deadlines keep these tests quick.

    The checks read their deadlines when they run; what fails, and how, is unchanged.
    """
    monkeypatch.setattr(flows, "DELIVERY_TIMEOUT_S", 12.0)
    monkeypatch.setattr(rst_suite, "PAUSE_TIMEOUT_S", 10.0)
    monkeypatch.setattr(rbl_suite, "TASKS_TIMEOUT_S", 10.0)


BROKEN = [
    # one task, whatever tasks.max allows
    ("RBL-01", broken.OneTaskDriver, ["(4 tasks) to be RUNNING after tasks.max 1 -> 4", "task 0"]),
    # one table per task: going down to one task drops three tables
    ("RBL-02", broken.TablePerTaskDriver, ["30 of the 40 records written after tasks.max 4 -> 1"]),
    # the table monitor is off: a table created while running is never copied
    ("RBL-03", broken.BlindDriver, ["request_task_reconfiguration", "40 of the 40 records"]),
    # close() drops what it buffered although pre_commit() reported it as written
    ("RBL-04", broken.StopOnlyWriterDriver, ["put() to task #1, which then closed partitions"]),
]


@pytest.mark.usefixtures("short_deadlines")
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


def test_every_rbl_check_has_a_broken_connector() -> None:
    assert {check_id for check_id, _, _ in BROKEN} == set(RBL_IDS)


class _PropertyStreams(FileStreamSourceDriver):
    @property
    def streams(self) -> int:  # type: ignore[override]  # the contract allows a property
        return 1


def test_streams_may_be_a_property_or_an_attribute(tmp_path: Path) -> None:
    assert source_streams(FileStreamSourceDriver, tmp_path) == 1
    assert source_streams(SqliteSourceDriver, tmp_path) == 4
    assert source_streams(_PropertyStreams, tmp_path) == 1

    class Wrong(FileStreamSourceDriver):
        streams = "4"  # type: ignore[assignment]

    with pytest.raises(TypeError, match=r"Wrong.streams must be a positive int .* gives '4'"):
        source_streams(Wrong, tmp_path)


def test_a_property_streams_reaches_the_check(kafka_bootstrap: str, tmp_path: Path) -> None:
    # It used to end in ERROR: int() argument must be ... not 'property'.
    project = _support.project_for(tmp_path, _PropertyStreams)
    run = _support.run_checks(project, ["RBL-01"], kafka_bootstrap, tmp_path)
    _support.assert_outcome(run, "RBL-01", Outcome.NOT_VERIFIED)
    assert "declares 1 input stream" in run.results[0].message
