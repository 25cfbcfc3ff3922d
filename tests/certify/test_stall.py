"""ERR-04/05 prove themselves: the broker stalls mid-stream (10 s), correct connectors ride it out.

These runs start their own embedded broker (``kafka="embedded"``): only a broker the run
started can be stalled, and stalling the session's would stall every other test of the worker.
The broken connectors (tests/certify/broken/stall.py) have a Kafka timeout of their own: one
fails its task, one drops what was late.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from harness import ConnectorDriver
from harness.certify import CertificationRun, Check, CheckResult, Outcome, certify
from harness.certify.suites.err import broker
from harness.providers.kafka import BrokerStall
from reference_connectors.filestream.certify import FileStreamSinkDriver, FileStreamSourceDriver
from tests.certify import _support
from tests.certify.broken import stall as broken

STALL_IDS = ["ERR-04", "ERR-05"]

BROKEN = [
    (
        "ERR-04",
        broken.GivesUpSourceDriver,
        ["task 0 FAILED", "Kafka did not acknowledge records for 4s"],
    ),
    ("ERR-04", broken.SkipsAheadSourceDriver, ["missing", "while the broker was stalled"]),
    ("ERR-05", broken.GivesUpSinkDriver, ["task 0 FAILED", "arrived more than 7s late"]),
    ("ERR-05", broken.DropsStaleSinkDriver, ["missing", "while the broker was stalled"]),
]


def run_embedded(
    tmp_path: Path, only: list[str], *drivers: type[ConnectorDriver]
) -> CertificationRun:
    project = _support.project_for(tmp_path, *drivers)
    return certify(project, kafka="embedded", only=only, workdir=tmp_path / "run")


def test_correct_connectors_ride_out_a_stall_and_report_it(tmp_path: Path) -> None:
    run = run_embedded(tmp_path, STALL_IDS, FileStreamSourceDriver, FileStreamSinkDriver)
    assert [(r.id, r.subject) for r in run.results] == [
        ("ERR-04", "FileStreamSourceDriver"),
        ("ERR-05", "FileStreamSinkDriver"),
    ], _support.describe(run)
    for result in run.results:
        assert result.outcome is Outcome.PASSED, _support.describe(run)
        # each took the stall, and not much more
        assert broker.STALL_S <= result.duration_s < broker.STALL_S + 40, result.duration_s
        evidence = getattr(result, "evidence", None)
        if evidence is not None:
            assert evidence["sent"] == 3 * broker.BATCH, evidence
            assert evidence["lost"] == 0, evidence
            assert "duplicates" in evidence, evidence


@pytest.mark.parametrize(
    ("check_id", "driver", "fragments"),
    BROKEN,
    ids=[f"{check_id}-{driver.__name__}" for check_id, driver, _ in BROKEN],
)
def test_broken_connector_fails(
    tmp_path: Path,
    check_id: str,
    driver: type[ConnectorDriver],
    fragments: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a connector that loses records fails at the recovery deadline: a shorter one keeps it
    # quick (a correct one delivers everything within a few seconds of the broker's return)
    monkeypatch.setattr(broker, "RECOVERY_S", 20.0)
    run = run_embedded(tmp_path, [check_id], driver)
    _support.assert_outcome(run, check_id, Outcome.FAILED)
    (result,) = run.results
    said = f"{result.message}\n{result.details or ''}"
    for fragment in fragments:
        assert fragment in said, _support.describe(run)


def test_a_broker_that_cannot_be_stalled_does_not_verify_the_checks(
    tmp_path: Path, kafka_bootstrap: str
) -> None:
    # the session's broker, named by its bootstrap servers, is an existing cluster to the run
    project = _support.project_for(tmp_path, FileStreamSourceDriver, FileStreamSinkDriver)
    run = _support.run_checks(project, STALL_IDS, kafka_bootstrap, tmp_path)
    assert len(run.results) == 2, _support.describe(run)
    for result in run.results:
        assert result.outcome is not Outcome.PASSED, _support.describe(run)
        assert result.outcome is getattr(Outcome, "NOT_VERIFIED", Outcome.SKIPPED)
        assert "cannot be stalled" in result.message, _support.describe(run)


class _Timeline:
    """When each check started and ended, and when the parent stopped and continued the broker."""

    def __init__(self) -> None:
        self.events: list[tuple[float, str, str, str]] = []

    def mark(self, what: str, check_id: str = "", subject: str = "") -> None:
        self.events.append((time.monotonic(), what, check_id, subject))

    def started(self, run: object, planned: int) -> None:
        pass

    def check_started(self, check: Check, subject: str) -> None:
        self.mark("start", check.id, subject)

    def check_finished(self, result: CheckResult) -> None:
        self.mark("end", result.id, result.subject)

    def finished(self, run: object) -> None:
        pass


def test_with_jobs_the_stall_checks_hold_the_broker_only_while_it_is_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``cdk certify --jobs``: the parent grants the stall once the other checks on Kafka have
    ended and holds the others back only until the broker is continued; the stall checks set
    up and recover next to other checks on Kafka, and both share one stall."""
    timeline = _Timeline()
    for name, what in (("pause", "stopped"), ("resume", "continued")):
        original = getattr(BrokerStall, name)

        def recorded(self: BrokerStall, original: Any = original, what: str = what) -> None:
            timeline.mark(what)  # in the parent: the children ask it
            original(self)

        monkeypatch.setattr(BrokerStall, name, recorded)
    project = _support.project_for(tmp_path, FileStreamSourceDriver, FileStreamSinkDriver)
    others = ["SCH-01", "SCH-02", "RST-01", "OFF-04", "RST-05"]
    run = certify(
        project,
        kafka="embedded",
        only=[*STALL_IDS, *others],
        workdir=tmp_path / "run",
        listener=timeline,
        isolate=True,
        jobs=3,
        own_brokers=False,  # they share the run's broker (as on testcontainers)
    )
    assert {(r.id, r.outcome) for r in run.results} == {
        (r.id, Outcome.PASSED) for r in run.results
    }, _support.describe(run)
    assert "own brokers" not in run.environment, run.environment
    stops = [t for t, what, _, _ in timeline.events if what == "stopped"]
    assert len(stops) == 1, timeline.events  # one stall for both: they asked together
    stopped = stops[0]
    continued = min(t for t, what, _, _ in timeline.events if what == "continued" and t > stopped)
    assert continued - stopped >= broker.STALL_S - 0.5, timeline.events
    spans: dict[tuple[str, str], list[float]] = {}
    for t, what, check_id, subject in timeline.events:
        if what in ("start", "end"):
            spans.setdefault((check_id, subject), []).append(t)
    overlapped = False
    for (check_id, subject), (start, end) in spans.items():
        if check_id in STALL_IDS:
            assert start < stopped < continued < end, (check_id, timeline.events)
            continue
        # no other check on Kafka runs while the broker is stopped
        assert end <= stopped or start >= continued, (check_id, subject, timeline.events)
        stall_spans = [spans[(i, d.__name__)] for i, d in _STALLS]
        overlapped |= any(s < end and start < e for s, e in stall_spans)
    assert overlapped, timeline.events  # but next to a stall check, outside the stall


