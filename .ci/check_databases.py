"""CI: fail early unless the servers the reference connector tests use answer.

PostgreSQL and MariaDB (the SQL connectors) and RabbitMQ (the RabbitMQ connectors). Locally the
tests skip without a server (saying which variable to set); in CI a missing server must fail
the run instead, so that those tests are never skipped silently. ``--wait SECONDS`` probes
RabbitMQ alone until it answers or the deadline passes (``.ci/run`` starts it when it does not
answer).
"""

from __future__ import annotations

import os
import sys
import time

import pika
import pika.exceptions
import sqlalchemy as sa

SERVERS = {
    "PostgreSQL": (
        "CDK_TEST_POSTGRES_URL",
        "postgresql+psycopg://postgres@127.0.0.1:5432/postgres",
    ),
    "MariaDB": ("CDK_TEST_MARIADB_URL", "mysql+pymysql://root@127.0.0.1:3306/test"),
}


RABBITMQ = ("CDK_TEST_RABBITMQ_URL", "amqp://guest:guest@127.0.0.1:5672/")


def rabbitmq_problem() -> str | None:
    """Why RabbitMQ does not answer (None when it does); every wait is bounded."""
    variable, default = RABBITMQ
    url = os.environ.get(variable) or default
    parameters = pika.URLParameters(url)
    parameters.connection_attempts = 1
    parameters.socket_timeout = 5
    parameters.stack_timeout = 10
    try:
        connection = pika.BlockingConnection(parameters)
    except pika.exceptions.AMQPError as exc:
        return f"{type(exc).__name__}: {exc}"
    connection.close()
    print(f"ci: RabbitMQ answers at {parameters.host}:{parameters.port}")
    return None


def wait_for_rabbitmq(seconds: float) -> int:
    """Probe RabbitMQ until it answers (0) or ``seconds`` passed (1)."""
    deadline = time.monotonic() + seconds
    while True:
        problem = rabbitmq_problem()
        if problem is None:
            return 0
        if time.monotonic() > deadline:
            print(f"ci: RabbitMQ did not answer within {seconds:g} s: {problem}", file=sys.stderr)
            return 1
        time.sleep(0.5)


def main() -> int:
    """Probe each server; 1 when one does not answer."""
    if sys.argv[1:2] == ["--wait"]:
        return wait_for_rabbitmq(float(sys.argv[2]))
    failed = 0
    problem = rabbitmq_problem()
    if problem is not None:
        failed += 1
        print(
            f"ci: RabbitMQ does not answer: {problem}\n"
            f"    start it (rabbitmq-server -detached), or set {RABBITMQ[0]} to an AMQP URL",
            file=sys.stderr,
        )
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
