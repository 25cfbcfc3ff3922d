"""The bundle's JSON summary (``summary.json``): the verdict, the counts and every result."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from harness.certify._report_common import counts, suite_counts, verdict, verdict_reason
from harness.certify._runner import CertificationRun

__all__ = ["summary", "write_json"]

#: Bumped when a field changes meaning or goes away (adding fields does not bump it).
FORMAT_VERSION = 1


def summary(run: CertificationRun) -> dict[str, Any]:
    """The run as JSON-ready data (what ``summary.json`` holds)."""
    finished = run.finished_at
    return {
        "format": FORMAT_VERSION,
        "project": run.project.name,
        "version": run.project.version,
        "verdict": verdict(run),
        "verdict_reason": verdict_reason(run),
        "passed": run.passed,
        "complete": run.complete,
        "exit_code": run.exit_code,
        "counts": counts(run.results),
        "suites": suite_counts(run.results),
        "kafka": run.kafka,
        "seed": run.seed,
        "only": list(run.only),
        "skip": list(run.skip),
        "environment": dict(run.environment),
        "abandoned": list(run.abandoned),
        "provenance": run.provenance,
        "submission": run.submission,
        "started": run.started_at.isoformat(),
        "finished": finished.isoformat() if finished is not None else None,
        "duration_s": round(run.duration_s, 3),
        "timing": run.timing,
        "checks": [_finite(r.to_json()) for r in run.results],
    }


def _finite(data: Any) -> Any:
    """``data`` with NaN and infinities as strings (JSON has no such numbers)."""
    if isinstance(data, float) and not math.isfinite(data):
        return str(data)
    if isinstance(data, dict):
        return {k: _finite(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_finite(v) for v in data]
    return data


def write_json(run: CertificationRun, path: Path) -> Path:
    """Write :func:`summary` to ``path`` (UTF-8, indented) and return the path."""
    path.write_text(
        json.dumps(summary(run), indent=2, ensure_ascii=False, allow_nan=False, default=str) + "\n",
        encoding="utf-8",
    )
    return path
