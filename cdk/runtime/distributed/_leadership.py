"""The leading driver's side of the herder: the lease, following the topics, standing down.

:class:`Leadership` is the part of :class:`~cdk.runtime.distributed.DistributedHerder` that
decides whether this driver leads (:mod:`._leader`: the lease in the assignments topic, the
fenced writer), follows the config and assignments topics on a thread of its own, takes the lead
when the lease is open (it starts the connectors from the config topic and takes over the
running assignment, so the tasks keep running), renews the lease and rebalances every heartbeat
interval while it leads, and stands down when another driver leads or its writes are fenced.
Standbys keep their view of the connectors in step with the config topic.
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cdk.errors import ConnectException
from cdk.runtime._config_secrets import secret_keys
from cdk.runtime._status import TargetState
from cdk.runtime.distributed._leader import FencedException, TransactionalWriter

if TYPE_CHECKING:
    from cdk.runtime._worker import Worker
    from cdk.runtime.distributed._assignments import AssignmentLog
    from cdk.runtime.distributed._config import DistributedConfig
    from cdk.runtime.distributed._coordinator import Coordinator
    from cdk.runtime.isolation._plugins import Plugins
    from cdk.runtime.storage._config_store import ClusterConfigState, KafkaConfigBackingStore

__all__ = ["Leadership"]

log = logging.getLogger("cdk.runtime.distributed")

#: How long the follower waits for new records before it looks at the clock again.
FOLLOW_S = 0.1


class Leadership:
    """The lease and the follower of a distributed herder (a mixin of its state)."""

    driver_id: str
    url: str | None
    _lock: threading.RLock
    _worker: Worker
    _plugins: Plugins
    _dconfig: DistributedConfig
    _store: KafkaConfigBackingStore
    _assignments: AssignmentLog
    _coordinator: Coordinator
    _configs: dict[str, dict[str, str]]
    _targets: dict[str, TargetState]
    _task_configs: dict[str, list[dict[str, str]]]
    _secret_keys: dict[str, frozenset[str]]
    _generations: dict[str, int]
    _starts: dict[str, concurrent.futures.Future[None]]
    _stopping: bool
    _leading: bool
    _writer: TransactionalWriter | None
    _follow_stop: threading.Event
    _next_check: float
    _renewed: float
    _taking: bool
    _jitter_s: float
    _submit: Callable[[Callable[[], None]], concurrent.futures.Future[None] | None]
    _start_connector: Callable[..., Any]

    @property
    def leading(self) -> bool:
        """Whether this driver leads the cluster now."""
        return self._leading

    @property
    def leader_url(self) -> str | None:
        """The REST URL of the driver that leads (``None`` while unknown)."""
        if self._leading:
            return self.url
        record = self._assignments.leader
        if record is None or record.driver == self.driver_id:
            return None  # this driver's own record, from before it was deposed
        return record.url

    # ------------------------------------------------------------------ the lease
    def deposed(self) -> None:
        """This driver's writes were fenced: stand down on the herder thread."""
        self._submit(self._stand_down)

    def leader_known(self) -> bool:
        """Whether a live driver leads (this one, or one whose lease is current)."""
        if self._leading:
            return True
        record = self._assignments.leader
        return (
            record is not None
            and not record.resigned
            and record.driver != self.driver_id
            and time.monotonic() - record.seen <= self._dconfig.session_timeout_ms / 1000.0
        )

    def _lease_open(self, now: float) -> bool:
        """Whether a standby may take the lead: no leader, it resigned, or its lease lapsed."""
        record = self._assignments.leader
        if record is None or record.resigned or record.driver == self.driver_id:
            return True  # none yet, a clean stop, or this driver's own from before a restart
        lapse = self._dconfig.session_timeout_ms / 1000.0 + self._jitter_s
        return now - record.seen > lapse

    def _take_lead(self) -> None:
        self._taking = False
        if self._leading or self._stopping or not self._lease_open(time.monotonic()):
            return
        writer = TransactionalWriter(
            self._dconfig.transactional_id,
            self._dconfig.admin_props(),
            on_fenced=self.deposed,
        )
        try:
            writer.start()  # fences the previous leader's writes
        except ConnectException:
            log.exception("Driver %s could not take the lead", self.driver_id)
            return
        self._writer = writer
        self._store.use_writer(writer.send)
        self._assignments.use_writer(writer.send)
        try:
            snapshot = self._store.refresh()
            epoch = self._coordinator.take_lead(self.url)
        except FencedException:
            self._stand_down()
            return
        with self._lock:
            self._sync(snapshot)
            self._leading = True
            names = list(self._configs)
        self._renewed = time.monotonic()
        log.info("Driver %s leads the cluster (epoch %d)", self.driver_id, epoch)
        for name in names:
            with self._lock:
                self._start_connector(name)
        self._rebalance()

    def _stand_down(self) -> None:
        if not self._leading and self._writer is None:
            return
        was_leading = self._leading
        self._leading = False
        self._coordinator.stand_down()
        self._store.use_writer(None)
        self._assignments.use_writer(None)
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()
        with self._lock:
            held = self._worker.connector_names()
            self._starts.clear()
        if held:
            self._worker.stop_connectors(sorted(held))
        if was_leading:
            log.info("Driver %s stands by (another driver leads)", self.driver_id)

    # ------------------------------------------------------------------ following the topics
    def _follow(self) -> None:
        """Follow the config and assignments topics: lead, renew the lease, or stand by."""
        heartbeat_s = self._dconfig.heartbeat_interval_ms / 1000.0
        while not self._follow_stop.is_set():
            try:
                changed = self._assignments.poll(FOLLOW_S)
                changed = self._store.poll(0) or changed
            except ConnectException as e:
                log.warning("Driver %s could not read the cluster's topics: %s", self.driver_id, e)
                self._follow_stop.wait(1.0)
                continue
            now = time.monotonic()
            if self._leading:
                record = self._assignments.leader
                if record is not None and record.driver != self.driver_id and not record.resigned:
                    log.warning(
                        "Driver %s reads that driver %s leads (epoch %d): it stands down",
                        self.driver_id,
                        record.driver,
                        record.epoch,
                    )
                    self._submit(self._stand_down)
                elif changed or now >= self._next_check:
                    self._next_check = now + heartbeat_s
                    self._submit(self._tick)
                continue
            if changed:
                self._submit(self._sync_from_topic)
            if not self._taking and self._lease_open(now):
                self._taking = True
                if self._submit(self._take_lead) is None:
                    self._taking = False

    def _tick(self) -> None:
        """The leader's beat: renew the lease when due, then rebalance (herder thread)."""
        if not self._leading or self._stopping:
            return
        now = time.monotonic()
        if now - self._renewed >= self._dconfig.heartbeat_interval_ms / 1000.0:
            try:
                self._coordinator.renew(self.url)
                self._renewed = now
            except FencedException:
                self._stand_down()
                return
            except ConnectException as e:
                log.warning("Driver %s could not renew its lease: %s", self.driver_id, e)
        self._rebalance()

    def _resign(self) -> None:
        """A leader that stops says so, so that a standby takes over at once."""
        if not self._leading:
            return
        try:
            self._coordinator.resign(self.url)
        except ConnectException as e:
            log.warning("Driver %s could not write that it resigns: %s", self.driver_id, e)
        self._stand_down()

    def _sync_from_topic(self) -> None:
        if self._leading:
            return
        snapshot = self._store.snapshot()
        with self._lock:
            self._sync(snapshot)

    def _sync(self, snapshot: ClusterConfigState) -> None:
        """Take the config topic's view (lock held)."""
        for name in [n for n in self._configs if n not in snapshot.connector_configs]:
            for table in (self._configs, self._targets, self._task_configs, self._secret_keys):
                table.pop(name, None)
            self._generations.pop(name, None)
        for name, config in snapshot.connector_configs.items():
            self._configs[name] = dict(config)
            self._targets[name] = snapshot.target_state(name) or TargetState.STARTED
            self._task_configs[name] = snapshot.tasks(name)
            self._secret_keys[name] = secret_keys(self._plugins, config)
            if name in snapshot.generations:
                self._generations[name] = snapshot.generations[name]

    def _rebalance(self) -> None:
        """Publish the next assignment when it changed (leader, herder thread)."""
        if not self._leading or self._stopping:
            return
        try:
            self._coordinator.rebalance()
        except FencedException:
            self._stand_down()
        except ConnectException as e:
            log.warning("Driver %s could not publish an assignment: %s", self.driver_id, e)
