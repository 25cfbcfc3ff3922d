"""``cdk distributed``: Kafka's ``connect-distributed``, with the tasks on Spark."""

from __future__ import annotations

import logging
from pathlib import Path

import click

from cdk.cli._standalone import configure_logging, log_format_option, wait_for_stop_signal
from cdk.errors import ConnectException

__all__ = ["distributed"]

log = logging.getLogger("cdk.cli.distributed")


@click.command()
@click.argument("worker_properties", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--log-level",
    type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"], case_sensitive=False),
    default="INFO",
    show_default=True,
    help="Logging level.",
)
@log_format_option
def distributed(worker_properties: Path, log_level: str, log_format: str) -> None:
    """Run a distributed-mode driver: the REST API here, the connectors' tasks on Spark.

    WORKER_PROPERTIES is a Kafka Connect distributed worker file (bootstrap.servers, group.id,
    config.storage.topic, offset.storage.topic, status.storage.topic, key.converter,
    value.converter, listeners, ...) plus spark.* keys for the SparkSession (spark.master,
    local[*] by default; spark://host:7077 for a standalone cluster). Connectors are created
    through the REST API and kept in the config topic: a restarted driver brings them back.
    Runs until SIGINT or SIGTERM, then ends the tasks (committing offsets).
    """
    from cdk.config import load_properties
    from cdk.spark import distributed_worker

    configure_logging(log_level, log_format)
    try:
        props = load_properties(worker_properties)
        # the executors' Python workers log in the same format (local mode: inherited)
        props.setdefault("spark.executorEnv.CDK_LOG_FORMAT", log_format.lower())
        worker = distributed_worker(props)
    except ConnectException as exc:
        raise click.ClickException(str(exc)) from exc

    with wait_for_stop_signal() as stop:
        try:
            worker.start()
        except ConnectException as exc:
            raise click.ClickException(str(exc)) from exc
        names = ", ".join(worker.herder.connectors()) or "none"
        click.echo(
            f"cdk distributed: REST API at {worker.rest_url}; "
            f"spark.master={worker.config.spark_master}; connectors: {names}",
            err=True,
        )
        while not stop.wait(0.5):
            pass
        worker.stop()
        click.echo("cdk distributed: stopped", err=True)
