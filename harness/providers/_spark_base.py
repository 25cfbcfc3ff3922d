"""The Spark provider interface, ``local[N]`` and an existing master.

A :class:`SparkProvider` gives what a ``cdk distributed`` driver (or any PySpark session) needs to
run on it: the master URL and the ``spark.*`` properties that make a driver on this machine work
with it (its Python for the executors, the loopback address, small executors).
"""

from __future__ import annotations

import abc
import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any

from typing_extensions import Self, override

from cdk.errors import ConnectException, MissingExtraError

__all__ = [
    "ExternalSpark",
    "LocalSpark",
    "SparkProvider",
    "spark_home",
    "spark_version",
]

#: Executors are kept small: several JVMs share a 2-core machine in tests.
DEFAULT_EXECUTOR_MEMORY = "512m"


def spark_home() -> Path:
    """The pyspark package directory, which holds Spark's jars and ``bin/spark-class``.

    Raises:
        MissingExtraError: pyspark is not installed.
    """
    try:
        import pyspark
    except ImportError as exc:
        raise MissingExtraError("The Spark environments", "spark", "pyspark") from exc
    return Path(pyspark.__file__).resolve().parent


def spark_version() -> str:
    """The installed pyspark's version (``4.3.0``)."""
    spark_home()
    from pyspark.version import __version__

    return str(__version__)


class SparkProvider(abc.ABC):
    """A Spark cluster for tests and certification: start it, point a driver at it, stop it.

    Subclasses start what they need in :meth:`start` and stop it all in :meth:`stop`; both are
    idempotent, and the provider is a context manager.
    """

    #: The backend's name (``local``, ``standalone``, ``testcontainers``, ``external``).
    name: str = ""

    @property
    @abc.abstractmethod
    def master_url(self) -> str:
        """The master URL a driver's ``spark.master`` takes."""

    @property
    @abc.abstractmethod
    def cores(self) -> int:
        """How many task slots the cluster offers (executor cores)."""

    @property
    @abc.abstractmethod
    def running(self) -> bool:
        """Whether :meth:`start` completed and :meth:`stop` has not been called since."""

    @abc.abstractmethod
    def start(self) -> Self:
        """Start the cluster (a no-op when it runs) and wait until it can take an application."""

    @abc.abstractmethod
    def stop(self) -> None:
        """Stop everything :meth:`start` started (a no-op when nothing runs)."""

    def spark_properties(self) -> dict[str, str]:
        """The ``spark.*`` properties of a driver on this machine using this cluster.

        They hold the master URL, the Python interpreter for the executors' Python workers
        (the driver's own: PySpark needs the same minor version on both sides) and their
        environment (``spark.executorEnv.*``), the loopback address for the driver, small
        executors, and no Spark UI.
        """
        props = {
            "spark.master": self.master_url,
            "spark.pyspark.python": self.executor_python(),
            "spark.pyspark.driver.python": sys.executable,
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.executor.memory": DEFAULT_EXECUTOR_MEMORY,
            "spark.ui.enabled": "false",
        }
        for key, value in self.executor_environment().items():
            props[f"spark.executorEnv.{key}"] = value
        return props

    def executor_python(self) -> str:
        """The Python the executors run (the driver's interpreter unless they run elsewhere)."""
        return sys.executable

    def executor_environment(self) -> dict[str, str]:
        """Environment variables the executors' Python workers need (none by default)."""
        return {}

    def session(self, app_name: str = "cdk-harness", **conf: str) -> Any:
        """A new ``SparkSession`` on this cluster with :meth:`spark_properties` (stop it after).

        Args:
            app_name: the application's name on the master.
            conf: more ``spark.*`` properties (dots written as is, passed as a dict).
        """
        spark_home()
        from pyspark.sql import SparkSession

        from cdk.spark._session import executor_python, refuse_another_master

        properties = {**self.spark_properties(), **conf}
        refuse_another_master(properties["spark.master"])
        builder = SparkSession.builder.appName(app_name)
        for key, value in properties.items():
            builder = builder.config(key, value)
        with executor_python(properties["spark.pyspark.python"]):
            return builder.getOrCreate()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _not_started(self) -> ConnectException:
        return ConnectException(f"{type(self).__name__} is not started: call start() first")


class LocalSpark(SparkProvider):
    """Spark inside the driver's JVM: ``local[N]`` (nothing to start or stop).

    Args:
        threads: the task slots (``local[threads]``).
    """

    name = "local"

    def __init__(self, threads: int = 2) -> None:
        if threads < 1:
            raise ValueError(f"local Spark needs at least 1 thread, not {threads}")
        self.threads = threads
        self._started = False

    @property
    @override
    def master_url(self) -> str:
        return f"local[{self.threads}]"

    @property
    @override
    def cores(self) -> int:
        return self.threads

    @property
    @override
    def running(self) -> bool:
        return self._started

    @override
    def start(self) -> Self:
        spark_home()  # pyspark must be installed: say so now rather than in the driver
        self._started = True
        return self

    @override
    def stop(self) -> None:
        self._started = False

    def __repr__(self) -> str:
        return f"LocalSpark({self.master_url})"


class ExternalSpark(SparkProvider):
    """An existing cluster, by its master URL (``spark://host:port``, ``yarn``, ``k8s://...``).

    Args:
        master: the master URL.
        cores: the task slots it offers, when known (0: unknown).
    """

    name = "external"

    def __init__(self, master: str, cores: int = 0) -> None:
        self._master = master
        self._cores = cores
        self._started = False

    @property
    @override
    def master_url(self) -> str:
        return self._master

    @property
    @override
    def cores(self) -> int:
        return self._cores

    @property
    @override
    def running(self) -> bool:
        return self._started

    @override
    def start(self) -> Self:
        spark_home()
        self._started = True
        return self

    @override
    def stop(self) -> None:
        self._started = False

    @override
    def spark_properties(self) -> dict[str, str]:
        # an existing cluster: only the master and what a driver on this machine needs
        props = super().spark_properties()
        for key in ("spark.driver.host", "spark.driver.bindAddress", "spark.executor.memory"):
            del props[key]
        props["spark.pyspark.python"] = os.environ.get("PYSPARK_PYTHON", "python3")
        return props

    def __repr__(self) -> str:
        return f"ExternalSpark({self._master})"


def fetch_json(url: str, timeout: float = 2.0) -> Any:
    """GET ``url`` and parse its JSON body; None when nothing (valid) answers."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return json.loads(response.read().decode("utf-8"))
    except (OSError, urllib.error.URLError, ValueError):
        return None
