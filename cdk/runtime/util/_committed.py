"""What a ``read_committed`` consumer reads, decided from the transaction markers themselves.

A Kafka consumer with ``isolation.level=read_committed`` hides the records of aborted
transactions because the broker's fetch answer lists those transactions. The embedded broker
(Tansu 0.6.0) writes the ABORT and COMMIT markers (the control batches) but lists no aborted
transaction (``tests/integration/test_tansu_transactions.py``), so its ``read_committed``
consumers receive aborted records. :class:`CommittedReader` gets the answer a Kafka
``read_committed`` consumer gets on a Kafka broker without relying on that list: it fetches the
raw record batches (the Kafka protocol's Fetch v4, ``read_uncommitted``) and hands out the
records of each partition in offset order up to its first open transaction (the last stable
offset), dropping those of a transaction once its producer's ABORT marker comes and keeping
them once its COMMIT marker comes. On a Kafka broker this gives what the broker's filtering
gives; the reader keeps what it holds back between reads, so a later read hands out a held
transaction's records once its marker is written.

The exactly-once worker reads its offsets topic with it (see
:class:`~cdk.runtime.util.KafkaBasedLog`), and ``cdk certify`` (OFF-13) and the kit's tests read
a connector's topics with :func:`read_committed`.

Plaintext connections only, and uncompressed batches (the kit's producers do not compress by
default); anything else raises :class:`UnsupportedFetch`, and the caller falls back to a
librdkafka ``read_committed`` consumer, which is right on a real Kafka broker. Every socket
operation and every read has a deadline.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import struct
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CommittedMessage",
    "CommittedReader",
    "FetchTimedOut",
    "MarkerProbe",
    "UnsupportedFetch",
    "read_committed",
]

log = logging.getLogger("cdk.runtime.committed")

_FETCH = 1
_FETCH_VERSION = 4
#: Bytes one fetch answer may carry in all, and for one partition.
_MAX_BYTES = 8 * 1024 * 1024
_PARTITION_MAX_BYTES = 1024 * 1024
#: Errors after which the partition's leader is looked up again: UNKNOWN_TOPIC_OR_PARTITION,
#: LEADER_NOT_AVAILABLE, NOT_LEADER_OR_FOLLOWER, REPLICA_NOT_AVAILABLE.
_LEADER_ERRORS = frozenset({3, 5, 6, 9})
#: How long a read waits before fetching again when an answer brought nothing new.
_RETRY_S = 0.05

#: Where a partition's leader listens: ``partition -> (host, port)`` (looked up again with
#: ``refresh=True`` after the broker answered that it does not lead it).
Leaders = Callable[[int, bool], tuple[str, int]]


class UnsupportedFetch(Exception):
    """This reader cannot read the topic (compressed batches, a broker error...)."""


class FetchTimedOut(UnsupportedFetch):
    """A read did not reach the end it was asked for in time."""


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


class _Connection:
    """One plaintext connection to a broker; every operation ends within ``timeout_s``."""

    def __init__(self, address: tuple[str, int], timeout_s: float, client_id: str) -> None:
        self.address = address
        self._client = client_id.encode("utf-8")
        self._sock = socket.create_connection(address, timeout=timeout_s)
        self._sock.settimeout(timeout_s)
        self._correlation = 0

    def fetch(self, body: bytes) -> _Buffer:
        self._correlation += 1
        correlation = self._correlation
        header = (
            struct.pack(">hhih", _FETCH, _FETCH_VERSION, correlation, len(self._client))
            + self._client
        )
        payload = header + body
        self._sock.sendall(struct.pack(">i", len(payload)) + payload)
        size = struct.unpack(">i", self._recv(4))[0]
        answer = _Buffer(self._recv(size))
        if answer.unpack(">i") != correlation:
            raise UnsupportedFetch("the broker answered another request")
        return answer

    def _recv(self, n: int) -> bytes:
        chunks = bytearray()
        while len(chunks) < n:
            chunk = self._sock.recv(n - len(chunks))
            if not chunk:
                raise OSError(
                    f"the broker {self.address[0]}:{self.address[1]} closed the connection"
                )
            chunks += chunk
        return bytes(chunks)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.close()


def _fetch_body(topic: str, positions: Iterable[tuple[int, int]]) -> bytes:
    name = topic.encode("utf-8")
    wanted = list(positions)
    # replica -1 (a consumer), up to 100 ms for 1 byte (the embedded broker answers no topic to
    # a wait of 0, and often no records to a wait of 1 ms where it holds some), read_uncommitted:
    # every batch, the control batches included
    body = struct.pack(">iiiib", -1, 100, 1, _MAX_BYTES, 0)
    body += struct.pack(">ih", 1, len(name)) + name
    body += struct.pack(">i", len(wanted))
    for partition, offset in wanted:
        body += struct.pack(">iqi", partition, offset, _PARTITION_MAX_BYTES)
    return body


def _parse_fetch(answer: _Buffer) -> dict[int, tuple[int, int, bytes]]:
    """``partition -> (error code, high watermark, record batches)`` of a Fetch v4 answer."""
    out: dict[int, tuple[int, int, bytes]] = {}
    answer.unpack(">i")  # throttle time
    for _ in range(answer.unpack(">i")):
        answer.string()
        for _ in range(answer.unpack(">i")):
            partition = answer.unpack(">i")
            error = answer.unpack(">h")
            high = answer.unpack(">q")
            answer.unpack(">q")  # last stable offset
            aborted = answer.unpack(">i")
            for _ in range(max(aborted, 0)):
                answer.take(16)
            size = answer.unpack(">i")
            records = answer.take(size) if size > 0 else b""
            out[partition] = (error, high, records)
    return out


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


class _Partition:
    """One partition's read state: the next offset to fetch and what is held back."""

    def __init__(self) -> None:
        self.position = 0
        #: records in offset order, each ``[message, state]``: state None while its
        #: transaction is open, True to hand out, False (aborted) to drop
        self.held: deque[list[Any]] = deque()
        #: each producer's records of its open transaction
        self.open: dict[int, list[list[Any]]] = {}
        self.empty = 0

    def take(self, attributes: int, producer: int, message: CommittedMessage) -> None:
        if attributes & 0x20:  # a control batch: its key says COMMIT (1) or ABORT (0)
            key = message.key()
            kind = struct.unpack(">hh", key[:4])[1] if key and len(key) >= 4 else -1
            for entry in self.open.pop(producer, []):
                entry[1] = kind == 1
            return
        if attributes & 0x10:  # transactional: held until its producer's marker
            entry = [message, None]
            self.open.setdefault(producer, []).append(entry)
        else:
            entry = [message, True]
        self.held.append(entry)

    def stable(self) -> list[CommittedMessage]:
        """The records up to the first open transaction (the last stable offset)."""
        out = []
        held = self.held
        while held and held[0][1] is not None:
            message, keep = held.popleft()
            if keep:
                out.append(message)
        return out


