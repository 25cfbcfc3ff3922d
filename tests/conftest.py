"""Shared test configuration.

Hypothesis: no per-example deadline (timing on a loaded 2-core CI machine is not what the
properties test); in CI (``CI=true``) the examples are derandomized so every run checks the same
cases, while local runs keep exploring new ones.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

from cdk.kafka import EmbeddedKafka

settings.register_profile(
    "ci",
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.register_profile("dev", deadline=None, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


#: The pytest-xdist group of the tests that need something only one test at a time may use.
EXCLUSIVE_GROUP = "exclusive"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Refuse a test marked ``docker`` outside the exclusive xdist group.

    The machine has one Docker engine (harness/_docker.py starts and stops it), so its tests must
    run one after another on one worker: ``@pytest.mark.xdist_group("exclusive")``.
    """
    del config
    stray = [
        item.nodeid
        for item in items
        if item.get_closest_marker("docker") is not None
        and EXCLUSIVE_GROUP not in _xdist_groups(item)
    ]
    if stray:
        raise pytest.UsageError(
            f'tests marked docker need @pytest.mark.xdist_group("{EXCLUSIVE_GROUP}") too: '
            + ", ".join(stray)
        )


def pytest_collection_finish(session: pytest.Session) -> None:
    """On an xdist worker with ``--dist loadgroup``: refuse to run if the groups do not apply.

    pytest-xdist marks a grouped test by appending ``@group`` to its node id; on a pytest where
    that no longer takes (pytest-xdist issue 1386, pytest 9.2) the groups are silently ignored
    and the exclusive tests would run side by side (.ci/constraints.txt keeps pytest below 9.2).
    """
    if not getattr(session.config.option, "loadgroup", False):
        return
    ungrouped = [
        item.nodeid
        for item in session.items
        if (groups := _xdist_groups(item))
        and not item.nodeid.endswith("@" + "_".join(sorted(groups)))
    ]
    if ungrouped:
        raise pytest.UsageError(
            f"--dist loadgroup does not group with pytest {pytest.__version__} and this "
            "pytest-xdist (pytest-xdist issue 1386): install the versions .ci/constraints.txt "
            f"allows (make venv), or run with PYTEST_WORKERS=0. Ungrouped: {ungrouped[:3]}"
        )


def _xdist_groups(item: pytest.Item) -> set[str]:
    return {
        str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
        for mark in item.iter_markers("xdist_group")
    }


@pytest.fixture(scope="session")
def kafka() -> Iterator[EmbeddedKafka]:
    """The session's embedded Tansu broker, started on first use and stopped at the end.

    Its storage is memory only and shared by every test: give each test its own topics.
    """
    with EmbeddedKafka() as broker:
        yield broker


@pytest.fixture(scope="session")
def kafka_bootstrap(kafka: EmbeddedKafka) -> str:
    """The bootstrap servers of the session's embedded broker."""
    return kafka.bootstrap_servers
