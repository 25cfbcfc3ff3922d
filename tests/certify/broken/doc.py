"""Documentation and packaging defects: a connector whose config docs hide a key, and the
broken variants of the demo project (tests/certify/projects/filestream_demo), each made by
copying it and changing one thing.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from typing_extensions import override

from cdk import NO_DEFAULT, ConfigDef, Type
from reference_connectors.filestream import FileStreamSourceConnector
from reference_connectors.filestream._source import CONFIG_DEF as SOURCE_CONFIG_DEF
from reference_connectors.filestream.certify import FileStreamSourceDriver

DEMO = Path(__file__).resolve().parent.parent / "projects" / "filestream_demo"

# ------------------------------------------------------------------------------------- DOC-01
_HIDDEN_REQUIRED = ConfigDef(SOURCE_CONFIG_DEF).define_internal(
    "file.encoding", Type.STRING, NO_DEFAULT, None, documentation="The file's encoding"
)


class HiddenKeySourceConnector(FileStreamSourceConnector):
    """Declares a required key as internal, so the generated docs leave it out."""

    @override
    def config(self) -> ConfigDef:
        return _HIDDEN_REQUIRED


class HiddenKeyDriver(FileStreamSourceDriver):
    connector: ClassVar[type] = HiddenKeySourceConnector


# ------------------------------------------------------------------------------ project variants
def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} is not in {path}"
    path.write_text(text.replace(old, new), encoding="utf-8")


def _drop_readme_sections(root: Path, *titles: str) -> None:
    readme = root / "README.md"
    text = readme.read_text(encoding="utf-8")
    for title in titles:
        text, count = re.subn(rf"(?ms)^## {re.escape(title)}\n.*?(?=^## )", "", text)
        assert count == 1, title
    readme.write_text(text, encoding="utf-8")


def missing_sections(root: Path) -> None:
    """DOC-02: no data model and no delivery semantics in the README."""
    _drop_readme_sections(root, "Data model", "Delivery semantics")


def stale_config_reference(root: Path) -> None:
    """DOC-03: the README still documents batch.size under its old name, batch.max."""
    _edit(root / "README.md", "`batch.size`", "`batch.max`")


def no_license(root: Path) -> None:
    """DOC-04: no LICENSE file, no license in pyproject.toml."""
    (root / "LICENSE").unlink()
    _edit(root / "pyproject.toml", 'license = "Apache-2.0"\nlicense-files = ["LICENSE"]\n', "")


def build_fails(root: Path) -> None:
    """PKG-01: pyproject.toml names a package that does not exist."""
    _edit(
        root / "pyproject.toml",
        '[tool.setuptools.packages.find]\nwhere = ["src"]',
        '[tool.setuptools]\npackage-dir = { "" = "src" }\npackages = ["cdk_certify_dmeo"]',
    )


def no_entry_points(root: Path) -> None:
    """PKG-02: the connectors are not declared as cdk.plugins entry points."""
    _edit(
        root / "pyproject.toml",
        '[project.entry-points."cdk.plugins"]\n'
        'DemoFileStreamSource = "cdk_certify_demo:FileStreamSourceConnector"\n'
        'DemoFileStreamSink = "cdk_certify_demo:FileStreamSinkConnector"\n',
        "",
    )


def bundles_kit(root: Path) -> None:
    """PKG-03: a vendored copy of the kit's harness package ships in the wheel, and the
    project does not depend on connect-cdk."""
    vendored = root / "vendor" / "harness"
    vendored.mkdir(parents=True)
    (vendored / "__init__.py").write_text('"""A vendored copy of the kit."""\n', encoding="utf-8")
    _edit(root / "pyproject.toml", 'dependencies = ["connect-cdk"]', "dependencies = []")
    _edit(
        root / "pyproject.toml",
        '[tool.setuptools.packages.find]\nwhere = ["src"]',
        '[tool.setuptools]\npackage-dir = { "" = "src", "harness" = "vendor/harness" }\n'
        'packages = ["cdk_certify_demo", "harness"]',
    )


def demo_variant(tmp_path: Path, change: Callable[[Path], None] | None = None) -> Path:
    """A copy of the demo project in ``tmp_path``, changed by ``change``."""
    root = tmp_path / (change.__name__ if change is not None else "filestream_demo")
    shutil.copytree(DEMO, root, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    if change is not None:
        change(root)
    return root
