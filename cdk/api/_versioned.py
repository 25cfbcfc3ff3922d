"""The default ``version()`` of connectors, tasks and other plugins."""

from __future__ import annotations

import functools
from importlib import metadata

__all__ = ["package_version"]


@functools.lru_cache(maxsize=256)
def _version_of_top_package(top: str) -> str:
    for dist in metadata.packages_distributions().get(top, []):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return "unknown"


def package_version(cls: type) -> str:
    """The version of the installed distribution that provides ``cls``, else ``"unknown"``."""
    return _version_of_top_package(cls.__module__.split(".", 1)[0])
