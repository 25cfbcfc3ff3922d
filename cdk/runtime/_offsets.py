"""Source offsets: backing stores, the task-facing reader and the framework's buffered writer.

Offsets are stored the way Kafka Connect stores them, so an offsets file or topic reads the same:
the key is the schemaless JSON array ``["<connector>",{<partition>}]`` and the value the
schemaless JSON object of the offset (``{"position":70}``), both compact UTF-8. A tombstone
(``None`` value) deletes an offset. Three :class:`OffsetBackingStore` implementations hold
these bytes: :class:`MemoryOffsetBackingStore` (tests), :class:`FileOffsetBackingStore`
(standalone mode, ``offset.storage.file.filename``) and :class:`KafkaOffsetBackingStore` (a
compacted topic, for distributed mode).

Partition and offset maps may contain only string keys and primitive values (``str``, ``int``,
``float``, ``bool``, ``bytes`` or ``None``), as Kafka's ``OffsetUtils.validateFormat`` demands.
Keys are serialized with sorted fields, so the same partition always maps to the same bytes
whatever the order its dict was built in (Java's ``HashMap`` gives Kafka the same property).
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import math
import os
import tempfile
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Collection, Iterable, Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

from cdk.api import OffsetStorageReader
from cdk.errors import ConfigException, ConnectException, DataException

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

log = logging.getLogger("cdk.runtime.offsets")

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1


# --------------------------------------------------------------------------------------------
# Format


def validate_offset_format(data: Any, what: str = "Offsets") -> None:
    """Check that a partition or offset map holds only string keys and primitive values.

    Args:
        data: the map to check; ``None`` is allowed (no offset / delete).
        what: the word used in messages (Kafka says "Offsets" for both maps).

    Raises:
        DataException: naming the offending field (``field`` attribute set).
    """
    if data is None:
        return
    if not isinstance(data, Mapping):
        raise DataException(f"{what} must be specified as a Map")
    for key, value in data.items():
        if not isinstance(key, str):
            raise DataException(f"{what} may only use String keys", field=str(key))
        if value is None or isinstance(value, (str, bool, bytes, bytearray)):
            continue
        if isinstance(value, int):
            if not _INT64_MIN <= value <= _INT64_MAX:
                raise DataException(
                    f"{what} may only contain primitive types as values, but field {key} "
                    f"contains the integer {value}, outside the 64-bit range",
                    field=key,
                )
            continue
        if isinstance(value, float):
            if not math.isfinite(value):
                raise DataException(
                    f"{what} may not contain NaN or infinite numbers, but field {key} "
                    f"contains {value}",
                    field=key,
                )
            continue
        if isinstance(value, Mapping):
            kind = "MAP"
        elif isinstance(value, (list, tuple, set, frozenset)):
            kind = "ARRAY"
        else:
            kind = f"class {type(value).__module__}.{type(value).__qualname__}"
        raise DataException(
            f"{what} may only contain primitive types as values, but field {key} contains {kind}",
            field=key,
        )


def _json_default(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        # JsonConverter writes byte arrays as base64 text when schemas are off.
        return base64.b64encode(bytes(value)).decode("ascii")
    raise TypeError(f"{type(value).__qualname__} is not JSON serializable")


def _dumps(value: Any) -> bytes:
    return json.dumps(
        value,
        separators=(",", ":"),
        ensure_ascii=False,
        sort_keys=True,
        allow_nan=False,
        default=_json_default,
    ).encode("utf-8")


def offset_key(connector: str, partition: Mapping[str, Any]) -> bytes:
    """Serialize a source partition the way Kafka Connect keys its offsets.

    Args:
        connector: the connector name (Kafka's offset namespace).
        partition: the source partition map.

    Returns:
        ``["<connector>",{...}]`` as compact UTF-8 JSON (fields sorted).

    Raises:
        DataException: the partition holds a non-primitive value or a non-string key.
    """
    validate_offset_format(partition)
    return _dumps([connector, dict(partition)])


def offset_value(offset: Mapping[str, Any] | None) -> bytes | None:
    """Serialize a source offset as Kafka Connect stores it (``None`` stays ``None``: delete).

    Raises:
        DataException: the offset holds a non-primitive value or a non-string key.
    """
    if offset is None:
        return None
    validate_offset_format(offset)
    return _dumps(dict(offset))


def _loads(data: bytes, what: str) -> Any:
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise DataException(f"{what} is not valid JSON: {data[:200]!r}") from e


def parse_offset_key(key: bytes) -> tuple[str, dict[str, Any]]:
    """Read a stored offset key back into ``(connector, partition)``.

    Raises:
        DataException: the key is not ``["<connector>",{...}]``.
    """
    parsed = _loads(key, "Offset key")
    if not isinstance(parsed, list) or len(parsed) != 2:
        raise DataException(
            f"Offset key must be a JSON array of the connector name and the partition: {key!r}"
        )
    connector, partition = parsed
    if not isinstance(connector, str):
        raise DataException(f"Offset key must start with the connector name (a string): {key!r}")
    if not isinstance(partition, dict):
        raise DataException(f"Offset key must end with the partition (a JSON object): {key!r}")
    return connector, partition


def parse_offset_value(value: bytes | None) -> dict[str, Any] | None:
    """Read a stored offset value back (``None`` for a tombstone).

    Raises:
        DataException: the value is not a JSON object (or ``null``).
    """
    if value is None:
        return None
    parsed = _loads(value, "Offset value")
    if parsed is None:
        return None
    if not isinstance(parsed, dict):
        raise DataException(f"Offset value must be a JSON object: {value[:200]!r}")
    return parsed


# --------------------------------------------------------------------------------------------
# Backing stores


class OffsetBackingStore(ABC):
    """A durable key/value store of serialized offsets (bytes in, bytes out).

    Implementations are thread-safe. Use :meth:`start` before and :meth:`stop` after use, or the
    store as a context manager.
    """

    def start(self) -> None:  # noqa: B027 - optional hook
        """Open the store (read existing offsets)."""

    def stop(self) -> None:  # noqa: B027 - optional hook
        """Close the store, releasing its resources."""

    @abstractmethod
    def get(self, keys: Collection[bytes]) -> dict[bytes, bytes]:
        """The stored values of ``keys``; keys with no value are left out."""

    @abstractmethod
    def set(self, values: Mapping[bytes, bytes | None]) -> None:
        """Store ``values`` (``None`` deletes a key); durable when this returns.

        Raises:
            ConnectException: the write failed; nothing may be assumed stored.
        """

    @abstractmethod
    def all(self) -> dict[bytes, bytes]:
        """Every stored key and value."""

    def __enter__(self) -> OffsetBackingStore:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class MemoryOffsetBackingStore(OffsetBackingStore):
    """Offsets kept in memory only (lost when the process ends); for tests."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._data: dict[bytes, bytes] = {}

    def get(self, keys: Collection[bytes]) -> dict[bytes, bytes]:
        """The stored values of ``keys``; keys with no value are left out."""
        with self._lock:
            return {k: self._data[k] for k in keys if k in self._data}

    def set(self, values: Mapping[bytes, bytes | None]) -> None:
        """Store ``values`` (``None`` deletes a key)."""
        with self._lock:
            self._apply(values)
            self._save()

    def all(self) -> dict[bytes, bytes]:
        """Every stored key and value."""
        with self._lock:
            return dict(self._data)

    def _apply(self, values: Mapping[bytes, bytes | None]) -> None:
        for key, value in values.items():
            if value is None:
                self._data.pop(key, None)
            else:
                self._data[key] = value

    def _save(self) -> None:
        """Persist ``_data`` (called with the lock held); nothing to do in memory."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self._data)} offsets)"


_FILE_FORMAT = "connect-cdk offsets"
_FILE_VERSION = 1


def _encode_bytes(prefix: str, data: bytes) -> dict[str, str]:
    try:
        return {prefix: data.decode("utf-8")}
    except UnicodeDecodeError:
        return {f"{prefix}_base64": base64.b64encode(data).decode("ascii")}


def _decode_bytes(entry: Mapping[str, Any], prefix: str) -> bytes:
    if isinstance(entry.get(prefix), str):
        return str(entry[prefix]).encode("utf-8")
    if isinstance(entry.get(f"{prefix}_base64"), str):
        return base64.b64decode(str(entry[f"{prefix}_base64"]), validate=True)
    raise ValueError(f"entry without a {prefix!r}")


class FileOffsetBackingStore(MemoryOffsetBackingStore):
    """Offsets in a local file, rewritten atomically on every :meth:`set` (standalone mode).

    The file is readable JSON: ``{"format": ..., "version": 1, "offsets": [{"key": ...,
    "value": ...}]}`` where key and value are the stored bytes as text (the Kafka-format JSON
    documents above), or ``key_base64``/``value_base64`` for bytes that are not UTF-8. Each write
    goes to a temporary file in the same directory, is fsynced, renamed over the old file with
    :func:`os.replace` and the directory is fsynced: a crash at any moment (even ``kill -9``
    or power loss) leaves either the old or the new complete file.

    Args:
        path: the offsets file (Kafka's ``offset.storage.file.filename``); its directory is
            created if missing.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__()
        self.path = Path(path)

    def start(self) -> None:
        """Load the file if it exists (a missing or empty file means no offsets yet).

        Raises:
            ConnectException: the file exists but cannot be read or parsed (names the file).
        """
        with self._lock:
            self._data = self._load()
            self._remove_stale_temporaries()

    def _load(self) -> dict[bytes, bytes]:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as e:
            raise ConnectException(f"Could not read the offsets file {self.path}: {e}") from e
        if not raw.strip():
            return {}
        try:
            document = json.loads(raw.decode("utf-8"))
            if not isinstance(document, dict) or not isinstance(document.get("offsets"), list):
                raise ValueError('expected a JSON object with an "offsets" list')
            data: dict[bytes, bytes] = {}
            for entry in document["offsets"]:
                if not isinstance(entry, dict):
                    raise ValueError("every offsets entry must be a JSON object")
                data[_decode_bytes(entry, "key")] = _decode_bytes(entry, "value")
        except (UnicodeDecodeError, ValueError) as e:
            raise ConnectException(
                f"The offsets file {self.path} is corrupt or not an offsets file: {e}"
            ) from e
        return data

    def _remove_stale_temporaries(self) -> None:
        directory = self.path.parent
        if not directory.is_dir():
            return
        for leftover in directory.glob(f".{self.path.name}.*.tmp"):
            try:
                leftover.unlink()
            except OSError:  # pragma: no cover - best effort
                log.debug("Could not remove the stale temporary file %s", leftover)

    def _save(self) -> None:
        document = {
            "format": _FILE_FORMAT,
            "version": _FILE_VERSION,
            "offsets": [
                {**_encode_bytes("key", key), **_encode_bytes("value", value)}
                for key, value in self._data.items()
            ],
        }
        payload = json.dumps(document, indent=1, ensure_ascii=False).encode("utf-8") + b"\n"
        directory = self.path.parent
        try:
            directory.mkdir(parents=True, exist_ok=True)
            fd, tmp_name = tempfile.mkstemp(
                prefix=f".{self.path.name}.", suffix=".tmp", dir=directory
            )
        except OSError as e:
            raise ConnectException(f"Could not write the offsets file {self.path}: {e}") from e
        try:
            with os.fdopen(fd, "wb") as tmp:
                tmp.write(payload)
                tmp.flush()
                os.fsync(tmp.fileno())
            os.replace(tmp_name, self.path)
            _fsync_directory(directory)
        except OSError as e:
            with contextlib.suppress(OSError):
                os.unlink(tmp_name)
            raise ConnectException(f"Could not write the offsets file {self.path}: {e}") from e

    def set(self, values: Mapping[bytes, bytes | None]) -> None:
        """Store ``values`` and rewrite the file atomically; on failure nothing changes.

        Raises:
            ConnectException: the file could not be written (names the file).
        """
        with self._lock:
            previous = dict(self._data)
            self._apply(values)
            try:
                self._save()
            except BaseException:
                self._data = previous
                raise

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.path)!r})"


