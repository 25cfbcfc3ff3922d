"""Kafka Connect's metrics in Prometheus's exposition formats (``GET /metrics``).

A :class:`ConnectCollector` reads the worker's :class:`~cdk.runtime.metrics.ConnectMetrics` when
Prometheus scrapes, and names each metric the way the Prometheus JMX exporter names Kafka's MBean
attributes by default: ``kafka_connect_<group>_<name>``, dashes turned into underscores, Kafka's
tags as labels, e.g. ``kafka_connect_sink_task_metrics_sink_record_read_rate{connector="s",
task="0"}``. Kafka's text-valued metrics (``status``, ``connector-class``, ``connector-type``,
``connector-version``) become a gauge of value 1 with the text in a label named after the metric,
as the usual exporter rules do: ``kafka_connect_connector_metrics_status{connector="s",
status="running"} 1``. Metrics named ``*-total`` are counters; the others are gauges.

The output is written by ``prometheus_client`` (no hand-written format); the content type follows
the scraper's ``Accept`` header (Prometheus text, or OpenMetrics).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from cdk.runtime.metrics._descriptions import description
from cdk.runtime.metrics._registry import ConnectMetrics
from cdk.runtime.metrics._values import Metric

if TYPE_CHECKING:
    from prometheus_client.registry import CollectorRegistry

__all__ = ["ConnectCollector", "new_registry", "prometheus_name", "render"]

PREFIX = "kafka_connect"


def prometheus_name(group: str, name: str) -> str:
    """The Prometheus name of Kafka metric ``name`` of ``group`` (JMX exporter style)."""
    return f"{PREFIX}_{group}_{name}".replace("-", "_").replace(".", "_")


def _label(key: str) -> str:
    return key.replace("-", "_").replace(".", "_")


class ConnectCollector:
    """A ``prometheus_client`` collector over a worker's metrics, read at scrape time."""

    def __init__(self, metrics: ConnectMetrics) -> None:
        self._metrics = metrics

    def describe(self) -> list[Any]:
        """Nothing up front: the metrics depend on the connectors present at scrape time."""
        return []

    def collect(self) -> Iterator[Any]:
        """One family per Kafka metric, with a sample per connector/task."""
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        families: dict[tuple[str, str], list[Metric]] = {}
        for metric in self._metrics.snapshot():
            families.setdefault((metric.group, metric.name), []).append(metric)
        for (group, name), members in families.items():
            full = prometheus_name(group, name)
            labels = [_label(k) for k, _ in members[0].tags]
            doc = description(group, name) or name
            if isinstance(members[0].value, str):
                gauge = GaugeMetricFamily(full, doc, labels=[*labels, _label(name)])
                for m in members:
                    gauge.add_metric([*(v for _, v in m.tags), str(m.value)], 1.0)
                yield gauge
            elif name.endswith("-total"):
                counter = CounterMetricFamily(full, doc, labels=labels)
                for m in members:
                    counter.add_metric([v for _, v in m.tags], float(m.value))
                yield counter
            else:
                gauge = GaugeMetricFamily(full, doc, labels=labels)
                for m in members:
                    gauge.add_metric([v for _, v in m.tags], float(m.value))
                yield gauge


def new_registry(metrics: ConnectMetrics) -> CollectorRegistry:
    """A ``prometheus_client`` registry with the worker's metrics and the process's own."""
    from prometheus_client import CollectorRegistry
    from prometheus_client.gc_collector import GCCollector
    from prometheus_client.platform_collector import PlatformCollector
    from prometheus_client.process_collector import ProcessCollector

    registry = CollectorRegistry(auto_describe=False)
    registry.register(ConnectCollector(metrics))
    ProcessCollector(registry=registry)
    PlatformCollector(registry=registry)
    GCCollector(registry=registry)
    return registry


def render(registry: CollectorRegistry, accept: str | None) -> tuple[bytes, str]:
    """The exposition of ``registry`` for a scraper's ``Accept`` header: (body, content type)."""
    from prometheus_client.exposition import choose_encoder

    encoder, content_type = choose_encoder(accept or "")
    return encoder(registry), content_type
