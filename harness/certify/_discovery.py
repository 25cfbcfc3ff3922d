"""Finding the checks: every public module under :mod:`harness.certify.suites` is imported.

Importing a suite module registers its checks (:func:`~harness.certify.check`), so the registry
in :mod:`harness.certify._checks` never imports the suites, and the suites depend on it one way.
A module or package whose name starts with ``_`` is shared code, not checks, and is imported
only by the modules that use it.
"""

from __future__ import annotations

import importlib
import pkgutil

from harness.certify._checks import Check, registered_checks

__all__ = ["SUITES_PACKAGE", "all_checks", "load_suites"]

#: The package the suites live in.
SUITES_PACKAGE = "harness.certify.suites"


def load_suites() -> list[str]:
    """Import every public module under :data:`SUITES_PACKAGE`; return their names, sorted."""
    package = importlib.import_module(SUITES_PACKAGE)
    names: list[str] = []
    for info in pkgutil.walk_packages(package.__path__, prefix=f"{SUITES_PACKAGE}."):
        relative = info.name[len(SUITES_PACKAGE) + 1 :].split(".")
        if any(part.startswith("_") for part in relative):
            continue
        importlib.import_module(info.name)
        names.append(info.name)
    return sorted(names)


def all_checks() -> list[Check]:
    """Every check of the suites, by suite (report order) then id."""
    load_suites()
    return registered_checks()
