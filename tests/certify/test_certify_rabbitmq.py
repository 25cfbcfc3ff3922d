"""Done-when of issue 27: `cdk certify` makes the RabbitMQ reference pair CERTIFIABLE.

One full run of the real CLI as a subprocess against the machine's RabbitMQ server (CI checks
that it answers) and the embedded broker: the source acknowledges through ``commit_record``, so
it is certified as an acknowledging source: the ACK checks pass, the checks that replay from an
offset are SKIPPED as not applicable (never waived), and the only waivers are the project's two
(SCH-05, RBL-03), with their reasons.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.reference_connectors.rabbitmq._support import rabbit_problem

REPO = Path(__file__).resolve().parents[2]
PROJECT = REPO / "reference_connectors" / "rabbitmq"
CDK = [sys.executable, "-c", "import sys; from cdk.cli import main; main(sys.argv[1:])"]


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.xdist_group("certify-rabbitmq")
def test_certify_passes_the_rabbitmq_connectors(tmp_path: Path) -> None:
    problem = rabbit_problem()
    if problem is not None:
        pytest.skip(problem)
    report = tmp_path / "report"
    proc = subprocess.run(
        [*CDK, "certify", str(PROJECT), "--report-dir", str(report)],
        capture_output=True,
        text=True,
        timeout=840,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    summary_file = report / "summary.json"
    assert summary_file.exists(), f"no summary; exit {proc.returncode}\n{proc.stdout[-4000:]}"
    summary = json.loads(summary_file.read_text(encoding="utf-8"))
    checks = summary["checks"]
    failed = [c for c in checks if c["outcome"] in ("failed", "error")]
    explain = f"exit {proc.returncode}; failed: {json.dumps(failed, indent=1)[:6000]}"
    assert not failed, explain
    assert proc.returncode == 0, explain
    assert summary["passed"] is True
    source = {c["id"]: c for c in checks if c["subject"] == "RabbitMQSourceDriver"}
    for check_id in ("ACK-01", "ACK-02", "ACK-03", "ACK-04", "OFF-01", "ERR-04", "RST-05"):
        assert source[check_id]["outcome"] == "passed", source[check_id]
    for check_id in ("OFF-02", "OFF-03", "OFF-04", "OFF-08"):
        assert source[check_id]["outcome"] == "skipped", source[check_id]
        assert source[check_id]["waiver"] is None, source[check_id]
    waived = sorted(c["id"] for c in checks if c["waiver"])
    assert waived == ["RBL-03", "SCH-05"], waived
    sink = {c["id"]: c for c in checks if c["subject"] == "RabbitMQSinkDriver"}
    for check_id in ("OFF-05", "OFF-06", "OFF-07", "SCH-09", "ERR-01", "ERR-02", "ERR-05"):
        assert sink[check_id]["outcome"] == "passed", sink[check_id]
    assert not [
        c for c in checks if c["id"].startswith("ACK") and c["subject"] != "RabbitMQSourceDriver"
    ]
