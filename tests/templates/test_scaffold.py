"""The rules ``cdk new`` and the template's hook apply to the answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from cdk.cli._scaffold import (
    AnswerError,
    check_answers,
    class_prefix,
    package_name,
    project_slug,
    template_dir,
)


@pytest.mark.parametrize(
    ("name", "slug", "package", "prefix"),
    [
        ("my-connector", "my-connector", "my_connector", "MyConnector"),
        ("Acme CRM", "acme-crm", "acme_crm", "AcmeCRM"),
        ("s3.sink_v2", "s3-sink-v2", "s3_sink_v2", "S3SinkV2"),
        ("AcmeCRM", "acmecrm", "acmecrm", "AcmeCRM"),
    ],
)
def test_names_derived_from_the_project_name(
    name: str, slug: str, package: str, prefix: str
) -> None:
    assert project_slug(name) == slug
    assert package_name(name) == package
    assert class_prefix(name) == prefix


def _answers(**changes: object) -> dict[str, object]:
    return {
        "project_name": "fine-name",
        "package_name": "fine_name",
        "kind": "both",
        "license": "MIT",
        **changes,
    }


def test_good_answers_pass() -> None:
    check_answers(_answers())


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"project_name": "  "}, "the project name is empty"),
        ({"package_name": "import"}, "is a Python keyword"),
        ({"package_name": "match"}, "is a Python keyword"),  # a soft keyword
        ({"package_name": "reference_connectors"}, "clashes with the kit"),
        ({"package_name": "os"}, "clashes with an installed module"),
        ({"kind": "duplex"}, "kind 'duplex' is not one of both, source, sink"),
        ({"license": "GPL-3.0"}, "license 'GPL-3.0' is not one of"),
        ({"project_name": "connect-cdk", "package_name": "connect_cdk_x"}, "clashes with the kit"),
    ],
)
def test_bad_answers_name_the_problem(changes: dict[str, object], message: str) -> None:
    with pytest.raises(AnswerError, match=message):
        check_answers(_answers(**changes))


def test_a_module_inside_the_directory_being_replaced_is_no_clash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "src" / "earlier_generation_xyz"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    answers = _answers(package_name="earlier_generation_xyz")
    with pytest.raises(AnswerError, match="clashes with an installed module"):
        check_answers(answers)
    check_answers(answers, replacing=tmp_path)  # regenerating over the project itself (--force)


def test_the_template_is_found() -> None:
    assert (template_dir() / "cookiecutter.json").is_file()
