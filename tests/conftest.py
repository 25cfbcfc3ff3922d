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
