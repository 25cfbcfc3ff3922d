"""``cdk plugins`` and ``cdk docs``: what the kit ships, and the config reference of any plugin."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from cdk._aliases import KAFKA_CLASS_ALIASES
from cdk.errors import ConfigException

__all__ = ["docs", "plugins", "resolve_plugin"]

_FORMATS = ("rst", "enriched-rst", "html", "markdown")


def resolve_plugin(name: str) -> type[Any]:
    """Load a plugin class by Kafka alias, entry point name, ``module:Class`` or ``a.b.Class``."""
    from cdk.runtime.isolation._plugins import Plugins

    return Plugins().load(name)


_KINDS = (
    "source",
    "sink",
    "converter",
    "header_converter",
    "transformation",
    "predicate",
    "config_provider",
)


@click.command()
@click.option(
    "--type",
    "kinds",
    type=click.Choice(_KINDS),
    multiple=True,
    help="Only plugins of this type (repeatable).",
)
def plugins(kinds: tuple[str, ...]) -> None:
    """List the plugins the worker can load: connectors, converters, SMTs, predicates, providers.

    Connectors come from the ``cdk.plugins`` entry points of installed distributions; the rest
    ship with the kit. Each row gives the type, the name to use in configs (Kafka's class name
    where there is one), the version and the other names that load the same plugin in a config:
    entry point names, Kafka's aliases (the simple class name and that name without the suffix
    of its kind, as ``JsonConverter`` and ``Json``) and the Python class.
    """
    from cdk.runtime.isolation._plugins import Plugins

    registry = Plugins()
    kafka_names = {
        target.replace(":", "."): alias
        for alias, target in KAFKA_CLASS_ALIASES.items()
        if alias.startswith(("org.", "io."))
    }
    rows = []
    for desc in registry.all():
        if kinds and desc.type.value not in kinds:
            continue
        name = kafka_names.get(desc.class_name, desc.class_name)
        others = [a for a in registry.aliases(desc.class_name) if a != name]
        if desc.class_name != name:
            others.append(desc.class_name)
        rows.append((desc.type.value, name, desc.version, ", ".join(others)))
    if not rows:
        click.echo("no plugins found")
        return
    rows.sort(key=lambda row: (_KINDS.index(row[0]) if row[0] in _KINDS else 99, row[1]))
    header = ("TYPE", "NAME", "VERSION", "ALIASES")
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(3)]
    for row in [header, *rows]:
        line = "  ".join(cell.ljust(width) for cell, width in zip(row[:3], widths, strict=True))
        click.echo(f"{line}  {row[3]}".rstrip())


@click.command()
@click.argument("plugin")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(_FORMATS),
    default="rst",
    show_default=True,
    help="Output format of the config reference.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="Write to this file instead of standard output.",
)
def docs(plugin: str, fmt: str, output: Path | None) -> None:
    """Print the configuration reference of PLUGIN.

    PLUGIN is a Kafka class name or alias (InsertField$Value, JsonConverter) or a Python class
    path (my_package.connector:MySourceConnector).
    """
    try:
        cls = resolve_plugin(plugin)
    except ConfigException as exc:
        from cdk.runtime.isolation._plugins import Plugins

        close = Plugins().suggestions(plugin)
        hint = f" Did you mean {' or '.join(close)}?" if close else ""
        raise click.BadParameter(f"{exc}{hint}", param_hint="PLUGIN") from exc
    try:
        config_def = cls().config()
    except Exception as exc:
        raise click.ClickException(
            f"{plugin}: could not get its ConfigDef ({type(exc).__name__}: {exc})"
        ) from exc
    render = {
        "rst": config_def.to_rst,
        "enriched-rst": config_def.to_enriched_rst,
        "html": config_def.to_html,
        "markdown": config_def.to_markdown,
    }[fmt]
    text = render()
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        click.echo(f"wrote {output}", err=True)
