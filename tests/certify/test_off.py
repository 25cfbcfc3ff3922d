"""The OFF suite proves itself: the reference connectors pass it, each broken connector fails.

The broken connectors (tests/certify/broken/off.py) get one thing about offsets wrong each; the
tests assert that the checks about it fail with a message naming the defect (the missing,
duplicate or unexpected ids, the committed offset that covers unstored records...).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import ConnectorDriver
from harness.certify import Outcome
from reference_connectors.filestream.certify import FileStreamSinkDriver, FileStreamSourceDriver
from reference_connectors.sql.certify import SqliteSourceDriver
from tests.certify import _support
from tests.certify.broken import off as broken

SOURCE_IDS = ["OFF-01", "OFF-02", "OFF-03", "OFF-04", "OFF-08", "OFF-13"]
SINK_IDS = ["OFF-05", "OFF-06", "OFF-07", "OFF-08"]


@pytest.mark.parametrize(
    "drivers",
    [
        pytest.param((FileStreamSourceDriver, FileStreamSinkDriver), id="filestream"),
        # The SQL connectors pass every check in test_certify_sql.py and
        # test_certify_reference.py (full runs: embedded, testcontainers); here the FileStream
        # ones, which skip different checks.
    ],
)
def test_correct_connectors_pass(
    drivers: tuple[type[ConnectorDriver], ...], kafka_bootstrap: str, tmp_path: Path
) -> None:
    project = _support.project_for(tmp_path, *drivers)
    run = _support.run_checks(project, ["OFF"], kafka_bootstrap, tmp_path)
    results = _support.embedded_results(run)
    assert len(results) == len(SOURCE_IDS) + len(SINK_IDS), _support.describe(run)
    for result in results:
        _support.assert_outcome(run, result.id, Outcome.PASSED, subject=result.subject)
    # the crash checks report the duplicates they counted
    metrics = {m.name for r in run.results for m in r.metrics}
    assert metrics == {"source.crash.duplicates", "sink.crash.duplicates"}


#: (driver, {check id: fragments its failure message must contain}).
BROKEN: list[tuple[type[ConnectorDriver], dict[str, list[str]]]] = [
    (
        broken.IgnoresOffsetsDriver,
        {
            "OFF-01": ["after a clean stop of the worker", "duplicates (ids 1, 2, 3"],
            "OFF-02": ["kill -9", "more than the bound", "records were in Kafka at the kill"],
            "OFF-03": ["resuming", "unexpected (ids 1)"],
        },
    ),
    (
        broken.RepeatsRowDriver,
        {
            "OFF-01": ["1 duplicates"],
            "OFF-03": ['from offset {"incrementing": 1}', "1 unexpected (ids 1)"],
        },
    ),
    (broken.SkipsRowDriver, {"OFF-03": ['from offset {"incrementing": 1}', "1 missing (ids 2)"]}),
    (broken.ReadAheadDriver, {"OFF-03": ["(the offset of record 1,", "9 missing"]}),
    (broken.RestartingDriver, {"OFF-04": ["emitted 20 records"]}),
    (broken.RejectingDriver, {"OFF-04": ["raised ConnectException", "past the end"]}),
    (broken.RestartingCursorDriver, {"OFF-04": ['-> {"cursor": "', "emitted 20 records"]}),
    (broken.SideFileDriver, {"OFF-08": ["40 of the 40 records were not emitted again"]}),
    (
        broken.EagerCommitDriver,
        {
            "OFF-05": ["committed offset 20 on partition 0", "20 of the 20 records below it"],
            "OFF-07": ["kill -9", "missing (ids 1,"],
        },
    ),
    (broken.ForgetfulDriver, {"OFF-06": ["after a clean stop", "missing"]}),
    (broken.NeverCommitsDriver, {"OFF-06": ["after a clean stop", "duplicates"]}),
    (broken.SelfRewindingDriver, {"OFF-08": ["were not given to put() again"]}),
    (broken.EosAheadDriver, {"OFF-13": ["to be committed to", "1 of them are missing (ids 41)"]}),
    (
        broken.EosRepeatsDriver,
        {"OFF-13": ["read read_committed after 2 kill -9", "duplicates (ids"]},
    ),
    (
        broken.EosForgetsToCommitDriver,
        {"OFF-13": ["to be committed to", "30 of them are missing (ids 1, 2, 3,"]},
    ),
]


@pytest.mark.parametrize(
    ("driver", "failures"), BROKEN, ids=[driver.__name__ for driver, _ in BROKEN]
)
def test_broken_connector_fails(
    driver: type[ConnectorDriver],
    failures: dict[str, list[str]],
    kafka_bootstrap: str,
    tmp_path: Path,
) -> None:
    project = _support.project_for(tmp_path, driver)
    run = _support.run_checks(project, list(failures), kafka_bootstrap, tmp_path)
    for check_id, fragments in failures.items():
        _support.assert_outcome(run, check_id, Outcome.FAILED)
        (result,) = [r for r in run.results if r.id == check_id]
        for fragment in fragments:
            assert fragment in result.message, _support.describe(run)


def test_a_future_offset_with_no_number_comes_from_the_driver(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    # Offsets such as Redis stream ids, cursors and GTIDs have no number the harness can push
    # ahead: OFF-04 takes an offset beyond the data from the driver, and is not verified (not
    # skipped: it applies) when the driver has none.
    project = _support.project_for(tmp_path, broken.CursorDriver, broken.CursorFutureDriver)
    run = _support.run_checks(project, ["OFF-04"], kafka_bootstrap, tmp_path)
    _support.assert_outcome(run, "OFF-04", Outcome.NOT_VERIFIED, subject="CursorDriver")
    _support.assert_outcome(run, "OFF-04", Outcome.PASSED, subject="CursorFutureDriver")
    without, given = run.results
    assert "no future_offset()" in without.message
    assert '{"cursor": "0000000000bf"}' in without.message
    assert given.evidence["future offsets from"] == "the driver's future_offset()"
    assert run.exit_code == 3


def test_every_check_has_a_broken_connector() -> None:
    failed = {check_id for _, failures in BROKEN for check_id in failures}
    assert failed == set(SOURCE_IDS) | set(SINK_IDS)


def test_a_source_that_does_not_declare_exactly_once_skips_off13(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    project = _support.project_for(tmp_path, broken.SkipsRowDriver)
    run = _support.run_checks(project, ["OFF-13"], kafka_bootstrap, tmp_path)
    _support.assert_outcome(run, "OFF-13", Outcome.SKIPPED)
    (result,) = run.results
    assert "exactly_once_support() answers None" in result.message


class SqlTimestampIncrementingDriver(SqliteSourceDriver):
    """The SQL source in ``timestamp+incrementing`` mode (the certify driver's column)."""

    def example_config(self, topic: str) -> dict[str, str]:
        return {
            **super().example_config(topic),
            "mode": "timestamp+incrementing",
            "timestamp.column.name": "created",
            "validate.non.null": "false",  # the driver's tables declare it nullable
        }


@pytest.mark.slow
@pytest.mark.parametrize(
    "driver", [SqliteSourceDriver, SqlTimestampIncrementingDriver], ids=["incrementing", "ts+inc"]
)
def test_the_sql_source_runs_exactly_once_in_its_two_exact_modes(
    driver: type[ConnectorDriver], kafka_bootstrap: str, tmp_path: Path
) -> None:
    project = _support.project_for(tmp_path, driver)
    run = _support.run_checks(project, ["OFF-13"], kafka_bootstrap, tmp_path)
    _support.assert_outcome(run, "OFF-13", Outcome.PASSED)
    (result,) = run.results
    counts = next(v for k, v in result.evidence.items() if k.startswith("read read_committed"))
    assert counts["duplicates"] == 0
    assert counts["lost"] == 0


def test_the_kit_s_sources_declare_exactly_once_only_where_it_holds() -> None:
    from cdk import ExactlyOnceSupport
    from reference_connectors.filestream import FileStreamSourceConnector
    from reference_connectors.sql import SqlSourceConnector

    sql = SqlSourceConnector()
    for mode, answer in [
        ("incrementing", ExactlyOnceSupport.SUPPORTED),
        ("Timestamp+Incrementing", ExactlyOnceSupport.SUPPORTED),
        ("timestamp", ExactlyOnceSupport.UNSUPPORTED),
        ("bulk", ExactlyOnceSupport.UNSUPPORTED),
    ]:
        assert sql.exactly_once_support({"mode": mode}) is answer, mode
    files = FileStreamSourceConnector()
    assert files.exactly_once_support({"file": "in.txt"}) is ExactlyOnceSupport.SUPPORTED
    assert files.exactly_once_support({}) is ExactlyOnceSupport.UNSUPPORTED
