"""Keep the README's configuration reference in step with the ConfigDefs.

``python -m {{ cookiecutter.package_name }}.readme`` rewrites the part of ``README.md`` between the
``config-reference`` markers from the connectors' ConfigDefs; a unit test fails when it is stale.
"""

from __future__ import annotations

import sys
from pathlib import Path

from cdk import ConfigDef

from {{ cookiecutter.package_name }}._config import {% if cookiecutter.kind != 'source' %}SINK_CONFIG_DEF{% endif %}{% if cookiecutter.kind == 'both' %}, {% endif %}{% if cookiecutter.kind != 'sink' %}SOURCE_CONFIG_DEF{% endif %}

__all__ = ["BEGIN", "END", "config_reference", "update"]

BEGIN = "<!-- config-reference:begin (python -m {{ cookiecutter.package_name }}.readme) -->"
END = "<!-- config-reference:end -->"


def _section(title: str, config_def: ConfigDef) -> str:
    lines = config_def.to_markdown().strip().splitlines()
    body = "\n".join("##" + line if line.startswith("## ") else line for line in lines)
    return f"### {title}\n\n{body}"


def config_reference() -> str:
    """The configuration reference, as Markdown, generated from the ConfigDefs."""
    return "\n\n".join(
        [
{%- if cookiecutter.kind != 'sink' %}
            _section("{{ cookiecutter.__class_prefix }}SourceConnector", SOURCE_CONFIG_DEF),
{%- endif %}
{%- if cookiecutter.kind != 'source' %}
            _section("{{ cookiecutter.__class_prefix }}SinkConnector", SINK_CONFIG_DEF),
{%- endif %}
        ]
    )


def update(readme: Path) -> bool:
    """Rewrite the generated part of ``readme``; True when it changed."""
    text = readme.read_text(encoding="utf-8")
    head, begin, rest = text.partition(BEGIN)
    _, end, tail = rest.partition(END)
    if not begin or not end:
        raise SystemExit(f"{readme} has no {BEGIN} ... {END} markers")
    new = f"{head}{BEGIN}\n\n{config_reference()}\n\n{END}{tail}"
    if new != text:
        readme.write_text(new, encoding="utf-8")
    return new != text


if __name__ == "__main__":
    path = Path(sys.argv[1] if len(sys.argv) > 1 else "README.md")
    print(f"{path}: {'updated' if update(path) else 'already up to date'}")
