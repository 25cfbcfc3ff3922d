"""Fixtures for the integration tests: in-process embedded workers with a REST server.

The broker is the session's embedded Tansu broker (``kafka_bootstrap`` from tests/conftest.py);
every test uses fresh topic and connector names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.integration._support import Connect, worker_props


@pytest.fixture
def connect(kafka_bootstrap: str, tmp_path: Path) -> Iterator[Callable[..., Connect]]:
    """Start workers: ``connect({worker prop overrides})``; all are stopped at teardown.

    Workers of one test share the offsets file (``tmp_path/offsets``), so a second worker
    resumes where a stopped one left off.
    """
    started: list[Connect] = []

    def start(extra: dict[str, str] | None = None) -> Connect:
        props = worker_props(kafka_bootstrap, tmp_path / "offsets", 0)
        props.update(extra or {})
        worker = Connect(props)
        started.append(worker)
        return worker

    yield start
    for worker in reversed(started):
        worker.stop()
