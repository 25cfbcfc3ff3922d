"""Broker providers: one interface over an embedded broker, a container or an existing cluster."""

from __future__ import annotations

import socket
from abc import ABC, abstractmethod
from types import TracebackType

from typing_extensions import Self, override

from cdk.errors import ConfigException, IllegalWorkerStateException

__all__ = ["ExternalKafka", "KafkaProvider", "free_port"]


def free_port(host: str = "127.0.0.1") -> int:
    """Return a TCP port on ``host`` that nothing listens on at the moment of the call."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


class KafkaProvider(ABC):
    """A Kafka cluster the kit can use: started, reachable at :attr:`bootstrap_servers`, stopped.

    Providers are context managers: ``with EmbeddedKafka() as kafka: ...`` starts the broker and
    stops it on exit. :meth:`start` returns the provider itself.
    """

    #: A short name for the kind of provider (``embedded``, ``external``, ``testcontainers``).
    name: str = "kafka"

    @property
    @abstractmethod
    def bootstrap_servers(self) -> str:
        """The ``host:port[,host:port...]`` list clients connect to.

        Raises:
            IllegalWorkerStateException: the provider is not started.
        """

    @property
    @abstractmethod
    def running(self) -> bool:
        """Whether the provider is started and not yet stopped."""

    def client_config(self) -> dict[str, str]:
        """The Kafka client settings a client of this cluster needs besides the bootstrap servers.

        Security settings in Kafka's terms (``security.protocol``, ``ssl.*``, ``sasl.*``); empty
        for a plaintext cluster. Give them to producers, consumers and admin clients, or, in a
        worker configuration, unprefixed and with the ``producer.``, ``consumer.`` and
        ``admin.`` prefixes.
        """
        return {}

    @abstractmethod
    def start(self) -> Self:
        """Start the cluster (or connect to it) and wait until it answers; return ``self``."""

    @abstractmethod
    def stop(self) -> None:
        """Stop what :meth:`start` started; calling it again, or before start, does nothing."""

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _not_started(self) -> IllegalWorkerStateException:
        return IllegalWorkerStateException(
            f"{type(self).__name__} is not started: call start() before using bootstrap_servers"
        )


class ExternalKafka(KafkaProvider):
    """An existing Kafka cluster, reached through its bootstrap servers.

    :meth:`start` checks that a broker answers (unless ``check=False``); :meth:`stop` leaves the
    cluster running, since the kit did not start it.

    Args:
        bootstrap_servers: ``host:port[,host:port...]``.
        check: fetch metadata on :meth:`start` and fail clearly when no broker answers.
        timeout: seconds to wait for that answer.
        client_config: the cluster's client security settings (``security.protocol``,
            ``ssl.*``, ``sasl.*``), used for that check and returned by :meth:`client_config`.
    """

    name = "external"

    def __init__(
        self,
        bootstrap_servers: str,
        *,
        check: bool = True,
        timeout: float = 10.0,
        client_config: dict[str, str] | None = None,
    ) -> None:
        if not isinstance(bootstrap_servers, str) or not bootstrap_servers.strip():
            raise ConfigException("bootstrap.servers", bootstrap_servers, "must be host:port[,...]")
        self._bootstrap = bootstrap_servers.strip()
        self._check = check
        self._timeout = timeout
        self._client_config = dict(client_config or {})
        self._running = False

    @property
    @override
    def bootstrap_servers(self) -> str:
        return self._bootstrap

    @property
    @override
    def running(self) -> bool:
        return self._running

    @override
    def start(self) -> Self:
        if self._check:
            from cdk.kafka._clients import check_connection

            check_connection(
                {"bootstrap.servers": self._bootstrap, **self._client_config},
                timeout=self._timeout,
            )
        self._running = True
        return self

    @override
    def client_config(self) -> dict[str, str]:
        return dict(self._client_config)

    @override
    def stop(self) -> None:
        self._running = False

    def __repr__(self) -> str:
        return f"ExternalKafka({self._bootstrap!r})"
