"""Fixtures of the RabbitMQ connector tests: the machine's RabbitMQ server, fresh names per test.

The server is the one ``CDK_TEST_RABBITMQ_URL`` names (by default ``127.0.0.1:5672``, guest);
the tests skip, saying so, when it does not answer (CI checks that it does:
``.ci/check_databases.py``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.reference_connectors.rabbitmq._support import Rabbit, rabbit_problem


@pytest.fixture(scope="session")
def _rabbit_available() -> None:
    problem = rabbit_problem()
    if problem is not None:
        pytest.skip(problem)


@pytest.fixture
def rabbit(_rabbit_available: None) -> Iterator[Rabbit]:
    """The server, with queues and exchanges of this test (deleted afterwards)."""
    broker = Rabbit()
    try:
        yield broker
    finally:
        broker.cleanup()
