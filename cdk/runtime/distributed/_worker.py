"""An in-process distributed driver: the stores on Kafka topics, the herder, the REST API.

``cdk distributed`` runs one; tests and harnesses embed one::

    with DistributedWorker({"bootstrap.servers": bootstrap,
                            "group.id": "connect",
                            "config.storage.topic": "connect-configs",
                            "offset.storage.topic": "connect-offsets",
                            "status.storage.topic": "connect-status",
                            "key.converter": "JsonConverter",
                            "value.converter": "JsonConverter"},
                           placement=...) as driver:
        driver.herder.create_connector("src", {"connector.class": "MySource", ...})

Several drivers with one ``group.id`` (and so one set of topics) form a cluster: one leads (it
runs the connectors and assigns their tasks), the others stand by and forward writes to it
(:mod:`._herder`). Each
driver's :class:`~cdk.runtime.distributed._placement.TaskPlacement` hosts workers, and the
leader assigns tasks to the workers of every driver: :func:`cdk.spark.distributed_worker` (and
``cdk distributed``) give the Spark one, on ``spark.master``. Nothing here imports
:mod:`cdk.spark`: Spark depends on the runtime, never the other way.
"""

from __future__ import annotations

import logging
import os
import socket
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from cdk.errors import ConnectException
from cdk.runtime._worker import Worker
from cdk.runtime.distributed._assignments import AssignmentLog
from cdk.runtime.distributed._config import DistributedConfig
from cdk.runtime.distributed._herder import DistributedHerder
from cdk.runtime.distributed._placement import TaskPlacement, worker_spec
from cdk.runtime.isolation._plugin_path import (
    PLUGIN_PATH_CONFIG,
    check_requirements,
    install_plugin_path,
    plugin_distributions,
)
from cdk.runtime.isolation._plugins import ENTRY_POINT_GROUP, Plugins
from cdk.runtime.rest._server import RestServer
from cdk.runtime.standalone._worker import InProcessWorker
from cdk.runtime.storage._config_store import KafkaConfigBackingStore
from cdk.runtime.storage._kafka_offset_store import KafkaOffsetBackingStore
from cdk.runtime.storage._status_store import KafkaStatusBackingStore

__all__ = ["DistributedWorker", "PlacementFactory"]

log = logging.getLogger("cdk.runtime.distributed")

#: Makes the task placement of a driver from its configuration and plugins, when it starts.
PlacementFactory = Callable[[DistributedConfig, Plugins], TaskPlacement]

#: How long a starting driver waits, beyond the session timeout, for a leader to be known.
LEADER_WAIT_S = 30.0

NO_PLACEMENT = (
    "This distributed driver has no task placement. Distributed mode runs connector tasks on "
    "Spark: start the driver with cdk.spark.distributed_worker(worker_props) (or `cdk "
    "distributed`), or pass placement= to DistributedWorker"
)


