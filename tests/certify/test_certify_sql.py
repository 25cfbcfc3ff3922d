"""Done-when: `cdk certify` passes the SQL reference connectors on SQLite, PostgreSQL and MariaDB.

One full run per dialect (the real CLI as a subprocess, every suite on the embedded broker),
each in its own xdist group so that they spread over the workers. The SQLite run is also the
``--runtime distributed`` one: every check of the embedded run plus the distributed checks
(OFF-09, RST-06, RBL-05, RBL-06) on the 2-worker standalone Spark cluster the run starts, so it
is in a ``spark-certify-sql`` group (``make test`` runs it with the other Spark tests).

The dialect is chosen with ``CDK_SQL_DIALECT``, as the README says; PostgreSQL and MariaDB come
from the machine's servers (``CDK_TEST_POSTGRES_URL`` / ``CDK_TEST_MARIADB_URL``) and are
skipped, with that reason, when they do not answer (CI checks they do first).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PROJECT = REPO / "reference_connectors" / "sql"
CDK = [sys.executable, "-c", "import sys; from cdk.cli import main; main(sys.argv[1:])"]
#: The checks of the distributed runtime (the SQLite run's).
DISTRIBUTED_IDS = ("OFF-09", "RST-06", "RBL-05", "RBL-06")
_DRIVERS = {
    "sqlite": "SqlSourceDriver",
    "postgresql": "SqlSourceDriver",
    "mariadb": "SqlSourceDriver",
}


def _server_answers(dialect: str, tmp_path: Path) -> None:
    if dialect == "sqlite":
        return
    from tests.reference_connectors.sql._databases import make_database

    databases = make_database(dialect, tmp_path)
    next(databases)  # skips with the variable to set when the server does not answer
    databases.close()


#: A limit each dialect's drivers declare (SCH-09), as the report lists it.
_LIMIT = {
    "sqlite": "no -0.0 (SQLite",
    "postgresql": "no NUL (PostgreSQL",
    "mariadb": "no -0.0 (MariaDB",
}


@pytest.mark.slow
@pytest.mark.timeout(1500)
@pytest.mark.parametrize(
    "dialect",
    [
        # one Spark cluster at a time on a worker: the group of the other distributed runs
        pytest.param("sqlite", marks=pytest.mark.xdist_group("spark-certify-sql")),
        *(
            pytest.param(d, marks=pytest.mark.xdist_group(f"certify-sql-{d}"))
            for d in ("postgresql", "mariadb")
        ),
    ],
)
def test_certify_passes_the_sql_connectors_on_each_dialect(dialect: str, tmp_path: Path) -> None:
    _server_answers(dialect, tmp_path)
    report = tmp_path / "report"
    runtime = ["--runtime", "distributed"] if dialect == "sqlite" else []
    proc = subprocess.run(
        [*CDK, "certify", str(PROJECT), "--report-dir", str(report), *runtime],
        capture_output=True,
        text=True,
        timeout=1440,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO), "CDK_SQL_DIALECT": dialect},
    )
    summary_file = report / "summary.json"
    assert summary_file.exists(), f"no summary; exit {proc.returncode}\n{proc.stdout[-4000:]}"
    summary = json.loads(summary_file.read_text(encoding="utf-8"))
    failed = [c for c in summary["checks"] if c["outcome"] in ("failed", "error")]
    explain = f"exit {proc.returncode}; failed: {json.dumps(failed, indent=1)[:6000]}"
    assert not failed, explain
    assert proc.returncode == 0, explain
    assert summary["passed"] is True
    assert summary["complete"] is True
    subjects = {c["subject"] for c in summary["checks"]}
    assert _DRIVERS[dialect] in subjects
    assert "SqlSinkDriver" in subjects  # the sink, exactly-once (any duplicate fails a check)
    sink_ids = {c["id"] for c in summary["checks"] if c["subject"] == "SqlSinkDriver"}
    for check_id in ("OFF-07", "SCH-06", "SCH-07", "SCH-08", "ERR-01", "ERR-02", "RBL-01"):
        assert check_id in sink_ids, f"{check_id} did not run on the sink: {sorted(sink_ids)}"
    # hostile values came back exactly on both, within the limits the drivers declare
    hostile = [c for c in summary["checks"] if c["id"] == "SCH-09"]
    assert {c["outcome"] for c in hostile} == {"passed"}, hostile
    assert len(hostile) == 2, hostile
    for c in hostile:
        limits = " ".join(c["evidence"]["declared limits"])
        assert _LIMIT[dialect] in limits, c
    ids = {c["id"] for c in summary["checks"]}
    for check_id in ("ERR-01", "ERR-02", "SCH-05", "RBL-03", "OFF-01"):
        assert check_id in ids, f"{check_id} did not run: {sorted(ids)}"
    if runtime:
        assert summary["environment"]["runtime"] == "distributed"
        assert "standalone cluster of 2 one-core workers" in summary["environment"]["spark"]
        ran = {(c["id"], c["subject"]) for c in summary["checks"] if c["outcome"] == "passed"}
        for check_id in DISTRIBUTED_IDS:
            for subject in ("SqlSourceDriver", "SqlSinkDriver"):
                assert (check_id, subject) in ran, f"{check_id} did not pass on {subject}"
