"""The ERR suite proves itself: the reference connectors pass it, each broken connector fails.

The broken connectors (tests/certify/broken/err.py) get one error-handling thing wrong each;
the test asserts that the check about it fails with a message naming the defect.
"""

from __future__ import annotations

import sqlite3
import traceback
from pathlib import Path
from typing import ClassVar

import pytest

import cdk.runtime
from cdk import ConnectException, DataException
from harness import ConnectorDriver
from harness.certify import Outcome
from harness.certify.suites import err
from harness.certify.suites.err import fatal, retriable
from reference_connectors.filestream.certify import FileStreamSinkDriver, FileStreamSourceDriver
from tests.certify import _support
from tests.certify.broken import err as broken

ERR_IDS = ["ERR-01", "ERR-02", "ERR-03"]

#: Checks the correct connectors leave not verified, with the capability the reason names.
EXPECTED_NOT_VERIFIED = {
    ("ERR-01", "FileStreamSourceDriver"): "outage()",
    ("ERR-01", "FileStreamSinkDriver"): "outage()",
    ("ERR-02", "FileStreamSourceDriver"): "break_external_system()",
    ("ERR-02", "FileStreamSinkDriver"): "break_external_system()",
}


def test_correct_connectors_pass(kafka_bootstrap: str, tmp_path: Path) -> None:
    # The SQL connectors pass every check in test_certify_sql.py and test_certify_reference.py
    # (full runs: embedded, testcontainers); here the FileStream ones.
    drivers: list[type[ConnectorDriver]] = [
        FileStreamSourceDriver,
        FileStreamSinkDriver,
    ]
    project = _support.project_for(tmp_path, *drivers)
    run = _support.run_checks(project, ERR_IDS, kafka_bootstrap, tmp_path)
    assert len(run.results) == len(ERR_IDS) * len(drivers), _support.describe(run)
    for result in run.results:
        capability = EXPECTED_NOT_VERIFIED.get((result.id, result.subject))
        expected = Outcome.NOT_VERIFIED if capability else Outcome.PASSED
        _support.assert_outcome(run, result.id, expected, subject=result.subject)
        if capability:
            assert capability in result.message, _support.describe(run)


def test_a_subclass_of_retriable_exception_counts_as_retried(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    project = _support.project_for(tmp_path, broken.SubclassRetriableSourceDriver)
    run = _support.run_checks(project, ["ERR-01"], kafka_bootstrap, tmp_path)
    _support.assert_outcome(run, "ERR-01", Outcome.PASSED)
    (result,) = run.results
    assert result.evidence["RetriableException logged"] is True, _support.describe(run)
    # the outage ends a second after the first retry, not at its 6 s bound
    assert result.evidence["outage lasted (s)"] < retriable.OUTAGE_MAX_S, result.evidence


BROKEN = [
    (
        "ERR-01",
        broken.TransientIsFatalSinkDriver,
        ["FAILED during the outage", "ConnectException: Cannot write to the database"],
    ),
    (
        "ERR-01",
        broken.TransientIsFatalSourceDriver,
        ["FAILED during the outage", "ConnectException: Cannot read the database"],
    ),
    ("ERR-02", broken.SwallowingSinkDriver, ["task 0 RUNNING", "Could not write"]),
    (
        "ERR-02",
        broken.RawErrorSinkDriver,
        ["sqlite3.DatabaseError: file is not a database", "not a ConnectException"],
    ),
    ("ERR-03", broken.GapIntolerantSinkDriver, ["FAILED", "DataException: Offset gap"]),
    ("ERR-03", broken.SkipIsFailureSourceDriver, ["FAILED", "did not acknowledge"]),
]


@pytest.fixture
def short_deadlines(monkeypatch: pytest.MonkeyPatch) -> None:
    """A connector that swallows ERR-02's error fails at the deadline: a shorter one keeps it quick.

    The deadline starts once the records before the break were delivered (the task is RUNNING),
    and a connector that fails correctly does so within a second or two; what fails, and how, is
    unchanged.
    """
    monkeypatch.setattr(fatal, "FAIL_S", 10.0)


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


def test_broken_connectors_cover_every_check() -> None:
    assert {check_id for check_id, _, _ in BROKEN} == set(ERR_IDS)


# ---------------------------------------------------------------------------------------------
# Judging traces (ERR-02), without a worker.


def _trace(error: BaseException) -> str:
    return "".join(traceback.format_exception(type(error), error, error.__traceback__))


def _raised(make: type[BaseException], message: str, cause: BaseException | None = None) -> str:
    try:
        if cause is not None:
            try:
                raise cause
            except BaseException as inner:
                raise make(message) from inner
        raise make(message)
    except BaseException as exc:  # noqa: BLE001 - the trace is what the test needs
        return _trace(exc)


def test_connector_error_finds_a_wrapped_connect_exception() -> None:
    trace = _raised(ConnectException, "SQLite error in db: file is not a database")
    found = err.connector_error(_raise_wrapped_text(trace))
    assert found is not None
    assert found.name == "cdk.errors.ConnectException"
    assert found.message == "SQLite error in db: file is not a database"


def test_connector_error_accepts_subclasses_with_a_cause() -> None:
    trace = _raised(DataException, "bad row 7", cause=sqlite3.IntegrityError("NOT NULL"))
    found = err.connector_error(trace)
    assert found is not None
    assert found.name == "cdk.errors.DataException"
    assert "sqlite3.IntegrityError: NOT NULL" in err.describe_chain(trace)


def test_connector_error_ignores_the_runtime_wrapper() -> None:
    trace = _raise_wrapped_text(_raised(sqlite3.DatabaseError, "file is not a database"))
    assert err.connector_error(trace) is None
    assert err.describe_chain(trace) == "sqlite3.DatabaseError: file is not a database"


def test_connector_error_needs_a_message() -> None:
    assert err.connector_error(_raised(ConnectException, "")) is None
    assert err.connector_error(_raised(KeyError, "table")) is None


def test_parse_trace_reads_multi_line_messages() -> None:
    (only,) = err.parse_trace(_raised(ConnectException, "first line\nsecond line"))
    assert only.message == "first line\nsecond line"
    assert only.raised_in == __file__


def _raise_wrapped_text(inner_trace: str) -> str:
    runtime_file = Path(cdk.runtime.__file__).parent / "_sink_runner.py"
    return (
        f"{inner_trace.rstrip()}\n\nThe above exception was the direct cause of the following "
        "exception:\n\nTraceback (most recent call last):\n"
        f'  File "{runtime_file}", line 1, in _deliver_messages\n'
        '    raise ConnectException("Exiting WorkerSinkTask due to unrecoverable exception.")\n'
        "cdk.errors.ConnectException: Exiting WorkerSinkTask due to unrecoverable exception.\n"
    )


class _NoExternalSystem(FileStreamSourceDriver):
    external_system: ClassVar[bool] = False  # as a generator's driver would declare


def test_error_checks_do_not_apply_without_an_external_system(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    project = _support.project_for(tmp_path, _NoExternalSystem)
    run = _support.run_checks(project, ["ERR-01", "ERR-02"], kafka_bootstrap, tmp_path)
    for check_id in ("ERR-01", "ERR-02"):
        _support.assert_outcome(run, check_id, Outcome.SKIPPED)
    assert all("declares external_system = False" in r.message for r in run.results)
