"""Distributed mode's driver with its tasks on Spark: the wiring of the runtime and Spark.

:class:`~cdk.runtime.DistributedWorker` lives in the runtime and knows nothing of Spark; this is
where the Spark placement is handed to it, so the runtime never imports :mod:`cdk.spark`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from cdk.errors import ConnectException
from cdk.runtime import DistributedWorker

if TYPE_CHECKING:
    from cdk.runtime import DistributedConfig, Plugins, TaskPlacement

__all__ = ["SPARK_MISSING", "distributed_worker", "spark_placement"]

SPARK_MISSING = (
    "Distributed mode runs connector tasks on Spark, and PySpark is not installed: "
    "pip install 'connect-cdk[spark]'"
)


def spark_placement(config: DistributedConfig, plugins: Plugins | None = None) -> TaskPlacement:
    """The Spark placement for a driver's ``config`` (what :func:`distributed_worker` passes).

    Raises:
        ConnectException: PySpark (the ``spark`` extra) is not installed.
    """
    try:
        import pyspark  # noqa: F401
    except ImportError as exc:
        raise ConnectException(SPARK_MISSING) from exc
    from cdk.spark._placement import SparkPlacement

    return SparkPlacement(config, plugins=plugins)


def distributed_worker(worker_props: Mapping[str, Any], **kwargs: Any) -> DistributedWorker:
    """A distributed-mode driver whose tasks run on Spark (``spark.master`` of the properties).

    What ``cdk distributed`` runs, in process::

        from cdk.spark import distributed_worker

        with distributed_worker(props) as driver:
            driver.herder.create_connector("src", {"connector.class": "MySource", ...})

    Args:
        worker_props: the worker properties (as in ``connect-distributed.properties``, plus
            ``spark.*`` keys).
        **kwargs: the other arguments of :class:`~cdk.runtime.DistributedWorker` (``rest``,
            ``plugins``, ``extra_plugins``, ``cluster_id_timeout``).

    Raises:
        ConfigException: the worker properties are invalid (names the key).
    """
    return DistributedWorker(worker_props, placement=spark_placement, **kwargs)
