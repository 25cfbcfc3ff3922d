"""Helpers for the integration tests: workers, REST calls, reading topics, expected records.

Connectors are driven through the worker's REST API with httpx (the API Kafka Connect clients
use), so these tests check the runtime the way an operator sees it.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

from cdk.kafka import create_topics
from tests._wait import wait_until
from tests.connectors import GENERATOR, RECORDING
from tests.connectors.generator import expected_key, expected_value, stream_names
from tests.connectors.recording import Store, normalize, read_store

REPO_ROOT = Path(__file__).resolve().parents[2]
JSON = "org.apache.kafka.connect.json.JsonConverter"
AVRO = "io.confluent.connect.avro.AvroConverter"
STRING = "org.apache.kafka.connect.storage.StringConverter"
BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"

#: Consumer settings that keep Tansu's group join short (about half the session timeout).
FAST_GROUP = {"session.timeout.ms": "6000", "heartbeat.interval.ms": "500"}


def unique(prefix: str) -> str:
    """A fresh name, so tests stay independent on the shared session broker."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def free_port() -> int:
    """A TCP port that is free on the loopback interface right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def worker_props(bootstrap: str, offsets_file: Path, port: int, **extra: str) -> dict[str, str]:
    """Worker properties for fast tests: JSON converters, a short flush interval, fast groups."""
    props = {
        "bootstrap.servers": bootstrap,
        "key.converter": JSON,
        "value.converter": JSON,
        "offset.storage.file.filename": str(offsets_file),
        "offset.flush.interval.ms": "500",
        "listeners": f"http://127.0.0.1:{port}",
        "task.shutdown.graceful.timeout.ms": "10000",
        **{f"consumer.{k}": v for k, v in FAST_GROUP.items()},
    }
    props.update(extra)
    return props


def generator_config(topic: str, **extra: Any) -> dict[str, str]:
    """A generator source connector config (values are turned into strings)."""
    config = {"connector.class": GENERATOR, "topic": topic, "tasks.max": "1"}
    config.update({k.replace("_", "."): str(v) for k, v in extra.items()})
    return config


def recording_config(topics: str, store_dir: Path, **extra: Any) -> dict[str, str]:
    """A recording sink connector config (values are turned into strings)."""
    config = {"connector.class": RECORDING, "topics": topics, "store.dir": str(store_dir)}
    config["tasks.max"] = "1"
    config.update({k.replace("_", "."): str(v) for k, v in extra.items()})
    return config


def make_topic(bootstrap: str, partitions: int = 1, prefix: str = "it") -> str:
    """Create a fresh topic and return its name."""
    name = unique(prefix)
    create_topics(bootstrap, [name], partitions=partitions)
    return name


class Rest:
    """A small Kafka Connect REST client over httpx (raises on unexpected status codes)."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")
        self.http = httpx.Client(base_url=self.url, timeout=30.0)

    def close(self) -> None:
        self.http.close()

    def put_config(self, name: str, config: Mapping[str, str]) -> dict[str, Any]:
        r = self.http.put(f"/connectors/{name}/config", json=dict(config))
        assert r.status_code in (200, 201), r.text
        return dict(r.json())

    def create(self, name: str, config: Mapping[str, str]) -> dict[str, Any]:
        r = self.http.post("/connectors", json={"name": name, "config": dict(config)})
        assert r.status_code == 201, r.text
        return dict(r.json())

    def status(self, name: str) -> dict[str, Any]:
        r = self.http.get(f"/connectors/{name}/status")
        assert r.status_code == 200, r.text
        return dict(r.json())

    def call(self, method: str, path: str, expect: int | tuple[int, ...]) -> httpx.Response:
        r = self.http.request(method, path)
        codes = expect if isinstance(expect, tuple) else (expect,)
        assert r.status_code in codes, f"{method} {path}: {r.status_code} {r.text}"
        return r

    def raw_status(self, name: str) -> str:
        return self.http.get(f"/connectors/{name}/status").text

    def task_states(self, name: str) -> list[str]:
        return [t["state"] for t in sorted(self.status(name)["tasks"], key=lambda t: t["id"])]

    def wait_state(
        self, name: str, state: str, tasks: int | None = None, timeout: float = 30.0
    ) -> dict[str, Any]:
        """Wait until the connector and all its tasks (``tasks`` of them if given) are ``state``."""

        def reached() -> dict[str, Any] | None:
            r = self.http.get(f"/connectors/{name}/status")
            if r.status_code != 200:
                return None
            status = r.json()
            states = [t["state"] for t in status["tasks"]]
            if status["connector"]["state"] != state or any(s != state for s in states):
                return None
            if tasks is not None and len(states) != tasks:
                return None
            return dict(status)

        return wait_until(
            reached,
            timeout,
            0.1,
            lambda: f"{name} {state} with {tasks} tasks; last: {self.raw_status(name)}",
        )


