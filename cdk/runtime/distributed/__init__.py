"""Distributed mode's Spark-free part (Kafka Connect's ``runtime/distributed`` package).

:class:`DistributedWorker` is the in-process driver: its state in the config, offset and status
topics (the stores of :mod:`cdk.runtime.storage`, in Kafka Connect 3.9's formats), the
:class:`DistributedHerder` that manages connectors from them, and the REST API.
:class:`DistributedConfig` is its worker configuration. Where the tasks run is a
:class:`TaskPlacement` handed to the driver (the contract: :class:`TaskGeneration`,
:class:`PlacementListener`); the Spark one, and what picks it, live in :mod:`cdk.spark`
(:func:`cdk.spark.distributed_worker`), so nothing here imports Spark.
"""

from __future__ import annotations

from cdk.runtime.distributed._config import DISTRIBUTED_CONFIG_DEF, DistributedConfig
from cdk.runtime.distributed._herder import DistributedHerder
from cdk.runtime.distributed._placement import PlacementListener, TaskGeneration, TaskPlacement
from cdk.runtime.distributed._worker import DistributedWorker

__all__ = [
    "DISTRIBUTED_CONFIG_DEF",
    "DistributedConfig",
    "DistributedHerder",
    "DistributedWorker",
    "PlacementListener",
    "TaskGeneration",
    "TaskPlacement",
]
