"""cdk.sphinxext: the cdk-config and cdk-checklist directives, in tiny Sphinx projects."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("sphinx")

from sphinx.application import Sphinx
from sphinx.util.docutils import docutils_namespace, patch_docutils

from cdk.config import ConfigDef
from cdk.sphinxext import TargetError, resolve_config_def

SECRET_DEFAULT = "s3cr3t-default-value"

CONFIG_MODULE = f'''
from cdk.config import ConfigDef, Importance, Type

CONFIG_DEF = (
    ConfigDef()
    .define("db.url", Type.STRING, importance=Importance.HIGH, documentation="Where the rows are.",
            group="Connection", order_in_group=1)
    .define("db.password", Type.PASSWORD, "{SECRET_DEFAULT}", importance=Importance.HIGH,
            documentation="The password.", group="Connection", order_in_group=2)
    .define("batch.size", Type.INT, 100, importance=Importance.LOW,
            documentation="Rows per batch.", group="Tuning")
    .define("file.pattern", Type.STRING, "*.jsonl", importance=Importance.LOW,
            documentation="Files <topic.prefix>name, *all* of `them`.", group="Tuning")
)


def make_config():
    return CONFIG_DEF


NOT_A_DEF = 42
'''


def _build(tmp_path: Path, index: str) -> tuple[str, str]:
    """Build ``index`` (a page body) with the extension; return the page's HTML and warnings."""
    src = tmp_path / "src"
    src.mkdir(parents=True)
    (src / "conf.py").write_text('extensions = ["cdk.sphinxext"]\n', encoding="utf-8")
    (src / "index.rst").write_text("Test\n====\n\n" + textwrap.dedent(index), encoding="utf-8")
    warnings = io.StringIO()
    # a namespace per build, as sphinx-build has: directives and nodes registered afresh
    with patch_docutils(str(src)), docutils_namespace():
        app = Sphinx(
            str(src),
            str(src),
            str(tmp_path / "out"),
            str(tmp_path / "doctrees"),
            "html",
            status=None,
            warning=warnings,
            freshenv=True,
        )
        app.build()
    text = re.sub(r"\x1b\[[0-9;]*m", "", warnings.getvalue())  # no terminal colours
    return (tmp_path / "out" / "index.html").read_text(encoding="utf-8"), text


@pytest.fixture
def config_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    name = f"cdk_sphinxext_demo_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(CONFIG_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def test_config_reference_of_a_connector_class(tmp_path: Path) -> None:
    page, warnings = _build(
        tmp_path, ".. cdk-config:: reference_connectors.filestream:FileStreamSourceConnector\n"
    )
    assert not warnings
    for key in ("file", "topic", "batch.size"):
        assert f'<span class="pre">{key}</span>' in page
    assert "Importance: high" in page


def test_config_reference_of_nested_smt_class_and_converter(tmp_path: Path) -> None:
    page, warnings = _build(
        tmp_path,
        """
        .. cdk-config:: cdk.transforms:InsertField.Value

        .. cdk-config:: cdk.converters:JsonConverter
        """,
    )
    assert not warnings
    assert '<span class="pre">timestamp.field</span>' in page
    assert '<span class="pre">schemas.enable</span>' in page


def test_config_reference_of_a_config_def_and_a_callable_hides_password_defaults(
    tmp_path: Path, config_module: str
) -> None:
    page, warnings = _build(
        tmp_path,
        f"""
        .. cdk-config:: {config_module}:CONFIG_DEF

        .. cdk-config:: {config_module}:make_config
           :enriched:
        """,
    )
    assert not warnings
    assert page.count('<span class="pre">db.password</span>') == 2
    assert SECRET_DEFAULT not in page
    assert "Default: [hidden]" in page
    assert '<p class="rubric">Connection</p>' in page  # :enriched: groups the keys
    assert '<p class="rubric">Tuning</p>' in page


