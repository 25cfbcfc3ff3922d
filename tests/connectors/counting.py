"""A no-op sink connector that only counts what it receives (for benchmarks and smoke tests).

Counts live in this process, keyed by connector name: :func:`progress` returns how many records
a connector's tasks received and when the first and the latest batch arrived.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

from cdk.api import SinkConnector, SinkRecord, SinkTask, Task
from cdk.config import ConfigDef

__all__ = ["CountingSinkConnector", "CountingSinkTask", "Progress", "progress"]


@dataclass
class Progress:
    """Records received by one connector's tasks, and the monotonic times of the first/last."""

    count: int = 0
    first: float | None = None
    last: float | None = None


_PROGRESS: dict[str, Progress] = {}
_LOCK = threading.Lock()


def progress(connector: str) -> Progress:
    """A snapshot of what ``connector``'s tasks received so far."""
    with _LOCK:
        p = _PROGRESS.get(connector, Progress())
        return Progress(p.count, p.first, p.last)


class CountingSinkConnector(SinkConnector):
    """Every task counts the records ``put`` hands it, and does nothing else."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return "1.0.0-test"

    def config(self) -> ConfigDef:
        return ConfigDef()

    def start(self, props: dict[str, str]) -> None:
        self._props = dict(props)

    def task_class(self) -> type[Task]:
        return CountingSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props) for _ in range(max_tasks)]

    def stop(self) -> None:
        self._props = {}


class CountingSinkTask(SinkTask):
    """Counts records under the connector's name."""

    def version(self) -> str:
        return "1.0.0-test"

    def start(self, props: dict[str, str]) -> None:
        self._name = props.get("name", "")

    def put(self, records: Sequence[SinkRecord]) -> None:
        if not records:
            return
        now = time.monotonic()
        with _LOCK:
            p = _PROGRESS.setdefault(self._name, Progress())
            if p.first is None:
                p.first = now
            p.count += len(records)
            p.last = now

    def stop(self) -> None:
        pass
