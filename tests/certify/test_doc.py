"""The DOC and PKG suites prove themselves on real project directories.

The correct projects: the SQL reference connectors (reference_connectors/sql, a project of its
own) and the FileStream demo (tests/certify/projects/filestream_demo). Each broken variant of the
demo changes one thing and fails exactly the check about it. Wheel builds take seconds each:
there are four (SQL, and the three PKG variants).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import harness.certify.suites.pkg  # noqa: F401 - registers the PKG checks
from harness.certify import CertificationRun, Outcome, Project
from tests.certify import _support
from tests.certify.broken import doc as broken

SQL = Path(__file__).resolve().parents[2] / "reference_connectors" / "sql"
DOC_IDS = ["DOC-01", "DOC-02", "DOC-03", "DOC-04"]
PKG_IDS = ["PKG-01", "PKG-02", "PKG-03"]


def _run(root: Path, only: list[str], kafka_bootstrap: str, tmp_path: Path) -> CertificationRun:
    return _support.run_checks(Project.load(root), only, kafka_bootstrap, tmp_path)


def _outcomes(run: CertificationRun) -> dict[tuple[str, str], Outcome]:
    return {(r.id, r.subject): r.outcome for r in run.results}


def test_demo_project_passes_doc(kafka_bootstrap: str, tmp_path: Path) -> None:
    run = _run(broken.demo_variant(tmp_path), ["DOC"], kafka_bootstrap, tmp_path)
    assert sorted({r.id for r in run.results}) == DOC_IDS
    assert len([r for r in run.results if r.id == "DOC-01"]) == 2  # once per connector
    for result in run.results:
        _support.assert_outcome(run, result.id, Outcome.PASSED)


@pytest.mark.slow
def test_sql_project_passes_doc_and_pkg(kafka_bootstrap: str, tmp_path: Path) -> None:
    run = _run(SQL, ["DOC", "PKG"], kafka_bootstrap, tmp_path)
    assert sorted({r.id for r in run.results}) == DOC_IDS + PKG_IDS
    for result in run.results:
        _support.assert_outcome(run, result.id, Outcome.PASSED)
    assert not (SQL / "build").exists(), "the wheel build must not write into the project"


def test_hidden_required_key_fails_doc01(kafka_bootstrap: str, tmp_path: Path) -> None:
    project = _support.project_for(tmp_path, broken.HiddenKeyDriver)
    run = _support.run_checks(project, ["DOC-01"], kafka_bootstrap, tmp_path)
    _support.assert_outcome(run, "DOC-01", Outcome.FAILED)
    message = run.results[0].message
    assert "RST reference does not name file.encoding" in message
    assert "HTML reference does not name file.encoding" in message


VARIANTS: list[tuple[Callable[[Path], None], str, list[str]]] = [
    (broken.missing_sections, "DOC-02", ["none for data model, delivery semantics"]),
    (
        broken.stale_config_reference,
        "DOC-03",
        ["batch.size", "keys no connector defines: batch.max"],
    ),
    (broken.no_license, "DOC-04", ["no license file", "declares no license"]),
    (broken.build_fails, "PKG-01", ["package directory 'src/cdk_certify_dmeo' does not exist"]),
    (broken.no_entry_points, "PKG-02", ["FileStreamSourceConnector", "declares: none"]),
    (
        broken.bundles_kit,
        "PKG-03",
        ["bundles the kit's packages harness/", "not require connect-cdk"],
    ),
]


@pytest.mark.parametrize(
    ("change", "check_id", "fragments"),
    VARIANTS,
    ids=[change.__name__ for change, _, _ in VARIANTS],
)
def test_broken_variant_fails_its_check(
    change: Callable[[Path], None],
    check_id: str,
    fragments: list[str],
    kafka_bootstrap: str,
    tmp_path: Path,
) -> None:
    suite = check_id.split("-")[0]
    run = _run(broken.demo_variant(tmp_path, change), [suite], kafka_bootstrap, tmp_path)
    _support.assert_outcome(run, check_id, Outcome.FAILED)
    (failed,) = [r for r in run.results if r.outcome is Outcome.FAILED]
    for fragment in fragments:
        assert fragment in failed.message, _support.describe(run)
    # Every other check of the suite passes (PKG-02/03 cannot run without a wheel: they are
    # not verified, which does not mean that they do not apply).
    others = Outcome.NOT_VERIFIED if check_id == "PKG-01" else Outcome.PASSED
    for (other, subject), outcome in _outcomes(run).items():
        if other != check_id:
            assert outcome is others, f"{other} [{subject}]:\n{_support.describe(run)}"


RST_README = """\
=====================
FileStream connectors
=====================

The FileStream reference connectors of connect-cdk, packaged as a project of their own.

Record format
-------------

Source values are the lines of the file (``STRING``); the sink writes each value as a line.

Guarantees
----------

At least once, for both connectors.

Getting started
---------------

.. code-block:: console

   $ cdk standalone worker.properties source.json

Settings
--------

Source
~~~~~~

``file``
  The file to read.
``topic``
  The topic to write to.
``batch.size``
  The most records one poll returns.

Sink
~~~~

``file``
  The file to append to.

Licence
-------

Apache License 2.0.
"""


def test_rst_readme_with_synonyms_passes(kafka_bootstrap: str, tmp_path: Path) -> None:
    def as_rst(root: Path) -> None:
        (root / "README.md").unlink()
        (root / "README.rst").write_text(RST_README, encoding="utf-8")

    root = broken.demo_variant(tmp_path, as_rst)
    run = _run(root, ["DOC-02", "DOC-03"], kafka_bootstrap, tmp_path)
    for result in run.results:
        _support.assert_outcome(run, result.id, Outcome.PASSED)
