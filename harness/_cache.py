"""The harness's folder of things worth keeping between runs on one machine."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_folder"]


def cache_folder(name: str) -> Path:
    """``$XDG_CACHE_HOME/connect-cdk/<name>`` (``~/.cache`` by default); not created here."""
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "connect-cdk" / name
