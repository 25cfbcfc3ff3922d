"""On an executor: what the config and status topics say about a running generation.

A Spark task learns how its generation ends from Kafka, as the contract of
:mod:`cdk.runtime.distributed._placement` describes: it reads the config topic from just after its
generation's ``commit-<name>`` record, and the status topic from the end offsets the driver read
when it launched the job (an ``UNASSIGNED`` connector status there ends the generation when its
``generation`` is at least the task's). :class:`GenerationWatcher` turns those records into
:class:`Signal` values: a new target state to pause or resume, or the reason the generation ended.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass
from typing import Any

from cdk.errors import ConnectException
from cdk.runtime._status import State, TargetState
from cdk.runtime.storage._cluster_records import decode_config, decode_status
from cdk.spark._spec import TaskSpec

__all__ = ["GenerationWatcher", "Signal"]

log = logging.getLogger("cdk.spark.executor")

_OFFSET_BEGINNING = -2


@dataclass(frozen=True)
class Signal:
    """What one record of the state topics means for the generation.

    Attributes:
        target: a new target state for the running task (``PAUSED``/``STARTED``), or ``None``.
        end: why the generation ended (``None`` while it goes on).
    """

    target: TargetState | None = None
    end: str | None = None


class GenerationWatcher:
    """Reads the config topic after the generation's commit and the status topic after launch.

    Args:
        spec: the generation.
        client_config: librdkafka settings for the consumer (``bootstrap.servers`` and security).
        timeout_s: how long catching up with the topics may take.
    """

    def __init__(self, spec: TaskSpec, client_config: dict[str, Any], timeout_s: float = 30.0):
        from confluent_kafka import TopicPartition

        from cdk.kafka import new_consumer

        self._spec = spec
        self._timeout_s = timeout_s
        self._consumer = new_consumer(
            {
                **client_config,
                "group.id": f"cdk-spark-watch-{os.getpid()}-{id(self)}",
                "enable.auto.commit": False,
                "enable.auto.offset.store": False,
                "isolation.level": "read_committed",
                "fetch.wait.max.ms": 100,
            }
        )
        assignment = [TopicPartition(spec.config_topic, 0, spec.generation + 1)]
        for partition, offset in sorted(spec.status_offsets.items()):
            assignment.append(TopicPartition(spec.status_topic, partition, offset))
        self._assignment = assignment
        self._consumer.assign(assignment)
        #: the latest target state read (starts with the generation's)
        self.target = TargetState(spec.target_state)
        #: why the generation ended, once it did
        self.ended: str | None = None

    def catch_up(self) -> None:
        """Read both topics up to their ends now (so a retried task sees what it missed).

        Raises:
            ConnectException: the topics cannot be read in time.
        """
        consumer = self._consumer
        ends: dict[tuple[str, int], int] = {}
        for tp in self._assignment:
            try:
                _low, high = consumer.get_watermark_offsets(tp, timeout=self._timeout_s)
            except Exception as exc:
                raise ConnectException(
                    f"Could not read the end offsets of topic {tp.topic}: {exc}"
                ) from exc
            start = tp.offset if tp.offset >= 0 else 0
            if high > start:
                ends[(tp.topic, tp.partition)] = high
        positions = dict.fromkeys(ends, -1)
        deadline = time.monotonic() + self._timeout_s
        while any(positions[k] < end for k, end in ends.items()):
            if time.monotonic() > deadline:
                raise ConnectException(
                    f"Timed out reading the config topic {self._spec.config_topic} and the "
                    f"status topic {self._spec.status_topic} of connector {self._spec.connector}"
                )
            for message in consumer.consume(num_messages=500, timeout=0.2):
                self._apply(message)
                key = (message.topic(), message.partition())
                if key in positions and message.error() is None:
                    positions[key] = max(positions[key], (message.offset() or 0) + 1)

    def poll(self, timeout_s: float) -> Signal | None:
        """The next signal within ``timeout_s``, or ``None`` when nothing relevant arrived."""
        deadline = time.monotonic() + timeout_s
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            message = self._consumer.poll(remaining)
            if message is None:
                return None
            signal = self._apply(message)
            if signal is not None:
                return signal

    def _apply(self, message: Any) -> Signal | None:
        if message.error() is not None:
            log.debug("Watcher of %s: %s", self._spec.connector, message.error())
            return None
        raw_key = message.key()
        if raw_key is None:
            return None
        key = raw_key.decode("utf-8", "replace")
        try:
            if message.topic() == self._spec.config_topic:
                signal = self._config_signal(key, message.value(), message.offset())
            else:
                signal = self._status_signal(key, message.value())
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("Skipping a malformed record %r of topic %s: %s", key, message.topic(), exc)
            return None
        if signal is not None:
            if signal.target is not None:
                self.target = signal.target
            if signal.end is not None and self.ended is None:
                self.ended = signal.end
        return signal

    def _config_signal(self, key: str, value: bytes | None, offset: int) -> Signal | None:
        record = decode_config(key, value)
        name = self._spec.connector
        if record.connector != name:
            return None
        if record.kind == "commit" and offset > self._spec.generation:
            return Signal(end=f"new task configs were committed at offset {offset}")
        if record.kind == "connector" and record.properties is None:
            return Signal(end="the connector was deleted")
        if record.kind == "target-state" and record.target_state is not None:
            if record.target_state is TargetState.STOPPED:
                return Signal(end="the connector was stopped")
            return Signal(target=record.target_state)
        return None

    def _status_signal(self, key: str, value: bytes | None) -> Signal | None:
        record = decode_status(key, value)
        if record.kind != "connector" or record.connector != self._spec.connector:
            return None
        if (
            record.status is not None
            and record.status.state is State.UNASSIGNED
            and record.generation >= self._spec.generation
        ):
            return Signal(end=f"the herder ({record.status.worker_id}) unassigned the connector")
        return None

    def close(self) -> None:
        """Close the consumer."""
        try:
            self._consumer.close()
        except Exception:
            log.debug("Closing the watcher's consumer failed", exc_info=True)
