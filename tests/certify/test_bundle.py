"""The certification bundle: its manifest and verification, provenance, the submission material.

Most tests write the bundle of a hand-made run (no Kafka); one runs the real CLI on a copy of
the FileStream demo project in a git repository, with PKG-01 building its wheel and
``--run-tests`` running the project's own tests.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.certify import (
    BundleError,
    CertificationRun,
    Check,
    CheckResult,
    NotABundleError,
    Outcome,
    Project,
    TestResultsError,
    attach_tests,
    hub_manifest,
    run_tests,
    verify_bundle,
    write_bundle,
)
from harness.certify._provenance import git_state
from tests.certify.broken import doc as broken

CDK = Path(sys.executable).with_name("cdk")
GIT = shutil.which("git")

PYPROJECT = """\
[project]
name = "acme-connectors"
version = "1.2.3"
description = "Moves <acme> data to and from Kafka"
keywords = ["acme", "files"]
license = "Apache-2.0"
authors = [{ name = "Acme Inc." }]

[project.urls]
Source = "https://example.com/acme/connectors"
Download = "https://example.com/acme/connectors/releases"

[tool.cdk]
drivers = [
    "reference_connectors.filestream.certify:FileStreamSourceDriver",
    "reference_connectors.filestream.certify:FileStreamSinkDriver",
]

