"""A generated project, as a partner gets it: it installs, passes its tests and lints, builds its
wheel and passes ``cdk certify`` before anyone edits a line.

As the Singer SDK tests its templates: each kind is generated into a temporary directory and
installed into a fresh virtualenv of its own, with the kit installed from this working tree:
as a regular install for the sink and both projects, editable (as the README's third way does
it, from a copy, since an editable install writes its link tree into the kit's ``build/``)
for the source project, whose mypy run must then see the kit.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
import uv

from tests._wait import wait_until
from tests.templates._support import ROOT, cdk_new, clean_env, run, toml

pytestmark = pytest.mark.slow

#: The kit's ruff rules, which the generated code must pass.
KIT_RULES = toml(ROOT / "pyproject.toml")["tool"]["ruff"]["lint"]["select"]


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
    made = run(
        uv_bin, "venv", "--quiet", "--seed", "--python", sys.executable, project.venv, env=env
    )
    assert made.returncode == 0, made.stderr
    python = str(project.tool("python"))
    kit = ["--", f"{ROOT}[certify]"] if kind != "source" else ["-e", f"{_kit_copy(tmp)}[certify]"]
    for target in (kit, ["-e", f"{project.path}[dev]"]):
        installed = run(uv_bin, "pip", "install", "--python", python, *target, env=env, timeout=600)
        assert installed.returncode == 0, installed.stderr
    return project


def _kit_copy(tmp: Path) -> Path:
    """The kit's packaged files, copied into ``tmp`` (the template link kept a link)."""
    kit = tmp / "kit"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("cdk", "harness", "reference_connectors", "templates"):
        shutil.copytree(ROOT / name, kit / name, symlinks=True, ignore=ignore)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, kit / name)
    return kit


