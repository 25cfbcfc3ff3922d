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

__all__ = ["CommittedMessage", "UnsupportedFetch", "read_committed"]

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
    pending: dict[int, list[CommittedMessage]] = {}
    offset = 0
    correlation = 0
    empty = 0
    end: int | None = None
    with socket.create_connection((host, port), timeout=timeout_s) as sock:
        while time.monotonic() < deadline:
            correlation += 1
            high, records = _fetch(sock, correlation, topic, partition, offset)
            if end is None:
                end = high  # read to the end as of the first answer, not after later writes
            high = min(high, end)
            if offset >= high:
                return out
            moved = False
            for _base, attributes, producer, batch in _batches(records):
                for record_offset, key, value, headers in batch:
                    if record_offset < offset or record_offset >= high:
                        continue
                    offset = record_offset + 1
                    moved = True
                    if attributes & 0x20:  # a control batch: its key says COMMIT or ABORT
                        kind = struct.unpack(">hh", key[:4])[1] if key and len(key) >= 4 else -1
                        done = pending.pop(producer, [])
                        if kind == 1:
                            out.extend(done)
                        continue
                    message = CommittedMessage(topic, partition, record_offset, key, value, headers)
                    if attributes & 0x10:  # transactional: wait for its producer's marker
                        pending.setdefault(producer, []).append(message)
                    else:
                        out.append(message)
            if moved:
                empty = 0
            elif records or high <= offset:
                time.sleep(0.05)
            else:
                # Tansu answers nothing for some offsets below the high watermark (the end of
                # an aborted producer's batch, it seems): no record can be read there, by any
                # client; after a few empty answers, step over the offset.
                empty += 1
                if empty >= 3:
                    offset += 1
                    empty = 0
                else:
                    time.sleep(0.05)
    detail = [
        (base, attributes, len(batch), batch[0][0] if batch else None)
        for base, attributes, _producer, batch in _batches(records)
    ][:4]
    raise UnsupportedFetch(
        f"reading {topic}[{partition}] took more than {timeout_s:g} s (at offset {offset}, high "
        f"watermark {high}, {len(records)} bytes answered: batches {detail})"
    )