[tool.cdk.hub]
title = "Acme connectors"
owner = { username = "acme", type = "organization" }
supported_encodings = ["any"]
"""

JUNIT = """\
<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="3">
<testcase classname="t" name="a"/>
<testcase classname="t" name="b"><failure message="no"/></testcase>
<testcase classname="t" name="c"><skipped message="later"/></testcase>
</testsuite></testsuites>
"""


def _project(tmp_path: Path, pyproject: str = PYPROJECT, *, readme: bool = True) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    if readme:
        (root / "README.md").write_text("# Acme connectors\n", encoding="utf-8")
    return root


def _run(root: Path) -> CertificationRun:
    """A finished run of the project at ``root`` with one passed check per driver."""
    project = Project.load(root)
    check = Check(
        "CFG-01", "does the thing", frozenset({"source", "sink"}), frozenset(), True, lambda c: None
    )
    run = CertificationRun(
        project,
        kafka="embedded",
        results=[CheckResult(check, d.__name__, "source", Outcome.PASSED) for d in project.drivers],
    )
    run.environment = {"connect-cdk": "0.1.0", "kafka": "embedded", "broker": "Tansu 0.6.0"}
    from harness.certify._runner import _config_docs

    run.config_docs = _config_docs(project)
    run.finished_at = run.started_at + dt.timedelta(seconds=3)
    return run


def _git(root: Path, *args: str) -> None:
    assert GIT is not None
    subprocess.run(
        [GIT, "-C", str(root), "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        check=True,
        capture_output=True,
    )


def _listed(bundle: Path) -> dict[str, str]:
    lines = (bundle / "SHA256SUMS").read_text(encoding="utf-8").splitlines()
    return {line[66:]: line[:64] for line in lines}


def _files(bundle: Path) -> set[str]:
    return {p.relative_to(bundle).as_posix() for p in bundle.rglob("*") if p.is_file()}


def _flip_a_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


# --- the manifest and its verification ------------------------------------------------------


def test_the_manifest_lists_every_other_file_with_its_sha256(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    files = write_bundle(_run(_project(tmp_path)), bundle)
    listed = _listed(bundle)
    assert set(listed) == _files(bundle) - {"SHA256SUMS"}
    assert {
        "report.html",
        "summary.json",
        "junit.xml",
        "manifest.json",
        "docs/README.md",
        "docs/FileStreamSourceConnector.rst",
        "docs/FileStreamSourceConnector.html",
        "docs/FileStreamSinkConnector.md",
    } <= set(listed)
    for name, digest in listed.items():
        assert hashlib.sha256((bundle / name).read_bytes()).hexdigest() == digest, name
    assert files["manifest"] == bundle / "SHA256SUMS"
    found = verify_bundle(bundle)
    assert found.ok, found.problems()
    assert sorted(found.intact) == sorted(listed)
    if shutil.which("sha256sum"):  # the standard tool checks it too
        done = subprocess.run(
            ["sha256sum", "-c", "--quiet", "SHA256SUMS"], cwd=bundle, capture_output=True
        )
        assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(
    "name", ["summary.json", "report.html", "docs/README.md", "manifest.json", "SHA256SUMS"]
)
def test_a_changed_byte_fails_verification_naming_the_file(tmp_path: Path, name: str) -> None:
    bundle = tmp_path / "bundle"
    write_bundle(_run(_project(tmp_path)), bundle)
    before = verify_bundle(bundle).manifest_sha256
    _flip_a_byte(bundle / name)
    found = verify_bundle(bundle)
    assert not found.ok
    if name == "SHA256SUMS":  # a changed manifest: its own digest differs, and a line breaks
        assert found.manifest_sha256 != before
        assert found.problems()
    else:
        assert found.changed == [name]
        assert found.problems() == [f"changed: {name}"]


def test_missing_added_and_escaping_files_are_named(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    write_bundle(_run(_project(tmp_path)), bundle)
    (bundle / "docs" / "README.md").unlink()
    (bundle / "docs" / "extra.txt").write_text("slipped in\n", encoding="utf-8")
    with (bundle / "SHA256SUMS").open("a", encoding="utf-8") as manifest:
        manifest.write(f"{'0' * 64}  ../outside.txt\n")
    found = verify_bundle(bundle)
    assert found.missing == ["docs/README.md"]
    assert found.added == ["docs/extra.txt"]
    assert len(found.malformed) == 1
    assert "../outside.txt" in found.malformed[0]
    assert found.changed == []


def test_not_a_bundle(tmp_path: Path) -> None:
    with pytest.raises(NotABundleError, match="has no SHA256SUMS"):
        verify_bundle(tmp_path)
    with pytest.raises(NotABundleError, match="not a directory"):
        verify_bundle(tmp_path / "nowhere")


def test_verify_on_the_command_line(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    write_bundle(_run(_project(tmp_path)), bundle)

    def verify(*args: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(CDK), "certify", "verify", *map(str, args)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    intact = verify(bundle)
    assert intact.returncode == 0, intact.stdout + intact.stderr
    digest = hashlib.sha256((bundle / "SHA256SUMS").read_bytes()).hexdigest()
    assert f"SHA256SUMS sha256 {digest}" in intact.stdout
    assert "Intact:" in intact.stdout

    _flip_a_byte(bundle / "junit.xml")
    (bundle / "junk.txt").write_text("x", encoding="utf-8")
    broken_bundle = verify(bundle)
    assert broken_bundle.returncode == 1, broken_bundle.stdout + broken_bundle.stderr
    assert "changed: junit.xml" in broken_bundle.stdout.splitlines()
    assert "added: junk.txt" in broken_bundle.stdout.splitlines()
    assert "NOT intact" in broken_bundle.stdout

    for args, message in [
        ((tmp_path,), "has no SHA256SUMS"),
        ((tmp_path / "nowhere",), "is not a directory"),
        ((), "Missing argument 'BUNDLE'"),
    ]:
        answer = verify(*args)
        assert answer.returncode == 2, answer.stdout + answer.stderr
        assert message in answer.stderr
        assert "Traceback" not in answer.stderr
    assert "Usage: cdk certify verify [OPTIONS] BUNDLE" in verify("--help").stdout


def test_a_new_bundle_replaces_the_previous_one(tmp_path: Path) -> None:
    root = _project(tmp_path)
    junit = tmp_path / "results.xml"
    junit.write_text(JUNIT, encoding="utf-8")
    bundle = tmp_path / "bundle"
    write_bundle(_run(root), bundle, tests=attach_tests(junit))
    assert (bundle / "tests" / "junit.xml").is_file()
    write_bundle(_run(root), bundle)  # no test results this time
    assert not (bundle / "tests").exists()
    assert verify_bundle(bundle).ok


def test_a_directory_with_other_files_is_refused(tmp_path: Path) -> None:
    root = _project(tmp_path)
    with pytest.raises(
        BundleError, match=r"not part of a certification bundle \(README.md, pyproject.toml\)"
    ):
        write_bundle(_run(root), root)
    assert sorted(p.name for p in root.iterdir()) == ["README.md", "pyproject.toml"]


# --- provenance ---------------------------------------------------------------------------


@pytest.mark.skipif(GIT is None, reason="git is not installed")
def test_git_state_of_a_project_inside_another_repository_that_does_not_track_it(
    tmp_path: Path,
) -> None:
    # `make demo` generates the demo project under the kit's build/, which git ignores: the
    # kit's commit must not be shown as the project's source
    (tmp_path / ".gitignore").write_text("build/\n", encoding="utf-8")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "outer")
    (tmp_path / "build").mkdir()
    root = _project(tmp_path / "build")
    state = git_state(root)
    assert (state["vcs"], state["commit"], state["dirty"]) == (None, None, None)
    assert "not tracked by the git work tree around it" in state["note"]
    assert "which ignores it" in state["note"]
    _git(tmp_path, "add", "-f", "build")
    _git(tmp_path, "commit", "-qm", "the project too")
    assert git_state(root)["vcs"] == "git"  # tracked now: the commit names it


@pytest.mark.skipif(GIT is None, reason="git is not installed")
def test_git_state_names_the_commit_and_a_dirty_tree(tmp_path: Path) -> None:
    root = _project(tmp_path)
    assert git_state(root)["note"].startswith("the project is not in a git work tree")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "first")
    _git(root, "remote", "add", "origin", "https://someone:s3cr3t-token@example.com/acme.git")
    commit = subprocess.run(
        [str(GIT), "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    clean = git_state(root, exclude=root / "certification-report")
    assert (clean["commit"], clean["dirty"], clean["changed_files"]) == (commit, False, 0)
    assert clean["remote"] == "https://example.com/acme.git"  # credentials never shown

    bundle = root / "certification-report"
    write_bundle(_run(root), bundle)  # the report directory does not make the tree dirty
    data = json.loads((bundle / "summary.json").read_text(encoding="utf-8"))
    assert data["provenance"]["source"]["dirty"] is False
    assert "s3cr3t" not in "".join(p.read_text("utf-8") for p in bundle.rglob("*") if p.is_file())

    (root / "README.md").write_text("# changed\n", encoding="utf-8")
    dirty = git_state(root, exclude=bundle)
    assert (dirty["dirty"], dirty["changed_files"]) == (True, 1)

    # cdk certify reads the state before the run: a tree changed since is flagged
    write_bundle(_run(root), bundle, source=clean)
    data = json.loads((bundle / "summary.json").read_text(encoding="utf-8"))
    source = data["provenance"]["source"]
    assert (source["commit"], source["dirty"], source["changed_during_run"]) == (
        commit,
        False,
        True,
    )
    assert "the work tree changed during the run" in source["note"]
    items = {i["item"]: i for i in data["submission"]["items"]}
    assert items["source"]["status"] == "incomplete"


def test_provenance_in_every_report_format(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    write_bundle(_run(_project(tmp_path)), bundle)
    provenance = json.loads((bundle / "summary.json").read_text("utf-8"))["provenance"]
    assert provenance["project"] == {"name": "acme-connectors", "version": "1.2.3"}
    assert provenance["kit"]["name"] == "connect-cdk"
    assert provenance["python"]["version"] == ".".join(map(str, sys.version_info[:3]))
    assert provenance["os"]["system"]
    assert provenance["broker"] == {"kind": "embedded", "name": "Tansu", "version": "0.6.0"}
    assert provenance["wheel"]["file"] is None
    assert "PKG-01 did not run" in provenance["wheel"]["note"]

    properties = {
        p.get("name"): p.get("value")
        for p in ET.parse(bundle / "junit.xml").getroot().iter("property")
    }
    assert properties["provenance.broker.name"] == "Tansu"
    assert properties["provenance.kit.name"] == "connect-cdk"
    assert "provenance.source.commit" in properties
    page = (bundle / "report.html").read_text("utf-8")
    assert '<section id="provenance">' in page
    assert "Tansu 0.6.0" in page


# --- the submission: Hub manifest, docs, tests, checklist -----------------------------------


def test_hub_manifest_from_the_project(tmp_path: Path) -> None:
    hub = hub_manifest(Project.load(_project(tmp_path)))
    assert hub.missing == []
    data = hub.data
    assert (data["name"], data["version"], data["title"]) == (
        "acme-connectors",
        "1.2.3",
        "Acme connectors",
    )
    assert data["description"] == "Moves <acme> data to and from Kafka"
    assert data["owner"] == {"username": "acme", "type": "organization", "name": "Acme Inc."}
    assert data["tags"] == ["acme", "files"]
    assert data["component_types"] == ["sink", "source"]
    assert data["features"] == {"supported_encodings": ["any"], "single_message_transforms": True}
    assert data["license"] == [{"name": "Apache-2.0"}]
    assert data["source_url"] == "https://example.com/acme/connectors"
    assert data["binary_url"] == "https://example.com/acme/connectors/releases"
    assert [c["class"].rsplit(".", 1)[-1] for c in data["connectors"]] == [
        "FileStreamSourceConnector",
        "FileStreamSinkConnector",
    ]


def test_hub_manifest_names_what_is_missing_and_invents_nothing(tmp_path: Path) -> None:
    minimal = '[project]\nname = "bare"\nversion = "0.1"\n\n[tool.cdk]\ndrivers = [\n'
    minimal += '  "reference_connectors.filestream.certify:FileStreamSinkDriver",\n]\n'
    hub = hub_manifest(Project.load(_project(tmp_path, minimal)))
    assert [m.split(":")[0] for m in hub.missing] == [
        "title",
        "description",
        "owner.username",
        "owner.name",
        "tags",
        "features.supported_encodings",
        "license",
        "source_url",
        "binary_url",
    ]
    assert "[tool.cdk.hub] title" in hub.missing[0]
    for key in ("title", "description", "owner", "tags", "license", "source_url", "binary_url"):
        assert key not in hub.data
    assert hub.data["component_types"] == ["sink"]


def test_the_checklist_shows_each_item_present_or_missing(tmp_path: Path) -> None:
    minimal = '[project]\nname = "bare"\nversion = "0.1"\n\n[tool.cdk]\ndrivers = [\n'
    minimal += '  "reference_connectors.filestream.certify:FileStreamSinkDriver",\n]\n'
    bundle = tmp_path / "bundle"
    run = _run(_project(tmp_path, minimal, readme=False))
    write_bundle(run, bundle)
    submission = json.loads((bundle / "summary.json").read_text("utf-8"))["submission"]
    assert submission["complete"] is False
    assert submission["affects_verdict"] is False
    items = {i["item"]: i for i in submission["items"]}
    assert list(items) == ["source", "certification", "tests", "hub", "docs", "binary"]
    assert items["tests"]["status"] == "missing"
    assert "--run-tests" in items["tests"]["missing"][0]
    assert items["hub"]["status"] == "incomplete"
    assert items["docs"]["missing"] == ["no README in the project"]
    assert items["binary"]["status"] == "missing"
    assert items["certification"]["status"] == "present"  # every check passed, none left out

    page = (bundle / "report.html").read_text("utf-8")
    submission_at = page.index('<section id="submission">')
    assert submission_at < page.index('<section id="checklist">')  # on the first screen
    assert 'data-item="tests"' in page
    assert "not attached: run cdk certify with --run-tests" in page
    assert "binary_url: state it in [project.urls] Download" in page


def test_attached_test_results(tmp_path: Path) -> None:
    junit = tmp_path / "results.xml"
    junit.write_text(JUNIT, encoding="utf-8")
    tests = attach_tests(junit)
    assert tests.counts == {"tests": 3, "failures": 1, "errors": 0, "skipped": 1}
    assert not tests.passed
    bundle = tmp_path / "bundle"
    write_bundle(_run(_project(tmp_path)), bundle, tests=tests)
    assert (bundle / "tests" / "junit.xml").read_text("utf-8") == JUNIT
    items = {
        i["item"]: i
        for i in json.loads((bundle / "summary.json").read_text("utf-8"))["submission"]["items"]
    }
    assert items["tests"]["status"] == "incomplete"
    assert "1 failed" in items["tests"]["missing"][0]

    (tmp_path / "not-junit.xml").write_text("<html></html>", encoding="utf-8")
    with pytest.raises(TestResultsError, match="root element is <html>"):
        attach_tests(tmp_path / "not-junit.xml")
    with pytest.raises(TestResultsError, match="does not exist"):
        attach_tests(tmp_path / "absent.xml")


def test_run_tests_counts_the_results(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_a.py").write_text(
        textwrap.dedent(
            """
            import pytest

            def test_ok():
                pass

            def test_bad():
                assert 1 == 2

            @pytest.mark.skip(reason="later")
            def test_later():
                pass
            """
        ),
        encoding="utf-8",
    )
    tests = run_tests(root, tmp_path / "out")
    assert tests.counts == {"tests": 3, "failures": 1, "errors": 0, "skipped": 1}, tests.output
    assert tests.returncode == 1
    assert "test_bad" in tests.output
    assert not tests.passed


def test_run_tests_is_bounded(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    pid_file = tmp_path / "pid"
    (root / "test_hang.py").write_text(
        textwrap.dedent(
            f"""
            import os, threading

            def test_hangs():
                open({str(pid_file)!r}, "w").write(str(os.getpid()))
                threading.Event().wait()
            """
        ),
        encoding="utf-8",
    )
    start = time.monotonic()
    tests = run_tests(root, tmp_path / "out", timeout=5)
    assert time.monotonic() - start < 30
    assert tests.returncode is None
    assert "stopped after 5 s" in tests.output
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"the hung test process {pid} is still running")


# --- the real command -----------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.skipif(GIT is None, reason="git is not installed")
def test_certify_writes_a_verifiable_submission(tmp_path: Path, kafka_bootstrap: str) -> None:
    root = broken.demo_variant(tmp_path)
    (root / "tests").mkdir()
    (root / "tests" / "test_demo.py").write_text("def test_demo():\n    pass\n", encoding="utf-8")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "demo")

    def cdk(*args: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(CDK), "certify", str(root), "--kafka", kafka_bootstrap, *map(str, args)],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    both = cdk("--only", "CFG-01", "--run-tests", "--tests-junit", root / "pyproject.toml")
    assert both.returncode == 2, both.stdout + both.stderr
    assert "exclude each other" in both.stderr
    not_junit = cdk("--only", "CFG-01", "--tests-junit", root / "pyproject.toml")
    assert not_junit.returncode == 2
    assert "is not a JUnit XML file" in not_junit.stderr
    assert not (root / "certification-report").exists()  # refused before running anything

    answer = cdk("--only", "PKG-01,CFG-01", "--run-tests")
    output = answer.stdout + answer.stderr
    assert " PASS  PKG-01  " in answer.stdout, output
    assert "Project tests: 1 tests: 1 passed, 0 failed" in answer.stdout, output
    bundle = root / "certification-report"
    assert "Bundle manifest: " in answer.stdout
    data = json.loads((bundle / "summary.json").read_text("utf-8"))
    wheel = data["provenance"]["wheel"]
    assert wheel["file"].startswith("cdk_certify_demo-0.1.0-")
    shipped = bundle / "dist" / wheel["file"]
    assert hashlib.sha256(shipped.read_bytes()).hexdigest() == wheel["sha256"]
    source = data["provenance"]["source"]
    assert source["vcs"] == "git"
    assert source["dirty"] is False, source
    assert len(source["commit"]) == 40
    assert data["submission"]["tests"]["tests"] == 1
    assert (bundle / "tests" / "junit.xml").is_file()
    hub = json.loads((bundle / "manifest.json").read_text("utf-8"))
    assert hub["name"] == "cdk-certify-demo"
    assert hub["component_types"] == ["sink", "source"]

    intact = subprocess.run(
        [str(CDK), "certify", "verify", str(bundle)], capture_output=True, text=True, timeout=60
    )
    assert intact.returncode == 0, intact.stdout + intact.stderr
    _flip_a_byte(shipped)
    changed = subprocess.run(
        [str(CDK), "certify", "verify", str(bundle)], capture_output=True, text=True, timeout=60
    )
    assert changed.returncode == 1
    assert f"changed: dist/{wheel['file']}" in changed.stdout


def test_the_first_screen_escapes_what_the_project_supplies(tmp_path: Path) -> None:
    hostile = tmp_path / "r<img src=x onerror=alert(1)>.xml"
    hostile.write_text(JUNIT, encoding="utf-8")
    bundle = tmp_path / "bundle"
    write_bundle(_run(_project(tmp_path)), bundle, tests=attach_tests(hostile))
    page = (bundle / "report.html").read_text("utf-8")
    assert "<img" not in page
    assert "attached from r&lt;img src=x onerror=alert(1)&gt;.xml" in page
