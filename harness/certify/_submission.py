"""The submission a certification asks for, and the project's own test results in it.

Confluent's partner guide asks for three things besides the connector: engineering materials
(where the source is; the results of the unit and system tests), the Connector Hub details, and
the customer-facing documentation. :func:`checklist` says, item by item, whether the bundle
carries each one or what is missing; the first screen of ``report.html`` and ``summary.json``
show it. The checklist does not change the verdict, which judges the connector's behaviour: a
missing item means the submission is not ready yet, and the report says which.

The project's tests are attached from a JUnit XML file (:func:`attach_tests`, ``cdk certify
--tests-junit FILE``) or run by ``cdk certify --run-tests`` (:func:`run_tests`: ``python -m
pytest`` in the project directory, bounded by :data:`TESTS_TIMEOUT_S`).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "TESTS_TIMEOUT_S",
    "ProjectTests",
    "TestResultsError",
    "attach_tests",
    "checklist",
    "run_tests",
]

#: How long ``--run-tests`` lets the project's test suite run.
TESTS_TIMEOUT_S = 1800.0
#: The last lines of the test output kept in the bundle.
OUTPUT_LINES = 400


class TestResultsError(ValueError):
    """A JUnit file to attach is missing or is not JUnit XML (the message says which)."""

    __test__ = False  # not a pytest test class


@dataclass
class ProjectTests:
    """The project's own test results for the bundle.

    Attributes:
        origin: ``"run"`` (by ``--run-tests``) or ``"attached"`` (from ``--tests-junit``).
        junit: the JUnit XML file (copied into the bundle as ``tests/junit.xml``).
        counts: ``tests``, ``failures``, ``errors``, ``skipped`` read from the file.
        command: the command that ran them (``run`` only).
        returncode: its exit status (``run`` only; None when it timed out).
        seconds: how long it took (``run`` only).
        output: the end of its output (``run`` only; ``tests/output.txt`` in the bundle).
        source: the attached file's name (``attached`` only).
    """

    __test__ = False

    origin: str
    junit: Path | None
    counts: dict[str, int]
    command: str = ""
    returncode: int | None = None
    seconds: float = 0.0
    output: str = ""
    source: str = ""

    @property
    def passed(self) -> bool:
        """Every test passed (none failed or errored, and the run, if any, exited 0)."""
        return (
            self.junit is not None
            and self.counts.get("failures", 0) == 0
            and self.counts.get("errors", 0) == 0
            and (self.origin != "run" or self.returncode == 0)
        )

    def summary(self) -> str:
        """``"42 tests: 40 passed, 1 failed, 0 errors, 1 skipped (run by cdk certify)"``."""
        c = self.counts
        passed = c["tests"] - c["failures"] - c["errors"] - c["skipped"]
        how = (
            f"run by cdk certify, exit status {self.returncode}"
            if self.origin == "run"
            else f"attached from {self.source}"
        )
        if self.origin == "run" and self.returncode is None:
            how = f"run by cdk certify, stopped after {self.seconds:.0f} s"
        return (
            f"{c['tests']} tests: {passed} passed, {c['failures']} failed, {c['errors']} errors, "
            f"{c['skipped']} skipped ({how})"
        )

    def to_json(self) -> dict[str, Any]:
        """JSON-ready data (``summary.json`` ``submission.tests``)."""
        data: dict[str, Any] = {"origin": self.origin, "passed": self.passed, **self.counts}
        if self.origin == "run":
            data.update(
                command=self.command, returncode=self.returncode, seconds=round(self.seconds, 1)
            )
        else:
            data["source"] = self.source
        return data


def junit_counts(path: Path) -> dict[str, int]:
    """The totals of a JUnit XML file (``<testsuites>`` or a single ``<testsuite>``).

    Raises:
        TestResultsError: the file is not XML or not JUnit XML.
    """
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as exc:
        raise TestResultsError(f"{path} is not a JUnit XML file: {exc}") from None
    if root.tag == "testsuite":
        suites = [root]
    elif root.tag == "testsuites":
        suites = list(root.iter("testsuite"))
    else:
        raise TestResultsError(
            f"{path} is not a JUnit XML file: its root element is <{root.tag}>, "
            "not <testsuites> or <testsuite>"
        )
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for suite in suites:
        cases = list(suite.iter("testcase"))
        totals["tests"] += len(cases)
        totals["failures"] += sum(1 for c in cases if c.find("failure") is not None)
        totals["errors"] += sum(1 for c in cases if c.find("error") is not None)
        totals["skipped"] += sum(1 for c in cases if c.find("skipped") is not None)
    return totals


def attach_tests(path: Path) -> ProjectTests:
    """The results in the JUnit XML file at ``path``.

    Raises:
        TestResultsError: there is no such file, or it is not JUnit XML.
    """
    if not path.is_file():
        raise TestResultsError(f"No test results at {path}: the file does not exist")
    return ProjectTests("attached", path, junit_counts(path), source=path.name)


def run_tests(
    project_dir: Path,
    into: Path,
    *,
    python: str = sys.executable,
    timeout: float = TESTS_TIMEOUT_S,
) -> ProjectTests:
    """Run the project's tests (``python -m pytest``) with a JUnit XML report in ``into``.

    The tests run in ``project_dir`` in their own process group, which is stopped (and every
    process in it) after ``timeout`` seconds.
    """
    into.mkdir(parents=True, exist_ok=True)
    junit = into / "junit.xml"
    junit.unlink(missing_ok=True)
    command = [python, "-m", "pytest", f"--junitxml={junit}", "-p", "no:cacheprovider"]
    shown = f"python -m pytest --junitxml=tests/junit.xml -p no:cacheprovider (in {project_dir})"
    start = time.monotonic()
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as out:
        process = subprocess.Popen(
            command,
            cwd=project_dir,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
            start_new_session=True,
        )
        returncode: int | None
        try:
            returncode = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            returncode = None
            _stop_group(process)
        out.seek(0)
        lines = out.read().splitlines()
    seconds = time.monotonic() - start
    output = "\n".join(lines[-OUTPUT_LINES:])
    if returncode is None:
        output += f"\n[cdk certify] the tests were stopped after {timeout:g} s"
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    found: Path | None = None
    if junit.is_file():
        try:
            counts = junit_counts(junit)
            found = junit
        except TestResultsError as exc:
            output += f"\n[cdk certify] {exc}"
    return ProjectTests("run", found, counts, shown, returncode, seconds, output)


def _stop_group(process: subprocess.Popen[Any]) -> None:
    for sig, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


# ---------------------------------------------------------------------------------------------
# The checklist

PRESENT = "present"
INCOMPLETE = "incomplete"
MISSING = "missing"


def checklist(
    *,
    verdict: str,
    provenance: dict[str, Any],
    hub_missing: list[str],
    tests: ProjectTests | None,
    docs: dict[str, list[str]],
    readme: str | None,
) -> dict[str, Any]:
    """The submission checklist (``summary.json`` ``submission``).

    Args:
        verdict: the run's verdict.
        provenance: the run's provenance (source and wheel).
        hub_missing: what :func:`~harness.certify._hub.hub_manifest` could not find.
        tests: the project's test results, or None.
        docs: bundle files of the generated configuration reference, by connector (an empty
            list when it could not be generated).
        readme: the bundle path of the project's README copy, or None.
    """
    source = provenance.get("source", {})
    wheel = provenance.get("wheel", {})
    items = [
        _item(
            "source",
            "Engineering: where the source is",
            [],
            _source_problems(source),
            note=_source_note(source),
        ),
        _item(
            "certification",
            "Engineering: system test results (the certification run)",
            ["report.html", "junit.xml", "summary.json"],
            [] if verdict == "CERTIFIABLE" else [f"the verdict is {verdict}"],
            note=f"verdict {verdict}",
        ),
        _tests_item(tests),
        _item(
            "hub",
            "Connector Hub details (manifest.json)",
            ["manifest.json"],
            hub_missing,
        ),
        _docs_item(docs, readme),
        _item(
            "binary",
            "Binary: the wheel built and checked by the run",
            [f"dist/{wheel['file']}"] if wheel.get("file") else [],
            [] if wheel.get("file") else [str(wheel.get("note") or "no wheel was built")],
            note=f"sha256 {wheel['sha256']}" if wheel.get("sha256") else "",
        ),
    ]
    return {
        "complete": all(i["status"] == PRESENT for i in items),
        "affects_verdict": False,
        "items": items,
        "tests": tests.to_json() if tests is not None else None,
    }


def _item(
    key: str, title: str, files: list[str], problems: list[str], *, note: str = ""
) -> dict[str, Any]:
    if not problems:
        status = PRESENT
    elif files or note:
        status = INCOMPLETE
    else:
        status = MISSING
    return {
        "item": key,
        "title": title,
        "status": status,
        "files": files,
        "missing": problems,
        "note": note,
    }


def _source_problems(source: dict[str, Any]) -> list[str]:
    problems = []
    if not source.get("commit"):
        problems.append(f"no git commit ({source.get('note') or 'unknown'})")
    elif source.get("dirty"):
        problems.append(
            f"the work tree had {source.get('changed_files', 'some')} uncommitted change(s): "
            "the commit does not name what was certified"
        )
    if source.get("changed_during_run"):
        problems.append(str(source.get("note")))
    if source.get("commit") and not source.get("remote"):
        problems.append("no git remote names where the source is published")
    return problems


def _source_note(source: dict[str, Any]) -> str:
    if not source.get("commit"):
        return ""
    return f"git {source['commit'][:12]}" + (
        f" from {source['remote']}" if source.get("remote") else ""
    )


def _tests_item(tests: ProjectTests | None) -> dict[str, Any]:
    title = "Engineering: the project's unit and system test results"
    if tests is None:
        return _item(
            "tests",
            title,
            [],
            ["not attached: run cdk certify with --run-tests, or --tests-junit FILE"],
        )
    files = (["tests/junit.xml"] if tests.junit is not None else []) + (
        ["tests/output.txt"] if tests.origin == "run" else []
    )
    problems = []
    if tests.junit is None:
        problems.append("the test run wrote no JUnit XML (see tests/output.txt)")
    elif not tests.passed:
        problems.append("tests failed: " + tests.summary())
    return _item("tests", title, files, problems, note=tests.summary())


def _docs_item(docs: dict[str, list[str]], readme: str | None) -> dict[str, Any]:
    files = ([readme] if readme else []) + [f for paths in docs.values() for f in paths]
    problems = [] if readme else ["no README in the project"]
    problems += [
        f"no configuration reference for {name}" for name, paths in docs.items() if not paths
    ]
    if not docs:
        problems.append("no connector to document")
    return _item("docs", "Customer-facing documentation", files, problems)