@pytest.fixture(
    scope="module",
    # One xdist group per kind: the project is installed once, on one worker, which runs all its
    # tests (ungrouped, every worker that drew one of them would install it again).
    params=[
        pytest.param(kind, marks=pytest.mark.xdist_group(f"project-{kind}"))
        for kind in ("source", "sink", "both")
    ],
)
def project(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Project:
    return _install(tmp_path_factory.mktemp(f"project-{request.param}"), request.param)


def test_its_own_tests_pass(project: Project) -> None:
    result = run(
        project.tool("pytest"),
        "-q",
        "-p",
        "no:cacheprovider",
        cwd=project.path,
        env=clean_env(),
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert " passed" in result.stdout
    assert "CFG-01" not in result.stdout or "FAILED" not in result.stdout
    # The conformance suites run through the harness's pytest plugin too.
    assert "cdk certify:" in result.stdout


def test_it_passes_the_kits_ruff_rules_and_mypy_strict(project: Project) -> None:
    # with the kit editable too (the source project): mypy finds cdk and harness, as the kit's
    # strict editable mode gives type checkers files to read rather than an import hook
    config = toml(project.path / "pyproject.toml")["tool"]
    assert config["ruff"]["lint"]["select"] == KIT_RULES
    assert config["mypy"]["strict"] is True
    assert "overrides" not in config["mypy"]  # it imports nothing untyped
    env = clean_env()
    commands = [
        ("ruff", "check", "--no-cache", "."),
        ("ruff", "format", "--no-cache", "--check", "."),
        ("mypy",),
    ]
    for args in commands:
        result = run(project.tool(args[0]), *args[1:], cwd=project.path, env=env, timeout=300)
        assert result.returncode == 0, f"{' '.join(args)}:\n{result.stdout}{result.stderr}"


def test_it_builds_a_wheel_with_its_connectors(project: Project, tmp_path: Path) -> None:
    result = run(
        *(project.tool("python"), "-m", "pip", "wheel", "--no-deps", "--quiet"),
        *("-w", tmp_path, project.path),
        env=clean_env(),
        timeout=300,
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


@pytest.mark.timeout(1200)  # the full run takes 3-4 minutes, longer on a loaded machine
def test_cdk_certify_passes(project: Project, tmp_path: Path) -> None:
    """The full certification on the 'both' project; the quick suites on the others."""
    only = [] if project.kind == "both" else ["--only", "CFG,DOC,PKG"]
    report = tmp_path / "report"
    result = run(
        project.tool("cdk"),
        "certify",
        project.path,
        "--report-dir",
        report,
        *only,
        env=clean_env(),
        timeout=900,
    )
    # --only leaves checks out: INCOMPLETE, exit status 3 (0 is for CERTIFIABLE only)
    expected = 0 if project.kind == "both" else 3
    assert result.returncode == expected, result.stdout[-6000:] + result.stderr[-2000:]
    summary = json.loads((report / "summary.json").read_text())
    # nothing failed, nothing skipped but the checks of the other runtimes (distributed mode,
    # Spark pipelines), skipped with the reason that names the runtime they need, and the
    # acknowledgement checks, which do not apply to the generated (replayable) source
    other_runtime = [c for c in summary["checks"] if "needs --runtime" in c.get("message", "")]
    assert {c["outcome"] for c in other_runtime} <= {"skipped"}, other_runtime
    acknowledging = [c for c in summary["checks"] if c["suite"] == "ACK"]
    assert {c["outcome"] for c in acknowledging} <= {"skipped"}, acknowledging
    assert all("is replayable" in c["message"] for c in acknowledging), acknowledging
    not_run = other_runtime + acknowledging
    outcomes = {c["outcome"] for c in summary["checks"] if c not in not_run}
    assert outcomes == {"passed"}, outcomes
    if project.kind == "both":
        assert summary["verdict"] == "CERTIFIABLE"
        assert len(summary["checks"]) >= 60
    else:
        assert summary["verdict"] == "INCOMPLETE"
        assert {c["suite"] for c in summary["checks"]} == {"CFG", "DOC", "PKG"}


def test_its_docs_build_with_the_config_reference(project: Project, tmp_path: Path) -> None:
    result = run(
        *(project.tool("sphinx-build"), "-W", "-q", "-b", "html"),
        *(project.path / "docs", tmp_path),
        env=clean_env(),
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    page = (tmp_path / "index.html").read_text()
    if project.kind != "sink":
        assert "input.dir" in page
    if project.kind != "source":
        assert "output.dir" in page
    assert "auth.token" in page


@pytest.mark.parametrize(
    "project",
    [pytest.param("both", marks=pytest.mark.xdist_group("project-both"))],
    indirect=True,
)
def test_its_quickstart_runs_under_cdk_standalone(project: Project, kafka_bootstrap: str) -> None:
    """The README's quickstart (both connectors): ``cdk standalone`` with ``examples/``."""
    examples = project.path / "examples"
    worker = examples / "worker.properties"
    text = worker.read_text().replace("127.0.0.1:9092", kafka_bootstrap)
    test_worker = examples / "test-worker.properties"
    test_worker.write_text(text + "listeners=http://127.0.0.1:0\noffset.flush.interval.ms=200\n")
    output = examples / "data" / "out" / "demo-orders-0.jsonl"
    process = subprocess.Popen(
        [
            project.tool("cdk"),
            "standalone",
            test_worker.relative_to(project.path),
            "examples/source.properties",
            "examples/sink.properties",
        ],
        cwd=project.path,
        env=clean_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines = wait_until(
            lambda: output.exists() and output.read_text().count("\n") == 3 and output.read_text(),
            90,
            message=lambda: f"3 lines in {output}",
        )
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        assert process.stderr is not None
        log = process.stderr.read()
        process.stderr.close()
    rows = [json.loads(line) for line in lines.splitlines()]
    assert [row["item"] for row in rows] == ["tea", "coffee", "cake"]
    assert rows[2]["note"] == "birthday"  # the field the third line added
    assert "note" not in rows[0]  # written before the file's schema had it
    schema = json.loads((output.parent / "demo-orders-0.schema.json").read_text())
    assert [f["field"] for f in schema["fields"]] == ["id", "item", "price", "paid", "note"]
    assert "Traceback" not in log