class CommittedReader:
    """Reads partitions of one topic as a ``read_committed`` consumer, from the markers.

    Args:
        topic: the topic.
        leaders: where each partition's leader listens (see :data:`Leaders`).
        timeout_s: how long one socket operation may take.
        client_id: the client id the broker sees.
    """

    def __init__(
        self, topic: str, leaders: Leaders, *, timeout_s: float = 30.0, client_id: str = "cdk"
    ) -> None:
        self.topic = topic
        self._leaders = leaders
        self._timeout_s = timeout_s
        self._client_id = client_id
        self._partitions: dict[int, _Partition] = {}
        self._connections: dict[tuple[str, int], _Connection] = {}

    def position(self, partition: int) -> int:
        """The next offset of ``partition`` this reader fetches."""
        state = self._partitions.get(partition)
        return 0 if state is None else state.position

    def read(self, partitions: Iterable[int], deadline: float) -> list[CommittedMessage]:
        """What a ``read_committed`` consumer gets from ``partitions`` up to their ends now.

        Reads each partition to the high watermark of its first answer (records written later
        are left for the next read); a transaction still open there holds its records and the
        partition's later ones back, to be handed out by a later read once it ends. Records
        come in offset order per partition, each once across reads.

        Raises:
            FetchTimedOut: the ends were not reached by ``deadline`` (``time.monotonic()``).
            UnsupportedFetch: the topic cannot be read this way (the caller reads it another).
        """
        states = {p: self._partitions.setdefault(p, _Partition()) for p in partitions}
        ends: dict[int, int] = {}
        out: list[CommittedMessage] = []
        refresh: set[int] = set()
        while True:
            wanted = [p for p, s in states.items() if p not in ends or s.position < ends[p]]
            if not wanted:
                return out
            if time.monotonic() >= deadline:
                raise FetchTimedOut(
                    f"reading {self.topic} took too long (partitions "
                    + ", ".join(
                        f"{p} at {states[p].position} of {ends.get(p, '?')}" for p in wanted
                    )
                    + ")"
                )
            # the first fetch asks for every partition of a leader at once (for the ends, in
            # one round trip); then each partition short of its end is fetched alone: only an
            # empty answer to a fetch of its own says the broker has nothing there
            alone = all(p in ends for p in wanted)
            requests: list[tuple[tuple[str, int], list[int]]] = []
            by_leader: dict[tuple[str, int], list[int]] = {}
            for partition in wanted:
                address = self._leaders(partition, partition in refresh)
                if alone:
                    requests.append((address, [partition]))
                else:
                    by_leader.setdefault(address, []).append(partition)
            requests.extend(by_leader.items())
            refresh.clear()
            moved = False
            for address, group in requests:
                try:
                    answers = self._fetch(address, [(p, states[p].position) for p in group])
                except OSError:
                    self._drop(address)
                    refresh.update(group)
                    continue
                except EOFError as exc:
                    self._drop(address)
                    raise UnsupportedFetch(f"a fetch answer from {address} ended early") from exc
                for partition in group:
                    answer = answers.get(partition)
                    if answer is None:
                        refresh.add(partition)
                        continue
                    error, high, records = answer
                    if error in _LEADER_ERRORS:
                        refresh.add(partition)
                        continue
                    if error:
                        raise UnsupportedFetch(
                            f"the broker answered error {error} for {self.topic}[{partition}]"
                        )
                    end = ends.setdefault(partition, high)
                    try:
                        if self._take(partition, states[partition], records, end, alone):
                            moved = True
                    except EOFError as exc:
                        raise UnsupportedFetch(
                            f"a record batch of {self.topic}[{partition}] ended early"
                        ) from exc
                    out.extend(states[partition].stable())
            if not moved:
                time.sleep(min(_RETRY_S, max(deadline - time.monotonic(), 0.0)))

    def _take(
        self, partition: int, state: _Partition, records: bytes, end: int, alone: bool
    ) -> bool:
        """Take a fetch answer's records below ``end``; whether the position moved."""
        moved = False
        for _base, attributes, producer, batch in _batches(records):
            for offset, key, value, headers in batch:
                if offset < state.position or offset >= end:
                    continue
                state.position = offset + 1
                moved = True
                message = CommittedMessage(self.topic, partition, offset, key, value, headers)
                state.take(attributes, producer, message)
        if moved:
            state.empty = 0
        elif alone and not records and state.position < end:
            # Tansu answers nothing for some offsets below the high watermark (the end of an
            # aborted producer's batch, it seems): no record can be read there, by any
            # client; after a few empty answers, step over the offset.
            state.empty += 1
            if state.empty >= 3:
                log.debug(
                    "%s[%d]: no record at offset %d below the end %d after 3 empty answers; "
                    "stepping over it",
                    self.topic,
                    partition,
                    state.position,
                    end,
                )
                state.position += 1
                state.empty = 0
                moved = True
        return moved

    def _fetch(
        self, address: tuple[str, int], positions: list[tuple[int, int]]
    ) -> dict[int, tuple[int, int, bytes]]:
        connection = self._connections.get(address)
        if connection is None:
            connection = _Connection(address, self._timeout_s, self._client_id)
            self._connections[address] = connection
        return _parse_fetch(connection.fetch(_fetch_body(self.topic, positions)))

    def _drop(self, address: tuple[str, int]) -> None:
        connection = self._connections.pop(address, None)
        if connection is not None:
            connection.close()

    def close(self) -> None:
        """Close the connections (a later read opens them again)."""
        for address in list(self._connections):
            self._drop(address)


