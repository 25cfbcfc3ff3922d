"""``pip install 'connect-cdk[certify]'`` installs everything the checks import.

The test reads every import of the kit's code (``cdk/`` and ``harness/``, lazy imports inside
functions too), maps each third-party module to the distribution that provides it, and requires
that distribution among the core dependencies or the ``certify`` extra (with the extras it pulls
in, such as ``avro`` for SCH-04's Avro round trip). An import that ``cdk certify`` does not need
must be listed below with the reason.
"""

from __future__ import annotations

import ast
import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
KIT = "connect-cdk"

#: Third-party modules the kit imports that `cdk certify` does not need, with why.
NOT_FOR_CERTIFY = {
    "docker": "--kafka testcontainers only (the testcontainers extra)",
    "testcontainers": "--kafka testcontainers only (the testcontainers extra)",
    "pytest": "harness.pytest_plugin runs inside the project's own pytest",
    "sphinx": "cdk.sphinxext is a Sphinx extension (the docs extra)",
    "docutils": "cdk.sphinxext is a Sphinx extension (the docs extra)",
    "pyspark": "--runtime distributed|spark and cdk.spark only (the spark extra, imported lazily)",
    "py4j": "the Spark containers of harness.providers.spark (with pyspark, the spark extra)",
}


def _third_party_imports() -> dict[str, set[str]]:
    """Top-level third-party module -> the kit files importing it."""
    own = {"cdk", "harness", "reference_connectors", "__future__"}
    found: dict[str, set[str]] = {}
    for package in ("cdk", "harness"):
        for path in (ROOT / package).rglob("*.py"):
            if "_templates" in path.parts:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    top = name.split(".")[0]
                    if top not in sys.stdlib_module_names and top not in own:
                        found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


#: Every Python the kit supports installs its own set (tomli only below 3.11).
_PYTHONS = [
    {"python_version": v, "python_full_version": f"{v}.0"} for v in ("3.10", "3.11", "3.12")
]


def _installed_by(extra: str | None) -> set[str]:
    """The distributions ``pip install connect-cdk[extra]`` installs directly (extras followed)."""
    requires = [Requirement(r) for r in metadata.requires(KIT) or []]
    wanted, seen, names = [extra], set(), set()
    while wanted:
        current = wanted.pop()
        if current in seen:
            continue
        seen.add(current)
        for requirement in requires:
            if requirement.marker is not None and not any(
                requirement.marker.evaluate({"extra": current or "", **python})
                for python in _PYTHONS
            ):
                continue
            if requirement.marker is None and current is not None:
                continue  # the core dependencies are collected once, for extra None
            name = canonicalize_name(requirement.name)
            if name == KIT:
                wanted.extend(requirement.extras)
            else:
                names.add(name)
    if extra is not None:
        names |= _installed_by(None)
    return names


def test_the_certify_extra_installs_every_module_the_checks_import() -> None:
    installs = _installed_by("certify")
    providers = metadata.packages_distributions()
    missing = {}
    for module, files in sorted(_third_party_imports().items()):
        if module in NOT_FOR_CERTIFY:
            continue
        distributions = {canonicalize_name(d) for d in providers.get(module, [module])}
        if not distributions & installs:
            missing[module] = sorted(files)
    assert missing == {}, (
        "modules the kit imports that connect-cdk[certify] does not install (add them to the "
        f"certify extra, or to NOT_FOR_CERTIFY with the reason): {missing}"
    )


def test_the_avro_round_trip_comes_with_certify() -> None:
    installs = _installed_by("certify")
    assert {"fastavro", "hypothesis", "confluent-kafka"} <= installs
    assert "pytest" not in _installed_by(None)  # the runtime stays small


def test_the_allow_list_is_current() -> None:
    imported = _third_party_imports()
    assert sorted(set(NOT_FOR_CERTIFY) - set(imported)) == [], "stale NOT_FOR_CERTIFY entries"
