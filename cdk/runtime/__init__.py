"""What runs connectors, shared by the standalone and the Spark modes.

:class:`EmbeddedWorker` is the in-process standalone worker (``cdk standalone`` runs one with
its REST API); tests use it directly. Inside it: :class:`Plugins` finds connectors, converters
and transformations; :class:`Worker` runs connectors and their tasks, each task on its own
thread; :class:`StandaloneHerder` manages connector configs, states and restarts; and
:class:`RestServer` serves Kafka Connect's REST API. Offsets live in an
:class:`OffsetBackingStore` (memory, file or Kafka topic), statuses in a :class:`StatusStore`.

Distributed mode: :class:`DistributedWorker` is the in-process driver (``cdk distributed`` runs
one with its REST API) of a :class:`DistributedHerder`, which keeps connector configs in a
:class:`KafkaConfigBackingStore`, statuses in a :class:`KafkaStatusBackingStore` and offsets in
a :class:`KafkaOffsetBackingStore`, and runs tasks on a :class:`TaskPlacement` (the Spark one of
:mod:`cdk.spark`). :class:`DistributedConfig` is its worker configuration.
"""

from __future__ import annotations

from cdk.runtime._connector_config import ConnectorConfig
from cdk.runtime._connector_config_def import (
    sink_connector_config_def,
    source_connector_config_def,
)
from cdk.runtime._distributed import DistributedWorker
from cdk.runtime._distributed_config import DISTRIBUTED_CONFIG_DEF, DistributedConfig
from cdk.runtime._distributed_herder import DistributedHerder
from cdk.runtime._placement import PlacementListener, TaskGeneration, TaskPlacement
from cdk.runtime._status import ConnectorTaskId, State, Status, StatusStore, TargetState
from cdk.runtime._worker import ConnectorListener, Worker
from cdk.runtime._worker_config import WORKER_CONFIG_DEF, WorkerConfig
from cdk.runtime.errors._config import ErrorHandlingConfig
from cdk.runtime.errors._context import Stage
from cdk.runtime.isolation._plugins import PluginDesc, Plugins, PluginType
from cdk.runtime.metrics._values import Metric, MetricsSnapshot
from cdk.runtime.rest._requests import BadRequestException
from cdk.runtime.rest._server import RestServer
from cdk.runtime.standalone._herder import StandaloneHerder
from cdk.runtime.standalone._worker import EmbeddedWorker
from cdk.runtime.storage._config_store import ClusterConfigState, KafkaConfigBackingStore
from cdk.runtime.storage._file_offset_store import FileOffsetBackingStore
from cdk.runtime.storage._kafka_offset_store import KafkaOffsetBackingStore
from cdk.runtime.storage._offset_store import MemoryOffsetBackingStore, OffsetBackingStore
from cdk.runtime.storage._status_store import KafkaStatusBackingStore

__all__ = [
    # the embedded worker and its parts
    "EmbeddedWorker",
    "Worker",
    "ConnectorListener",
    "StandaloneHerder",
    "RestServer",
    "BadRequestException",
    # distributed mode
    "DistributedWorker",
    "DistributedHerder",
    "DistributedConfig",
    "DISTRIBUTED_CONFIG_DEF",
    "KafkaConfigBackingStore",
    "ClusterConfigState",
    "KafkaStatusBackingStore",
    "TaskPlacement",
    "TaskGeneration",
    "PlacementListener",
    # plugins
    "Plugins",
    "PluginDesc",
    "PluginType",
    # configuration
    "WorkerConfig",
    "WORKER_CONFIG_DEF",
    "ConnectorConfig",
    "source_connector_config_def",
    "sink_connector_config_def",
    "ErrorHandlingConfig",
    "Stage",
    # state
    "State",
    "TargetState",
    "Status",
    "StatusStore",
    "ConnectorTaskId",
    # metrics (EmbeddedWorker.metrics())
    "MetricsSnapshot",
    "Metric",
    # offsets
    "OffsetBackingStore",
    "MemoryOffsetBackingStore",
    "FileOffsetBackingStore",
    "KafkaOffsetBackingStore",
]