class MarkerProbe:
    """Which offsets of a topic hold transaction markers (control records), from raw fetches.

    A librdkafka consumer never receives the markers, so each one looks like a hole of one
    offset; on the embedded broker a hole can also be records the fetch skipped. A fetch of
    the raw batches from the hole's first offset tells them apart: an offset is a marker only
    when a control batch was seen there. One fetch covers every marker up to about a megabyte
    on, so a reader past hundreds of transactions fetches once, not once per marker.

    Args:
        topic: the topic.
        leaders: where each partition's leader listens (see :data:`Leaders`).
        timeout_s: how long one socket operation may take.
        client_id: the client id the broker sees.
    """

    def __init__(
        self, topic: str, leaders: Leaders, *, timeout_s: float = 30.0, client_id: str = "cdk"
    ) -> None:
        self._reader = CommittedReader(topic, leaders, timeout_s=timeout_s, client_id=client_id)
        self._leaders = leaders
        #: partition -> the marker offsets seen at or past the last hole asked about
        self._markers: dict[int, set[int]] = {}

    def only_markers(self, partition: int, first: int, end: int) -> bool:
        """Whether every offset from ``first`` up to ``end`` (excluded) holds a marker.

        False when any of them does not, or the broker cannot be asked (the caller reads the
        hole again instead).
        """
        if end <= first:
            return True
        known = self._markers.setdefault(partition, set())
        known.difference_update([o for o in known if o < first])
        if all(o in known for o in range(first, end)):
            return True
        try:
            self._learn(partition, first, known)
        except (OSError, EOFError, UnsupportedFetch) as exc:
            log.debug(
                "%s[%d]: no marker fetch at %d (%s)", self._reader.topic, partition, first, exc
            )
            self._reader.close()
            return False
        return all(o in known for o in range(first, end))

    def _learn(self, partition: int, first: int, known: set[int]) -> None:
        address = self._leaders(partition, False)
        answer = self._reader._fetch(address, [(partition, first)]).get(partition)
        if answer is None or answer[0]:
            return
        try:
            for _base, attributes, _producer, batch in _batches(answer[2]):
                if attributes & 0x20:
                    known.update(offset for offset, *_rest in batch if offset >= first)
        except UnsupportedFetch:
            pass  # a compressed batch: the markers before it are known

    def close(self) -> None:
        """Close the connection (a later question opens it again)."""
        self._reader.close()


def read_committed(
    host: str, port: int, topic: str, partition: int, timeout_s: float = 120.0
) -> list[CommittedMessage]:
    """The committed records of one partition, as a ``read_committed`` consumer gets them.

    It reads up to the end the broker answers first (records written later are left out), from
    the broker at ``host:port`` (which must lead the partition: the embedded broker does).

    Raises:
        UnsupportedFetch: this reader cannot read it (the caller uses a Kafka consumer).
        OSError: the broker cannot be reached.
    """
    deadline = time.monotonic() + timeout_s

    def leader(_partition: int, _refresh: bool) -> tuple[str, int]:
        return host, port

    reader = CommittedReader(topic, leader, timeout_s=timeout_s, client_id="cdk-certify")
    try:
        socket.create_connection((host, port), timeout=timeout_s).close()  # unreachable: OSError
        return reader.read([partition], deadline)
    finally:
        reader.close()
