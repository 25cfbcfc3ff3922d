"""The ``cdk`` command line: ``cdk --help`` lists the commands."""

from __future__ import annotations

from cdk.cli._main import cli, main

__all__ = ["cli", "main"]
