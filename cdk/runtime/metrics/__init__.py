"""Kafka Connect's worker, connector and task metrics, kept in process and read at scrape time.

The names, groups and tags are Kafka Connect's (``ConnectMetricsRegistry``). A worker's
:class:`ConnectMetrics` registry hands each task runner a :class:`TaskMetrics` and reads every
value into a :class:`MetricsSnapshot` of :class:`Metric` values when asked
(``EmbeddedWorker.metrics()``, ``GET /metrics`` in Prometheus's formats). The private modules:
the group names and each metric's description (``_descriptions``), Kafka's sampled statistics
(``_stats``), the task groups (``_task_metrics``), the values (``_values``), the registry
(``_registry``) and the Prometheus exposition (``_prometheus``, needs ``prometheus-client``).
"""

from __future__ import annotations

from cdk.runtime.metrics._descriptions import (
    CONNECTOR_GROUP,
    ERROR_GROUP,
    SINK_TASK_GROUP,
    SOURCE_TASK_GROUP,
    TASK_GROUP,
    WORKER_GROUP,
    description,
)
from cdk.runtime.metrics._registry import ConnectMetrics, ConnectorMetricsInfo
from cdk.runtime.metrics._stats import SampledStat
from cdk.runtime.metrics._task_metrics import (
    SinkTaskMetricsGroup,
    SourceTaskMetricsGroup,
    TaskMetrics,
    TaskMetricsGroup,
)
from cdk.runtime.metrics._values import Metric, MetricsSnapshot

__all__ = [
    "CONNECTOR_GROUP",
    "ERROR_GROUP",
    "SINK_TASK_GROUP",
    "SOURCE_TASK_GROUP",
    "TASK_GROUP",
    "WORKER_GROUP",
    "ConnectMetrics",
    "ConnectorMetricsInfo",
    "Metric",
    "MetricsSnapshot",
    "SampledStat",
    "SinkTaskMetricsGroup",
    "SourceTaskMetricsGroup",
    "TaskMetrics",
    "TaskMetricsGroup",
    "description",
]
