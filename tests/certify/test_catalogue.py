"""The harness proves itself: every registered check has a broken case that fails it.

Each suite's test module lists its broken connectors (or broken projects) with the check ids
they must fail, in module-level tables (``BROKEN``, ``VARIANTS``...); those tests assert the
failures. This test only checks the tables together cover the whole catalogue, so a new check
cannot land without a broken case.
"""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

from harness.certify import SUITES, all_checks
from harness.certify._discovery import load_suites

_ID = re.compile(r"^[A-Z]{3}-\d{2}$")
_MODULES = [
    "cfg",
    "doc",
    "sch",
    "off",
    "ack",
    "rst",
    "rbl",
    "err",
    "stall",
    "prf",
    "dist",
    "pipelines",
]
#: Failing cases asserted by a dedicated test rather than a table.
_DEDICATED = {"DOC-01": "tests.certify.test_doc.test_hidden_required_key_fails_doc01"}


def _ids(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        if _ID.match(value):
            yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _ids(key)
            yield from _ids(item)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            yield from _ids(item)


def _covered() -> dict[str, str]:
    found: dict[str, str] = {}
    for name in _MODULES:
        module = importlib.import_module(f"tests.certify.test_{name}")
        for attr in ("BROKEN", "VARIANTS"):
            for check_id in _ids(getattr(module, attr, ())):
                found.setdefault(check_id, f"{module.__name__}.{attr}")
    for check_id, test in _DEDICATED.items():
        module_name, _, function = test.rpartition(".")
        assert hasattr(importlib.import_module(module_name), function), test
        found.setdefault(check_id, test)
    return found


def test_every_check_has_a_broken_case_that_fails_it() -> None:
    registered = {c.id for c in all_checks()}
    covered = _covered()
    missing = sorted(registered - set(covered))
    assert not missing, f"checks no broken connector is shown to fail: {missing}"
    stale = sorted(set(covered) - registered)
    assert not stale, f"broken cases name checks that do not exist: {stale}"


def test_every_suite_has_checks_with_titles_and_descriptions() -> None:
    checks = all_checks()
    assert {c.suite for c in checks} == set(SUITES)
    for c in checks:
        assert c.title, c.id
        assert len(c.description) > 40, f"{c.id} has no real description: {c.description!r}"


def test_every_check_says_how_to_fix_a_failure() -> None:
    for c in all_checks():
        assert len(c.fix) > 40, f"{c.id} has no real fix: {c.fix!r}"


def test_the_registry_does_not_import_the_suites() -> None:
    # the suites import the registry, the runner's discovery imports the suites: no circle
    code = (
        "import sys\n"
        "import harness.certify\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('harness.certify.suites.'))\n"
        "assert not loaded, loaded\n"
        "from harness.certify import all_checks\n"
        "assert all_checks()\n"
        "assert 'harness.certify.suites.sch.round_trip' in sys.modules\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr


def test_discovery_imports_every_check_module_and_no_private_one() -> None:
    names = load_suites()
    assert "harness.certify.suites.off.source" in names
    assert "harness.certify.suites.sch.migration" in names
    assert not [n for n in names if any(p.startswith("_") for p in n.split(".")[3:])], names
    suites = {n.split(".")[3].upper() for n in names}
    assert suites == set(SUITES)