@pytest.mark.parametrize(
    ("target", "why"),
    [
        ("no_such_module_xyz:Thing", "cannot import module 'no_such_module_xyz'"),
        ("cdk.transforms:NoSuchSmt", "'cdk.transforms' has no attribute 'NoSuchSmt'"),
        ("cdk.transforms.InsertField", "is not 'package.module:Attribute'"),
        ("cdk.transforms:InsertField", "is abstract"),
        ("cdk.transforms:TransformationChain", "is a class without a config() method"),
    ],
)
def test_a_bad_target_fails_the_build_naming_it(tmp_path: Path, target: str, why: str) -> None:
    _, warnings = _build(tmp_path, f".. cdk-config:: {target}\n")
    assert f"ERROR: cdk-config {target}: " in warnings
    assert why in warnings
    assert "index.rst:4" in warnings  # the directive's line


def test_a_target_without_config_def_is_named(config_module: str) -> None:
    with pytest.raises(TargetError, match=r"not a ConfigDef, .* \(found an object of type int\)"):
        resolve_config_def(f"{config_module}:NOT_A_DEF")
    assert isinstance(resolve_config_def("cdk.runtime:WORKER_CONFIG_DEF"), ConfigDef)


def test_a_failing_config_method_is_reported() -> None:
    class Broken:
        def config(self) -> ConfigDef:
            raise RuntimeError("no config today")

    module = type(sys)("cdk_sphinxext_broken")
    module.Broken = Broken  # type: ignore[attr-defined]
    module.returns_str = lambda: "nope"  # type: ignore[attr-defined]
    sys.modules["cdk_sphinxext_broken"] = module
    try:
        with pytest.raises(TargetError, match=r"Broken\(\)\.config\(\) failed: RuntimeError"):
            resolve_config_def("cdk_sphinxext_broken:Broken")
        with pytest.raises(TargetError, match=r"returns_str\(\) returned a str"):
            resolve_config_def("cdk_sphinxext_broken:returns_str")
    finally:
        del sys.modules["cdk_sphinxext_broken"]


def test_checklist_lists_every_check_with_rendered_descriptions(tmp_path: Path) -> None:
    from harness.certify import all_checks

    page, warnings = _build(tmp_path, ".. cdk-checklist::\n")
    assert not warnings
    for c in all_checks():
        assert f'<section id="{c.id}">' in page
        assert "How to fix a failure" in page
    assert '<section id="suite-CFG">' in page
    # the descriptions' inline RST is rendered, not shown raw
    assert '<span class="pre">validate({})</span>' in page
    assert "``" not in page


def test_checklist_of_one_suite_and_an_unknown_suite(tmp_path: Path) -> None:
    page, warnings = _build(
        tmp_path,
        "See :ref:`DOC-04 <DOC-04>` and :ref:`suite-doc`.\n\n.. cdk-checklist::\n   :suite: doc\n",
    )
    assert not warnings
    assert (
        '<a class="reference internal" href="#DOC-04"><span class="std std-ref">DOC-04</span>'
        in page
    )
    assert 'href="#suite-DOC"' in page
    assert '<section id="DOC-01">' in page
    assert '<section id="CFG-01">' not in page
    _, warnings = _build(tmp_path / "again", ".. cdk-checklist::\n   :suite: XYZ\n")
    assert "cdk-checklist: unknown suite 'XYZ'" in warnings


def test_importing_cdk_does_not_import_sphinx() -> None:
    code = "import cdk, cdk.config, cdk.runtime, sys; print('sphinx' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "False"


def test_documentation_and_defaults_are_shown_as_written_not_as_markup(
    tmp_path: Path, config_module: str
) -> None:
    directive = f".. cdk-config:: {config_module}:CONFIG_DEF\n   :enriched:\n"
    page, warnings = _build(tmp_path, directive)
    assert warnings == ""
    assert "Default: *.jsonl" in page
    assert "Files &lt;topic.prefix&gt;name, *all* of `them`." in page
    assert "<em>" not in page.split('class="cdk-config')[1]


def test_the_skip_reasons_are_those_of_the_code(tmp_path: Path) -> None:
    from harness.certify import NOT_APPLICABLE

    page, warnings = _build(tmp_path, ".. cdk-skip-reasons::\n")
    assert not warnings
    (listed,) = re.findall(r'<ul class="cdk-skip-reasons[^"]*">(.*?)</ul>', page, re.S)
    assert listed.count("<li") == len(NOT_APPLICABLE)
    for key in NOT_APPLICABLE:
        assert f'<span class="pre">{key}</span>' in page
    assert '<span class="pre">accepts_any_schema</span>' in page  # the texts are RST
