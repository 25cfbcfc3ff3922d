"""The offsets REST operations of the herders (KIP-875): read, alter and reset offsets.

A source connector's offsets are in the worker's offset store (a file, memory or the offsets
topic), a sink's in its consumer group ``connect-<name>``. Altering and resetting need the
connector STOPPED with no tasks, as in Kafka.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from cdk.api import SinkConnector, TopicPartition
from cdk.runtime._connector_config_def import CONNECTOR_CLASS_CONFIG
from cdk.runtime._status import TargetState
from cdk.runtime._worker_config import WorkerConfig
from cdk.runtime.isolation._plugins import Plugins
from cdk.runtime.rest._requests import BadRequestException, parse_sink_offsets, parse_source_offsets
from cdk.runtime.storage._connector_offsets import (
    SinkGroupOffsets,
    call_alter,
    connector_offsets,
    offsets_message,
    reset_connector_offsets,
    write_connector_offsets,
)
from cdk.runtime.storage._offset_store import OffsetBackingStore

__all__ = ["HerderOffsets"]


class HerderOffsets:
    """``GET``/``PATCH``/``DELETE /connectors/{name}/offsets`` over a herder's state."""

    _lock: threading.RLock
    _config: WorkerConfig
    _plugins: Plugins
    _offset_store: OffsetBackingStore
    _targets: dict[str, TargetState]
    _task_configs: dict[str, list[dict[str, str]]]
    _require: Callable[..., dict[str, str]]
    _resolve: Callable[[Mapping[str, str]], dict[str, str]]
    _connector_kind: Callable[[Mapping[str, str]], str]

    def connector_offsets(self, name: str) -> dict[str, Any]:
        """``{"offsets": [{"partition": {...}, "offset": {...}}]}`` (``GET .../offsets``)."""
        with self._lock:
            config = dict(self._require(name))
        if self._connector_kind(config) == "sink":
            return {"offsets": SinkGroupOffsets(self._config, self._resolve(config)).rest_offsets()}
        return {"offsets": connector_offsets(self._offset_store, name)}

    def _require_stopped(self, name: str) -> dict[str, str]:
        config = dict(self._require(name))
        if self._targets[name] is not TargetState.STOPPED or self._task_configs.get(name):
            raise BadRequestException(
                "Connectors must be in the STOPPED state before their offsets can be modified. "
                "This can be done for the specified connector by issuing a 'PUT' request to the "
                f"'/connectors/{name}/stop' endpoint"
            )
        return config

    def alter_connector_offsets(self, name: str, offsets: Any) -> dict[str, str]:
        """Write new offsets for a STOPPED connector (``PATCH .../offsets``).

        Args:
            name: the connector.
            offsets: the request's ``offsets`` list of ``{"partition": ..., "offset": ...}``.

        Raises:
            NotFoundException: no such connector.
            BadRequestException: not STOPPED, or the offsets are malformed.
        """
        if not isinstance(offsets, list) or not offsets:
            raise BadRequestException("The offsets to be altered may not be null or empty")
        with self._lock:
            config = self._resolve(self._require_stopped(name))
            connector = self._plugins.new_connector(config[CONNECTOR_CLASS_CONFIG])
            if isinstance(connector, SinkConnector):
                sink_offsets = parse_sink_offsets(offsets)
                handled = call_alter(
                    name, "alter", lambda: connector.alter_offsets(dict(config), sink_offsets)
                )
                SinkGroupOffsets(self._config, config).alter(sink_offsets)
            else:
                pairs = parse_source_offsets(offsets)
                handled = call_alter(name, "alter", lambda: connector.alter_offsets(config, pairs))  # type: ignore[attr-defined]
                write_connector_offsets(self._offset_store, name, pairs)
        return {"message": offsets_message("altered", handled)}

    def reset_connector_offsets(self, name: str) -> dict[str, str]:
        """Remove every offset of a STOPPED connector (``DELETE .../offsets``)."""
        with self._lock:
            config = self._resolve(self._require_stopped(name))
            connector = self._plugins.new_connector(config[CONNECTOR_CLASS_CONFIG])
            if isinstance(connector, SinkConnector):
                group = SinkGroupOffsets(self._config, config)
                current = group.offsets()
                reset: dict[TopicPartition, int | None] = dict.fromkeys(current)
                handled = call_alter(name, "reset", lambda: connector.alter_offsets(config, reset))
                group.delete()
            else:
                pairs: list[tuple[dict[str, Any], dict[str, Any] | None]] = [
                    (entry["partition"], None)
                    for entry in connector_offsets(self._offset_store, name)
                ]
                source = connector
                handled = call_alter(name, "reset", lambda: source.alter_offsets(config, pairs))  # type: ignore[attr-defined]
                reset_connector_offsets(self._offset_store, name)
        return {"message": offsets_message("reset", handled)}
