"""The connector API: connectors, tasks, their contexts, records, headers and coordinates."""

from __future__ import annotations

from cdk.api._connector import (
    Connector,
    ConnectorContext,
    ConnectorTransactionBoundaries,
    ExactlyOnceSupport,
    SinkConnector,
    SinkConnectorContext,
    SourceConnector,
    SourceConnectorContext,
)
from cdk.api._coordinates import OffsetAndMetadata, RecordMetadata, TopicPartition
from cdk.api._headers import Header, Headers
from cdk.api._records import ConnectRecord, SinkRecord, SourceRecord, TimestampType
from cdk.api._task import (
    ErrantRecordReporter,
    OffsetStorageReader,
    SinkTask,
    SinkTaskContext,
    SourceTask,
    SourceTaskContext,
    Task,
    TransactionContext,
)
from cdk.api._util import group_partitions

__all__ = [
    # connectors
    "Connector",
    "SourceConnector",
    "SinkConnector",
    "ConnectorContext",
    "SourceConnectorContext",
    "SinkConnectorContext",
    "ExactlyOnceSupport",
    "ConnectorTransactionBoundaries",
    # tasks
    "Task",
    "SourceTask",
    "SinkTask",
    "SourceTaskContext",
    "TransactionContext",
    "SinkTaskContext",
    "OffsetStorageReader",
    "ErrantRecordReporter",
    # records
    "ConnectRecord",
    "SourceRecord",
    "SinkRecord",
    "Header",
    "Headers",
    "TimestampType",
    # coordinates
    "TopicPartition",
    "OffsetAndMetadata",
    "RecordMetadata",
    "group_partitions",
]
