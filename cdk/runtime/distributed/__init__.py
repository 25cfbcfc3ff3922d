"""Distributed mode's Spark-free part (Kafka Connect's ``runtime/distributed`` package).

:class:`DistributedWorker` is the in-process driver: its state in the config, offset and status
topics (the stores of :mod:`cdk.runtime.storage`, in Kafka Connect 3.9's formats) and in the
kit's assignments topic, the :class:`DistributedHerder` that manages connectors from them, the
election of the leading driver (a lease in the assignments topic), and the REST API.
:class:`DistributedConfig` is its worker configuration. A driver's :class:`TaskPlacement` hosts
its workers (:class:`ClusterWorker`, each running many connector tasks) from a
:class:`WorkerSpec`; the leader assigns the tasks to the live workers of every driver. The Spark
placement, and what picks it, live in :mod:`cdk.spark` (:func:`cdk.spark.distributed_worker`),
so nothing here imports Spark.
"""

from __future__ import annotations

from cdk.runtime.distributed._cluster_worker import ClusterWorker
from cdk.runtime.distributed._config import DISTRIBUTED_CONFIG_DEF, DistributedConfig
from cdk.runtime.distributed._herder import DistributedHerder
from cdk.runtime.distributed._placement import TaskPlacement, WorkerSpec, worker_spec
from cdk.runtime.distributed._worker import DistributedWorker

__all__ = [
    "DISTRIBUTED_CONFIG_DEF",
    "ClusterWorker",
    "DistributedConfig",
    "DistributedHerder",
    "DistributedWorker",
    "TaskPlacement",
    "WorkerSpec",
    "worker_spec",
]
