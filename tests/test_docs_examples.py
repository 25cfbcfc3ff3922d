"""The code examples in README.md and the user guide run as written."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _markdown_blocks(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def _rst_blocks(path: Path) -> list[str]:
    blocks: list[str] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() == ".. code-block:: python":
            i += 1
            body: list[str] = []
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith("   ")):
                body.append(lines[i])
                i += 1
            blocks.append(textwrap.dedent("\n".join(body)))
        else:
            i += 1
    return blocks


def _examples() -> list[tuple[str, str]]:
    found = [(f"README.md#{n}", b) for n, b in enumerate(_markdown_blocks(ROOT / "README.md"))]
    for guide in sorted((ROOT / "docs").rglob("*.rst")):
        rel = guide.relative_to(ROOT)
        found += [(f"{rel}#{n}", b) for n, b in enumerate(_rst_blocks(guide))]
    return found


EXAMPLES = _examples()


def test_there_are_examples() -> None:
    assert len(EXAMPLES) >= 5


@pytest.mark.parametrize(("where", "code"), EXAMPLES, ids=[w for w, _ in EXAMPLES])
def test_example_runs(
    where: str, code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    exec(compile(code, where, "exec"), {"__name__": "__docs__"})


def test_guide_pages_in_the_toctree_exist() -> None:
    index = (ROOT / "docs" / "index.rst").read_text(encoding="utf-8")
    entries = re.findall(r"^   (\S+)$", index, flags=re.M)
    assert entries
    for entry in entries:
        assert (ROOT / "docs" / f"{entry}.rst").is_file(), entry


def test_api_reference_names_every_export_of_cdk() -> None:
    import cdk

    api = (ROOT / "docs" / "reference" / "api.rst").read_text(encoding="utf-8")
    documented = set(re.findall(r":\w+:`~cdk\.\w+\.(\w+)`", api))
    missing = sorted(set(cdk.__all__) - documented - {"__version__"})
    assert not missing, f"docs/reference/api.rst does not list {missing}"
    for facade in ("cdk.api", "cdk.config", "cdk.data", "cdk.converters", "cdk.transforms"):
        assert f".. automodule:: {facade}\n   :members:" in api, facade


def test_the_doc02_headings_in_the_certify_guide_are_those_the_check_accepts() -> None:
    from harness.certify.suites.doc import SECTIONS

    text = (ROOT / "docs" / "guide" / "certify.rst").read_text(encoding="utf-8")
    start = text.index("The README headings DOC-02 accepts")
    rows = re.findall(r"^   (\w[\w ]*?)  +(\S.*)$((?:\n {32}\S.*$)*)", text[start:], flags=re.M)
    table: dict[str, tuple[str, ...]] = {}
    for name, first, more in rows:
        if name in SECTIONS and name not in table:
            words = " ".join([first, *more.split("\n")]).split(",")
            table[name] = tuple(w.strip().lower() for w in words if w.strip())
    assert table == SECTIONS
