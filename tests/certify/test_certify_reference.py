"""Done-when: `cdk certify` passes the SQL reference connectors (on SQLite) on a Kafka in a
container, and writes the bundle.

The full runs on the embedded broker, and on the distributed runtime, are test_certify_sql.py's
(one per dialect; the SQLite one is ``--runtime distributed``). These runs are
the real CLI as a subprocess, so they are among the slowest tests of the kit (minutes each); the
per-suite tests pin each check against broken connectors.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PROJECT = REPO / "reference_connectors" / "sql"
SUBJECTS = ("SqlSourceDriver", "SqlSinkDriver")
CDK = [sys.executable, "-c", "import sys; from cdk.cli import main; main(sys.argv[1:])"]


def _certify(
    tmp_path: Path, *args: str, timeout: float
) -> tuple[subprocess.CompletedProcess[str], dict]:
    report = tmp_path / "report"
    proc = subprocess.run(
        [*CDK, "certify", str(PROJECT), "--report-dir", str(report), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO), "CDK_SQL_DIALECT": "sqlite"},
    )
    summary_file = report / "summary.json"
    assert summary_file.exists(), (
        f"no summary; exit {proc.returncode}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    )
    return proc, json.loads(summary_file.read_text(encoding="utf-8"))


def _check_passing_run(proc: subprocess.CompletedProcess[str], summary: dict, report: Path) -> None:
    failed = [c for c in summary["checks"] if c["outcome"] in ("failed", "error")]
    explain = (
        f"exit {proc.returncode}; failed: "
        + json.dumps(failed, indent=1)[:6000]
        + f"\n--- stdout tail\n{proc.stdout[-3000:]}\n--- stderr tail\n{proc.stderr[-3000:]}"
    )
    assert not failed, explain
    assert proc.returncode == 0, explain
    assert summary["passed"] is True
    assert summary["complete"] is True
    ids = {c["id"] for c in summary["checks"]}
    for suite in ("CFG", "SCH", "OFF", "RST", "RBL", "ERR", "DOC", "PKG", "PRF"):
        assert any(i.startswith(suite + "-") for i in ids), f"no {suite} check ran: {sorted(ids)}"
    subjects = {c["subject"] for c in summary["checks"]}
    assert set(SUBJECTS) <= subjects
    skipped = [c for c in summary["checks"] if c["outcome"] == "skipped"]
    assert all(c["message"] for c in skipped), skipped
    passed = sum(1 for c in summary["checks"] if c["outcome"] == "passed")
    assert passed >= 50, f"only {passed} checks passed"
    # every passed check says what it saw (records, offsets, times, the config used)
    bare = [
        (c["id"], c["subject"])
        for c in summary["checks"]
        if c["outcome"] == "passed" and not c.get("evidence")
    ]
    assert not bare, f"passed checks that recorded no evidence: {bare}"
    for name in ("junit.xml", "summary.json", "report.html"):
        assert (report / name).stat().st_size > 0
    assert str(report / "report.html") in proc.stdout, "the CLI does not say where the report is"


@pytest.mark.slow
@pytest.mark.docker
@pytest.mark.xdist_group("exclusive")  # one Docker engine on the machine
@pytest.mark.timeout(1260)
@pytest.mark.skipif(
    shutil.which("dockerd") is None, reason="dockerd is not installed (.ci/run installs docker.io)"
)
def test_certify_passes_the_sql_reference_connectors_on_testcontainers(tmp_path: Path) -> None:
    proc, summary = _certify(tmp_path, "--kafka", "testcontainers", timeout=1200)
    _check_passing_run(proc, summary, tmp_path / "report")
    assert summary["environment"]["kafka"] == "testcontainers"
