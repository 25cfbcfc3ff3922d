"""``make dist`` builds the wheel a partner installs the kit from (docs: getting-started)."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import pytest
import uv

import cdk
from tests.templates._support import ROOT, clean_env, run


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_wheel_of_make_dist_installs_with_the_certify_extra_and_works(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    # -o: never remake the development virtualenv from here; BIN: this test's interpreter's
    built = run(
        "make",
        "-C",
        ROOT,
        "-o",
        ".venv/.installed",
        "dist",
        f"DIST={dist}",
        f"BIN={Path(sys.executable).parent}",
        timeout=300,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = dist.glob("*.whl")
    assert wheel.name == f"connect_cdk-{cdk.__version__}-py3-none-any.whl"
    assert len(list(dist.glob("*.tar.gz"))) == 1
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert "cdk/_templates/connector/cookiecutter.json" in names
    assert "harness/certify/_runner.py" in names

    venv = tmp_path / "venv"
    uv_bin = uv.find_uv_bin()
    env = clean_env()
    made = run(uv_bin, "venv", "--quiet", "--seed", "--python", sys.executable, venv, env=env)
    assert made.returncode == 0, made.stderr
    installed = run(
        *(uv_bin, "pip", "install", "--python", venv / "bin" / "python"),
        *("-c", ROOT / ".ci" / "constraints.txt", f"{wheel}[certify]"),
        env=env,
        timeout=600,
    )
    assert installed.returncode == 0, installed.stderr
    cdk_bin = venv / "bin" / "cdk"
    version = run(cdk_bin, "--version", env=env)
    assert version.stdout.strip() == f"cdk {cdk.__version__}", version.stderr
    plugins = run(cdk_bin, "plugins", "--type", "sink", env=env)
    assert "reference_connectors.sql.SqliteSinkConnector" in plugins.stdout, plugins.stderr
    # what the certify extra brings: the checks' dependencies import in the new environment
    imports = run(venv / "bin" / "python", "-c", "import fastavro, hypothesis", env=env)
    assert imports.returncode == 0, imports.stderr
    generated = run(cdk_bin, "new", "from-wheel", "--no-input", "--output-dir", tmp_path, env=env)
    assert generated.returncode == 0, generated.stderr
    assert (tmp_path / "from-wheel" / "pyproject.toml").is_file()


def test_the_install_docs_name_the_wheel_make_dist_builds() -> None:
    wheel = f"dist/connect_cdk-{cdk.__version__}-py3-none-any.whl[certify]"
    for doc in ("README.md", "docs/guide/getting-started.rst"):
        assert wheel in (ROOT / doc).read_text(encoding="utf-8"), doc
