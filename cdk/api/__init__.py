"""The connector API: records and headers (connectors, tasks and contexts join them here)."""

from __future__ import annotations

from cdk.api._headers import Header, Headers
from cdk.api._records import ConnectRecord, SinkRecord, SourceRecord, TimestampType

__all__ = [
    "ConnectRecord",
    "Header",
    "Headers",
    "SinkRecord",
    "SourceRecord",
    "TimestampType",
]
