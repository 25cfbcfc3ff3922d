"""The ``cdk`` command group and its entry point."""

from __future__ import annotations

import sys

import click

from cdk import __version__
from cdk.cli._broker import broker
from cdk.cli._certify import certify
from cdk.cli._distributed import distributed
from cdk.cli._new import new
from cdk.cli._plugins import docs, plugins
from cdk.cli._standalone import standalone

__all__ = ["cli", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(
    __version__, "-V", "--version", prog_name="cdk", message="%(prog)s %(version)s"
)
def cli() -> None:
    """connect-cdk: build, run and certify Kafka Connect-style connectors in Python."""


cli.add_command(new)
cli.add_command(plugins)
cli.add_command(docs)
cli.add_command(broker)
cli.add_command(standalone)
cli.add_command(distributed)
cli.add_command(certify)


def main(argv: list[str] | None = None) -> None:
    """Run the CLI (the ``cdk`` console script)."""
    cli.main(args=argv, prog_name="cdk")


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
