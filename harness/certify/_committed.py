"""What a ``read_committed`` consumer reads, decided by the harness from the transaction markers.

A Kafka consumer with ``isolation.level=read_committed`` hides the records of aborted
transactions because the broker's fetch answer lists those transactions. The embedded broker
(Tansu 0.6.0) writes the ABORT and COMMIT markers but lists no aborted transaction (see
``tests/integration/test_tansu_transactions.py``), so its ``read_committed`` consumers receive
aborted records. This reader gets the same answer a Kafka ``read_committed`` consumer gets on a
Kafka broker without relying on that list: it fetches the raw record batches (the Kafka
protocol's Fetch v4, ``read_uncommitted``), keeps each producer's transactional records until
that producer's next control batch, and emits them on COMMIT, drops them on ABORT; records
whose transaction is still open are not emitted (they lie past the last stable offset).

Plaintext connections only, and uncompressed batches (the kit's producers do not compress by
default); anything else raises :class:`UnsupportedFetch`, and the caller falls back to a
librdkafka ``read_committed`` consumer, which is right on a real Kafka broker.
"""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CommittedMessage", "CommittedTail", "UnsupportedFetch", "read_committed"]

_FETCH = 1
_FETCH_VERSION = 4
_MAX_BYTES = 8 * 1024 * 1024


class UnsupportedFetch(Exception):
    """This reader cannot read the topic (compressed batches, a broker error...)."""


@dataclass
class CommittedMessage:
    """A committed record, with the accessors of a confluent-kafka ``Message``."""

    _topic: str
    _partition: int
    _offset: int
    _key: bytes | None
    _value: bytes | None
    _headers: list[tuple[str, bytes | None]] = field(default_factory=list)

    def topic(self) -> str:
        return self._topic

    def partition(self) -> int:
        return self._partition

    def offset(self) -> int:
        return self._offset

    def key(self) -> bytes | None:
        return self._key

    def value(self) -> bytes | None:
        return self._value

    def headers(self) -> list[tuple[str, bytes | None]]:
        return self._headers

    def error(self) -> None:
        return None


class _Buffer:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise EOFError
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt: str) -> Any:
        size = struct.calcsize(fmt)
        return struct.unpack(fmt, self.take(size))[0]

    def varint(self) -> int:
        shift = result = 0
        while True:
            byte = self.take(1)[0]
            result |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return (result >> 1) ^ -(result & 1)
            shift += 7

    def string(self) -> str:
        length = self.unpack(">h")
        return "" if length < 0 else self.take(length).decode("utf-8")

    def varbytes(self) -> bytes | None:
        length = self.varint()
        return None if length < 0 else self.take(length)


def _request(sock: socket.socket, correlation: int, body: bytes) -> _Buffer:
    client = b"cdk-certify"
    header = struct.pack(">hhih", _FETCH, _FETCH_VERSION, correlation, len(client)) + client
    payload = header + body
    sock.sendall(struct.pack(">i", len(payload)) + payload)
    size = struct.unpack(">i", _recv(sock, 4))[0]
    answer = _Buffer(_recv(sock, size))
    if answer.unpack(">i") != correlation:
        raise UnsupportedFetch("the broker answered another request")
    return answer


