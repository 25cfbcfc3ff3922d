"""The SCH suite proves itself: the reference connectors pass it, each broken connector fails.

The broken connectors (tests/certify/broken/sch.py) get one schema thing wrong each; the test
asserts that the check about it fails with a message naming the defect.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import ConnectorDriver
from harness.certify import Outcome
from reference_connectors.filestream.certify import FileStreamSinkDriver, FileStreamSourceDriver
from tests.certify import _support
from tests.certify.broken import fidelity
from tests.certify.broken import sch as broken

#: Checks the correct connectors do not pass, with the outcome and what the reason says: not
#: applicable (a declaration, with its reason) or not verified (a capability the driver lacks).
EXPECTED_SKIPS = {
    ("SCH-05", "FileStreamSourceDriver"): (Outcome.NOT_VERIFIED, "evolve_schema()"),
    ("SCH-06", "FileStreamSinkDriver"): (Outcome.SKIPPED, "not a STRUCT"),
    ("SCH-07", "FileStreamSinkDriver"): (Outcome.SKIPPED, "not a STRUCT"),
    ("SCH-08", "FileStreamSinkDriver"): (Outcome.SKIPPED, "accepts_any_schema"),
}
SOURCE_IDS = ["SCH-01", "SCH-02", "SCH-03", "SCH-04", "SCH-05", "SCH-09", "SCH-10", "SCH-11"]
SINK_IDS = [
    "SCH-02",
    "SCH-03",
    "SCH-04",
    "SCH-06",
    "SCH-07",
    "SCH-08",
    "SCH-09",
    "SCH-10",
    "SCH-11",
]


def test_correct_connectors_pass(kafka_bootstrap: str, tmp_path: Path) -> None:
    # The SQL connectors pass every check in test_certify_sql.py and
    # test_certify_reference.py (full runs: embedded, testcontainers); here the FileStream
    # ones, which skip different checks.
    drivers: list[type[ConnectorDriver]] = [
        FileStreamSourceDriver,
        FileStreamSinkDriver,
    ]
    project = _support.project_for(tmp_path, *drivers)
    run = _support.run_checks(project, ["SCH"], kafka_bootstrap, tmp_path)
    assert len(run.results) == len(SOURCE_IDS) + len(SINK_IDS), _support.describe(run)
    for result in run.results:
        expected, reason = EXPECTED_SKIPS.get((result.id, result.subject), (Outcome.PASSED, ""))
        _support.assert_outcome(run, result.id, expected, subject=result.subject)
        assert reason in result.message, _support.describe(run)


BROKEN = [
    (["SCH-01"], broken.MissingFieldSourceDriver, ['null used for required field: "name"']),
    (
        ["SCH-02", "SCH-04", "SCH-10", "SCH-11"],
        broken.FloatDecimalSourceDriver,
        ["value.amount", "wrote Decimal('0.50') (scale 2), emitted Decimal('0.5') (scale 1"],
    ),
    (
        ["SCH-03"],
        broken.SchemalessCrashSinkDriver,
        ["raw Python error", "AttributeError", "'fields'"],
    ),
    (["SCH-05"], broken.CachedSchemaSourceDriver, ["no field 'note1'"]),
    (["SCH-06"], broken.NoEvolveSinkDriver, ["task failed", "KeyError", "certify_added"]),
    (
        ["SCH-07"],
        broken.EveryColumnSinkDriver,
        ["task failed", "DataException", "columns ['score']"],
    ),
    (["SCH-08"], broken.CoercingSinkDriver, ["stored 15 rows of them", "'id' changed"]),
    # value fidelity: each of these was CERTIFIABLE while values were compared only when a
    # driver chose to read them back
    (["SCH-02"], broken.GarblingSinkDriver, ["record id", "name: sent 'name-", "'garbled'"]),
    (
        ["SCH-02"],
        broken.DroppingSinkDriver,
        ["the fields ['score'] are not stored", "unstored_fields"],
    ),
    (
        ["SCH-02"],
        broken.WrongValueSourceDriver,
        ["what the driver wrote (expected_value())", "value.name: wrote 'name-", "emitted 'name-"],
    ),
    # hostile values: each of these passed every check while the values sent were benign
    (
        ["SCH-09"],
        fidelity.TruncatingSinkDriver,
        ["name: sent '", "stored '", "cut to 24 of"],
    ),
    (
        ["SCH-09"],
        fidelity.AsciiSinkDriver,
        ["name: sent '\\xa0no-break\\xa0spaces\\xa0', stored '?no-break?spaces?'", "by '?'"],
    ),
    (
        ["SCH-09"],
        fidelity.TrimmingSinkDriver,
        ["name: sent ' ', stored '' (whitespace trimmed)"],
    ),
    (
        ["SCH-09"],
        fidelity.FloatInt64SinkDriver,
        ["count: sent 9007199254740993, stored 9007199254740992", "rounded through a 64-bit"],
    ),
    (
        ["SCH-09"],
        fidelity.TzShiftingSinkDriver,
        ["created: sent datetime 1970-01-01T00:00:00+00:00, stored datetime 1970-01-01T02:00"],
    ),
    (
        ["SCH-09"],
        fidelity.NewlineSplittingSinkDriver,
        ["value: sent 'record-", "line\\nbreak', stored 'record-", ";line' (cut to"],
    ),
    (
        ["SCH-09"],
        fidelity.CStringSourceDriver,
        ["name: wrote 'nul\\x00inside', emitted 'nul'", "name: wrote '\\x00', emitted ''"],
    ),
    (
        ["SCH-09"],
        fidelity.NulRefusingSinkDriver,
        ["the task failed with", "NUL", "the value it fails on", "name = '\\x00'"],
    ),
]


@pytest.mark.parametrize(
    ("ids", "driver", "fragments"), BROKEN, ids=[d.__name__ for _, d, _ in BROKEN]
)
def test_broken_connector_fails(
    ids: list[str],
    driver: type[ConnectorDriver],
    fragments: list[str],
    kafka_bootstrap: str,
    tmp_path: Path,
) -> None:
    project = _support.project_for(tmp_path, driver)
    run = _support.run_checks(project, ids, kafka_bootstrap, tmp_path)
    for check_id in ids:
        _support.assert_outcome(run, check_id, Outcome.FAILED)
        (result,) = [r for r in run.results if r.id == check_id]
        for fragment in fragments:
            assert fragment in result.message, _support.describe(run)


def test_values_a_driver_cannot_show_are_not_verified(kafka_bootstrap: str, tmp_path: Path) -> None:
    # Correct connectors whose drivers leave out read_values() / expected_value(): the round
    # trips cannot compare values, so they are not verified (never passed).
    project = _support.project_for(tmp_path, broken.IdsOnlySinkDriver, broken.UnstatedSourceDriver)
    run = _support.run_checks(project, ["SCH-02", "SCH-06"], kafka_bootstrap, tmp_path)
    assert len(run.results) == 3, _support.describe(run)
    for result in run.results:
        assert result.outcome is Outcome.NOT_VERIFIED, _support.describe(run)
        wanted = "expected_value()" if result.kind == "source" else "read_values()"
        assert wanted in result.message, _support.describe(run)
    assert not run.complete
    assert run.exit_code == 3


def test_a_declared_unstored_field_passes_with_its_reason(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    project = _support.project_for(tmp_path, broken.DeclaredDropSinkDriver)
    run = _support.run_checks(project, ["SCH-02"], kafka_bootstrap, tmp_path)
    _support.assert_outcome(run, "SCH-02", Outcome.PASSED)
    (result,) = run.results
    assert "score: the table keeps no score: scores are recomputed downstream" in result.message


def test_a_field_the_system_assigns_fails_sch_09_unless_declared(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    project = _support.project_for(
        tmp_path, broken.StampingSourceDriver, broken.DeclaredStampingSourceDriver
    )
    run = _support.run_checks(project, ["SCH-09"], kafka_bootstrap, tmp_path)
    _support.assert_outcome(run, "SCH-09", Outcome.FAILED, subject="StampingSourceDriver")
    _support.assert_outcome(run, "SCH-09", Outcome.PASSED, subject="DeclaredStampingSourceDriver")
    results = {r.subject: r for r in run.results}
    undeclared, declared = results["StampingSourceDriver"], results["DeclaredStampingSourceDriver"]
    assert "created: wrote " in undeclared.message, undeclared.message
    assert declared.evidence["fields the system assigns (not compared)"] == [
        "created: assigned by the system: not drawn, not compared "
        "(the system stamps each row it writes)"
    ]
    assert "created" not in declared.evidence["fields drawn"]
