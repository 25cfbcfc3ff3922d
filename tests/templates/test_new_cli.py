"""``cdk new``: what it generates, what it prints, and how it refuses bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.templates._support import BIN, ROOT, cdk_new, run, snapshot, toml


def _generated_files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_no_input_generates_both_connectors_and_prints_the_next_commands(tmp_path: Path) -> None:
    result = cdk_new("my-connector", "--no-input", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    project = tmp_path / "my-connector"
    files = _generated_files(project)
    for expected in (
        "pyproject.toml",
        "README.md",
        "LICENSE",
        ".github/workflows/certify.yml",
        "examples/worker.properties",
        "examples/source.properties",
        "examples/sink.properties",
        "src/my_connector/__init__.py",
        "src/my_connector/_config.py",
        "src/my_connector/_source.py",
        "src/my_connector/_sink.py",
        "src/my_connector/certify.py",
        "src/my_connector/py.typed",
        "tests/test_config.py",
        "tests/test_conversion.py",
    ):
        assert expected in files
        assert f"  {expected}\n" in result.stdout  # it says what it created
    assert "Created my-connector/ with MyConnectorSourceConnector and MyConnectorSinkConnector" in (
        result.stdout
    )
    commands = ("cd my-connector", "python -m pip install -e '.[dev]'", "pytest", "cdk certify .")
    for command in commands:
        assert command in result.stdout
    source = (project / "src/my_connector/_source.py").read_text()
    assert "class MyConnectorSourceConnector(SourceConnector):" in source
    assert "class MyConnectorSourceTask(SourceTask):" in source
    sink = (project / "src/my_connector/_sink.py").read_text()
    assert "class MyConnectorSinkConnector(SinkConnector):" in sink
    meta = toml(project / "pyproject.toml")
    assert meta["project"]["name"] == "my-connector"
    assert meta["project"]["entry-points"]["cdk.plugins"] == {
        "MyConnectorSource": "my_connector:MyConnectorSourceConnector",
        "MyConnectorSink": "my_connector:MyConnectorSinkConnector",
    }
    assert meta["tool"]["cdk"]["drivers"] == [
        "my_connector.certify:MyConnectorSourceDriver",
        "my_connector.certify:MyConnectorSinkDriver",
    ]
    assert "Apache License" in (project / "LICENSE").read_text()
    assert not list(tmp_path.glob(".cdk-new-*"))  # no staging directory left behind


@pytest.mark.parametrize(
    ("kind", "present", "absent"),
    [
        ("source", ["_source.py", "source.properties"], ["_sink.py", "sink.properties"]),
        ("sink", ["_sink.py", "sink.properties"], ["_source.py", "source.properties"]),
    ],
)
def test_a_kind_drops_what_it_does_not_need(
    tmp_path: Path, kind: str, present: list[str], absent: list[str]
) -> None:
    result = cdk_new("acme", "--kind", kind, "--no-input", "--output-dir", tmp_path)
    assert result.returncode == 0, result.stderr
    names = {Path(f).name for f in _generated_files(tmp_path / "acme")}
    assert set(present) <= names
    assert not set(absent) & names
    text = "\n".join(p.read_text() for p in (tmp_path / "acme").rglob("*.py"))
    other = "Sink" if kind == "source" else "Source"
    assert f"Acme{other}Connector" not in text
    assert f"Acme{other}Driver" not in text


def test_set_answers_the_template_variables(tmp_path: Path) -> None:
    result = cdk_new(
        "--no-input",
        "--output-dir",
        tmp_path,
        "--set",
        "project_name=Acme CRM",
        "--set",
        "package_name=acme_crm_connect",
        "--set",
        "author=Acme Inc.",
        "--set",
        "description=Acme CRM contacts for Kafka",
        "--set",
        "license=MIT",
        "--set",
        "ci=no",
    )
    assert result.returncode == 0, result.stderr
    project = tmp_path / "acme-crm"
    assert (project / "src/acme_crm_connect/_source.py").exists()
    source = (project / "src/acme_crm_connect/_source.py").read_text()
    assert "class AcmeCRMSourceConnector" in source
    meta = toml(project / "pyproject.toml")["project"]
    assert meta["license"] == "MIT"
    assert meta["authors"] == [{"name": "Acme Inc."}]
    assert meta["description"] == "Acme CRM contacts for Kafka"
    assert "MIT License" in (project / "LICENSE").read_text()
    assert "Acme Inc." in (project / "LICENSE").read_text()
    assert not (project / ".github").exists()


def test_proprietary_license(tmp_path: Path) -> None:
    result = cdk_new("acme", "--no-input", "--output-dir", tmp_path, "--set", "license=proprietary")
    assert result.returncode == 0, result.stderr
    project = tmp_path / "acme"
    assert "All rights reserved" in (project / "LICENSE").read_text()
    assert toml(project / "pyproject.toml")["project"]["license"] == ("LicenseRef-Proprietary")


def test_every_marker_is_a_todo_for_the_partner(tmp_path: Path) -> None:
    assert cdk_new("marked", "--no-input", "--output-dir", tmp_path).returncode == 0
    markers = 0
    for path in (tmp_path / "marked").rglob("*"):
        if not path.is_file() or path.name == "LICENSE":
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if "TODO" in line:
                assert "TODO(partner):" in line, f"{path}:{number}: {line}"
                markers += 1
            assert "FIXME" not in line, f"{path}:{number}: {line}"
            assert "XXX" not in line, f"{path}:{number}: {line}"
    assert markers >= 6


def test_the_generated_workflow_passes_actionlint(tmp_path: Path) -> None:
    assert cdk_new("linted", "--no-input", "--output-dir", tmp_path).returncode == 0
    workflow = tmp_path / "linted/.github/workflows/certify.yml"
    result = run(BIN / "actionlint", "-no-color", workflow)
    assert result.returncode == 0, result.stdout + result.stderr


# ---------------------------------------------------------------------------------------------
# Bad input: a one-line error naming the problem, exit status 2, nothing written


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["", "--no-input"], "the project name is empty"),
        (["9lives", "--no-input"], "project name '9lives' is not usable"),
        (["my/connector", "--no-input"], "project name 'my/connector' is not usable"),
        (["class", "--no-input"], "package name 'class' is a Python keyword"),
        (["cdk", "--no-input"], "clashes with the kit"),
        (["harness", "--no-input"], "package name 'harness' clashes with the kit"),
        (["json", "--no-input"], "package name 'json' clashes with an installed module"),
        (["pytest", "--no-input"], "package name 'pytest' clashes with an installed module"),
        (["types-docutils", "--no-input"], "clashes with the installed distribution"),
        (["ok", "--no-input", "--set", "package_name=Not-Valid"], "is not a Python identifier"),
        (["ok", "--no-input", "--set", "colour=blue"], "--set 'colour' is not a template variable"),
        (["ok", "--no-input", "--set", "novalue"], "--set 'novalue' is not KEY=VALUE"),
        (["ok", "--no-input", "--set", "kind=both-ways"], "kind 'both-ways' is not one of"),
        (["ok", "--no-input", "--set", "license=GPL"], "license 'GPL' is not one of"),
        (["ok", "--no-input", "--set", "ci=maybe"], "--set ci='maybe' is not yes or no"),
        (["ok", "--kind", "duplex", "--no-input"], "'duplex' is not one of"),
    ],
)
def test_bad_input_is_refused_without_writing_anything(
    tmp_path: Path, args: list[str], message: str
) -> None:
    before = snapshot(tmp_path)
    result = cdk_new(*args, "--output-dir", tmp_path / "out")
    assert result.returncode == 2, result.stdout + result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert snapshot(tmp_path) == before


def test_an_existing_non_empty_directory_needs_force(tmp_path: Path) -> None:
    existing = tmp_path / "taken"
    existing.mkdir()
    (existing / "notes.txt").write_text("mine")
    result = cdk_new("taken", "--no-input", cwd=tmp_path)
    assert result.returncode == 2
    assert "taken exists and is not empty; use --force" in result.stderr
    assert snapshot(tmp_path) == ["taken", "taken/notes.txt"]

    forced = cdk_new("taken", "--no-input", "--force", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert (existing / "notes.txt").read_text() == "mine"  # kept
    assert (existing / "src/taken/_source.py").exists()
    # Generating again over the earlier generation is not a clash with itself.
    again = cdk_new("taken", "--no-input", "--force", cwd=tmp_path)
    assert again.returncode == 0, again.stderr


def test_an_empty_existing_directory_is_used(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = cdk_new("empty", "--no-input", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "empty/pyproject.toml").exists()


def test_the_template_hook_refuses_bad_answers_for_plain_cookiecutter(tmp_path: Path) -> None:
    result = run(
        BIN / "cookiecutter",
        "--no-input",
        "--output-dir",
        tmp_path,
        ROOT / "templates" / "connector",
        "project_name=class",
    )
    assert result.returncode != 0
    assert "package name 'class' is a Python keyword" in result.stderr
    assert snapshot(tmp_path) == []


def test_stdin_that_is_not_a_terminal_means_no_prompts(tmp_path: Path) -> None:
    result = cdk_new("piped", "--output-dir", tmp_path)
    assert result.returncode == 0, result.stderr
    assert "standard input is not a terminal" in result.stdout
    assert (tmp_path / "piped/pyproject.toml").exists()
