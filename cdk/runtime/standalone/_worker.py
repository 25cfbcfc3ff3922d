"""An in-process standalone worker: plugins, offsets, statuses, worker, herder and REST API.

``cdk standalone`` runs one; tests and harnesses embed one::

    with EmbeddedWorker({"bootstrap.servers": bootstrap,
                         "key.converter": "JsonConverter",
                         "value.converter": "JsonConverter"}, rest=False) as worker:
        worker.herder.create_connector("src", {"connector.class": "MySource", ...})
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from typing_extensions import Self

from cdk.errors import ConnectException
from cdk.runtime._status import StatusStore
from cdk.runtime._worker import Worker
from cdk.runtime._worker_config import (
    REST_ADVERTISED_HOST_NAME_CONFIG,
    REST_ADVERTISED_PORT_CONFIG,
    WorkerConfig,
)
from cdk.runtime.isolation._plugin_path import (
    PLUGIN_PATH_CONFIG,
    check_requirements,
    install_plugin_path,
    plugin_distributions,
)
from cdk.runtime.isolation._plugins import ENTRY_POINT_GROUP, Plugins
from cdk.runtime.metrics._values import MetricsSnapshot
from cdk.runtime.rest._server import RestServer
from cdk.runtime.standalone._herder import StandaloneHerder
from cdk.runtime.storage._file_offset_store import FileOffsetBackingStore
from cdk.runtime.storage._offset_store import MemoryOffsetBackingStore, OffsetBackingStore

__all__ = ["EmbeddedWorker", "InProcessWorker"]

log = logging.getLogger("cdk.runtime.standalone")


class InProcessWorker:
    """What the standalone and the distributed in-process workers share (REST, ids, metrics)."""

    config: WorkerConfig
    rest: RestServer | None
    _worker: Worker | None
    _cluster_id_timeout: float

    # ------------------------------------------------------------------ accessors
    @property
    def worker(self) -> Worker:
        """The worker running the connectors and tasks."""
        if self._worker is None:
            raise ConnectException("The embedded worker is not started")
        return self._worker

    def metrics(self) -> MetricsSnapshot:
        """Kafka Connect's worker, connector and task metrics now (what ``GET /metrics`` shows).

        Example::

            worker.metrics().value(
                "sink-task-metrics", "sink-record-read-total", connector="s", task=0
            )

        Raises:
            ConnectException: the worker is not started.
        """
        return self.worker.metrics.snapshot()

    @property
    def rest_url(self) -> str | None:
        """The REST API's base URL, ``None`` without REST."""
        return None if self.rest is None else self.rest.url

    # ------------------------------------------------------------------ lifecycle
    def _worker_id(self) -> str:
        host = self.config.get(REST_ADVERTISED_HOST_NAME_CONFIG)
        port = self.config.get(REST_ADVERTISED_PORT_CONFIG)
        if self.rest is not None:
            return f"{host or self.rest.host}:{port or self.rest.port}"
        _scheme, listen_host, listen_port = self.config.listener()
        return f"{host or listen_host}:{port or listen_port}"

    def _cluster_id(self) -> str | None:
        if self._cluster_id_timeout <= 0:
            return None
        from cdk.kafka import BrokerUnreachableException, check_connection
        from cdk.kafka._clients import UNREACHABLE_WARNINGS

        try:
            return check_connection(self.config.admin_props(), self._cluster_id_timeout)
        except BrokerUnreachableException as exc:
            # the same (rate-limited) report as the tasks' clients give while it stays down
            detail = f"could not read the Kafka cluster id, {exc.detail}"
            UNREACHABLE_WARNINGS.report(exc.bootstrap_servers, detail)
            return None
        except ConnectException as exc:
            log.warning("Could not read the Kafka cluster id: %s", exc)
            return None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def start(self) -> Self:
        """Start the worker; return self."""
        raise NotImplementedError

    def stop(self) -> None:
        """Stop the worker."""
        raise NotImplementedError


class EmbeddedWorker(InProcessWorker):
    """A standalone Kafka Connect worker running in this process.

    Args:
        worker_props: the worker properties (as in ``connect-standalone.properties``).
        rest: serve the REST API (on ``listeners``; port 0 picks a free port).
        plugins: the plugin registry (default: built-ins and ``cdk.plugins`` entry points).
        extra_plugins: more plugin classes to register (when ``plugins`` is not given).
        cluster_id_timeout: seconds to wait for the broker's cluster id at start (0: skip).

    Raises:
        ConfigException: the worker properties are invalid (names the key).
    """

    def __init__(
        self,
        worker_props: Mapping[str, Any],
        *,
        rest: bool = True,
        plugins: Plugins | None = None,
        extra_plugins: Iterable[type] = (),
        cluster_id_timeout: float = 10.0,
    ) -> None:
        install_plugin_path(worker_props.get(PLUGIN_PATH_CONFIG))  # before any discovery
        self.plugins = plugins if plugins is not None else Plugins(extra_plugins)
        self.config = WorkerConfig(worker_props, plugins=self.plugins)
        # every plugin's declared requirements hold, before any connector or task runs
        check_requirements(plugin_distributions(ENTRY_POINT_GROUP))
        self._rest_enabled = rest
        self._cluster_id_timeout = cluster_id_timeout
        self.rest: RestServer | None = None
        self.status = StatusStore()
        self.offset_store: OffsetBackingStore = (
            FileOffsetBackingStore(self.config.offset_file)
            if self.config.offset_file
            else MemoryOffsetBackingStore()
        )
        self._worker: Worker | None = None
        self._herder: StandaloneHerder | None = None

    # ------------------------------------------------------------------ accessors
    @property
    def herder(self) -> StandaloneHerder:
        """The herder (create connectors through it)."""
        if self._herder is None:
            raise ConnectException("The embedded worker is not started")
        return self._herder

    def start(self) -> EmbeddedWorker:
        """Start the worker, the herder and (optionally) the REST API; return self.

        Raises:
            ConnectException: the REST port cannot be bound, or the offset store fails.
        """
        try:
            if self._rest_enabled:
                self.rest = RestServer.from_config(self.config)
                self.rest.bind()
            worker_id = self._worker_id()
            self._worker = Worker(
                self.config, self.plugins, self.offset_store, self.status, worker_id=worker_id
            )
            self._worker.start()
            self._herder = StandaloneHerder(
                self._worker,
                self.config,
                self.plugins,
                self.status,
                self.offset_store,
                worker_id=worker_id,
                kafka_cluster_id=self._cluster_id(),
            )
            self._herder.start()
            if self.rest is not None:
                self.rest.start(self._herder)
        except BaseException:
            self.stop()
            raise
        log.info(
            "Standalone worker %s started%s",
            worker_id,
            f"; REST API at {self.rest_url}" if self.rest is not None else "",
        )
        return self

    def stop(self) -> None:
        """Stop the REST API, every connector and task (final offset commit), and the worker."""
        if self.rest is not None:
            try:
                self.rest.stop()
            except Exception:
                log.exception("Failed to stop the REST API")
        herder, self._herder = self._herder, None
        if herder is not None:
            try:
                herder.stop()
            except Exception:
                log.exception("Failed to stop the herder")
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.stop()

    def __repr__(self) -> str:
        return f"EmbeddedWorker(rest_url={self.rest_url!r})"
