"""The driver's SparkSession, from the worker's ``spark.*`` properties.

``spark.master`` defaults to ``local[*]``; any Spark master URL works (``spark://host:port`` for a
standalone cluster, ``yarn``, ``k8s://...``). Spark's task retries also apply in local mode: a
``local[N]`` master becomes ``local[N,F]`` with F = ``spark.task.maxFailures`` (default
:data:`DEFAULT_MAX_FAILURES` here). The Python workers run the driver's interpreter
(``spark.pyspark.python``), as PySpark needs for the kit's classes to unpickle.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Iterator, Mapping
from typing import Any

from cdk.errors import ConnectException

__all__ = [
    "DEFAULT_MAX_FAILURES",
    "build_session",
    "import_pyspark",
    "session_settings",
    "total_cores",
]

DEFAULT_MASTER = "local[*]"
#: Attempts of one Spark task before its job fails (Spark's own default is 4, 1 in local mode).
DEFAULT_MAX_FAILURES = 8
_LOCAL = re.compile(r"^local(?:\[(\*|\d+)\])?$")


def import_pyspark() -> Any:
    """Import PySpark, with an actionable error when the ``spark`` extra is missing.

    Raises:
        ConnectException: PySpark is not installed.
    """
    try:
        import pyspark
    except ImportError as exc:
        raise ConnectException(
            "Distributed mode runs connector tasks on Spark and needs PySpark: "
            "pip install 'connect-cdk[spark]' (PySpark needs Java 17 or later)"
        ) from exc
    return pyspark


def session_settings(props: Mapping[str, Any]) -> dict[str, str]:
    """The Spark settings for the worker properties: their ``spark.*`` keys and the kit's defaults.

    Raises:
        ConnectException: ``spark.task.maxFailures`` is not a positive number.
    """
    settings = {str(k): str(v) for k, v in props.items() if str(k).startswith("spark.")}
    raw_failures = settings.get("spark.task.maxFailures", str(DEFAULT_MAX_FAILURES))
    try:
        failures = int(raw_failures)
        if failures < 1:
            raise ValueError(raw_failures)
    except ValueError as exc:
        raise ConnectException(
            f"Invalid value {raw_failures} for configuration spark.task.maxFailures: "
            "must be a positive number of attempts"
        ) from exc
    settings["spark.task.maxFailures"] = str(failures)
    master = settings.get("spark.master", DEFAULT_MASTER).strip()
    local = _LOCAL.match(master)
    if local:
        master = f"local[{local.group(1) or 1},{failures}]"
    settings["spark.master"] = master
    settings.setdefault("spark.app.name", f"cdk-{props.get('group.id') or 'distributed'}")
    # what PySpark itself would use (PYSPARK_PYTHON), else this interpreter: it has the kit
    settings.setdefault("spark.pyspark.python", os.environ.get("PYSPARK_PYTHON") or sys.executable)
    settings.setdefault("spark.ui.showConsoleProgress", "false")
    # tasks run for as long as their generation: no locality waits, no speculative copies
    settings.setdefault("spark.locality.wait", "0s")
    settings.setdefault("spark.speculation", "false")
    return settings


@contextlib.contextmanager
def executor_python(python: str) -> Iterator[None]:
    """Set ``PYSPARK_PYTHON`` to ``python`` while a SparkContext starts, then restore it.

    PySpark takes the Python its executors run from ``PYSPARK_PYTHON`` when the SparkContext
    starts, not from ``spark.pyspark.python``; left set, it would also apply to the next
    context in the process, whatever that one asks for (another cluster's interpreter path).
    """
    previous = os.environ.get("PYSPARK_PYTHON")
    os.environ["PYSPARK_PYTHON"] = python
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("PYSPARK_PYTHON", None)
        else:
            os.environ["PYSPARK_PYTHON"] = previous


def refuse_another_master(master: str) -> None:
    """Raise when this process already runs a SparkContext on another master.

    A process holds one SparkContext, and ``getOrCreate`` hands back the running one whatever
    master was asked for: the tasks would silently run there instead.

    Raises:
        ConnectException: naming both masters.
    """
    from pyspark import SparkContext

    active = SparkContext._active_spark_context
    running = active.master if active is not None else None
    if running is not None and running != master:
        raise ConnectException(
            f"This process already runs a SparkSession on {running}, and a process holds one "
            f"SparkContext: it cannot also start one on spark.master={master}. Stop that "
            "session first, or run the driver in a process of its own."
        )


def build_session(props: Mapping[str, Any]) -> Any:
    """Start (or join) the process's SparkSession with :func:`session_settings`.

    Raises:
        ConnectException: PySpark is missing or the session cannot start (Java, master URL).
    """
    import_pyspark()
    from pyspark.sql import SparkSession

    settings = session_settings(props)
    refuse_another_master(settings["spark.master"])
    builder = SparkSession.builder
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        with executor_python(settings["spark.pyspark.python"]):
            return builder.getOrCreate()
    except Exception as exc:
        raise ConnectException(
            f"Could not start a SparkSession on {settings['spark.master']}: {exc}. "
            "Check spark.master and that Java 17+ is installed (JAVA_HOME or java on PATH)."
        ) from exc


def total_cores(spark_context: Any) -> int | None:
    """How many tasks the application's executors can run at once; ``None`` when unknown."""
    try:
        backend = spark_context._jsc.sc().schedulerBackend()
        name = backend.getClass().getName()
        if name.endswith("LocalSchedulerBackend"):
            return int(backend.totalCores())
        return int(backend.totalCoreCount().get())
    except Exception:  # noqa: BLE001 - another cluster manager's backend
        try:
            return int(spark_context.defaultParallelism)
        except Exception:  # noqa: BLE001
            return None
