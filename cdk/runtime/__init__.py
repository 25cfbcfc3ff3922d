"""What runs connectors, shared by the standalone and the distributed modes.

The engine is here, as in Kafka Connect's ``runtime`` package: :class:`Worker` runs connectors
and their tasks, each task on its own thread (the source and sink task runners), with the
configurations (:class:`WorkerConfig`, :class:`ConnectorConfig`) and the states
(:class:`State`, :class:`Status`, :class:`StatusStore`) both modes share. The rest is in
sub-packages by concern, each with its own ``__all__``:

- :mod:`cdk.runtime.standalone`: :class:`EmbeddedWorker`, the in-process standalone worker
  (``cdk standalone`` runs one with its REST API; tests use it directly), and its
  :class:`StandaloneHerder`;
- :mod:`cdk.runtime.distributed`: :class:`DistributedWorker`, the in-process driver of a
  :class:`DistributedHerder`, its :class:`DistributedConfig`, and the :class:`TaskPlacement`
  contract of where its tasks run (the Spark placement is :mod:`cdk.spark`'s; the runtime
  never imports it);
- :mod:`cdk.runtime.storage`: offsets in an :class:`OffsetBackingStore` (memory, file or Kafka
  topic), configs in a :class:`KafkaConfigBackingStore`, statuses in a
  :class:`KafkaStatusBackingStore`;
- :mod:`cdk.runtime.errors`: retries, tolerance, the error log and the dead letter queue;
- :mod:`cdk.runtime.rest`: Kafka Connect's REST API (:class:`RestServer`);
- :mod:`cdk.runtime.metrics`: Kafka Connect's metrics (:class:`MetricsSnapshot`) and their
  Prometheus endpoint;
- :mod:`cdk.runtime.isolation`: plugin discovery (:class:`Plugins`);
- :mod:`cdk.runtime.util`: ``KafkaBasedLog`` and small helpers.

The names most users need are re-exported here.
"""

from __future__ import annotations

from cdk.runtime._connector_config import ConnectorConfig
from cdk.runtime._connector_config_def import (
    sink_connector_config_def,
    source_connector_config_def,
)
from cdk.runtime._status import ConnectorTaskId, State, Status, StatusStore, TargetState
from cdk.runtime._worker import ConnectorListener, Worker
from cdk.runtime._worker_config import WORKER_CONFIG_DEF, WorkerConfig
from cdk.runtime.distributed._config import DISTRIBUTED_CONFIG_DEF, DistributedConfig
from cdk.runtime.distributed._herder import DistributedHerder
from cdk.runtime.distributed._placement import TaskPlacement, WorkerSpec
from cdk.runtime.distributed._worker import DistributedWorker
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
    "WorkerSpec",
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
