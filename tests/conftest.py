"""Shared test configuration.

Hypothesis: no per-example deadline (timing on a loaded 2-core CI machine is not what the
properties test); in CI (``CI=true``) the examples are derandomized so every run checks the same
cases, while local runs keep exploring new ones.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.register_profile("dev", deadline=None, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