def _fsync_directory(directory: Path) -> None:
    if os.name != "posix":  # pragma: no cover - directories cannot be opened on Windows
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class KafkaOffsetBackingStore(OffsetBackingStore):
    """Offsets in a compacted Kafka topic, as Kafka Connect's distributed workers keep them.

    :meth:`start` creates the topic when it is missing (``cleanup.policy=compact``; Kafka's
    defaults of 25 partitions and replication factor 3, the latter capped to the number of
    brokers) and reads it from the beginning. :meth:`get` and :meth:`all` first read to the end
    of the topic, so they see what other workers wrote. :meth:`set` produces the keys and values
    (a ``None`` value is a tombstone) and waits until the broker acknowledged all of them.

    Args:
        topic: the offsets topic (Kafka's ``offset.storage.topic``).
        bootstrap_servers: the cluster to use.
        client_overrides: extra librdkafka settings for the producer, consumer and admin
            client (security settings and the like).
        partitions: partitions of the topic when it is created.
        replication_factor: replication factor of the topic when it is created (capped to the
            number of brokers).
        timeout_s: how long one write or read to the end may take.
    """

    def __init__(
        self,
        topic: str,
        bootstrap_servers: str,
        client_overrides: Mapping[str, Any] | None = None,
        *,
        partitions: int = 25,
        replication_factor: int = 3,
        timeout_s: float = 30.0,
    ) -> None:
        if not topic:
            raise ConfigException("offset.storage.topic", topic, "Must be a non-empty topic name")
        self.topic = topic
        self.bootstrap_servers = bootstrap_servers
        self._overrides = dict(client_overrides or {})
        self._partitions = partitions
        self._replication_factor = replication_factor
        self._timeout_s = timeout_s
        self._lock = threading.RLock()
        self._data: dict[bytes, bytes] = {}
        self._producer: Any = None
        self._consumer: Any = None
        self._assigned: list[Any] = []

    def _client_config(self, extra: Mapping[str, Any]) -> dict[str, Any]:
        config: dict[str, Any] = {"bootstrap.servers": self.bootstrap_servers}
        config.update(extra)
        config.update(self._overrides)
        return config

    def start(self) -> None:
        """Create the topic if missing and read every stored offset.

        Raises:
            ConnectException: the cluster cannot be reached or the topic cannot be created
                or read.
        """
        from confluent_kafka import TopicPartition

        from cdk.kafka import new_admin, new_consumer, new_producer

        with self._lock:
            if self._consumer is not None:
                return
            admin = new_admin(self._client_config({}))
            num_partitions = ensure_topic(
                admin,
                self.topic,
                partitions=self._partitions,
                replication_factor=self._replication_factor,
                config={"cleanup.policy": "compact"},
                timeout_s=self._timeout_s,
                purpose="offset storage",
            )
            _check_compacted(admin, self.topic, self._timeout_s)
            self._producer = new_producer(
                self._client_config(
                    {
                        "acks": "all",
                        "max.in.flight.requests.per.connection": 1,
                        "partitioner": "murmur2_random",
                        "linger.ms": 0,
                    }
                )
            )
            self._consumer = new_consumer(
                self._client_config(
                    {
                        "group.id": f"cdk-offsets-reader-{os.getpid()}-{id(self)}",
                        "enable.auto.commit": False,
                        "enable.auto.offset.store": False,
                        "auto.offset.reset": "earliest",
                        "isolation.level": "read_committed",
                        "enable.partition.eof": True,
                        "fetch.wait.max.ms": 50,
                    }
                )
            )
            self._assigned = [
                TopicPartition(self.topic, p, -2)  # OFFSET_BEGINNING
                for p in range(num_partitions)
            ]
            self._consumer.assign(self._assigned)
            try:
                self._read_to_end()
            except BaseException:
                self._close_clients()
                raise

    def _read_to_end(self) -> None:
        """Consume until every partition reached the end it had when this call began."""
        from confluent_kafka import KafkaError

        consumer = self._consumer
        if consumer is None:
            raise ConnectException(f"The offset store on topic {self.topic} is not started")
        deadline = time.monotonic() + self._timeout_s
        ends: dict[int, int] = {}
        for tp in self._assigned:
            try:
                _low, high = consumer.get_watermark_offsets(tp, timeout=self._timeout_s)
            except Exception as e:
                raise ConnectException(
                    f"Could not read the end offsets of the offsets topic {self.topic}: {e}"
                ) from e
            if high > 0:
                ends[tp.partition] = high
        positions: dict[int, int] = dict.fromkeys(ends, -1)
        for tp in consumer.position([tp for tp in self._assigned if tp.partition in ends]):
            if tp.offset >= 0:
                positions[tp.partition] = tp.offset
        while any(positions[p] < end for p, end in ends.items()):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ConnectException(
                    f"Timed out reading the offsets topic {self.topic} to its end"
                )
            for message in consumer.consume(num_messages=500, timeout=min(remaining, 0.5)):
                partition = message.partition()
                error = message.error()
                if error is not None:
                    if error.code() == KafkaError._PARTITION_EOF:
                        if partition in positions:
                            positions[partition] = max(positions[partition], message.offset())
                        continue
                    raise ConnectException(f"Error reading the offsets topic {self.topic}: {error}")
                if partition in positions:
                    positions[partition] = max(positions[partition], message.offset() + 1)
                key = message.key()
                if key is None:
                    continue
                value = message.value()
                if value is None:
                    self._data.pop(key, None)
                else:
                    self._data[key] = value

    def get(self, keys: Collection[bytes]) -> dict[bytes, bytes]:
        """Read to the end of the topic, then return the stored values of ``keys``."""
        with self._lock:
            self._read_to_end()
            return {k: self._data[k] for k in keys if k in self._data}

    def all(self) -> dict[bytes, bytes]:
        """Read to the end of the topic, then return every stored key and value."""
        with self._lock:
            self._read_to_end()
            return dict(self._data)

    def set(self, values: Mapping[bytes, bytes | None]) -> None:
        """Produce ``values`` and wait until every record is acknowledged.

        Raises:
            ConnectException: a record was rejected or not acknowledged in time.
        """
        if not values:
            return
        with self._lock:
            producer = self._producer
            if producer is None:
                raise ConnectException(f"The offset store on topic {self.topic} is not started")
            errors: list[Any] = []

            def on_delivery(err: Any, _msg: Any) -> None:
                if err is not None:
                    errors.append(err)

            try:
                for key, value in values.items():
                    while True:
                        try:
                            producer.produce(
                                self.topic, key=key, value=value, on_delivery=on_delivery
                            )
                            break
                        except BufferError:
                            producer.poll(0.1)
            except Exception as e:
                producer.flush(self._timeout_s)
                raise ConnectException(f"Could not write offsets to topic {self.topic}: {e}") from e
            left = producer.flush(self._timeout_s)
            if left:
                raise ConnectException(
                    f"Timed out writing offsets to topic {self.topic}: "
                    f"{left} records unacknowledged"
                )
            if errors:
                raise ConnectException(
                    f"Could not write offsets to topic {self.topic}: {errors[0]}"
                )
            for key, value in values.items():
                if value is None:
                    self._data.pop(key, None)
                else:
                    self._data[key] = value

    def stop(self) -> None:
        """Flush pending writes and close the clients."""
        with self._lock:
            self._close_clients()

    def _close_clients(self) -> None:
        if self._producer is not None:
            self._producer.flush(self._timeout_s)
            self._producer = None
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(topic={self.topic!r})"


