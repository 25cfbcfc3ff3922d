"""Driving the Spark placement without a herder: the state topics written and read directly."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

from cdk.kafka import create_topics
from cdk.runtime._status import ConnectorTaskId, Status, TargetState
from cdk.runtime.distributed._placement import TaskGeneration
from cdk.runtime.storage._cluster_records import (
    commit_key,
    connector_key,
    decode_status,
    encode_commit,
    encode_properties,
    encode_status,
    encode_target_state,
    status_connector_key,
    target_state_key,
    task_key,
)
from tests._wait import wait_until
from tests.integration._support import JSON, unique


def worker_props(bootstrap: str, **extra: str) -> dict[str, str]:
    """Distributed worker properties with fresh state topics."""
    props = {
        "bootstrap.servers": bootstrap,
        "group.id": unique("cluster"),
        "config.storage.topic": unique("configs"),
        "offset.storage.topic": unique("offsets"),
        "status.storage.topic": unique("status"),
        "offset.storage.partitions": "3",
        "status.storage.partitions": "3",
        "key.converter": JSON,
        "value.converter": JSON,
        "offset.flush.interval.ms": "300",
        "task.shutdown.graceful.timeout.ms": "10000",
        "consumer.session.timeout.ms": "6000",
        "consumer.heartbeat.interval.ms": "500",
    }
    props.update(extra)
    return props


class StateTopics:
    """Writes config-topic records as a herder would and reads the status topic back."""

    def __init__(self, props: Mapping[str, str]) -> None:
        self.bootstrap = props["bootstrap.servers"]
        self.config_topic = props["config.storage.topic"]
        self.status_topic = props["status.storage.topic"]
        create_topics(self.bootstrap, [self.config_topic], partitions=1)
        create_topics(self.bootstrap, [self.status_topic], partitions=3)
        self._producer = Producer(
            {"bootstrap.servers": self.bootstrap, "partitioner": "murmur2_random"}
        )
        self._statuses: dict[str, Any] = {}
        self._status_reader = _reader(self.bootstrap, self.status_topic)

    def close(self) -> None:
        self._producer.flush(10)
        self._status_reader.close()

    def _write(self, topic: str, key: str, value: bytes | None) -> int:
        offsets: list[int] = []

        def delivered(err: Any, msg: Any) -> None:
            assert err is None, err
            offsets.append(msg.offset())

        self._producer.produce(topic, key=key.encode(), value=value, on_delivery=delivered)
        assert self._producer.flush(10) == 0
        return offsets[0]

    def commit_generation(
        self,
        connector: str,
        connector_config: Mapping[str, str],
        task_configs: list[dict[str, str]],
        target: TargetState = TargetState.STARTED,
    ) -> TaskGeneration:
        """Write the connector, its task configs and the commit; the generation to launch."""
        self._write(
            self.config_topic, connector_key(connector), encode_properties(dict(connector_config))
        )
        for number, config in enumerate(task_configs):
            self._write(
                self.config_topic,
                task_key(ConnectorTaskId(connector, number)),
                encode_properties(config),
            )
        offset = self._write(
            self.config_topic, commit_key(connector), encode_commit(len(task_configs))
        )
        return TaskGeneration(
            connector, offset, dict(connector_config), tuple(task_configs), target
        )

    def target_state(self, connector: str, state: TargetState) -> int:
        return self._write(
            self.config_topic, target_state_key(connector), encode_target_state(state)
        )

    def delete(self, connector: str) -> int:
        return self._write(self.config_topic, connector_key(connector), None)

    def unassign(self, connector: str, generation: int, herder: str = "driver:8083") -> int:
        value = encode_status(_unassigned(herder), generation)
        return self._write(self.status_topic, status_connector_key(connector), value)

    def task_statuses(self, connector: str) -> dict[int, Any]:
        """The latest status record of each task of ``connector`` (decoded)."""
        for msg in self._status_reader.consume(10000, 0.2):
            if msg.error() or msg.key() is None:
                continue
            self._statuses[msg.key().decode()] = decode_status(msg.key().decode(), msg.value())
        out = {}
        for record in self._statuses.values():
            if record.kind == "task" and record.connector == connector and record.status:
                out[record.task.task] = record
        return out

    def _describe(self, connector: str) -> dict[int, tuple[str, str]]:
        current = self.task_statuses(connector)
        return {n: (str(r.status.state), r.status.worker_id) for n, r in current.items()}

    def wait_tasks(
        self, connector: str, states: list[str], timeout: float = 60.0
    ) -> dict[int, Any]:
        """Wait until the tasks' latest statuses are ``states`` (by task number)."""

        def reached() -> dict[int, Any] | None:
            current = self.task_statuses(connector)
            got = [
                str(current[n].status.state) if n in current else None for n in range(len(states))
            ]
            return current if got == states else None

        return wait_until(
            reached,
            timeout,
            0.1,
            lambda: f"tasks of {connector} {states}; last: {self._describe(connector)}",
        )


def _unassigned(herder: str) -> Status:
    from cdk.runtime._status import State

    return Status(State.UNASSIGNED, herder)


def _reader(bootstrap: str, topic: str) -> Consumer:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": unique("status-reader"),
            "enable.auto.commit": False,
        }
    )
    partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
    return consumer


class Listener:
    """Records the placement's ``generation_ended`` calls."""

    def __init__(self) -> None:
        self.ended: list[tuple[str, int, dict[int, str]]] = []
        self._lock = threading.Lock()

    def generation_ended(
        self, connector: str, generation: int, failures: Mapping[int, str]
    ) -> None:
        with self._lock:
            self.ended.append((connector, generation, dict(failures)))

    def wait(self, connector: str, generation: int, timeout: float = 60.0) -> dict[int, str]:
        def found() -> tuple[str, int, dict[int, str]] | None:
            with self._lock:
                return next(
                    (e for e in self.ended if e[0] == connector and e[1] == generation), None
                )

        return wait_until(found, timeout, 0.1, f"generation {generation} of {connector} ended")[2]
