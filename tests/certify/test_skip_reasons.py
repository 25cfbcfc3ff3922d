"""SKIPPED means "does not apply", for the listed reasons only, and the checklist shows them.

A check that applies but cannot run (a capability of the driver missing, the environment
lacking something) is NOT VERIFIED; only :data:`harness.certify.NOT_APPLICABLE` reasons make a
check SKIPPED. These tests read the harness's source: every ``CheckSkipped`` names one of them,
each of them is used, and the checklist page renders that very list (``cdk-skip-reasons``;
``tests/test_sphinxext.py`` builds it).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import harness
from harness.certify import NOT_APPLICABLE, CheckSkipped

HARNESS = Path(harness.__file__).parent
CHECKLIST = Path(__file__).resolve().parents[2] / "docs" / "guide" / "checklist.rst"
#: The reasons the runner gives itself (not raised by a check).
RUNNER_REASONS = {"other-runtime"}


def _skips() -> list[tuple[str, int, ast.Call]]:
    found = []
    for path in sorted(HARNESS.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", getattr(node.func, "attr", None))
                if name == "CheckSkipped":
                    found.append((str(path.relative_to(HARNESS)), node.lineno, node))
    return found


def test_every_skip_names_a_listed_reason_and_every_reason_is_used() -> None:
    used = set(RUNNER_REASONS)
    for where, line, call in _skips():
        keywords = {k.arg: k.value for k in call.keywords}
        because = keywords.get("because")
        assert isinstance(because, ast.Constant), f"{where}:{line}: CheckSkipped without because="
        assert because.value in NOT_APPLICABLE, f"{where}:{line}: {because.value!r} is not listed"
        used.add(because.value)
    assert used == set(NOT_APPLICABLE)


def test_only_the_runner_makes_skipped_results_itself() -> None:
    for path in sorted((HARNESS / "certify" / "suites").rglob("*.py")):
        assert "Outcome.SKIPPED" not in path.read_text(encoding="utf-8"), path


def test_the_runners_own_skips_are_checks_of_another_runtime() -> None:
    from harness.certify._runner import NEEDS_DISTRIBUTED, NEEDS_SPARK_PIPELINES

    assert "--runtime distributed" in NEEDS_DISTRIBUTED
    assert "--runtime distributed" in NOT_APPLICABLE["other-runtime"]
    assert "--runtime spark" in NEEDS_SPARK_PIPELINES
    assert "--runtime spark" in NOT_APPLICABLE["other-runtime"]


def test_the_checklist_page_lists_the_reasons_from_the_code() -> None:
    page = CHECKLIST.read_text(encoding="utf-8")
    assert page.count(".. cdk-skip-reasons::") == 1
    for key in NOT_APPLICABLE:  # no hand-written copy of a reason beside the generated list
        assert f"``{key}``" not in page


def test_a_skip_for_a_reason_not_listed_is_refused() -> None:
    with pytest.raises(ValueError, match="a check is skipped only when it does not apply"):
        CheckSkipped("the driver has no outage()", because="no-outage")
    with pytest.raises(TypeError):
        CheckSkipped("no reason category")  # type: ignore[call-arg]
