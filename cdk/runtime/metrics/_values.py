"""Metric values as Kafka Connect names them, and a worker's values at one moment."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from cdk.runtime.metrics._descriptions import description

__all__ = ["Metric", "MetricsSnapshot", "Value"]

Value = float | str


@dataclass(frozen=True)
class Metric:
    """One metric value as Kafka Connect names it.

    Attributes:
        group: Kafka's group (``sink-task-metrics``, ...), the JMX ``type``.
        name: Kafka's metric name (``sink-record-read-rate``, ...).
        tags: Kafka's tags as ``(key, value)`` pairs (``connector``, ``task``), in that order.
        value: a number, or a text for ``status``, ``connector-class``, ``connector-type`` and
            ``connector-version``.
    """

    group: str
    name: str
    tags: tuple[tuple[str, str], ...]
    value: Value

    @property
    def description(self) -> str:
        """What the metric means."""
        return description(self.group, self.name)


class MetricsSnapshot(Sequence[Metric]):
    """The metric values of a worker at one moment (see :meth:`ConnectMetrics.snapshot`).

    Example::

        snapshot = worker.metrics()
        snapshot.value("sink-task-metrics", "sink-record-read-total", connector="s", task=0)
    """

    def __init__(self, metrics: Iterable[Metric]) -> None:
        self._metrics = list(metrics)

    def __len__(self) -> int:
        return len(self._metrics)

    def __getitem__(self, index: int) -> Metric:  # type: ignore[override]
        return self._metrics[index]

    def __iter__(self) -> Iterator[Metric]:
        return iter(self._metrics)

    def find(
        self, group: str | None = None, name: str | None = None, **tags: object
    ) -> list[Metric]:
        """The metrics of ``group`` named ``name`` (None: any) whose tags include ``tags``."""
        wanted = {k: str(v) for k, v in tags.items()}
        return [
            m
            for m in self._metrics
            if (group is None or m.group == group)
            and (name is None or m.name == name)
            and all(dict(m.tags).get(k) == v for k, v in wanted.items())
        ]

    def value(self, group: str, name: str, **tags: object) -> Value:
        """The value of one metric.

        Raises:
            KeyError: no metric, or more than one, matches (the message says which).
        """
        found = self.find(group, name, **tags)
        if len(found) != 1:
            shown = ", ".join(f"{k}={v}" for k, v in tags.items())
            what = "No metric" if not found else f"{len(found)} metrics"
            raise KeyError(f"{what} {group}/{name} with tags {{{shown}}}")
        return found[0].value

    def as_dict(self) -> dict[str, Value]:
        """Every value keyed ``group:name{tag=value,...}`` (handy in assertions and logs)."""
        out: dict[str, Value] = {}
        for m in self._metrics:
            tags = ",".join(f"{k}={v}" for k, v in m.tags)
            out[f"{m.group}:{m.name}{{{tags}}}"] = m.value
        return out

    def __repr__(self) -> str:
        return f"MetricsSnapshot({len(self._metrics)} metrics)"