_STALLS = [("ERR-04", FileStreamSourceDriver), ("ERR-05", FileStreamSinkDriver)]


def test_with_jobs_on_the_embedded_broker_each_stall_check_stalls_a_broker_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``cdk certify --jobs`` on the embedded broker: ERR-04 and ERR-05 each get an embedded
    broker of their own and stall it from their child process; the run's broker is never
    stopped (the parent stalls nothing), so the other checks on Kafka run next to them
    throughout; the stalls still happen (10 s each) and the checks still pass."""
    timeline = _Timeline()
    for name, what in (("pause", "stopped"), ("resume", "continued")):
        original = getattr(BrokerStall, name)

        def recorded(self: BrokerStall, original: Any = original, what: str = what) -> None:
            timeline.mark(what)  # only in the parent: a child's calls are not seen here
            original(self)

        monkeypatch.setattr(BrokerStall, name, recorded)
    project = _support.project_for(tmp_path, FileStreamSourceDriver, FileStreamSinkDriver)
    others = ["SCH-01", "SCH-02", "RST-01", "OFF-04", "RST-05"]
    run = certify(
        project,
        kafka="embedded",
        only=[*STALL_IDS, *others],
        workdir=tmp_path / "run",
        listener=timeline,
        isolate=True,
        jobs=3,
    )
    assert {(r.id, r.outcome) for r in run.results} == {
        (r.id, Outcome.PASSED) for r in run.results
    }, _support.describe(run)
    assert (
        "ERR-04 [FileStreamSourceDriver], ERR-05 [FileStreamSinkDriver]"
        in (run.environment["own brokers"])
    ), run.environment
    assert not any(what == "stopped" for _, what, _, _ in timeline.events), timeline.events
    for result in run.results:
        if result.id in STALL_IDS:
            assert result.evidence["broker stalled (s)"] >= broker.STALL_S - 0.5, result.evidence
            assert result.evidence["lost"] == 0, result.evidence
    assert run.timing["own_broker"] == [
        "ERR-04 [FileStreamSourceDriver]",
        "ERR-05 [FileStreamSinkDriver]",
    ], run.timing
    spans: dict[tuple[str, str], list[float]] = {}
    for t, what, check_id, subject in timeline.events:
        if what in ("start", "end"):
            spans.setdefault((check_id, subject), []).append(t)
    stall_spans = [spans[(i, d.__name__)] for i, d in _STALLS]
    # the third job ran the other checks on Kafka while both stall checks ran
    inside = [
        (check_id, subject)
        for (check_id, subject), (start, end) in spans.items()
        if check_id not in STALL_IDS and all(s < start and end < e for s, e in stall_spans)
    ]
    assert inside, timeline.events
