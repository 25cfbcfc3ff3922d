from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from cdk import (
    ConfigDef,
    ConnectException,
    Importance,
    OffsetAndMetadata,
    SinkConnector,
    SinkRecord,
    SinkTask,
    SourceConnector,
    SourceRecord,
    SourceTask,
    TopicPartition,
    Type,
    group_partitions,
)
from cdk.api import SinkConnectorContext, SourceConnectorContext

CONFIG = ConfigDef().define("topic", Type.STRING, importance=Importance.HIGH, documentation="t")


class _Source(SourceConnector):
    def start(self, props: dict[str, str]) -> None:
        self.props = props

    def task_class(self) -> type[SourceTask]:
        return _SourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props)]

    def stop(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return CONFIG


class _SourceTask(SourceTask):
    def start(self, props: dict[str, str]) -> None:
        pass

    def poll(self) -> list[SourceRecord] | None:
        return None

    def stop(self) -> None:
        pass


class _SinkTask(SinkTask):
    def __init__(self) -> None:
        self.flushed: list[dict[TopicPartition, OffsetAndMetadata]] = []

    def start(self, props: dict[str, str]) -> None:
        pass

    def put(self, records: Sequence[SinkRecord]) -> None:
        pass

    def flush(self, current_offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        self.flushed.append(current_offsets)

    def stop(self) -> None:
        pass


@pytest.mark.parametrize(
    ("elements", "groups", "expected"),
    [
        ([1, 2, 3, 4, 5], 2, [[1, 2, 3], [4, 5]]),
        ([1, 2, 3, 4, 5, 6], 3, [[1, 2], [3, 4], [5, 6]]),
        ([1, 2], 4, [[1], [2], [], []]),
        ([], 2, [[], []]),
        ([1, 2, 3, 4, 5, 6, 7], 3, [[1, 2, 3], [4, 5], [6, 7]]),
    ],
)
def test_group_partitions_matches_kafka(
    elements: list[int], groups: int, expected: list[list[int]]
) -> None:
    assert group_partitions(elements, groups) == expected


def test_group_partitions_rejects_non_positive_groups() -> None:
    with pytest.raises(ValueError, match="must be positive, got 0"):
        group_partitions([1], 0)


def test_connector_without_context_explains_itself() -> None:
    with pytest.raises(ConnectException, match="_Source has no context"):
        _ = _Source().context


def test_default_validate_uses_config_def() -> None:
    result = _Source().validate({})
    (value,) = result.config_values
    assert value.name == "topic"
    assert value.error_messages == [
        'Missing required configuration "topic" which has no default value.'
    ]


def test_default_version_is_unknown_outside_a_distribution() -> None:
    assert _Source().version() == "unknown"


def test_source_connector_defaults() -> None:
    connector = _Source()
    assert connector.exactly_once_support({}) is None
    assert connector.can_define_transaction_boundaries({}).value == "UNSUPPORTED"
    assert connector.alter_offsets({}, [({"p": 1}, None)]) is False


def test_typed_contexts_are_checked() -> None:
    class SinkCtx(SinkConnectorContext):
        def request_task_reconfiguration(self) -> None:
            pass

        def raise_error(self, error: BaseException) -> None:
            pass

    connector = _Source()
    connector.initialize(SinkCtx())
    with pytest.raises(ConnectException, match="non-source context"):
        _ = connector.context
    assert issubclass(SourceConnectorContext, object)


def test_default_pre_commit_flushes_and_returns_offsets() -> None:
    task = _SinkTask()
    offsets: dict[TopicPartition, OffsetAndMetadata] = {
        TopicPartition("t", 0): OffsetAndMetadata(5)
    }
    assert task.pre_commit(offsets) == offsets
    assert task.flushed == [offsets]


def test_topic_partition_is_hashable_and_ordered() -> None:
    tps: list[Any] = sorted(
        {TopicPartition("b", 0), TopicPartition("a", 1), TopicPartition("a", 0)}
    )
    assert tps == [TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b", 0)]
    assert str(TopicPartition("t", 3)) == "t-3"


def test_sink_connector_topics_key() -> None:
    assert SinkConnector.TOPICS_CONFIG == "topics"