@dataclass(frozen=True)
class Message:
    """A record read back from Kafka."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]


class TopicReader:
    """Reads a topic from the beginning without a consumer group (no join wait).

    Call :meth:`poll` (or :meth:`wait_for`) repeatedly; messages accumulate in :attr:`messages`.
    Counting with a consumer, not from watermarks (Tansu's high watermark can lag).

    The embedded broker now and then answers a fetch with records that begin past the offset
    asked for, holding the ones in between (``cdk.runtime.util.FetchGaps``; the kit's readers
    heal it). A plain consumer goes on past them, and a test would wait for records that are on
    the broker. So when polling brings nothing new for :attr:`REREAD_AFTER_S`, the reader reads
    the topic again from the beginning and keeps what it had not seen (by partition and offset:
    a copy the producer wrote twice is kept, a record read twice is not).
    """

    #: Seconds without a new message after which :meth:`poll` reads the topic again.
    REREAD_AFTER_S = 2.0

    def __init__(
        self,
        bootstrap: str,
        topic: str,
        isolation: str = "read_committed",
        consumer_factory: Callable[[dict[str, Any]], Consumer] = Consumer,
    ) -> None:
        self.topic = topic
        self.messages: list[Message] = []
        #: How many times a stalled poll read the topic again, and what that found.
        self.rereads = 0
        self.healed = 0
        self._seen: set[tuple[int, int]] = set()
        self._high: dict[int, int] = {}  # partition -> the highest offset read
        self._consumer = consumer_factory(
            {
                "bootstrap.servers": bootstrap,
                "group.id": unique("reader"),
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "isolation.level": isolation,  # librdkafka's default, said out loud
            }
        )
        self._partitions: list[int] = []
        self._assign_from_beginning()
        self._last_new = time.monotonic()

    def _assign_from_beginning(self) -> None:
        """Assign every partition the topic has now, from the beginning.

        The partitions are looked up each time: a reader made before the topic exists (a
        source task RUNNING whose first record is not produced yet) sees none at first, and
        reads the topic once it is there.
        """
        metadata = self._consumer.list_topics(self.topic, timeout=10)
        found = metadata.topics.get(self.topic)
        if found is not None and found.error is None:
            self._partitions = sorted(set(self._partitions) | set(found.partitions))
        self._consumer.assign(
            [TopicPartition(self.topic, p, OFFSET_BEGINNING) for p in self._partitions]
        )

    def poll(self, timeout: float = 0.1) -> int:
        """Fetch what is available now; return the total number of messages read so far."""
        fresh: list[Message] = []
        for msg in self._consumer.consume(10000, timeout):
            if msg.error():
                continue
            where = (msg.partition(), msg.offset())
            if where in self._seen:
                continue  # read again after a stall
            self._seen.add(where)
            headers = tuple((k, v) for k, v in (msg.headers() or []))
            fresh.append(
                Message(msg.topic(), msg.partition(), msg.offset(), msg.key(), msg.value(), headers)
            )
        now = time.monotonic()
        if fresh:
            high = self._high
            skipped = [m for m in fresh if m.offset < high.get(m.partition, -1)]
            for m in fresh:
                high[m.partition] = max(high.get(m.partition, -1), m.offset)
            self.messages.extend(fresh)
            if skipped:  # found by a read again: each partition back in offset order
                self.healed += len(skipped)
                self.messages.sort(key=lambda m: (m.partition, m.offset))
            self._last_new = now
        elif now - self._last_new >= self.REREAD_AFTER_S:
            self.rereads += 1
            self._last_new = now
            self._assign_from_beginning()
        return len(self.messages)

    def wait_for(self, count: int, timeout: float = 60.0) -> list[Message]:
        """Wait until at least ``count`` messages were read."""
        wait_until(
            lambda: self.poll() >= count,
            timeout,
            0.0,
            lambda: f"{count} messages on {self.topic}, have {len(self.messages)}",
        )
        return self.messages

    def wait_for_keys(self, expected: Iterable[str], timeout: float = 60.0) -> Counter[str]:
        """Wait until every key in ``expected`` was read (duplicates do not count towards it).

        Returns:
            :meth:`keys` then.
        """
        wanted = set(expected)

        def missing() -> set[str]:
            return wanted - set(self.keys())

        def described() -> str:
            left = sorted(missing(), key=lambda k: (len(k), k))
            shown = ", ".join(left[:10]) + (" ..." if len(left) > 10 else "")
            read = len(self.messages)
            return f"every key on {self.topic}: {read} read, {len(left)} missing: {shown}"

        wait_until(lambda: self.poll() and not missing(), timeout, 0.05, described)
        return self.keys()

    def keys(self) -> Counter[str]:
        """How many times each (UTF-8 decoded, JSON-unwrapped if enveloped) key was read."""
        return Counter(decode_key(m.key) for m in self.messages)

    def close(self) -> None:
        self._consumer.close()


def decode_key(raw: bytes | None) -> str:
    """The generator's key from the JsonConverter (schemas on or off) or StringConverter bytes."""
    import json

    if raw is None:
        return "<null>"
    text = raw.decode()
    try:
        data = json.loads(text)
    except ValueError:
        return text
    if isinstance(data, dict) and "payload" in data:
        return str(data["payload"])
    return str(data)


@contextlib.contextmanager
def reading(bootstrap: str, topic: str, isolation: str = "read_committed") -> Iterator[TopicReader]:
    """A :class:`TopicReader` that is closed afterwards."""
    reader = TopicReader(bootstrap, topic, isolation)
    try:
        yield reader
    finally:
        reader.close()


def all_keys(streams: int | Iterable[str], records: int) -> Counter[str]:
    """Each generator key exactly once for ``records`` records of each stream."""
    names = stream_names(streams) if isinstance(streams, int) else list(streams)
    return Counter(expected_key(s, n) for s in names for n in range(records))


def expected_store_records(streams: int, records: int, *, schema: bool = True) -> list[Any]:
    """What the recording sink must hold (key, value, headers), sorted by key."""
    out = []
    for s in stream_names(streams):
        for n in range(records):
            out.append(
                (
                    expected_key(s, n),
                    normalize(expected_value(s, n, schema=schema)),
                    [["gen.stream", s]],
                )
            )
    return sorted(out, key=lambda r: r[0])


def store_records(store: Store) -> list[Any]:
    """The recording sink's records as (key, value, headers), sorted by key."""
    return sorted(((r["key"], r["value"], r["headers"]) for r in store.records), key=lambda r: r[0])


def wait_store_keys(store_dir: Path, keys: Counter[str], timeout: float = 60.0) -> Store:
    """Wait until the recording sink received at least every key in ``keys``."""

    def done() -> Store | None:
        store = read_store(store_dir)
        have = store.keys()
        return store if all(have[k] >= 1 for k in keys) else None

    return wait_until(
        done,
        timeout,
        0.1,
        lambda: (
            f"sink store {store_dir}: {len(set(read_store(store_dir).keys()) & set(keys))}"
            f" of {len(keys)} keys"
        ),
    )


def cdk_command(*args: str) -> list[str]:
    """The ``cdk`` CLI of this interpreter's environment."""
    exe = Path(sys.executable).parent / "cdk"
    if exe.exists():
        return [str(exe), *args]
    return [sys.executable, "-c", "import sys; from cdk.cli import main; sys.exit(main())", *args]


def write_properties(path: Path, props: Mapping[str, str]) -> Path:
    """Write a Java .properties file (values escaped for ``:``/``=``/``\\``)."""

    def esc(text: str) -> str:
        return text.replace("\\", "\\\\").replace(":", "\\:").replace("=", "\\=")

    path.write_text("".join(f"{k}={esc(v)}\n" for k, v in props.items()))
    return path


def stop_process(proc: subprocess.Popen[bytes], timeout: float = 20.0) -> None:
    """Terminate a subprocess this test started, and reap it."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout)


class Connect:
    """One running in-process worker (``EmbeddedWorker``) and a REST client for it."""

    def __init__(self, props: dict[str, str]) -> None:
        from cdk.runtime.standalone._worker import EmbeddedWorker

        self.props = props
        self.worker: Any = EmbeddedWorker(props)
        self.worker.start()
        self.rest = Rest(self.worker.rest_url)
        self.stopped = False

    def stop(self) -> None:
        """Stop the worker cleanly (tasks stopped, offsets committed); idempotent."""
        if not self.stopped:
            self.stopped = True
            self.rest.close()
            self.worker.stop()
