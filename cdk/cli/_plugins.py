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
@click.option(
    "--plugin-path",
    "plugin_path",
    help="Also list the plugins of these directories (comma-separated, as plugin.path).",
)
@click.option(
    "--worker-config",
    "worker_config",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Take plugin.path from this worker properties file.",
)
def plugins(kinds: tuple[str, ...], plugin_path: str | None, worker_config: Path | None) -> None:
    """List the plugins the worker can load: connectors, converters, SMTs, predicates, providers.

    Connectors come from the ``cdk.plugins`` entry points of installed distributions; the rest
    ship with the kit. Each row gives the type, the name to use in configs (Kafka's class name
    where there is one), the version and the other names that load the same plugin in a config:
    entry point names, Kafka's aliases (the simple class name and that name without the suffix
    of its kind, as ``JsonConverter`` and ``Json``) and the Python class. FROM says where each
    comes from: ``built-in``, the installed distribution (``name==version``), or
    ``name==version@plugin.path:<dir>``. The plugins' declared requirements are checked as a
    worker checks them at start.
    """
    from cdk.runtime.isolation._plugin_path import (
        check_requirements,
        install_plugin_path,
        plugin_distributions,
    )
    from cdk.runtime.isolation._plugins import ENTRY_POINT_GROUP, Plugins

    paths = [plugin_path] if plugin_path else []
    if worker_config is not None:
        from cdk.config import load_properties

        configured = load_properties(worker_config).get("plugin.path")
        if configured:
            paths.append(configured)
    try:
        for value in paths:
            install_plugin_path(value)
        check_requirements(plugin_distributions(ENTRY_POINT_GROUP))
    except ConfigException as exc:
        raise click.ClickException(str(exc)) from exc
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
        rows.append((desc.type.value, name, desc.version, desc.source, ", ".join(others)))
    if not rows:
        click.echo("no plugins found")
        return
    rows.sort(key=lambda row: (_KINDS.index(row[0]) if row[0] in _KINDS else 99, row[1]))
    header = ("TYPE", "NAME", "VERSION", "FROM", "ALIASES")
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(4)]
    for row in [header, *rows]:
        line = "  ".join(cell.ljust(width) for cell, width in zip(row[:4], widths, strict=True))
        click.echo(f"{line}  {row[4]}".rstrip())


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
