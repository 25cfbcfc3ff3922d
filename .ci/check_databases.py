"""CI: fail early unless the PostgreSQL and MariaDB servers the SQL connector tests use answer.

Locally the tests skip without a server (saying which variable to set); in CI a missing server
must fail the run instead, so that the SQL tests are never skipped silently.
"""

from __future__ import annotations

import os
import sys

import sqlalchemy as sa

SERVERS = {
    "PostgreSQL": (
        "CDK_TEST_POSTGRES_URL",
        "postgresql+psycopg://postgres@127.0.0.1:5432/postgres",
    ),
    "MariaDB": ("CDK_TEST_MARIADB_URL", "mysql+pymysql://root@127.0.0.1:3306/test"),
}


def main() -> int:
    """Probe each server; 1 when one does not answer."""
    failed = 0
    for name, (variable, default) in SERVERS.items():
        url = sa.make_url(os.environ.get(variable) or default)
        shown = url.render_as_string(hide_password=True)
        engine = sa.create_engine(
            url, connect_args={"connect_timeout": 5}, poolclass=sa.pool.NullPool
        )
        try:
            with engine.connect() as connection:
                version = connection.execute(sa.text("SELECT version()")).scalar()
            print(f"ci: {name} answers at {shown}: {version}")
        except sa.exc.SQLAlchemyError as exc:
            failed += 1
            reason = str(getattr(exc, "orig", exc)).strip().splitlines()[0]
            print(
                f"ci: {name} does not answer at {shown}: {reason}\n"
                f"    start the server, or set {variable} to a SQLAlchemy URL of one",
                file=sys.stderr,
            )
        finally:
            engine.dispose()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
