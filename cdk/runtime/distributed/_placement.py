"""Where distributed mode's workers run: the contract between a driver and what hosts them.

A driver does not run connector tasks. Its :class:`TaskPlacement` keeps **workers** running
elsewhere, each a :class:`~cdk.runtime.distributed._cluster_worker.ClusterWorker` that runs many
connector tasks as threads, as a Kafka Connect worker does. The Spark placement
(:mod:`cdk.spark`) hosts them as long-lived Spark tasks on the executors; tests host them as
threads. The leading driver assigns connector tasks to the live workers of every driver of the
cluster through the assignments topic; nothing about a connector (create, reconfigure, pause,
stop, delete, restart) goes through the placement, so it launches nothing per change.

A placement starts its workers from a :class:`WorkerSpec` and keeps them running: a worker that
ends (a lost executor, a crash) is started again where the host can. It stops them when the
driver stops: the driver writes its stop to the assignments topic, its workers stop their tasks
gracefully (committing offsets) and end.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from cdk.runtime.distributed._config import DistributedConfig
    from cdk.runtime.isolation._plugins import Plugins

__all__ = ["TaskPlacement", "WorkerSpec", "class_path", "worker_spec"]


@dataclass(frozen=True)
class WorkerSpec:
    """What a host needs to run a driver's workers (plain data: it is shipped to executors).

    Attributes:
        driver: the driver's id (its workers stop when it writes its stop).
        worker_props: the distributed worker properties without the ``spark.*`` keys.
        extra_plugins: import paths of plugin classes registered in the driver beyond the
            installed ones (the workers register them too).
        python_path: folders the workers add to ``sys.path`` (where those classes live).
    """

    driver: str
    worker_props: Mapping[str, str]
    extra_plugins: tuple[str, ...] = ()
    python_path: tuple[str, ...] = field(default=())


class TaskPlacement(Protocol):
    """Hosts a driver's workers (the Spark placement: long-lived Spark tasks)."""

    def start(self, spec: WorkerSpec) -> None:
        """Start hosting workers for ``spec`` and return at once."""

    def workers(self) -> int | None:
        """How many workers it keeps running (``None`` when unknown), for the log."""

    def close(self, timeout_s: float) -> None:
        """Wait up to ``timeout_s`` for the workers to end (their driver wrote its stop), stop."""


def class_path(cls: type) -> str:
    """``module:QualName`` of a class (what :func:`cdk.config.load_class` reads back)."""
    return f"{cls.__module__}:{cls.__qualname__}"


def _plain(value: Any) -> str:
    if isinstance(value, type):
        return class_path(value)
    if isinstance(value, (list, tuple)):
        return ",".join(class_path(v) if isinstance(v, type) else str(v) for v in value)
    return str(value)


def worker_spec(config: DistributedConfig, driver: str, plugins: Plugins) -> WorkerSpec:
    """The spec of ``driver``'s workers: its properties as strings, without ``spark.*`` keys.

    Plugin classes given as classes become their import paths, and the driver's ``sys.path``
    goes along, so that connectors importable in the driver (a project checkout, a test
    folder) import in the workers too.
    """
    props = {
        str(k): _plain(v) for k, v in config.originals().items() if not str(k).startswith("spark.")
    }
    return WorkerSpec(
        driver=driver,
        worker_props=props,
        extra_plugins=tuple(class_path(c) for c in plugins.extra),
        python_path=tuple(sys.path),
    )
