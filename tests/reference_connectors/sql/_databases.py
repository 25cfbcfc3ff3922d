"""Fresh databases for the SQL connector tests: SQLite files and databases on real servers.

The servers come from environment variables, defaulting to the machine's own (trust auth):

- ``CDK_TEST_POSTGRES_URL`` (default ``postgresql://postgres@127.0.0.1:5432/postgres``)
- ``CDK_TEST_MARIADB_URL`` (default ``mysql://root@127.0.0.1:3306/test``)

Each :class:`TestDatabase` is a database of its own (``CREATE DATABASE cdk_<random>``), dropped
afterwards. When a server does not answer, the tests that need it are skipped with a reason that
names the variable to set (CI fails instead: ``.ci/run`` checks both servers first).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

__all__ = ["DIALECTS", "TestDatabase", "server_url", "make_database"]

DIALECTS = ("sqlite", "postgresql", "mariadb")
_ENV = {"postgresql": "CDK_TEST_POSTGRES_URL", "mariadb": "CDK_TEST_MARIADB_URL"}
_DEFAULTS = {
    "postgresql": "postgresql+psycopg://postgres@127.0.0.1:5432/postgres",
    "mariadb": "mysql+pymysql://root@127.0.0.1:3306/test",
}
_DRIVERS = {"postgresql": "postgresql+psycopg", "mariadb": "mysql+pymysql"}


def server_url(dialect: str) -> sa.URL:
    """The admin URL of the server for ``dialect`` (from its environment variable)."""
    url = sa.make_url(os.environ.get(_ENV[dialect]) or _DEFAULTS[dialect])
    return url.set(drivername=_DRIVERS[dialect])


@dataclass
class TestDatabase:
    """A fresh database for one test.

    Attributes:
        dialect: ``sqlite``, ``postgresql`` or ``mariadb``.
        url: its SQLAlchemy URL (with the password, if any: for the test's own engine).
        engine: an engine on it, for the test to create tables and write rows.
    """

    __test__ = False  # not a test class

    dialect: str
    url: sa.URL
    engine: sa.Engine
    _extra: dict[str, str] = field(default_factory=dict)

    def config(self) -> dict[str, str]:
        """The connector's connection keys for this database."""
        props = {"connection.url": self.url.set(password=None).render_as_string()}
        if self.url.password:
            props["connection.password"] = str(self.url.password)
        return props

    def execute(self, *statements: str, **params: Any) -> None:
        """Run statements in one transaction."""
        with self.engine.begin() as connection:
            for statement in statements:
                connection.execute(sa.text(statement), params)

    def rows(self, query: str) -> list[tuple[Any, ...]]:
        with self.engine.connect() as connection:
            return [tuple(row) for row in connection.execute(sa.text(query))]

    def quote(self, name: str) -> str:
        return str(self.engine.dialect.identifier_preparer.quote(name))


def _admin(dialect: str) -> sa.Engine:
    url = server_url(dialect)
    engine = sa.create_engine(url, connect_args={"connect_timeout": 3}, poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as connection:
            connection.execute(sa.text("SELECT 1"))
    except sa.exc.OperationalError as exc:
        engine.dispose()
        pytest.skip(
            f"no {dialect} server answers at {url.render_as_string(hide_password=True)} "
            f"({str(exc.orig).strip().splitlines()[0]}); set {_ENV[dialect]} to a SQLAlchemy URL "
            f"of a {dialect} server whose user may create databases"
        )
    return engine


def make_database(dialect: str, tmp_path: Path) -> Iterator[TestDatabase]:
    """Create a fresh database, yield it, and drop it."""
    if dialect == "sqlite":
        url = sa.make_url(f"sqlite:///{tmp_path / 'test.db'}")
        engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
        with engine.begin() as connection:
            connection.execute(sa.text("PRAGMA journal_mode=WAL"))
        try:
            yield TestDatabase(dialect, url, engine)
        finally:
            engine.dispose()
        return
    admin = _admin(dialect)
    name = f"cdk_{secrets.token_hex(6)}"
    with admin.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.execute(sa.text(f"CREATE DATABASE {name}"))
    url = server_url(dialect).set(database=name)
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    try:
        yield TestDatabase(dialect, url, engine)
    finally:
        engine.dispose()
        with admin.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            if dialect == "postgresql":
                connection.execute(sa.text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
            else:
                connection.execute(sa.text(f"DROP DATABASE IF EXISTS {name}"))
        admin.dispose()
