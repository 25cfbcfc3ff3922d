"""``cdk new``: generate a connector project from the kit's cookiecutter template.

The answers are collected (prompted, or taken from NAME, ``--kind`` and ``--set``), checked, and
only then rendered, into a staging directory next to the target that is moved into place when
the whole project is written: a bad answer or a failing hook leaves nothing behind. Exit status:
0 when the project was created, 2 for a usage mistake (a bad name, an unknown ``--set`` key, an
existing directory without ``--force``), 1 when generation itself failed.
"""

from __future__ import annotations

import datetime as dt
import logging
import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import click

from cdk import __version__
from cdk.cli._scaffold import (
    KINDS,
    LICENSES,
    AnswerError,
    check_answers,
    class_prefix,
    project_slug,
    template_dir,
)

__all__ = ["new"]

_TRUE = ("true", "yes", "y", "1", "on")
_FALSE = ("false", "no", "n", "0", "off")


class _UsageError(click.ClickException):
    """A usage mistake (exit status 2), said in one line."""

    exit_code = 2


def _public_keys(context: Mapping[str, Any]) -> list[str]:
    return [key for key in context if not key.startswith("_")]


def _overrides(
    name: str | None, kind: str | None, settings: Sequence[str], keys: Sequence[str]
) -> dict[str, Any]:
    """The answers given on the command line, checked against the template's variables."""
    given: dict[str, Any] = {}
    for setting in settings:
        key, sep, value = setting.partition("=")
        key = key.strip()
        if not sep or not key:
            raise _UsageError(f"--set {setting!r} is not KEY=VALUE")
        if key not in keys:
            raise _UsageError(f"--set {key!r} is not a template variable; known: {', '.join(keys)}")
        given[key] = value
    if name is not None:
        given["project_name"] = name
    if kind is not None:
        given["kind"] = kind
    for key, choices in (("kind", KINDS), ("license", LICENSES)):
        if key in given and given[key] not in choices:
            raise _UsageError(f"{key} {given[key]!r} is not one of {', '.join(choices)}")
    if "ci" in given:
        text = str(given["ci"]).strip().lower()
        if text not in _TRUE + _FALSE:
            raise _UsageError(f"--set ci={given['ci']!r} is not yes or no")
        given["ci"] = text in _TRUE
    return given


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


@click.command()
@click.argument("name", required=False)
@click.option(
    "--kind",
    type=click.Choice(KINDS),
    default=None,
    help="Which connectors to generate [default: both].",
)
@click.option(
    "--no-input", is_flag=True, help="Do not prompt: use the defaults for what is not given."
)
@click.option(
    "--output-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="Where to create the project directory.",
)
@click.option(
    "--set",
    "settings",
    multiple=True,
    metavar="KEY=VALUE",
    help="Answer a template variable (project_name, package_name, kind, author, description, "
    "license, ci). Repeatable.",
)
@click.option(
    "--force",
    is_flag=True,
    help="Write into an existing, non-empty project directory (its files are overwritten).",
)
def new(
    name: str | None,
    kind: str | None,
    no_input: bool,
    output_dir: Path,
    settings: tuple[str, ...],
    force: bool,
) -> None:
    """Create a connector project NAME (e.g. acme-crm) from the kit's template.

    The project installs, passes its own tests, builds its wheel and passes `cdk certify` as
    generated: its connectors read and write JSON-lines files, and every place to replace with
    your external system is marked TODO(partner).
    """
    from cookiecutter import generate, prompt  # imported here: `cdk --help` stays quick

    template = template_dir()
    context = generate.generate_context(context_file=str(template / "cookiecutter.json"))
    variables = context["cookiecutter"]
    given = _overrides(name, kind, settings, _public_keys(variables))
    for key, value in given.items():
        if isinstance(variables.get(key), list):  # a choice: the given one first
            variables[key] = [value, *[v for v in variables[key] if v != value]]
        else:
            variables[key] = value
    variables["__cdk_version"] = __version__
    variables["__year"] = str(dt.date.today().year)
    if not no_input and not sys.stdin.isatty():
        click.echo("cdk new: standard input is not a terminal, so no prompts (--no-input).")
        no_input = True
    try:
        answers = dict(prompt.prompt_for_config(context, no_input=no_input))
    except (KeyboardInterrupt, EOFError):
        raise _UsageError("cancelled; nothing was written") from None
    answers["__project_slug"] = project_slug(str(answers.get("project_name", "")))
    answers["__class_prefix"] = class_prefix(str(answers.get("project_name", "")))
    target = output_dir / answers["__project_slug"]
    try:
        check_answers(answers, replacing=target.resolve() if force else None)
    except AnswerError as exc:
        raise _UsageError(str(exc)) from None
    if target.exists() and not target.is_dir():
        raise _UsageError(f"{target} exists and is not a directory")
    if target.is_dir() and any(target.iterdir()) and not force:
        raise _UsageError(f"{target} exists and is not empty; use --force to write into it")
    created = _generate(template, answers, output_dir, target)
    _report(target, answers, created)


def _generate(template: Path, answers: dict[str, Any], output_dir: Path, target: Path) -> list[str]:
    """Render into a staging directory, then move the project into place; the files written."""
    from cookiecutter import generate
    from cookiecutter.exceptions import CookiecutterException

    logging.getLogger("cookiecutter").setLevel(logging.CRITICAL)  # its hook tracebacks: ours say it
    output_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".cdk-new-", dir=output_dir))
    try:
        answers["_template"] = str(template)
        answers["_output_dir"] = str(output_dir.resolve())
        rendered = Path(
            generate.generate_files(
                repo_dir=str(template), context={"cookiecutter": answers}, output_dir=str(staging)
            )
        )
        # The hooks import the new project's modules (its docs are generated from them): the
        # bytecode that leaves behind is no part of the project.
        for cache in sorted(rendered.rglob("__pycache__"), reverse=True):
            shutil.rmtree(cache, ignore_errors=True)
        created = _files(rendered)
        if target.is_dir():
            shutil.copytree(rendered, target, dirs_exist_ok=True)
        else:
            rendered.rename(target)
        return created
    except CookiecutterException as exc:
        raise click.ClickException(f"generating the project failed: {exc}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _report(target: Path, answers: Mapping[str, Any], created: Sequence[str]) -> None:
    prefix = answers["__class_prefix"]
    kind = answers["kind"]
    classes = {
        "both": f"{prefix}SourceConnector and {prefix}SinkConnector",
        "source": f"{prefix}SourceConnector",
        "sink": f"{prefix}SinkConnector",
    }[kind]
    click.echo(f"Created {target}/ with {classes} ({len(created)} files):")
    for path in created:
        click.echo(f"  {path}")
    click.echo(
        "\nEvery place to adapt to your external system is marked TODO(partner). Next:\n"
        f"  cd {target}\n"
        "  python -m pip install -e '.[dev]'   # install (with the kit)\n"
        "  pytest                              # unit tests and quick conformance suites\n"
        "  cdk certify .                       # every suite, and the certification bundle"
    )
