"""The certification bundle: the report, the submission material, provenance and a manifest.

:func:`write_bundle` writes into the report directory::

    report.html          the page a reviewer reads (the submission checklist on its first screen)
    summary.json         the verdict, every result, ``provenance`` and ``submission``
    junit.xml            the checks as JUnit test cases (provenance in the suites' properties)
    manifest.json        the Connector Hub details (:mod:`harness.certify._hub`)
    docs/                the README and each connector's configuration reference (RST, HTML,
                         Markdown)
    tests/               the project's own test results, when attached or run (``junit.xml``,
                         ``output.txt``)
    dist/                the wheel PKG-01 built and the PKG checks inspected
    SHA256SUMS           the SHA-256 of every other file, written last (:mod:`._manifest`)

Before the manifest, every text file is read back looking for every secret the run registered
(``CheckContext.secret``), in each form a writer could have encoded it. The runner redacts the
results, so a hit is a harness defect: the bundle is deleted and :class:`SecretLeakError`
raised rather than a secret shipped.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterable
from html import escape
from pathlib import Path
from typing import Any, Protocol
from xml.sax.saxutils import escape as xml_escape
from xml.sax.saxutils import quoteattr

from harness.certify._hub import hub_manifest
from harness.certify._manifest import MANIFEST_NAME, write_manifest
from harness.certify._provenance import built_wheel, provenance
from harness.certify._report_common import verdict
from harness.certify._report_html import write_html
from harness.certify._report_json import write_json
from harness.certify._report_junit import write_junit
from harness.certify._report_sanitize import sanitize
from harness.certify._runner import CertificationRun
from harness.certify._submission import ProjectTests, checklist

__all__ = [
    "BUNDLE_FILES",
    "BundleError",
    "SecretLeakError",
    "check_report_dir",
    "write_bundle",
]

#: The bundle's files at its top, by role.
BUNDLE_FILES = {
    "junit": "junit.xml",
    "summary": "summary.json",
    "html": "report.html",
    "hub": "manifest.json",
    "manifest": MANIFEST_NAME,
}
#: The bundle's directories (only files a bundle wrote are ever removed from them).
BUNDLE_DIRS = ("docs", "tests", "dist")

#: Shorter values are not searched for: they occur by chance (checks register long canaries).
MIN_SECRET_LENGTH = 4


class SecretLeakError(RuntimeError):
    """A registered secret reached a bundle file (a harness defect; the files were removed)."""


class BundleError(ValueError):
    """The report directory holds files that are not a bundle's (the message names them)."""


def check_report_dir(report_dir: str | Path) -> None:
    """Refuse a report directory that holds anything but a previous bundle.

    Every file of the directory goes into the bundle's manifest, so foreign files would be
    shipped (and a project directory given by mistake would be hashed whole).

    Raises:
        BundleError: the directory holds other files (the first few are named).
    """
    directory = Path(report_dir)
    if not directory.exists():
        return
    if not directory.is_dir():
        raise BundleError(f"The report directory {directory} is a file")
    foreign = sorted(set(_present(directory)) - _previous(directory))
    if foreign:
        shown = ", ".join(foreign[:5]) + (
            f" and {len(foreign) - 5} more" if len(foreign) > 5 else ""
        )
        raise BundleError(
            f"The report directory {directory} holds files that are not part of a certification "
            f"bundle ({shown}); every file there would go into the bundle. Choose a new or empty "
            "directory with --report-dir."
        )


def write_bundle(
    run: CertificationRun,
    report_dir: str | Path,
    *,
    workdir: Path | None = None,
    tests: ProjectTests | None = None,
    source: dict[str, Any] | None = None,
) -> dict[str, Path]:
    """Write the bundle of ``run`` into ``report_dir`` (created if needed).

    A previous bundle in the directory is replaced.

    Args:
        run: the finished run.
        report_dir: where the bundle goes.
        workdir: the run's working directory (``certify(workdir=...)``), still on disk: the
            wheel PKG-01 built there is copied into the bundle and named in its provenance.
        tests: the project's own test results, or None (the checklist names them missing).
        source: the project's git state before the run
            (:func:`~harness.certify._provenance.git_state`); read now when None.

    Returns:
        The written files by role: ``junit``, ``summary``, ``html``, ``hub``, ``manifest``,
        and ``wheel``/``tests`` when there are some.

    Raises:
        BundleError: the directory holds files that are not a bundle's.
        SecretLeakError: a secret value of the run appears in a written file (which file and
            which secret, by position only, is named; the value is not repeated).
    """
    directory = Path(report_dir)
    check_report_dir(directory)
    directory.mkdir(parents=True, exist_ok=True)
    _clear(directory)
    written: list[Path] = []
    try:
        files = _write(run, directory, workdir, tests, source, written)
        leaks = find_secrets((p for p in written if p.suffix != ".whl"), run.secrets)
    except BaseException:
        _remove(directory, written)
        raise
    if leaks:
        _remove(directory, written)
        raise SecretLeakError(
            "A registered secret value reached the certification bundle, which was deleted: "
            + "; ".join(leaks)
            + ". This is a defect of the harness (results are redacted before reporting): "
            "please report it."
        )
    files["manifest"] = write_manifest(directory)
    return files


