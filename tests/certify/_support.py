"""Helpers for the certification tests: projects from driver classes, runs, outcome asserts.

The runs use the session's embedded broker (its bootstrap servers as the ``kafka`` spec), so a
test pays only for the checks it selects.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from harness import ConnectorDriver
from harness.certify import (
    CertificationRun,
    Check,
    CheckContext,
    CheckResult,
    Outcome,
    Project,
    certify,
)


def project_for(
    tmp_path: Path, *drivers: type[ConnectorDriver], name: str = "test-project"
) -> Project:
    """A project made of ``drivers`` (no pyproject.toml needed)."""
    root = tmp_path / name
    root.mkdir(parents=True, exist_ok=True)
    return Project(path=root, name=name, version="0.0.1", drivers=list(drivers))


def context_for(
    tmp_path: Path, driver: type[ConnectorDriver], bootstrap: str, check_id: str = "OFF-01"
) -> CheckContext:
    """The context a check ``check_id`` of a source ``driver`` runs in, on ``bootstrap``.

    For tests of what a check calls on its context (its workers, its reads), without a run.
    """
    check = Check(
        check_id,
        "a check of the tests",
        frozenset({"source"}),
        frozenset({"kafka"}),
        True,
        lambda ctx: None,
        description="What it proves.",
    )
    return CheckContext(
        check=check,
        project=project_for(tmp_path, driver),
        driver_class=driver,
        bootstrap_servers=bootstrap,
        kafka_kind="embedded",
        environment=frozenset({"kafka"}),
        workdir=tmp_path,
    )


def run_checks(
    project: Project, only: Sequence[str], kafka_bootstrap: str, tmp_path: Path
) -> CertificationRun:
    """Run the checks ``only`` against ``project`` on the session broker."""
    return certify(
        project, kafka=kafka_bootstrap, only=only, workdir=tmp_path / f"run-{'-'.join(only)}"
    )


def embedded_results(run: CertificationRun) -> list[CheckResult]:
    """The results of the checks that run in the embedded runtime.

    The checks of the other runtimes (distributed mode, Spark pipelines) must be SKIPPED with the
    reason that names the runtime they need; they are left out of what is returned.
    """
    from harness.certify._runner import NEEDS_DISTRIBUTED, NEEDS_SPARK_PIPELINES

    out = []
    for result in run.results:
        if result.message in (NEEDS_DISTRIBUTED, NEEDS_SPARK_PIPELINES):
            assert result.outcome is Outcome.SKIPPED, describe(run)
        else:
            out.append(result)
    return out


def describe(run: CertificationRun) -> str:
    """Every result on one line each (for assertion messages)."""
    return "\n".join(
        f"{r.id} [{r.subject}] {r.outcome}: {r.message}"
        + (f"\n    {r.details[-1500:]}" if r.details and r.outcome is Outcome.ERROR else "")
        for r in run.results
    )


def assert_outcome(
    run: CertificationRun, check_id: str, outcome: Outcome, subject: str | None = None
) -> None:
    """Assert that check ``check_id`` (for ``subject``, if given) ended with ``outcome``."""
    matching = [
        r for r in run.results if r.id == check_id and (subject is None or r.subject == subject)
    ]
    assert matching, f"no result for {check_id} ({subject}):\n{describe(run)}"
    for result in matching:
        assert result.outcome is outcome, (
            f"{check_id} [{result.subject}] ended {result.outcome}, expected {outcome}:\n"
            + describe(run)
        )


def assert_broken_fails(
    check_id: str,
    driver: type[ConnectorDriver],
    fragments: Sequence[str],
    kafka_bootstrap: str,
    tmp_path: Path,
) -> CheckResult:
    """Run ``check_id`` against a broken ``driver``: it must fail, naming every fragment."""
    run = run_checks(project_for(tmp_path, driver), [check_id], kafka_bootstrap, tmp_path)
    assert_outcome(run, check_id, Outcome.FAILED)
    (result,) = run.results
    for fragment in fragments:
        assert fragment in result.message, describe(run)
    return result
