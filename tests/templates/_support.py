"""Running ``cdk new`` and the generated projects' own tools, as subprocesses."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
CDK = BIN / "cdk"


def run(
    *args: str | Path,
    cwd: Path | None = None,
    timeout: float = 120,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run a command to completion and return its result (never raises on failure)."""
    return subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=env,
        stdin=subprocess.DEVNULL,
    )


def cdk_new(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``cdk new ARGS`` as a user would type it."""
    return run(CDK, "new", *args, cwd=cwd)


def snapshot(directory: Path) -> list[str]:
    """Every path below ``directory`` (to check that a failed run wrote nothing)."""
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))


def toml(path: Path) -> dict[str, Any]:
    """A TOML file, parsed."""
    return tomllib.loads(path.read_text(encoding="utf-8"))


def clean_env() -> dict[str, str]:
    """The environment for a generated project's tools: without this virtualenv's variables."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env