def _check_compacted(admin: Any, topic: str, timeout_s: float) -> None:
    """Refuse an offsets topic whose ``cleanup.policy`` is not ``compact`` (as Kafka does)."""
    from confluent_kafka.admin import ConfigResource  # type: ignore[attr-defined]

    try:
        futures = admin.describe_configs([ConfigResource("topic", topic)])
        entries = next(iter(futures.values())).result(timeout=timeout_s)
        policy = entries["cleanup.policy"].value
    except Exception as e:  # noqa: BLE001 - a cluster that cannot describe configs
        log.debug("Could not check the cleanup.policy of topic %s: %s", topic, e)
        return
    if policy is not None and {p.strip() for p in str(policy).split(",")} != {"compact"}:
        raise ConfigException(
            f"The offsets topic '{topic}' must have 'cleanup.policy=compact' so that source "
            f"offsets are kept, but it has 'cleanup.policy={policy}'. Use another topic for "
            "'offset.storage.topic' or change the topic's policy to compact."
        )


def ensure_topic(
    admin: Any,
    topic: str,
    *,
    partitions: int,
    replication_factor: int,
    config: Mapping[str, str] | None = None,
    timeout_s: float = 30.0,
    purpose: str = "the runtime",
) -> int:
    """Create ``topic`` unless it exists; return its number of partitions.

    The replication factor is capped to the number of brokers in the cluster (a single-broker
    development cluster cannot hold 3 replicas).

    Raises:
        ConnectException: the cluster cannot be reached or the topic cannot be created.
    """
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import NewTopic  # type: ignore[attr-defined]

    try:
        metadata = admin.list_topics(timeout=timeout_s)
    except KafkaException as e:
        raise ConnectException(
            f"Could not list topics to set up topic {topic} for {purpose}: {e}"
        ) from e
    existing = metadata.topics.get(topic)
    if existing is not None and existing.error is None and existing.partitions:
        return len(existing.partitions)
    brokers = max(1, len(metadata.brokers))
    rf = replication_factor if replication_factor > 0 else brokers
    new = NewTopic(
        topic,
        num_partitions=partitions,
        replication_factor=min(rf, brokers),
        config=dict(config or {}),
    )
    log.info("Creating topic %s for %s (%d partitions)", topic, purpose, partitions)
    futures = admin.create_topics([new], operation_timeout=timeout_s, request_timeout=timeout_s)
    try:
        futures[topic].result(timeout=timeout_s)
    except KafkaException as e:
        error = e.args[0] if e.args else None
        if not (isinstance(error, KafkaError) and error.code() == KafkaError.TOPIC_ALREADY_EXISTS):
            raise ConnectException(f"Could not create topic {topic} for {purpose}: {e}") from e
    except Exception as e:
        raise ConnectException(f"Could not create topic {topic} for {purpose}: {e}") from e
    deadline = time.monotonic() + timeout_s
    while True:
        described = admin.list_topics(topic=topic, timeout=timeout_s).topics.get(topic)
        if described is not None and described.error is None and described.partitions:
            return len(described.partitions)
        if time.monotonic() >= deadline:
            raise ConnectException(f"Topic {topic} for {purpose} did not appear after creation")
        time.sleep(0.05)


