"""Fixtures of the SQL connector tests: ``sql_database``, a fresh database per test.

Parametrize it indirectly over the dialects (``sqlite``, ``postgresql``, ``mariadb``), or use
``sql_database`` alone for all three (see ``_databases.py`` for the servers' variables).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.reference_connectors.sql._databases import DIALECTS, TestDatabase, make_database


@pytest.fixture(params=DIALECTS)
def sql_database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[TestDatabase]:
    """A fresh, empty database of the parametrized dialect, dropped afterwards."""
    yield from make_database(request.param, tmp_path)
