"""Source offsets: backing stores, the task-facing reader and the framework's buffered writer.

Offsets are stored the way Kafka Connect stores them, so an offsets file or topic reads the same
(:mod:`~cdk.runtime._offset_format`). Three :class:`OffsetBackingStore` implementations hold
these bytes: :class:`MemoryOffsetBackingStore` (tests), :class:`FileOffsetBackingStore`
(standalone mode, ``offset.storage.file.filename``) and :class:`KafkaOffsetBackingStore` (a
compacted topic, for distributed mode). Tasks read through :class:`OffsetStorageReaderImpl`;
the framework writes through :class:`OffsetStorageWriter`; the REST API lists, alters and resets
a connector's offsets with :mod:`~cdk.runtime._connector_offsets`. This module gathers their
names.
"""

from __future__ import annotations

from cdk.runtime._connector_offsets import (
    connector_offsets,
    reset_connector_offsets,
    write_connector_offsets,
)
from cdk.runtime._file_offset_store import FileOffsetBackingStore
from cdk.runtime._kafka_offset_store import KafkaOffsetBackingStore
from cdk.runtime._offset_format import (
    offset_key,
    offset_value,
    parse_offset_key,
    parse_offset_value,
    validate_offset_format,
)
from cdk.runtime._offset_storage import OffsetStorageReaderImpl, OffsetStorageWriter
from cdk.runtime._offset_store import MemoryOffsetBackingStore, OffsetBackingStore

__all__ = [
    "FileOffsetBackingStore",
    "KafkaOffsetBackingStore",
    "MemoryOffsetBackingStore",
    "OffsetBackingStore",
    "OffsetStorageReaderImpl",
    "OffsetStorageWriter",
    "connector_offsets",
    "offset_key",
    "offset_value",
    "parse_offset_key",
    "parse_offset_value",
    "reset_connector_offsets",
    "validate_offset_format",
    "write_connector_offsets",
]
