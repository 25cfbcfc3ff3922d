"""Lazy imports of PySpark and PyArrow with an actionable error when they are missing."""

from __future__ import annotations

import functools
import importlib
from types import ModuleType

from cdk.errors import ConnectException

__all__ = ["require", "spark_types"]

_HINT = (
    "Connectors in Spark pipelines need PySpark 4.2+ and PyArrow: "
    "pip install 'connect-cdk[spark]' (and Java 17+ on the PATH)"
)


@functools.cache
def require(module: str) -> ModuleType:
    """Import ``module`` (part of the ``spark`` extra) or raise an actionable error."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ConnectException(f"{_HINT}; importing {module} failed: {exc}") from exc


def spark_types() -> ModuleType:
    """``pyspark.sql.types``."""
    return require("pyspark.sql.types")
