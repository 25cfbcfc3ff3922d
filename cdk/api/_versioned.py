"""The default ``version()`` of connectors, tasks and other plugins."""

from __future__ import annotations

import functools
import sys
from collections.abc import Mapping
from importlib import metadata

__all__ = ["package_version"]


@functools.lru_cache(maxsize=256)
def _version_of_top_package(top: str) -> str:
    for dist in _packages_distributions(tuple(sys.path)).get(top, []):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return "unknown"


@functools.lru_cache(maxsize=8)
def _packages_distributions(path: tuple[str, ...]) -> Mapping[str, list[str]]:
    """Which distributions provide each top-level package, read once per ``sys.path``.

    ``packages_distributions()`` reads every installed distribution's file list: a tenth of a
    second or more, which each plugin from another top-level package would pay again.
    """
    return metadata.packages_distributions()


def package_version(cls: type) -> str:
    """The version of the installed distribution that provides ``cls``, else ``"unknown"``."""
    return _version_of_top_package(cls.__module__.split(".", 1)[0])
