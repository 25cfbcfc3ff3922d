"""What every report format says the same way: the verdict, the counts, clean text.

The verdict reads :attr:`CertificationRun.passed` and :attr:`CertificationRun.complete`:

- ``CERTIFIABLE`` (exit 0): every required check passed, did not apply (with the reason), or
  was not verified and is waived with a written reason (``[tool.cdk.certify] waive``);
- ``FAILED`` (exit 1): a required check failed or could not run (ERROR), waived or not;
- ``INCOMPLETE`` (exit 3): nothing required failed, but a required check was not verified (the
  driver or the environment lacks what it needs) and is not waived, or checks were left out
  (``--only``, ``--skip``, ``[tool.cdk.certify] skip``), or none ran: the run cannot support a
  submission.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from harness.certify._checks import SUITES, CheckResult, Outcome
from harness.certify._runner import CertificationRun

__all__ = [
    "CERTIFIABLE",
    "FAILED",
    "INCOMPLETE",
    "OUTCOME_ORDER",
    "clean",
    "counts",
    "format_duration",
    "suite_counts",
    "verdict",
    "verdict_reason",
]

CERTIFIABLE = "CERTIFIABLE"
FAILED = "FAILED"
INCOMPLETE = "INCOMPLETE"

#: The outcomes in the order the reports list their counts.
OUTCOME_ORDER: tuple[Outcome, ...] = (
    Outcome.PASSED,
    Outcome.FAILED,
    Outcome.ERROR,
    Outcome.SKIPPED,
    Outcome.NOT_VERIFIED,
)

# Characters XML 1.0 cannot carry (and no terminal or page should show raw).
_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff\ud800-\udfff]")


def verdict(run: CertificationRun) -> str:
    """``CERTIFIABLE``, ``FAILED`` or ``INCOMPLETE`` (see the module docstring)."""
    if not run.passed:
        return FAILED
    if not run.complete or not run.results:
        return INCOMPLETE
    return CERTIFIABLE


def verdict_reason(run: CertificationRun) -> str:
    """One sentence explaining the verdict, naming the checks behind it."""
    found = verdict(run)
    if found == FAILED:
        bad = sorted(
            {
                f"{r.id} [{r.subject}]"
                for r in run.results
                if r.check.required and r.outcome in (Outcome.FAILED, Outcome.ERROR)
            }
        )
        return f"{len(bad)} required check(s) failed or could not run: {', '.join(bad)}."
    if found == INCOMPLETE:
        if not run.results:
            return "No check ran."
        parts = []
        left_out = run.left_out
        unverified = sorted({f"{r.id} [{r.subject}]" for r in run.unverified if r not in left_out})
        if unverified:
            parts.append(
                f"{len(unverified)} required check(s) not verified (a capability or the "
                f"environment is missing, and no waiver): {', '.join(unverified)}"
            )
        if run.only:
            parts.append(f"only {', '.join(run.only)} selected (--only)")
        if run.skip:
            parts.append(f"{', '.join(run.skip)} left out (--skip), so not verified")
        configured = sorted({r.id for r in left_out if "[tool.cdk" in r.message})
        if configured:
            parts.append(f"{', '.join(configured)} left out in [tool.cdk.certify] skip")
        return (
            "No required check failed, but the run is not complete: " + "; ".join(parts) + "."
            if parts
            else "No required check failed, but the run left checks out."
        )
    waived = sorted({r.id for r in run.waived})
    if waived:
        return (
            "Every required check passed or did not apply, but for "
            f"{', '.join(waived)}: not verified, waived in [tool.cdk.certify] waive (the "
            "reasons are shown next to each)."
        )
    return "Every required check passed or did not apply (each with its reason)."


def counts(results: Iterable[CheckResult]) -> dict[str, int]:
    """How many results ended with each outcome, plus ``total``."""
    out = {str(o): 0 for o in OUTCOME_ORDER}
    total = 0
    for result in results:
        out[str(result.outcome)] += 1
        total += 1
    out["total"] = total
    return out


def suite_counts(results: Iterable[CheckResult]) -> dict[str, dict[str, int]]:
    """:func:`counts` per suite, in report order (suites without results are left out)."""
    by_suite: dict[str, list[CheckResult]] = {}
    for result in results:
        by_suite.setdefault(result.check.suite, []).append(result)
    order = list(SUITES)
    return {
        suite: counts(by_suite[suite])
        for suite in sorted(by_suite, key=lambda s: order.index(s) if s in order else len(order))
    }


def clean(text: object) -> str:
    """``text`` as a string without the control characters XML and terminals cannot show."""
    return _INVALID.sub("\ufffd", str(text))


def format_duration(seconds: float) -> str:
    """``0.42 s``, ``12.3 s`` or ``2 min 05 s``."""
    if seconds < 10:
        return f"{seconds:.2f} s"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s"
