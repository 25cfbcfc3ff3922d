"""Checking the values of REST requests before the herder acts on them.

Malformed values raise :class:`BadRequestException`, which the REST API answers with
``400 Bad Request`` and the message.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping
from typing import Any

from cdk.api import TopicPartition
from cdk.errors import ConnectException, DataException
from cdk.runtime._status import TargetState
from cdk.runtime.storage._offset_format import validate_offset_format

__all__ = [
    "BadRequestException",
    "NotLeaderException",
    "parse_initial_state",
    "parse_sink_offsets",
    "parse_source_offsets",
]


class NotLeaderException(ConnectException):
    """A write reached a driver that does not lead; the REST API forwards it to the leader.

    Args:
        leader_url: the leader's REST URL, ``None`` while no leader is known.
    """

    def __init__(self, leader_url: str | None) -> None:
        super().__init__(
            "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"
            if leader_url is None
            else f"This driver does not lead the cluster; the leader is at {leader_url}"
        )
        self.leader_url = leader_url


class BadRequestException(ConnectException):
    """A request the REST API answers with 400 Bad Request (Kafka's ``BadRequestException``)."""


def parse_initial_state(value: TargetState | str | None) -> TargetState | None:
    """The target state a create request asks for (``RUNNING``, ``PAUSED`` or ``STOPPED``).

    Raises:
        BadRequestException: any other value.
    """
    if value is None or isinstance(value, TargetState):
        return value
    text = str(value).strip().upper()
    mapping = {
        "RUNNING": TargetState.STARTED,
        "PAUSED": TargetState.PAUSED,
        "STOPPED": TargetState.STOPPED,
    }
    if text not in mapping:
        raise BadRequestException(
            f"Invalid initial state {value}: must be one of RUNNING, PAUSED, STOPPED"
        )
    return mapping[text]


def _entries(offsets: Iterable[Any]) -> Iterable[tuple[Any, Any]]:
    for entry in offsets:
        if not isinstance(entry, Mapping) or "partition" not in entry:
            raise BadRequestException(
                'Each offset must be an object with a "partition" and an "offset"'
            )
        yield entry["partition"], entry.get("offset")


def parse_source_offsets(
    offsets: Iterable[Any],
) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """The ``(partition, offset)`` pairs of a source connector's offsets request.

    Raises:
        BadRequestException: an entry, partition or offset is malformed.
    """
    pairs: list[tuple[dict[str, Any], dict[str, Any] | None]] = []
    for partition, offset in _entries(offsets):
        if partition is None:
            raise BadRequestException("Source partitions may not be null")
        try:
            validate_offset_format(partition, "Source partitions")
            validate_offset_format(offset, "Source offsets")
        except DataException as exc:
            raise BadRequestException(str(exc)) from exc
        pairs.append((dict(partition), None if offset is None else dict(offset)))
    return pairs


def parse_sink_offsets(offsets: Iterable[Any]) -> dict[TopicPartition, int | None]:
    """The Kafka offsets of a sink connector's offsets request (``None``: reset).

    Raises:
        BadRequestException: an entry, topic, partition or offset is malformed.
    """
    result: dict[TopicPartition, int | None] = {}
    for partition, offset in _entries(offsets):
        if not isinstance(partition, Mapping) or not {"kafka_topic", "kafka_partition"} <= set(
            partition
        ):
            raise BadRequestException(
                "The partition for a sink connector offset must contain the keys 'kafka_topic' "
                f"and 'kafka_partition', but was: {partition}"
            )
        topic, number = partition["kafka_topic"], partition["kafka_partition"]
        if not isinstance(topic, str) or not topic:
            raise BadRequestException("Kafka topic names must be valid strings and may not be null")
        number = _as_int(number, "Kafka partitions must be valid numbers and may not be null")
        value: int | None = None
        if offset is not None:
            if not isinstance(offset, Mapping) or "kafka_offset" not in offset:
                raise BadRequestException(
                    "The offset for a sink connector should either be null or contain the key "
                    f"'kafka_offset', but was: {offset}"
                )
            value = _as_int(offset["kafka_offset"], "Kafka offsets must be valid numbers")
            if value < 0:
                raise BadRequestException(f"Kafka offsets may not be negative, but was: {value}")
        result[TopicPartition(topic, number)] = value
    return result


def _as_int(value: Any, message: str) -> int:
    if isinstance(value, bool):
        raise BadRequestException(message)
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            return int(value)
    raise BadRequestException(message)
