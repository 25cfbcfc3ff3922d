"""The PRF suite proves itself: figures are measured and reported, thresholds fail slow connectors.

The slow connectors (tests/certify/broken/prf.py) are correct but slow; the project of their test
configures thresholds they miss, and the checks fail with the measured figure.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from harness import ConnectorDriver
from harness.certify import Outcome
from harness.certify.suites import prf
from reference_connectors.filestream.certify import FileStreamSinkDriver, FileStreamSourceDriver
from tests.certify import _support
from tests.certify.broken import prf as broken

METRICS = {
    "PRF-01": ["{kind}.throughput"],
    "PRF-02": ["{kind}.latency.p50", "{kind}.latency.p95"],
}


# It measures throughput and latency and asserts thresholds are met: not next to the heaviest tests.
@pytest.mark.xdist_group("exclusive")
def test_correct_connectors_pass(kafka_bootstrap: str, tmp_path: Path) -> None:
    # The SQL connectors pass every check in test_certify_sql.py and test_certify_reference.py
    # (full runs: embedded, testcontainers); here the FileStream ones.
    drivers: list[type[ConnectorDriver]] = [
        FileStreamSourceDriver,
        FileStreamSinkDriver,
    ]
    project = _support.project_for(tmp_path, *drivers)
    # Lax thresholds for one connector of each kind: met thresholds pass.
    project.thresholds = {
        "source.throughput": 50.0,
        "source.latency.p95": 5000.0,
        "sink.throughput": 50.0,
        "sink.latency.p50": 5000.0,
    }
    run = _support.run_checks(project, ["PRF"], kafka_bootstrap, tmp_path)
    assert len(run.results) == 2 * len(drivers), _support.describe(run)
    for result in run.results:
        _support.assert_outcome(run, result.id, Outcome.PASSED, subject=result.subject)
        names = [m.name for m in result.metrics]
        assert names == [n.format(kind=result.kind) for n in METRICS[result.id]]
        assert all(m.value > 0 for m in result.metrics), result.metrics
        assert result.series, f"{result.id} {result.subject} has no plot"
        (series,) = result.series
        if result.id == "PRF-01":
            assert series.points[-1][1] == prf.RECORDS
            assert result.metrics[0].unit == "records/s"
        else:
            assert prf.MIN_SAMPLES <= len(series.points) <= prf.SAMPLES
            assert all(m.unit == "ms" and not m.higher_is_better for m in result.metrics)


BROKEN = [
    ("PRF-01", broken.SlowSourceDriver, {"source.throughput": 1000.0}, "source.throughput >= 1000"),
    ("PRF-02", broken.SlowSourceDriver, {"source.latency.p95": 400.0}, "source.latency.p95 <= 400"),
    ("PRF-01", broken.SlowSinkDriver, {"sink.throughput": 2000.0}, "sink.throughput >= 2000"),
]


@pytest.mark.parametrize(
    ("check_id", "driver", "thresholds", "fragment"),
    BROKEN,
    ids=[f"{check_id}-{driver.__name__}" for check_id, driver, _, _ in BROKEN],
)
def test_slow_connector_misses_its_threshold(
    check_id: str,
    driver: type[ConnectorDriver],
    thresholds: dict[str, float],
    fragment: str,
    kafka_bootstrap: str,
    tmp_path: Path,
) -> None:
    project = _support.project_for(tmp_path, driver)
    project.thresholds = thresholds
    run = _support.run_checks(project, [check_id], kafka_bootstrap, tmp_path)
    _support.assert_outcome(run, check_id, Outcome.FAILED)
    (result,) = run.results
    assert fragment in result.message, _support.describe(run)
    assert "measured" in result.message, _support.describe(run)
    (unmet,) = [m for m in result.metrics if m.met is False]
    assert unmet.name in thresholds


def test_broken_connectors_cover_every_check() -> None:
    assert {check_id for check_id, _, _, _ in BROKEN} == {"PRF-01", "PRF-02"}


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 21)]
    assert prf._percentile(values, 50) == 10.0
    assert prf._percentile(values, 95) == 19.0
    assert prf._percentile([3.0], 95) == 3.0


def test_a_measurement_past_its_window_counts_what_had_arrived() -> None:
    """Sampled only once its window had passed (a driver's slow write), the tail catches up.

    A Kafka tail reads 1000 records a call: the one sample after a write that outlasted the
    window saw 1000 of 5000 records already in Kafka, and PRF-01 failed a correct connector.
    """
    arrived = iter(range(1000, 5001, 1000))
    seen: list[int] = []

    def delivered() -> int:
        seen.append(next(arrived, 5000))
        return seen[-1]

    start = time.monotonic() - 60.0  # the write took longer than the window
    points = prf._measure(None, None, "prf", start, 45.0, delivered, 5000)  # type: ignore[arg-type]
    assert points[-1][1] == 5000, points
    assert seen == [1000, 2000, 3000, 4000, 5000, 5000], seen


def test_the_throughput_of_a_source_leaves_out_the_drivers_write(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    project = _support.project_for(tmp_path, broken.SlowWritingSourceDriver)
    run = _support.run_checks(project, ["PRF-01"], kafka_bootstrap, tmp_path)
    _support.assert_outcome(run, "PRF-01", Outcome.PASSED)
    (result,) = run.results
    wrote = result.evidence["driver wrote the burst in (s)"]
    assert wrote >= broken.SlowWritingSourceDriver.WRITE_S, result.evidence
    # timed from the resume: the 3 s of writing are not in it (the SQLite source reads 5,000
    # rows in well under a second)
    assert result.evidence["burst took (s)"] < broken.SlowWritingSourceDriver.WRITE_S
    (metric,) = result.metrics
    assert metric.value > prf.RECORDS / broken.SlowWritingSourceDriver.WRITE_S, metric
