"""``cdk standalone``: Kafka's ``connect-standalone``, running Python connectors."""

from __future__ import annotations

import contextlib
import json
import logging
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import click

from cdk.errors import ConnectException

__all__ = [
    "configure_logging",
    "log_format_option",
    "read_connector_file",
    "standalone",
    "wait_for_stop_signal",
]

log = logging.getLogger("cdk.cli.standalone")


def read_connector_file(path: Path) -> tuple[str, dict[str, str]]:
    """Read a connector configuration: a ``.properties`` file, or Kafka's JSON ``{name, config}``.

    A JSON file may also be a flat object of settings (with ``name``).

    Raises:
        ConfigException: unreadable, malformed, without a connector name, or a JSON setting is
            ``null`` (Kafka: "Null value can not be supplied as the configuration value").
    """
    from cdk.config import load_properties
    from cdk.errors import ConfigException

    if path.suffix.lower() == ".json":
        try:
            data: Any = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigException(f"Could not read connector config {path}: {exc}") from exc
        except json.JSONDecodeError as exc:
            raise ConfigException(f"{path}: malformed JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise ConfigException(f"{path}: expected a JSON object with name and config")
        raw = data.get("config", data)
        if not isinstance(raw, dict):
            raise ConfigException(f"{path}: config must be a JSON object")
        nulls = sorted(str(k) for k, v in raw.items() if v is None)
        if nulls:  # Kafka refuses them rather than reading the text "null"
            raise ConfigException(
                f"{path}: Null value can not be supplied as the configuration value "
                f"(key{'s' if len(nulls) > 1 else ''}: {', '.join(nulls)})"
            )
        config = {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in raw.items()}
        for key, value in raw.items():
            if isinstance(value, bool):
                config[str(key)] = "true" if value else "false"
        name = data.get("name") or config.get("name")
    else:
        config = load_properties(path)
        name = config.get("name")
    if not name or not str(name).strip():
        raise ConfigException(f"{path}: the connector has no name (set 'name')")
    return str(name).strip(), config


def configure_logging(level: str, log_format: str = "text") -> None:
    """Log to stderr at ``level`` in ``log_format`` (``text``/``json``), with connector contexts."""
    from cdk.runtime._log_context import configure_logging as configure

    configure(level, log_format)


#: ``--log-format`` of the worker commands.
log_format_option = click.option(
    "--log-format",
    type=click.Choice(["text", "json"], case_sensitive=False),
    default="text",
    show_default=True,
    help="text: [time] LEVEL logger: [connector|task-N] message; json: one object a line with "
    "time, level, logger, connector, task, message and exception.",
)


@contextlib.contextmanager
def wait_for_stop_signal() -> Iterator[threading.Event]:
    """Handle SIGINT and SIGTERM while the block runs: they set the event yielded.

    The previous handlers come back when the block ends.
    """
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        log.info("Received %s: stopping", signal.Signals(signum).name)
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _failure(status: dict[str, Any]) -> str | None:
    """Why the connector of a status (``GET /connectors/{name}/status``) FAILED; None if not.

    The reason is the last line of the trace: the exception and its message.
    """
    connector = status.get("connector", {})
    if connector.get("state") != "FAILED":
        return None
    lines = [line for line in str(connector.get("trace") or "").splitlines() if line.strip()]
    return lines[-1].strip() if lines else "no reason given"


@click.command()
@click.argument("worker_properties", type=click.Path(dir_okay=False, path_type=Path))
@click.argument(
    "connector_configs",
    nargs=-1,
    type=click.Path(dir_okay=False, path_type=Path),
)
@click.option(
    "--log-level",
    type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"], case_sensitive=False),
    default="INFO",
    show_default=True,
    help="Logging level.",
)
@log_format_option
def standalone(
    worker_properties: Path, connector_configs: tuple[Path, ...], log_level: str, log_format: str
) -> None:
    """Run a standalone worker with the connectors of CONNECTOR_CONFIGS.

    WORKER_PROPERTIES is a Kafka Connect worker file (bootstrap.servers, key.converter,
    value.converter, offset.storage.file.filename, listeners, producer.*/consumer.* ...).
    Each connector config is a .properties file or Kafka's JSON ({"name": ..., "config": {...}}).
    The worker runs until SIGINT or SIGTERM, then stops its tasks (committing offsets).
    """
    from cdk.config import load_properties
    from cdk.errors import ConfigException
    from cdk.runtime.standalone._worker import EmbeddedWorker

    configure_logging(log_level, log_format)
    try:
        worker_props = load_properties(worker_properties)
        connectors = [read_connector_file(path) for path in connector_configs]
        worker = EmbeddedWorker(worker_props)
    except ConnectException as exc:
        raise click.ClickException(str(exc)) from exc

    with wait_for_stop_signal() as stop:
        try:
            worker.start()
            states = []
            for name, config in connectors:
                info = worker.herder.create_connector(name, config)
                failure = _failure(worker.herder.connector_status(name))
                if failure is None:
                    log.info(
                        "Created connector %s (%s, %d task(s))",
                        name,
                        info["type"],
                        len(info["tasks"]),
                    )
                    states.append(name)
                else:
                    log.error("Connector %s FAILED: %s", name, failure)
                    states.append(f"{name} (FAILED: {failure})")
        except (ConnectException, ConfigException) as exc:
            worker.stop()
            raise click.ClickException(str(exc)) from exc
        names = ", ".join(states) or "none"
        click.echo(f"cdk standalone: REST API at {worker.rest_url}; connectors: {names}", err=True)
        while not stop.wait(0.5):
            pass
        worker.stop()
        click.echo("cdk standalone: stopped", err=True)
