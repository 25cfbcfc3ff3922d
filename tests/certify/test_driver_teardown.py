"""A driver whose ``teardown()`` raises: the check ends in ERROR with the trace, never PASSED."""

from __future__ import annotations

from pathlib import Path

from typing_extensions import override

from harness.certify import Outcome
from reference_connectors.filestream.certify import FileStreamSourceDriver
from tests.certify import _support


class TeardownFailsDriver(FileStreamSourceDriver):
    """The FileStream source's driver, except that cleaning up raises."""

    @override
    def teardown(self) -> None:
        super().teardown()
        raise RuntimeError("cannot remove the scratch folder")


def test_a_teardown_error_is_an_error_of_the_check(kafka_bootstrap: str, tmp_path: Path) -> None:
    project = _support.project_for(tmp_path, TeardownFailsDriver)
    run = _support.run_checks(project, ["SCH-01"], kafka_bootstrap, tmp_path)
    (result,) = run.results
    assert result.outcome is Outcome.ERROR, _support.describe(run)
    assert "teardown() raised RuntimeError: cannot remove the scratch folder" in result.message
    assert result.evidence["driver teardown() failed"] == (
        "RuntimeError: cannot remove the scratch folder"
    )
    trace = result.evidence["driver teardown() trace"]
    assert "Traceback" in trace, trace
    assert "in teardown" in trace, trace
    assert result.details is not None
    assert "cannot remove the scratch folder" in result.details
    assert not run.passed


def test_the_same_driver_without_the_error_passes(kafka_bootstrap: str, tmp_path: Path) -> None:
    project = _support.project_for(tmp_path, FileStreamSourceDriver)
    run = _support.run_checks(project, ["SCH-01"], kafka_bootstrap, tmp_path)
    _support.assert_outcome(run, "SCH-01", Outcome.PASSED)
