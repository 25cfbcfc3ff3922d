"""Zombie fencing of exactly-once source tasks (KIP-618), done by the leading driver.

Before a new generation of a source connector's tasks starts with exactly-once support, every
transactional producer of the generation before is fenced, so that a task of that generation
which is only frozen (a worker that hangs, a lost executor that comes back) can commit nothing
when it wakes up. Kafka's leader does it with ``Admin.fenceProducers``; librdkafka has no such
call, so the leader initialises a producer of each transactional id instead, which bumps the
id's epoch exactly as ``fenceProducers`` does (both send ``InitProducerId``). The leader then
writes the connector's task-count record (``tasks-fencing-<name>``, Kafka's format) in the
config topic, saying how many tasks the new generation has: the next round fences that many.

As in Kafka: a connector seen for the first time (no task-count record) has nothing to fence;
when both the last and the new generation have one task, the new task's own
``init_transactions`` fences the old one, so only the record is written.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from cdk.errors import ConnectException

__all__ = ["fence_producers", "producers_to_fence"]

log = logging.getLogger("cdk.runtime.distributed.fencing")


def producers_to_fence(
    group_id: str, connector: str, task_count_record: int | None, task_count: int
) -> list[str]:
    """The transactional ids to fence before ``connector``'s new generation starts."""
    if task_count_record is None or (task_count_record == 1 and task_count == 1):
        return []
    return [f"{group_id}-{connector}-{task}" for task in range(task_count_record)]


def fence_producers(
    transactional_ids: Iterable[str], client_config: Mapping[str, Any], timeout_s: float = 30.0
) -> None:
    """Fence every producer of ``transactional_ids`` (an ``InitProducerId`` for each).

    Raises:
        ConnectException: a producer could not be fenced in ``timeout_s``.
    """
    from cdk.kafka import new_producer

    for transactional_id in transactional_ids:
        producer = new_producer(
            {
                **client_config,
                "transactional.id": transactional_id,
                "enable.idempotence": True,
                "acks": "all",
            }
        )
        try:
            producer.init_transactions(timeout_s)
        except Exception as exc:
            raise ConnectException(
                f"Failed to fence the producer of transactional id {transactional_id}: {exc}"
            ) from exc
        finally:
            producer.flush(0)
        log.info("Fenced the producers of transactional id %s", transactional_id)
