"""Where the runtime keeps its state (Kafka Connect's ``storage`` package).

Source offsets are stored the way Kafka Connect stores them, so an offsets file or topic reads
the same (``_offset_format``). Three :class:`OffsetBackingStore` implementations hold these
bytes: :class:`MemoryOffsetBackingStore` (tests), :class:`FileOffsetBackingStore` (standalone
mode, ``offset.storage.file.filename``) and :class:`KafkaOffsetBackingStore` (a compacted
topic, for distributed mode). Tasks read through :class:`OffsetStorageReaderImpl`; the
framework writes through :class:`OffsetStorageWriter`; the REST API lists, alters and resets a
connector's offsets with :func:`connector_offsets`, :func:`write_connector_offsets` and
:func:`reset_connector_offsets`.

Distributed mode keeps connector configurations in :class:`KafkaConfigBackingStore` (its view:
:class:`ClusterConfigState`) and statuses in :class:`KafkaStatusBackingStore`, in Kafka
Connect 3.9's own record formats (``_cluster_records``).
"""

from __future__ import annotations

from cdk.runtime.storage._config_store import ClusterConfigState, KafkaConfigBackingStore
from cdk.runtime.storage._connector_offsets import (
    connector_offsets,
    reset_connector_offsets,
    write_connector_offsets,
)
from cdk.runtime.storage._file_offset_store import FileOffsetBackingStore
from cdk.runtime.storage._kafka_offset_store import KafkaOffsetBackingStore
from cdk.runtime.storage._offset_format import (
    offset_key,
    offset_value,
    parse_offset_key,
    parse_offset_value,
    validate_offset_format,
)
from cdk.runtime.storage._offset_storage import OffsetStorageReaderImpl, OffsetStorageWriter
from cdk.runtime.storage._offset_store import MemoryOffsetBackingStore, OffsetBackingStore
from cdk.runtime.storage._status_store import KafkaStatusBackingStore

__all__ = [
    "ClusterConfigState",
    "KafkaConfigBackingStore",
    "KafkaStatusBackingStore",
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
