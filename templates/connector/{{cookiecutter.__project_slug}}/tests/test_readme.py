"""The README's configuration reference is the one the ConfigDefs generate."""

from __future__ import annotations

from pathlib import Path

from {{ cookiecutter.package_name }}.readme import BEGIN, END, config_reference

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_config_reference_is_current() -> None:
    text = README.read_text(encoding="utf-8")
    generated = text.partition(BEGIN)[2].partition(END)[0].strip()
    assert generated == config_reference().strip(), (
        "README.md's configuration reference is stale: run python -m {{ cookiecutter.package_name }}.readme"
    )
