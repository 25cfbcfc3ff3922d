"""The certification bundle: ``junit.xml``, ``summary.json`` and ``report.html`` in one directory.

:func:`write_bundle` writes the three files and then reads them back looking for every secret
the run registered (``CheckContext.secret``), in each form a writer could have encoded it. The
runner redacts the results, so a hit is a harness defect: the bundle is deleted and
:class:`SecretLeakError` raised rather than a secret shipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from html import escape
from pathlib import Path
from xml.sax.saxutils import escape as xml_escape
from xml.sax.saxutils import quoteattr

from harness.certify._report_html import write_html
from harness.certify._report_json import write_json
from harness.certify._report_junit import write_junit
from harness.certify._runner import CertificationRun

__all__ = ["BUNDLE_FILES", "SecretLeakError", "write_bundle"]

#: What the bundle holds, by role.
BUNDLE_FILES = {"junit": "junit.xml", "summary": "summary.json", "html": "report.html"}


#: Shorter values are not searched for: they occur by chance (checks register long canaries).
MIN_SECRET_LENGTH = 4


class SecretLeakError(RuntimeError):
    """A registered secret reached a bundle file (a harness defect; the files were removed)."""


def write_bundle(run: CertificationRun, report_dir: str | Path) -> dict[str, Path]:
    """Write the bundle of ``run`` into ``report_dir`` (created if needed).

    Returns:
        The written files by role: ``junit``, ``summary``, ``html``.

    Raises:
        SecretLeakError: a secret value of the run appears in a written file (which file and
            which secret, by position only, is named; the value is not repeated).
    """
    directory = Path(report_dir)
    directory.mkdir(parents=True, exist_ok=True)
    files = {
        "junit": write_junit(run, directory / BUNDLE_FILES["junit"]),
        "summary": write_json(run, directory / BUNDLE_FILES["summary"]),
        "html": write_html(run, directory / BUNDLE_FILES["html"]),
    }
    leaks = find_secrets(files.values(), run.secrets)
    if leaks:
        for path in files.values():
            path.unlink(missing_ok=True)
        raise SecretLeakError(
            "A registered secret value reached the certification bundle, which was deleted: "
            + "; ".join(leaks)
            + ". This is a defect of the harness (results are redacted before reporting): "
            "please report it."
        )
    return files


def find_secrets(paths: Iterable[Path], secrets: Iterable[str]) -> list[str]:
    """Where any of ``secrets`` appears in ``paths``, in any encoding the writers use.

    Values shorter than :data:`MIN_SECRET_LENGTH` are not searched for.

    Returns:
        One description per (file, secret) hit, naming the file and the secret's length only.
    """
    values = sorted({s for s in secrets if len(s) >= MIN_SECRET_LENGTH})
    hits = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
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