def _recv(sock: socket.socket, n: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < n:
        chunk = sock.recv(n - len(chunks))
        if not chunk:
            raise UnsupportedFetch("the broker closed the connection")
        chunks += chunk
    return bytes(chunks)


def _fetch(sock: socket.socket, correlation: int, topic: str, partition: int, offset: int) -> Any:
    name = topic.encode("utf-8")
    body = (
        struct.pack(">iiiib", -1, 100, 1, _MAX_BYTES, 0)  # read_uncommitted: every batch
        + struct.pack(">ih", 1, len(name))
        + name
        + struct.pack(">iiqi", 1, partition, offset, _MAX_BYTES)
    )
    answer = _request(sock, correlation, body)
    answer.unpack(">i")  # throttle time
    for _ in range(answer.unpack(">i")):
        answer.string()
        for _ in range(answer.unpack(">i")):
            answer.unpack(">i")  # partition
            error = answer.unpack(">h")
            high = answer.unpack(">q")
            answer.unpack(">q")  # last stable offset
            aborted = answer.unpack(">i")
            for _ in range(max(aborted, 0)):
                answer.take(16)
            size = answer.unpack(">i")
            records = answer.take(size) if size > 0 else b""
            if error:
                raise UnsupportedFetch(f"the broker answered error {error} for {topic}")
            return high, records
    raise UnsupportedFetch(f"the broker answered nothing for {topic}[{partition}]")


def _batches(records: bytes) -> Iterator[tuple[int, int, int, list[Any]]]:
    """(base offset, attributes, producer id, records) of each complete batch."""
    data = _Buffer(records)
    while len(data.data) - data.pos >= 12:
        base = data.unpack(">q")
        length = data.unpack(">i")
        if len(data.data) - data.pos < length:
            return  # a partial batch at the end of the answer
        batch = _Buffer(data.take(length))
        batch.unpack(">i")  # leader epoch
        if batch.unpack(">b") != 2:
            raise UnsupportedFetch("a record batch of an old format")
        batch.take(4)  # crc
        attributes = batch.unpack(">h")
        batch.unpack(">i")  # last offset delta
        batch.take(16)  # timestamps
        producer = batch.unpack(">q")
        batch.take(6)  # epoch, base sequence
        count = batch.unpack(">i")
        if attributes & 0x07:
            raise UnsupportedFetch("compressed record batches")
        out = []
        for _ in range(count):
            batch.varint()  # length
            batch.take(1)  # attributes
            batch.varint()  # timestamp delta
            delta = batch.varint()
            key = batch.varbytes()
            value = batch.varbytes()
            headers = []
            for _ in range(batch.varint()):
                hkey = batch.varbytes()
                headers.append(((hkey or b"").decode("utf-8"), batch.varbytes()))
            out.append((base + delta, key, value, headers))
        yield base, attributes, producer, out


class CommittedTail:
    """Reads one partition's committed records incrementally (what :func:`read_committed` uses).

    Each :meth:`read` fetches from where the last one stopped and returns the records whose
    transaction committed since (or that were not transactional); records of a transaction
    still open stay held until its marker comes. For a progress signal (e.g. a chaos run's
    recovery times) without reading the partition from the beginning each time.
    """

    def __init__(self, host: str, port: int, topic: str, partition: int) -> None:
        self.topic = topic
        self.partition = partition
        self.offset = 0
        self._address = (host, port)
        self._sock: socket.socket | None = None
        self._correlation = 0
        self._pending: dict[int, list[CommittedMessage]] = {}
        self._empty = 0
        self._records = b""
        self.high = 0

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def read(self, end: int | None = None, timeout_s: float = 30.0) -> list[CommittedMessage]:
        """One fetch: the records it committed; ``end`` caps the offsets read (exclusive).

        Raises:
            UnsupportedFetch: see :func:`read_committed`.
            OSError: the broker cannot be reached (the connection is dropped; the next call
                connects again).
        """
        if self._sock is None:
            self._sock = socket.create_connection(self._address, timeout=timeout_s)
        self._sock.settimeout(timeout_s)
        self._correlation += 1
        try:
            high, records = _fetch(
                self._sock, self._correlation, self.topic, self.partition, self.offset
            )
        except (OSError, UnsupportedFetch):
            self.close()
            raise
        self._records = records
        self.high = high if end is None else min(high, end)
        out: list[CommittedMessage] = []
        moved = False
        pending = self._pending
        for _base, attributes, producer, batch in _batches(records):
            for record_offset, key, value, headers in batch:
                if record_offset < self.offset or record_offset >= self.high:
                    continue
                self.offset = record_offset + 1
                moved = True
                if attributes & 0x20:  # a control batch: its key says COMMIT or ABORT
                    kind = struct.unpack(">hh", key[:4])[1] if key and len(key) >= 4 else -1
                    done = pending.pop(producer, [])
                    if kind == 1:
                        out.extend(done)
                    continue
                message = CommittedMessage(
                    self.topic, self.partition, record_offset, key, value, headers
                )
                if attributes & 0x10:  # transactional: wait for its producer's marker
                    pending.setdefault(producer, []).append(message)
                else:
                    out.append(message)
        if moved:
            self._empty = 0
        elif not records and self.offset < self.high:
            # Tansu answers nothing for some offsets below the high watermark (the end of an
            # aborted producer's batch, it seems): no record can be read there, by any
            # client; after a few empty answers, step over the offset.
            self._empty += 1
            if self._empty >= 3:
                self.offset += 1
                self._empty = 0
        return out

    def describe(self) -> str:
        """Where the reader is, and the first batches of the last answer (for error messages)."""
        detail = [
            (base, attributes, len(batch), batch[0][0] if batch else None)
            for base, attributes, _producer, batch in _batches(self._records)
        ][:4]
        return (
            f"at offset {self.offset}, high watermark {self.high}, {len(self._records)} bytes "
            f"answered: batches {detail}"
        )


def read_committed(
    host: str, port: int, topic: str, partition: int, timeout_s: float = 120.0
) -> list[CommittedMessage]:
    """The committed records of one partition, as a ``read_committed`` consumer gets them.

    It reads up to the end the broker answers first (records written later are left out).

    Raises:
        UnsupportedFetch: this reader cannot read it (the caller uses a Kafka consumer).
        OSError: the broker cannot be reached.
    """
    deadline = time.monotonic() + timeout_s
    out: list[CommittedMessage] = []
    tail = CommittedTail(host, port, topic, partition)
    end: int | None = None
    try:
        while time.monotonic() < deadline:
            before = tail.offset
            out.extend(tail.read(end, timeout_s))
            if end is None:
                end = tail.high  # read to the end as of the first answer, not after later writes
            if tail.offset >= end:
                return out
            if tail.offset == before:
                time.sleep(0.05)
    finally:
        tail.close()
    raise UnsupportedFetch(
        f"reading {topic}[{partition}] took more than {timeout_s:g} s ({tail.describe()})"
    )