# --------------------------------------------------------------------------------------------
# Reader and writer


def _find_equivalent_keys(
    store: OffsetBackingStore, connector: str, partitions: Iterable[dict[str, Any]]
) -> dict[bytes, bytes]:
    """Stored keys equal to ``partitions`` after parsing (written with another field order)."""
    wanted = list(partitions)
    found: dict[bytes, bytes] = {}
    for key, value in store.all().items():
        try:
            name, partition = parse_offset_key(key)
        except DataException:
            continue
        if name == connector and partition in wanted:
            found[offset_key(connector, partition)] = value
    return found


class OffsetStorageReaderImpl(OffsetStorageReader):
    """The :class:`~cdk.api.OffsetStorageReader` given to source tasks and connectors.

    Args:
        store: the worker's offset store.
        connector: the connector whose offsets are read (the namespace of the keys).
    """

    def __init__(self, store: OffsetBackingStore, connector: str) -> None:
        self._store = store
        self._connector = connector
        self._closed = False

    def offset(self, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        """The last committed offset of ``partition``, or ``None``."""
        return self.offsets([partition])[0][1]

    def offsets(
        self, partitions: Iterable[Mapping[str, Any]]
    ) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        """The last committed offsets of ``partitions``, in the order given (``None`` if absent).

        Raises:
            DataException: a partition is not a map of primitive values (names the field).
            ConnectException: the reader is closed, or the store could not be read.
        """
        if self._closed:
            raise ConnectException(
                "Offset reader is closed. This is likely because the task has already been "
                "scheduled to stop but has taken longer than the graceful shutdown period to do so."
            )
        requested = [dict(p) for p in partitions]
        keys = [offset_key(self._connector, p) for p in requested]
        try:
            raw = self._store.get(keys)
            missing = [p for p, k in zip(requested, keys, strict=True) if k not in raw]
            if missing:
                raw.update(_find_equivalent_keys(self._store, self._connector, missing))
        except ConnectException as e:
            raise ConnectException(f"Failed to fetch offsets: {e}") from e
        result: list[tuple[dict[str, Any], dict[str, Any] | None]] = []
        for partition, key in zip(requested, keys, strict=True):
            value: dict[str, Any] | None = None
            if key in raw:
                try:
                    value = parse_offset_value(raw[key])
                    validate_offset_format(value)
                except DataException:
                    log.exception(
                        "Failed to read the stored offset of partition %s of connector %s; "
                        "no value is returned for it",
                        partition,
                        self._connector,
                    )
                    value = None
            result.append((partition, value))
        return result

    def close(self) -> None:
        """Close the reader; later reads raise :class:`~cdk.errors.ConnectException`."""
        self._closed = True


class OffsetStorageWriter:
    """Buffers a connector's source offsets and flushes them to the store in snapshots.

    :meth:`offset` stages an offset. :meth:`begin_flush` moves the staged offsets aside as the
    snapshot to write (new offsets keep being staged meanwhile); :meth:`do_flush` writes the
    snapshot; :meth:`cancel_flush` puts an unwritten snapshot back, under any newer offsets for
    the same partitions. Only one flush runs at a time. Thread-safe.

    Args:
        store: the worker's offset store.
        connector: the connector whose offsets are written.
    """

    def __init__(self, store: OffsetBackingStore, connector: str) -> None:
        self._store = store
        self._connector = connector
        self._cond = threading.Condition()
        self._data: dict[bytes, tuple[dict[str, Any], dict[str, Any] | None]] = {}
        self._to_flush: dict[bytes, tuple[dict[str, Any], dict[str, Any] | None]] | None = None

    def offset(self, partition: Mapping[str, Any] | None, offset: Mapping[str, Any] | None) -> None:
        """Stage ``offset`` for ``partition`` (``None`` offset: delete it at the next flush).

        A ``None`` partition (a record without a source partition) is ignored.

        Raises:
            DataException: the partition or offset is not a map of primitive values.
        """
        if partition is None:
            return
        key = offset_key(self._connector, partition)
        validate_offset_format(offset)
        with self._cond:
            self._data[key] = (dict(partition), None if offset is None else dict(offset))

    def flushing(self) -> bool:
        """Whether a flush has begun and not finished or been cancelled."""
        with self._cond:
            return self._to_flush is not None

    def begin_flush(self, timeout_s: float | None = None) -> bool:
        """Snapshot the staged offsets for writing.

        Args:
            timeout_s: how long to wait for a flush in progress to finish; ``None`` does not
                wait.

        Returns:
            ``True`` when a flush began (then call :meth:`do_flush` or :meth:`cancel_flush`),
            ``False`` when there was nothing to flush.

        Raises:
            ConnectException: a flush is still in progress.
        """
        with self._cond:
            if self._to_flush is not None and timeout_s is not None and timeout_s > 0:
                self._cond.wait_for(lambda: self._to_flush is None, timeout=timeout_s)
            if self._to_flush is not None:
                raise ConnectException("OffsetStorageWriter is already flushing")
            if not self._data:
                return False
            self._to_flush = self._data
            self._data = {}
            return True

    def do_flush(self) -> None:
        """Write the snapshot taken by :meth:`begin_flush` to the store.

        On failure the snapshot is put back (as :meth:`cancel_flush`) and the error raised.

        Raises:
            ConnectException: no flush in progress, or the store could not write.
        """
        with self._cond:
            snapshot = self._to_flush
            if snapshot is None:
                raise ConnectException("No offset flush in progress: call begin_flush() first")
            serialized = {key: offset_value(offset) for key, (_p, offset) in snapshot.items()}
        try:
            self._store.set(serialized)
        except BaseException as e:
            self.cancel_flush()
            if isinstance(e, ConnectException) or not isinstance(e, Exception):
                raise
            raise ConnectException(f"Failed to write offsets: {e}") from e
        with self._cond:
            if self._to_flush is snapshot:
                self._to_flush = None
                self._cond.notify_all()
        log.debug("Flushed %d offsets of connector %s", len(serialized), self._connector)

    def cancel_flush(self) -> None:
        """Abandon the flush in progress, keeping its offsets staged (newer ones win)."""
        with self._cond:
            if self._to_flush is None:
                return
            merged = self._to_flush
            merged.update(self._data)
            self._data = merged
            self._to_flush = None
            self._cond.notify_all()

    def staged(self) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        """The offsets staged and not yet in a flush (for tests and diagnostics)."""
        with self._cond:
            return list(self._data.values())


# --------------------------------------------------------------------------------------------
# REST helpers


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
