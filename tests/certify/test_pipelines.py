"""The Spark pipeline checks (OFF-10..12): skipped outside --runtime spark, passed by the
baseline SQLite connectors (tests/certify/broken/_sqlite_base) on local[2], failed by broken
connectors.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness import ConnectorDriver
from harness.certify import Outcome, certify
from tests.certify import _support
from tests.certify.broken import pipelines as broken
from tests.certify.broken._sqlite_base.certify import SqliteSinkDriver, SqliteSourceDriver
from tests.spark.conftest import SPARK_GROUP
from tests.spark.conftest import spark as spark  # the shared local[2] session fixture

IDS = ["OFF-10", "OFF-11", "OFF-12"]


def test_other_runtimes_skip_them_with_the_reason(kafka_bootstrap: str, tmp_path: Path) -> None:
    project = _support.project_for(tmp_path, SqliteSourceDriver, SqliteSinkDriver)
    run = certify(project, kafka=kafka_bootstrap, only=IDS, workdir=tmp_path / "run")
    assert len(run.results) == 3, _support.describe(run)
    for result in run.results:
        assert result.outcome is Outcome.SKIPPED, _support.describe(run)
        assert "needs --runtime spark" in result.message


@pytest.mark.parametrize(
    ("driver", "ids"),
    [(SqliteSourceDriver, ["OFF-10", "OFF-11"]), (SqliteSinkDriver, ["OFF-12"])],
    ids=["source", "sink"],
)
@pytest.mark.slow
@pytest.mark.xdist_group(f"{SPARK_GROUP}-pipelines")
@pytest.mark.timeout(900)
def test_the_reference_connectors_pass(
    driver: type[ConnectorDriver], ids: list[str], spark: Any, kafka_bootstrap: str, tmp_path: Path
) -> None:
    project = _support.project_for(tmp_path, driver)
    run = certify(
        project, kafka=kafka_bootstrap, only=ids, workdir=tmp_path / "run", runtime="spark"
    )
    for check_id in ids:
        _support.assert_outcome(run, check_id, Outcome.PASSED)


BROKEN: list[tuple[type[ConnectorDriver], dict[str, list[str]]]] = [
    (
        broken.DestructiveReadDriver,
        {
            # The worker consumed the rows first: Spark finds none (not even for its schema).
            "OFF-10": ["the streaming query to read the connector", "no records"],
            # A later query finds no rows left (its schema inference or its replay fails).
            "OFF-11": ["the restarted query to replay the failed micro-batch"],
        },
    ),
    (broken.LazySinkDriver, {"OFF-12": ["every row written through writeStream"]}),
]


@pytest.mark.parametrize(
    ("driver", "failures"), BROKEN, ids=[driver.__name__ for driver, _ in BROKEN]
)
@pytest.mark.slow
@pytest.mark.xdist_group(f"{SPARK_GROUP}-pipelines")
@pytest.mark.timeout(900)
def test_broken_connector_fails(
    driver: type[ConnectorDriver],
    failures: dict[str, list[str]],
    spark: Any,
    kafka_bootstrap: str,
    tmp_path: Path,
) -> None:
    project = _support.project_for(tmp_path, driver)
    run = certify(
        project,
        kafka=kafka_bootstrap,
        only=list(failures),
        workdir=tmp_path / "run",
        runtime="spark",
    )
    for check_id, fragments in failures.items():
        _support.assert_outcome(run, check_id, Outcome.FAILED)
        (result,) = [r for r in run.results if r.id == check_id]
        for fragment in fragments:
            assert fragment in result.message, result.message
