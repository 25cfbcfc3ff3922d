"""What the distributed-mode tests share: worker properties and waiting for states.

``distributed_props`` gives a fresh cluster (its own group and topics) on the session's broker,
with the session timeouts the tests use (a lost worker or leader is noticed in 6 s) and fast
consumer-group joins for the sinks; ``wait_states`` waits for a connector's and its tasks'
states through a driver's herder.
"""

from __future__ import annotations

import uuid
from typing import Any

from cdk.errors import NotFoundException
from cdk.runtime import DistributedWorker
from tests._wait import wait_until
from tests.integration._support import FAST_GROUP, JSON

__all__ = ["distributed_props", "states", "wait_states"]


def distributed_props(
    bootstrap: str, group: str | None = None, *, prefix: str = "dist", **extra: str
) -> dict[str, str]:
    """Distributed worker properties for a cluster of its own (``extra`` keys win)."""
    group = group or f"{prefix}-{uuid.uuid4().hex[:8]}"
    props = {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "config.storage.topic": f"{group}-configs",
        "offset.storage.topic": f"{group}-offsets",
        "status.storage.topic": f"{group}-status",
        "config.storage.replication.factor": "1",
        "offset.storage.replication.factor": "1",
        "status.storage.replication.factor": "1",
        "offset.storage.partitions": "2",
        "status.storage.partitions": "2",
        "key.converter": JSON,
        "value.converter": JSON,
        "offset.flush.interval.ms": "300",
        "task.shutdown.graceful.timeout.ms": "10000",
        "session.timeout.ms": "6000",
        "heartbeat.interval.ms": "500",
        "listeners": "http://127.0.0.1:0",
        **{f"consumer.{k}": v for k, v in FAST_GROUP.items()},
    }
    props.update(extra)
    return props


def states(worker: DistributedWorker, name: str) -> tuple[str, list[str]]:
    """The connector's state and its tasks' (``("", [])`` while it is unknown)."""
    try:
        status = worker.herder.connector_status(name)
    except NotFoundException:
        return ("", [])
    return status["connector"]["state"], [t["state"] for t in status["tasks"]]


def wait_states(
    worker: DistributedWorker, name: str, connector: str, tasks: list[str], timeout: float = 30
) -> dict[str, Any]:
    """Wait until the connector is ``connector`` and its tasks ``tasks``; its status then."""
    wait_until(
        lambda: states(worker, name) == (connector, tasks),
        timeout,
        0.1,
        lambda: f"{name}: {connector} {tasks}, have {states(worker, name)}",
    )
    return worker.herder.connector_status(name)
