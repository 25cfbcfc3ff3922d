"""The bundle's JUnit XML (``junit.xml``), for CI systems that show test results.

One ``<testsuite>`` per suite (``CFG``, ``OFF``...); one ``<testcase>`` per result with
``classname`` the suite and ``name`` ``"<id> <title> [<subject>]"``. A failed check carries a
``<failure>`` (message: expected vs actual; text: the details), a check that could not run an
``<error>``, a skipped one ``<skipped>`` with its reason. Performance figures go to the
test case's ``<system-out>``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.certify._checks import SUITES, CheckResult, Outcome
from harness.certify._report_common import clean, counts, verdict
from harness.certify._runner import CertificationRun

__all__ = ["junit_xml", "write_junit"]


def junit_xml(run: CertificationRun) -> ET.Element:
    """The ``<testsuites>`` element of the run."""
    total = counts(run.results)
    root = ET.Element(
        "testsuites",
        {
            "name": clean(f"cdk certify {run.project.name} {run.project.version}"),
            "tests": str(total["total"]),
            "failures": str(total[str(Outcome.FAILED)]),
            "errors": str(total[str(Outcome.ERROR)]),
            "skipped": str(total[str(Outcome.SKIPPED)]),
            "time": _seconds(sum(r.duration_s for r in run.results)),
            "timestamp": run.started_at.isoformat(timespec="seconds"),
        },
    )
    by_suite: dict[str, list[CheckResult]] = {}
    for result in run.results:
        by_suite.setdefault(result.check.suite, []).append(result)
    order = list(SUITES)
    for suite in sorted(by_suite, key=lambda s: order.index(s) if s in order else len(order)):
        results = by_suite[suite]
        suite_total = counts(results)
        element = ET.SubElement(
            root,
            "testsuite",
            {
                "name": suite,
                "tests": str(suite_total["total"]),
                "failures": str(suite_total[str(Outcome.FAILED)]),
                "errors": str(suite_total[str(Outcome.ERROR)]),
                "skipped": str(suite_total[str(Outcome.SKIPPED)]),
                "time": _seconds(sum(r.duration_s for r in results)),
                "timestamp": run.started_at.isoformat(timespec="seconds"),
            },
        )
        properties = ET.SubElement(element, "properties")
        for name, value in [
            ("suite.description", SUITES.get(suite, "")),
            ("project", run.project.name),
            ("project.version", run.project.version),
            ("verdict", verdict(run)),
            *sorted(run.environment.items()),
            *provenance_properties(run.provenance),
        ]:
            ET.SubElement(properties, "property", {"name": clean(name), "value": clean(value)})
        for result in results:
            element.append(_testcase(result))
    return root


def provenance_properties(
    data: Mapping[str, Any], prefix: str = "provenance"
) -> list[tuple[str, str]]:
    """``data`` flattened to ``(provenance.source.commit, value)`` pairs (None and lists kept)."""
    out: list[tuple[str, str]] = []
    for key, value in data.items():
        name = f"{prefix}.{key}"
        if isinstance(value, Mapping):
            out.extend(provenance_properties(value, name))
        elif isinstance(value, list):
            out.append((name, ", ".join(str(v) for v in value)))
        else:
            out.append(
                (
                    name,
                    ""
                    if value is None
                    else str(value).lower()
                    if isinstance(value, bool)
                    else str(value),
                )
            )
    return out


def _testcase(result: CheckResult) -> ET.Element:
    case = ET.Element(
        "testcase",
        {
            "classname": result.check.suite,
            "name": clean(f"{result.id} {result.check.title} [{result.subject}]"),
            "time": _seconds(result.duration_s),
        },
    )
    if result.outcome is Outcome.FAILED:
        failure = ET.SubElement(
            case, "failure", {"message": clean(result.message), "type": "CheckFailed"}
        )
        failure.text = clean(_failure_text(result))
    elif result.outcome is Outcome.ERROR:
        error = ET.SubElement(
            case, "error", {"message": clean(result.message), "type": "CheckError"}
        )
        error.text = clean(result.details or result.message)
    elif result.outcome is Outcome.SKIPPED:
        ET.SubElement(case, "skipped", {"message": clean(result.message)})
    if result.metrics:
        out = ET.SubElement(case, "system-out")
        out.text = clean(
            "\n".join(
                f"{m.name} = {m.value:.6g} {m.unit}"
                + (
                    f" (threshold {m.threshold:g}: {'met' if m.met else 'NOT met'})"
                    if m.threshold is not None
                    else " (no threshold)"
                )
                for m in result.metrics
            )
        )
    return case


def _failure_text(result: CheckResult) -> str:
    lines = []
    if result.expected is not None:
        lines.append(f"Expected: {result.expected}")
    if result.actual is not None:
        lines.append(f"Actual:   {result.actual}")
    if not lines:
        lines.append(result.message)
    if result.details:
        lines += ["", result.details]
    return "\n".join(lines)


def _seconds(value: float) -> str:
    return f"{value:.3f}"


def write_junit(run: CertificationRun, path: Path) -> Path:
    """Write the run's JUnit XML to ``path`` (UTF-8 with a declaration) and return the path."""
    tree = ET.ElementTree(junit_xml(run))
    ET.indent(tree)
    tree.write(path, encoding="utf-8", xml_declaration=True)
    return path