def _write(
    run: CertificationRun,
    directory: Path,
    workdir: Path | None,
    tests: ProjectTests | None,
    source: dict[str, Any] | None,
    written: list[Path],
) -> dict[str, Path]:
    files: dict[str, Path] = {}

    def put(relative: str, text: str | None = None, *, copy: Path | None = None) -> Path:
        path = directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        written.append(path)
        if copy is not None:
            shutil.copyfile(copy, path)
        else:
            path.write_text(text or "", encoding="utf-8", newline="\n")
        return path

    wheel, wheel_note = built_wheel(run, workdir)
    if wheel is not None:
        files["wheel"] = put(f"dist/{wheel.name}", copy=wheel)
    run.provenance = provenance(
        run, wheel=wheel, wheel_note=wheel_note, exclude=directory, source=source
    )

    readme = run.project.file("README.md", "README.rst", "README.txt", "README")
    readme_path = put(f"docs/{readme.name}", copy=readme) if readme is not None else None
    docs = _write_docs(run, put)

    if tests is not None:
        if tests.junit is not None:
            files["tests"] = put("tests/junit.xml", copy=tests.junit)
        if tests.origin == "run":
            put("tests/output.txt", tests.output + "\n")

    hub = hub_manifest(run.project, source_remote=run.provenance["source"].get("remote"))
    files["hub"] = put(
        BUNDLE_FILES["hub"], json.dumps(hub.data, indent=2, ensure_ascii=False) + "\n"
    )
    run.submission = checklist(
        verdict=verdict(run),
        provenance=run.provenance,
        hub_missing=hub.missing,
        tests=tests,
        docs=docs,
        readme=readme_path.relative_to(directory).as_posix() if readme_path else None,
    )
    for role, writer in (("junit", write_junit), ("summary", write_json), ("html", write_html)):
        written.append(directory / BUNDLE_FILES[role])
        files[role] = writer(run, directory / BUNDLE_FILES[role])
    return files


def _write_docs(run: CertificationRun, put: _Put) -> dict[str, list[str]]:
    """Each connector's configuration reference as ``docs/<Class>.{rst,html,md}``."""
    docs: dict[str, list[str]] = {}
    stems: set[str] = set()
    for name, texts in run.config_docs.items():
        if "error" in texts:
            docs[name] = []
            continue
        stem = name.rsplit(".", 1)[-1]
        stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", name if stem in stems else stem)
        stems.add(stem)
        paths = [
            put(f"docs/{stem}.rst", texts.get("rst", "")),
            put(f"docs/{stem}.md", texts.get("markdown", "")),
            put(
                f"docs/{stem}.html",
                '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
                f"<title>{escape(name)}: configuration reference</title></head><body>"
                f"<h1><code>{escape(name)}</code></h1>\n"
                f"{sanitize(texts.get('html', ''), anchor_prefix='')}\n</body></html>",
            ),
        ]
        docs[name] = [p.relative_to(p.parents[1]).as_posix() for p in paths]
    return docs


class _Put(Protocol):
    """Writes (or copies) one bundle file and returns its path."""

    def __call__(
        self, relative: str, text: str | None = None, *, copy: Path | None = None
    ) -> Path: ...


def _present(directory: Path) -> list[str]:
    return [
        p.relative_to(directory).as_posix()
        for p in directory.rglob("*")
        if p.is_file() or (p.is_symlink() and not p.is_dir())
    ]


def _previous(directory: Path) -> set[str]:
    """The files of the previous bundle in ``directory`` (as its manifest lists them)."""
    known = set(BUNDLE_FILES.values())
    manifest = directory / MANIFEST_NAME
    if manifest.is_file():
        for line in manifest.read_text(encoding="utf-8", errors="replace").splitlines():
            _, sep, name = line.partition("  ")
            if sep and name and ".." not in name.split("/") and not name.startswith("/"):
                known.add(name)
    return known


def _clear(directory: Path) -> None:
    _remove(directory, [directory / name for name in _previous(directory)])


def _remove(directory: Path, paths: Iterable[Path]) -> None:
    for path in paths:
        path.unlink(missing_ok=True)
    for name in BUNDLE_DIRS:  # the bundle's directories, once empty
        sub = directory / name
        if sub.is_dir():
            for child in sorted(sub.rglob("*"), reverse=True):
                if child.is_dir() and not any(child.iterdir()):
                    child.rmdir()
            if not any(sub.iterdir()):
                sub.rmdir()


def find_secrets(paths: Iterable[Path], secrets: Iterable[str]) -> list[str]:
    """Where any of ``secrets`` appears in ``paths``, in any encoding the writers use.

    Values shorter than :data:`MIN_SECRET_LENGTH` are not searched for.

    Returns:
        One description per (file, secret) hit, naming the file and the secret's length only.
    """
    values = sorted({s for s in secrets if len(s) >= MIN_SECRET_LENGTH})
    hits = []
    for path in paths:
        text = path.read_text(encoding="utf-8", errors="replace")
        for value in values:
            if any(form in text for form in _encodings(value)):
                hits.append(f"{path.name} contains a secret of {len(value)} characters")
    return hits


def _encodings(value: str) -> set[str]:
    forms = {
        value,
        escape(value),
        escape(value, quote=False),
        xml_escape(value),
        quoteattr(value)[1:-1],
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
    }
    return {f for f in forms if f}
