"""A connector's offsets as the REST API lists, alters and resets them.

A source connector's offsets are the entries of the worker's offset store under its name; a
sink connector's are the committed offsets of its consumer group (``connect-<name>`` unless
``consumer.override.group.id`` is set), read and written with an admin client.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from cdk.api import TopicPartition
from cdk.errors import ConnectException, DataException
from cdk.runtime._connector_config_def import NAME_CONFIG
from cdk.runtime._worker_config import WorkerConfig
from cdk.runtime.storage._offset_format import (
    offset_key,
    offset_value,
    parse_offset_key,
    parse_offset_value,
)
from cdk.runtime.storage._offset_store import OffsetBackingStore

__all__ = [
    "SinkGroupOffsets",
    "call_alter",
    "connector_offsets",
    "offsets_message",
    "reset_connector_offsets",
    "write_connector_offsets",
]

log = logging.getLogger("cdk.runtime.offsets")


# --------------------------------------------------------------------------------------------
# Source connectors: the offset store


def _connector_entries(
    store: OffsetBackingStore, connector: str
) -> Iterator[tuple[bytes, dict[str, Any], bytes]]:
    for key, value in store.all().items():
        try:
            name, partition = parse_offset_key(key)
        except DataException as e:
            log.warning("Ignoring an offset key with an unexpected format: %s", e)
            continue
        if name == connector:
            yield key, partition, value


def connector_offsets(store: OffsetBackingStore, connector: str) -> list[dict[str, Any]]:
    """The committed offsets of a source connector, as ``GET /connectors/{name}/offsets`` lists.

    Returns:
        ``[{"partition": {...}, "offset": {...}}, ...]``.
    """
    found: dict[bytes, dict[str, Any]] = {}
    for key, partition, value in _connector_entries(store, connector):
        try:
            offset = parse_offset_value(value)
        except DataException as e:
            log.warning("Ignoring an unreadable offset of connector %s: %s", connector, e)
            continue
        if offset is None:
            continue
        canonical = offset_key(connector, partition)
        # A key written with another field order (by another worker) gives way to ours.
        if canonical in found and key != canonical:
            continue
        found[canonical] = {"partition": partition, "offset": offset}
    return list(found.values())


def write_connector_offsets(
    store: OffsetBackingStore,
    connector: str,
    offsets: Iterable[tuple[Mapping[str, Any], Mapping[str, Any] | None]],
) -> None:
    """Write offsets for a connector at once (``PATCH /connectors/{name}/offsets``).

    A ``None`` offset deletes the partition's offset.

    Raises:
        DataException: a partition or offset is not a map of primitive values.
        ConnectException: the store could not write.
    """
    values: dict[bytes, bytes | None] = {}
    for partition, offset in offsets:
        values[offset_key(connector, partition)] = offset_value(offset)
    store.set(values)


def reset_connector_offsets(store: OffsetBackingStore, connector: str) -> int:
    """Delete every offset of a connector (``DELETE /connectors/{name}/offsets``).

    Returns:
        How many partitions were reset.
    """
    keys = {key: None for key, _partition, _value in _connector_entries(store, connector)}
    if keys:
        store.set(keys)
    return len(keys)


# --------------------------------------------------------------------------------------------
# Sink connectors: the consumer group


class SinkGroupOffsets:
    """The committed offsets of a sink connector's consumer group.

    Each operation uses a new admin client made from the worker's admin settings and the
    connector's ``admin.override.*`` keys.

    Args:
        worker_config: the worker configuration.
        config: the connector's configuration (variables resolved).
    """

    def __init__(self, worker_config: WorkerConfig, config: Mapping[str, str]) -> None:
        self._worker_config = worker_config
        self._config = config

    @property
    def group(self) -> str:
        """The consumer group's id."""
        config = self._config
        return config.get("consumer.override.group.id") or f"connect-{config[NAME_CONFIG]}"

    def _admin(self) -> Any:
        from cdk.kafka import new_admin

        worker = self._worker_config
        props = {**worker.admin_props(), **worker.client_overrides(self._config, "admin")}
        return new_admin(props)

    def offsets(self) -> dict[TopicPartition, int]:
        """The committed offsets, sorted by partition (empty when the group does not exist).

        Raises:
            ConnectException: the offsets could not be read.
        """
        from confluent_kafka import ConsumerGroupTopicPartitions, KafkaException

        admin = self._admin()
        group = self.group
        try:
            futures = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])
            result = futures[group].result(timeout=30)
        except KafkaException as exc:
            text = str(exc)
            if "GROUP_ID_NOT_FOUND" in text or "not found" in text.lower():
                return {}
            raise ConnectException(
                f"Could not read the offsets of consumer group {group}: {exc}"
            ) from exc
        offsets: dict[TopicPartition, int] = {}
        for tp in result.topic_partitions or []:
            if tp.offset is not None and tp.offset >= 0:
                offsets[TopicPartition(tp.topic, tp.partition)] = tp.offset
        return dict(sorted(offsets.items()))

    def delete(self) -> None:
        """Delete the consumer group (nothing happens when it does not exist).

        Raises:
            ConnectException: the group could not be deleted.
        """
        from confluent_kafka import KafkaException

        group = self.group
        admin = self._admin()
        try:
            admin.delete_consumer_groups([group], request_timeout=30)[group].result(timeout=30)
        except KafkaException as exc:
            if "GROUP_ID_NOT_FOUND" not in str(exc) and "not found" not in str(exc).lower():
                raise ConnectException(f"Could not delete consumer group {group}: {exc}") from exc

    def alter(self, offsets: Mapping[TopicPartition, int | None]) -> None:
        """Write ``offsets`` to the group; a ``None`` offset removes the partition's offset.

        Raises:
            ConnectException: the offsets could not be written.
        """
        from confluent_kafka import ConsumerGroupTopicPartitions, KafkaException
        from confluent_kafka import TopicPartition as KafkaTopicPartition

        name = self._config[NAME_CONFIG]
        group = self.group
        to_write = {tp: o for tp, o in offsets.items() if o is not None}
        if any(o is None for o in offsets.values()):
            # confluent-kafka cannot delete single partitions' offsets: rewrite the group without
            # them (the connector is STOPPED, so the group has no members).
            kept = {tp: o for tp, o in self.offsets().items() if tp not in offsets}
            self.delete()
            to_write = {**kept, **to_write}
        if to_write:
            admin = self._admin()
            request = ConsumerGroupTopicPartitions(
                group,
                [
                    KafkaTopicPartition(tp.topic, tp.partition, o)
                    for tp, o in sorted(to_write.items())
                ],
            )
            try:
                admin.alter_consumer_group_offsets([request])[group].result(timeout=30)
            except KafkaException as exc:
                raise ConnectException(
                    f"Failed to alter consumer group offsets for connector {name}: {exc}"
                ) from exc

    def rest_offsets(self) -> list[dict[str, Any]]:
        """The offsets as ``GET /connectors/{name}/offsets`` lists them."""
        return [
            {
                "partition": {"kafka_topic": tp.topic, "kafka_partition": tp.partition},
                "offset": {"kafka_offset": offset},
            }
            for tp, offset in self.offsets().items()
        ]


# --------------------------------------------------------------------------------------------
# The connector's part


def offsets_message(action: str, handled: bool) -> str:
    """The REST answer to altering or resetting offsets (Kafka's two messages)."""
    if handled:
        return f"The offsets for this connector have been {action} successfully"
    return (
        f"The Connect framework-managed offsets for this connector have been {action} "
        "successfully. However, if this connector manages offsets externally, they will need to "
        f"be manually {action} in the system that the connector uses."
    )


def call_alter(name: str, action: str, fn: Callable[[], Any]) -> bool:
    """Call the connector's ``alter_offsets`` (``fn``); whether it handled the offsets itself.

    Raises:
        ConnectException: the connector failed (its exception as the cause).
    """
    try:
        return bool(fn())
    except ConnectException:
        raise
    except Exception as exc:
        raise ConnectException(
            f"Failed to {action} offsets for connector {name}: {type(exc).__name__}: {exc}"
        ) from exc
