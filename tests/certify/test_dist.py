"""The distributed checks (OFF-09, RST-06, RBL-05, RBL-06): skipped in the embedded runtime, run
on a 2-worker standalone Spark cluster in the distributed one, and failed by broken connectors.

The reference connectors pass them in ``test_certify_reference.py`` (the real CLI with
``--runtime distributed``); here each broken connector (tests/certify/broken/dist.py) fails the
check about its defect, with a message naming it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import ConnectorDriver
from harness.certify import Outcome, certify
from tests.certify import _support
from tests.certify.broken import dist as broken
from tests.certify.broken._sqlite_base.certify import SqliteSinkDriver, SqliteSourceDriver

DIST_IDS = ["OFF-09", "RST-06", "RBL-05", "RBL-06"]


def test_embedded_runtime_skips_them_with_the_reason(kafka_bootstrap: str, tmp_path: Path) -> None:
    project = _support.project_for(tmp_path, SqliteSourceDriver, SqliteSinkDriver)
    run = certify(project, kafka=kafka_bootstrap, only=DIST_IDS, workdir=tmp_path / "run")
    assert len(run.results) == 2 * len(DIST_IDS), _support.describe(run)
    for result in run.results:
        assert result.outcome is Outcome.SKIPPED, _support.describe(run)
        assert "needs --runtime distributed" in result.message
    assert run.environment["runtime"] == "embedded"
    assert "spark" not in run.environment  # no cluster was started


def test_an_unknown_runtime_is_refused(tmp_path: Path) -> None:
    project = _support.project_for(tmp_path, SqliteSourceDriver)
    with pytest.raises(ValueError, match="runtime must be one of embedded, distributed, spark"):
        certify(project, only=["OFF-09"], runtime="mesos")


#: (driver, {check id: fragments its failure message must contain}).
BROKEN: list[tuple[type[ConnectorDriver], dict[str, list[str]]]] = [
    (
        broken.IgnoresOffsetsDriver,
        {
            "OFF-09": ["no committed record delivered again after the Spark worker was killed"],
            "RST-06": ["no committed record delivered again after a clean driver restart"],
        },
    ),
    (broken.StaleLockDriver, {"RBL-05": ["FAILED", "another task holds"]}),
    (broken.OneTaskDriver, {"RBL-06": ["tasks.max 1 -> 2", "(2 tasks)"]}),
]


@pytest.mark.slow
@pytest.mark.xdist_group("spark-certify")  # one Spark cluster at a time on a worker
@pytest.mark.timeout(900)
@pytest.mark.parametrize(
    ("driver", "failures"), BROKEN, ids=[driver.__name__ for driver, _ in BROKEN]
)
def test_broken_connector_fails(
    driver: type[ConnectorDriver],
    failures: dict[str, list[str]],
    kafka_bootstrap: str,
    tmp_path: Path,
) -> None:
    pytest.importorskip("pyspark", reason="pyspark is not installed (the spark extra)")
    project = _support.project_for(tmp_path, driver)
    run = certify(
        project,
        kafka=kafka_bootstrap,
        only=list(failures),
        workdir=tmp_path / "run",
        runtime="distributed",
    )
    assert "standalone cluster of 2 one-core workers" in run.environment["spark"]
    for check_id, fragments in failures.items():
        _support.assert_outcome(run, check_id, Outcome.FAILED)
        (result,) = [r for r in run.results if r.id == check_id]
        for fragment in fragments:
            assert fragment in result.message, _support.describe(run)


def test_every_distributed_check_has_a_broken_connector() -> None:
    failed = {check_id for _, failures in BROKEN for check_id in failures}
    assert failed == set(DIST_IDS)