class DistributedWorker(InProcessWorker):
    """A distributed-mode driver running in this process.

    Args:
        worker_props: the worker properties (as in ``connect-distributed.properties``, plus
            ``spark.*`` keys).
        placement: where this driver's workers run, or a factory that makes it from the config
            and plugins when the driver starts (:func:`cdk.spark.distributed_worker` passes the
            Spark one).
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
        placement: TaskPlacement | PlacementFactory | None = None,
        rest: bool = True,
        plugins: Plugins | None = None,
        extra_plugins: Iterable[type] = (),
        cluster_id_timeout: float = 10.0,
    ) -> None:
        install_plugin_path(worker_props.get(PLUGIN_PATH_CONFIG))  # before any discovery
        self.plugins = plugins if plugins is not None else Plugins(extra_plugins)
        self.config: DistributedConfig = DistributedConfig(worker_props, plugins=self.plugins)
        # every plugin's declared requirements hold, before any connector or task runs
        check_requirements(plugin_distributions(ENTRY_POINT_GROUP))
        self._placement: TaskPlacement | None = None
        self._placement_factory: PlacementFactory | None = None
        if placement is None or hasattr(placement, "close"):
            self._placement = placement  # type: ignore[assignment]
        else:
            self._placement_factory = placement
        self._rest_enabled = rest
        self._cluster_id_timeout = cluster_id_timeout
        self.rest: RestServer | None = None
        config = self.config
        overrides = config.storage_client_overrides()
        partitions, rf = config.storage_settings("offset")
        self.offset_store = KafkaOffsetBackingStore(
            config.offset_topic,
            config.bootstrap_servers,
            overrides,
            partitions=partitions,
            replication_factor=rf,
            transactional=config.exactly_once_source_enabled,
        )
        partitions, rf = config.storage_settings("status")
        self.status = KafkaStatusBackingStore(
            config.status_topic,
            config.bootstrap_servers,
            overrides,
            partitions=partitions,
            replication_factor=rf,
        )
        _, rf = config.storage_settings("config")
        self.config_store = KafkaConfigBackingStore(
            config.config_topic, config.bootstrap_servers, overrides, replication_factor=rf
        )
        self.assignments = AssignmentLog(
            config.assignment_topic, config.bootstrap_servers, overrides, replication_factor=rf
        )
        self.driver_id = ""
        self._worker: Worker | None = None
        self._herder: DistributedHerder | None = None
        self._placement_started = False
        self._started: list[Callable[[], None]] = []

    @property
    def herder(self) -> DistributedHerder:
        """The herder (create connectors through it)."""
        if self._herder is None:
            raise ConnectException("The distributed worker is not started")
        return self._herder

    @property
    def placement(self) -> TaskPlacement | None:
        """Where this driver's workers run (``None`` before :meth:`start` without one)."""
        return self._placement

    @property
    def leading(self) -> bool:
        """Whether this driver leads its cluster now."""
        return self._herder is not None and self._herder.leading

    def start(self) -> DistributedWorker:
        """Start the stores, the herder, the workers, the election and the REST API.

        Raises:
            ConnectException: the cluster or a topic cannot be used, the REST port cannot be
                bound, or there is no task placement (or it cannot be made).
        """
        try:
            placement = self._placement
            if placement is None:
                if self._placement_factory is None:
                    raise ConnectException(NO_PLACEMENT)
                placement = self._placement = self._placement_factory(self.config, self.plugins)
            if self._rest_enabled:
                self.rest = RestServer.from_config(self.config)
                self.rest.bind()
            self.driver_id = self._driver_id()
            for store in (self.status, self.config_store, self.assignments):
                store.start()
                self._started.append(store.stop)
            self.assignments.publish_driver(self.driver_id, stopped=False)
            self._worker = Worker(
                self.config, self.plugins, self.offset_store, self.status, worker_id=self.driver_id
            )
            self._worker.start()
            self._herder = DistributedHerder(
                self._worker,
                self.config,
                self.plugins,
                self.status,
                self.offset_store,
                self.config_store,
                self.assignments,
                driver_id=self.driver_id,
                url=self.rest.url if self.rest is not None else None,
                kafka_cluster_id=self._cluster_id(),
            )
            self._herder.start()
            placement.start(worker_spec(self.config, self.driver_id, self.plugins))
            self._placement_started = True
            if self.rest is not None:
                self.rest.start(self._herder)
            # writes are answered once a leader is known (this driver, or another one)
            wait_s = self.config.session_timeout_ms / 1000.0 + LEADER_WAIT_S
            if not self.await_leader(wait_s):
                log.warning(
                    "No driver of group %s took the lead within %.0f s; writes are refused "
                    "(409) until one does",
                    self.config.group_id,
                    wait_s,
                )
        except BaseException:
            self.stop()
            raise
        log.info(
            "Distributed driver %s started (group %s, %s worker(s) on %s)%s",
            self.driver_id,
            self.config.group_id,
            placement.workers() if placement.workers() is not None else "?",
            self.config.spark_master,
            f"; REST API at {self.rest_url}" if self.rest is not None else "",
        )
        return self

    def await_leader(self, timeout_s: float = 60.0) -> bool:
        """Wait until some driver of the cluster leads (this one or another); whether one does."""
        deadline = time.monotonic() + timeout_s
        herder = self.herder
        while time.monotonic() < deadline:
            if herder.leader_known():
                return True
            time.sleep(0.05)  # polling the election's outcome
        return False

    def stop(self) -> None:
        """Stop the REST API, resign if leading, stop this driver's workers and the stores."""
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
        if self._placement_started and self.driver_id:
            try:
                self.assignments.publish_driver(self.driver_id, stopped=True)
            except ConnectException:
                log.exception("Could not tell this driver's workers to stop")
        if self._placement is not None and (
            self._placement_started or self._placement_factory is None
        ):
            try:
                self._placement.close(self.config.task_shutdown_timeout_ms / 1000.0 + 10.0)
            except Exception:
                log.exception("Failed to close the task placement")
        self._placement_started = False
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.stop()
        while self._started:
            closer = self._started.pop()
            try:
                closer()
            except Exception:
                log.exception("Failed to stop a store")

    def _driver_id(self) -> str:
        if self.rest is not None:
            return self._worker_id()
        return f"{socket.gethostname()}:{os.getpid()}-{uuid.uuid4().hex[:6]}"

    def __repr__(self) -> str:
        return f"DistributedWorker(driver={self.driver_id!r}, rest_url={self.rest_url!r})"
