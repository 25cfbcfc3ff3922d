"""A generated project, as a partner gets it: it installs, passes its tests and lints, builds its
wheel and passes ``cdk certify`` before anyone edits a line.

As the Singer SDK tests its templates: each kind is generated into a temporary directory and
installed into a fresh virtualenv of its own, with the kit installed from this working tree.
"""

from __future__ import annotations

import json
import sys
import tomllib
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import uv

from tests.templates._support import ROOT, cdk_new, clean_env, run

pytestmark = pytest.mark.slow

#: The kit's ruff rules, which the generated code must pass.
KIT_RULES = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["ruff"]["lint"]["select"]


@dataclass
class Project:
    """A generated project installed in its own virtualenv."""

    kind: str
    path: Path
    package: str
    venv: Path

    def tool(self, name: str) -> Path:
        return self.venv / "bin" / name


def _install(tmp: Path, kind: str) -> Project:
    name = f"gen-{kind}"
    generated = cdk_new(name, "--kind", kind, "--no-input", "--output-dir", tmp)
    assert generated.returncode == 0, generated.stderr
    project = Project(kind, tmp / name, name.replace("-", "_"), tmp / "venv")
    uv_bin = uv.find_uv_bin()
    env = clean_env()
    made = run(uv_bin, "venv", "--quiet", "--python", sys.executable, project.venv, env=env)
    assert made.returncode == 0, made.stderr
    python = str(project.tool("python"))
    kit = run(uv_bin, "pip", "install", "--python", python, f"{ROOT}[certify]", env=env, timeout=600)
    assert kit.returncode == 0, kit.stderr
    own = run(uv_bin, "pip", "install", "--python", python, "-e", f"{project.path}[dev]", env=env, timeout=600)
    assert own.returncode == 0, own.stderr
    return project


@pytest.fixture(scope="module", params=["source", "sink", "both"])
def project(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Project]:
    yield _install(tmp_path_factory.mktemp(f"project-{request.param}"), request.param)


def test_its_own_tests_pass(project: Project) -> None:
    result = run(project.tool("pytest"), "-q", "-p", "no:cacheprovider", cwd=project.path, env=clean_env(), timeout=600)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert " passed" in result.stdout
    assert "CFG-01" not in result.stdout or "FAILED" not in result.stdout
    # The conformance suites run through the harness's pytest plugin too.
    assert "cdk certify:" in result.stdout


def test_it_passes_the_kits_ruff_rules_and_mypy_strict(project: Project) -> None:
    config = tomllib.loads((project.path / "pyproject.toml").read_text())["tool"]
    assert config["ruff"]["lint"]["select"] == KIT_RULES
    assert config["mypy"]["strict"] is True
    env = clean_env()
    for args in (("ruff", "check", "--no-cache", "."), ("ruff", "format", "--no-cache", "--check", "."), ("mypy",)):
        result = run(project.tool(args[0]), *args[1:], cwd=project.path, env=env, timeout=300)
        assert result.returncode == 0, f"{' '.join(args)}:\n{result.stdout}{result.stderr}"


def test_it_builds_a_wheel_with_its_connectors(project: Project, tmp_path: Path) -> None:
    result = run(
        project.tool("python"), "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", tmp_path, project.path,
        env=clean_env(), timeout=300,
    )
    assert result.returncode == 0, result.stderr
    (wheel,) = tmp_path.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        entry_points = next(n for n in names if n.endswith("entry_points.txt"))
        declared = archive.read(entry_points).decode()
    assert f"{project.package}/certify.py" in names
    assert not any(n.startswith(("cdk/", "harness/")) for n in names)
    prefix = "Gen" + project.kind.capitalize()
    if project.kind != "sink":
        assert f"{prefix}Source = {project.package}:{prefix}SourceConnector" in declared
    if project.kind != "source":
        assert f"{prefix}Sink = {project.package}:{prefix}SinkConnector" in declared


def test_cdk_certify_passes(project: Project, tmp_path: Path) -> None:
    """The full certification on the 'both' project; the quick suites on the others."""
    only = [] if project.kind == "both" else ["--only", "CFG,DOC,PKG"]
    report = tmp_path / "report"
    result = run(
        project.tool("cdk"), "certify", project.path, "--report-dir", report, *only,
        env=clean_env(), timeout=900,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    summary = json.loads((report / "summary.json").read_text())
    outcomes = {r["outcome"] for r in summary["results"]}
    assert outcomes <= {"passed", "skipped"}, outcomes
    passed = [r for r in summary["results"] if r["outcome"] == "passed"]
    assert len(passed) >= (60 if project.kind == "both" else 10)
