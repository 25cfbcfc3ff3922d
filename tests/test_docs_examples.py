"""The code examples in README.md and the user guide run as written."""

from __future__ import annotations

import re
import sys
import textwrap
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

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
            indent = len(lines[i]) - len(lines[i].lstrip())  # a block nested in a list, too
            i += 1
            body: list[str] = []
            while i < len(lines) and (
                not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent
            ):
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


# ---------------------------------------------------------------------------------------------
# The example connectors of the guide, certified with the real harness: the checks that apply
# to a connector without an external system of its own (CFG, DOC-01), each of which must pass
# or not apply.

#: Checks that may end SKIPPED for an example, with the reason they do not apply.
_NOT_APPLICABLE = {"CFG-08": "the example has no PASSWORD key"}


def _example_module(name: str, code: str, monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """Run a guide example as a module of its own, importable while the test runs."""
    module = types.ModuleType(name)
    monkeypatch.setitem(sys.modules, name, module)
    exec(compile(code, name, "exec"), module.__dict__)
    return module


def _connector_examples() -> list[tuple[str, str]]:
    return [
        (where, code)
        for where, code in EXAMPLES
        if re.search(r"^class \w+\((SourceConnector|SinkConnector)\):", code, flags=re.M)
    ]


CONNECTOR_EXAMPLES = _connector_examples()


def test_the_guide_has_connector_examples() -> None:
    assert [where for where, _ in CONNECTOR_EXAMPLES] == ["docs/guide/connectors.rst#0"]


@pytest.mark.parametrize(
    ("where", "code"), CONNECTOR_EXAMPLES, ids=[w for w, _ in CONNECTOR_EXAMPLES]
)
def test_example_connector_passes_the_checks_that_apply(
    where: str,
    code: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kafka_bootstrap: str,
) -> None:
    from cdk import SinkConnector, SourceConnector
    from harness import SinkDriver, SourceDriver
    from harness.certify import Outcome, Project, certify

    monkeypatch.chdir(tmp_path)
    name = "guide_example_" + re.sub(r"\W", "_", where)
    module = _example_module(name, code, monkeypatch)
    connectors = [
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and value.__module__ == name
        and issubclass(value, (SourceConnector, SinkConnector))
    ]
    assert connectors, f"{where} defines no connector"
    drivers: list[type[Any]] = []
    for connector in connectors:
        if issubclass(connector, SourceConnector):

            class ExampleSourceDriver(SourceDriver):
                """The example has no external system: its tasks make their data up."""

                def example_config(self, topic: str) -> dict[str, str]:
                    return {"topic": topic}

                def write_records(self, ids: Sequence[int], *, stream: int = 0) -> None:
                    pass

            ExampleSourceDriver.connector = connector
            drivers.append(ExampleSourceDriver)
        else:

            class ExampleSinkDriver(SinkDriver):
                def example_config(self, topics: str) -> dict[str, str]:
                    return {"topics": topics}

            ExampleSinkDriver.connector = connector
            drivers.append(ExampleSinkDriver)
    project = Project(path=tmp_path, name="guide-example", version="0.0.1", drivers=drivers)
    run = certify(project, kafka=kafka_bootstrap, only=["CFG", "DOC-01"], workdir=tmp_path / "run")
    assert {r.id for r in run.results} >= {f"CFG-0{n}" for n in range(1, 9)} | {"DOC-01"}
    wrong = [
        f"{r.id} [{r.subject}] {r.outcome}: {r.message}"
        for r in run.results
        if not (
            r.outcome is Outcome.PASSED
            or (r.outcome is Outcome.SKIPPED and r.id in _NOT_APPLICABLE)
        )
    ]
    assert not wrong, f"{where}:\n" + "\n".join(wrong)
