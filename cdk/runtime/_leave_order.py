"""Whether a sink's tasks must leave their consumer group one at a time, and in what order.

Kafka's group coordinator handles a member that leaves in any state of the group, the leader
too, so a worker stops all of a sink's tasks at once. The embedded broker, Tansu 0.6, does not:
when the group's leader leaves while the group re-forms, Tansu keeps the departed leader, and the
next member to join waits for that leader's assignment for ever. On such a broker the tasks of
one sink leave one at a time, each after the group has re-formed around the ones that stay,
which costs a rebalance per task.

``sink.tasks.leave.mode`` picks: ``sequential`` or ``concurrent`` force it; ``auto`` (the
default) asks the cluster once. A broker that describes Kafka's group coordinator settings
(``group.initial.rebalance.delay.ms`` among its configs, as every Kafka broker does) runs Kafka's
coordinator: concurrent. Any other answer, Tansu's empty broker config included, or no answer
(no ``DESCRIBE_CONFIGS`` permission, a broker that does not answer in time): sequential, which
is correct on every broker, only slower.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

__all__ = [
    "KAFKA_COORDINATOR_CONFIG",
    "LEAVE_MODES",
    "LeaveDecision",
    "decide_leave_mode",
    "probe_broker",
]

log = logging.getLogger("cdk.runtime.worker")

AUTO = "auto"
SEQUENTIAL = "sequential"
CONCURRENT = "concurrent"
LEAVE_MODES = (AUTO, SEQUENTIAL, CONCURRENT)
#: A broker setting of Kafka's group coordinator that every Kafka broker describes.
KAFKA_COORDINATOR_CONFIG = "group.initial.rebalance.delay.ms"
#: How long the probe waits for the cluster's answer.
PROBE_TIMEOUT_S = 5.0


class LeaveDecision:
    """Whether sink tasks leave one at a time, and why (for the log).

    Args:
        sequential: True when the tasks of one sink leave one at a time.
        reason: what decided it, in words.
        final: False when the cluster could not be asked (ask again next time).
    """

    __slots__ = ("final", "reason", "sequential")

    def __init__(self, sequential: bool, reason: str, *, final: bool = True) -> None:
        self.sequential = sequential
        self.reason = reason
        self.final = final

    def __repr__(self) -> str:
        return (
            f"LeaveDecision(sequential={self.sequential}, reason={self.reason!r}, "
            f"final={self.final})"
        )


def probe_broker(admin_props: Mapping[str, Any], timeout: float = PROBE_TIMEOUT_S) -> LeaveDecision:
    """Ask one broker of the cluster for its configs and decide from them.

    Never raises: a cluster that cannot be asked gets the sequential order, which is safe.
    """
    from confluent_kafka.admin import ConfigResource, ResourceType  # type: ignore[attr-defined]

    from cdk.kafka import new_admin

    try:
        admin = new_admin(dict(admin_props))
        metadata = admin.list_topics(timeout=timeout)
        if not metadata.brokers:
            return LeaveDecision(True, "the cluster's metadata lists no broker")
        broker = min(metadata.brokers)
        resource = ConfigResource(ResourceType.BROKER, str(broker))
        futures = admin.describe_configs([resource], request_timeout=timeout)
        configs = futures[resource].result(timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - any failure gets the safe order
        return LeaveDecision(
            True,
            f"the cluster's broker configs could not be read ({type(exc).__name__}: {exc})",
            final=False,
        )
    if KAFKA_COORDINATOR_CONFIG in configs:
        return LeaveDecision(
            False,
            f"broker {broker} runs Kafka's group coordinator (it describes "
            f"{KAFKA_COORDINATOR_CONFIG})",
        )
    return LeaveDecision(
        True,
        f"broker {broker} does not describe Kafka's group coordinator setting "
        f"{KAFKA_COORDINATOR_CONFIG} ({len(configs)} broker configs; the embedded Tansu "
        "describes none), so it may keep a departed group leader",
    )


def decide_leave_mode(mode: str, admin_props: Mapping[str, Any]) -> LeaveDecision:
    """The decision for ``sink.tasks.leave.mode`` = ``mode`` (``auto`` probes the cluster)."""
    if mode == SEQUENTIAL:
        return LeaveDecision(True, "sink.tasks.leave.mode=sequential")
    if mode == CONCURRENT:
        return LeaveDecision(False, "sink.tasks.leave.mode=concurrent")
    return probe_broker(admin_props)
