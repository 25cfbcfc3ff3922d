"""Stalling the broker for the Kafka cluster failure checks (ERR-04/05)."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from cdk.kafka import (
    EmbeddedKafka,
    KafkaProvider,
)
from harness.providers._kafka_containers import TestcontainersKafka

__all__ = ["BrokerStall", "Stall", "broker_stall"]


class Stall(Protocol):
    """What a broker failure check stalls the broker with.

    A :class:`BrokerStall`, or in a child process of ``cdk certify`` a stall its parent grants
    (``harness.certify._broker_grant``).
    """

    def pause(self) -> None:
        """Stop the broker."""

    def resume(self) -> None:
        """Continue the broker; harmless when it is not stopped."""

    def stalled(self) -> contextlib.AbstractContextManager[None]:
        """Keep the broker stopped for the duration of a block."""


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
    from harness.providers._tls_kafka import TlsKafka

    if isinstance(provider, (EmbeddedKafka, TlsKafka)) and hasattr(signal, "SIGSTOP"):
        pid = provider.pid
        return BrokerStall(pid=pid) if pid is not None else None
    if isinstance(provider, TestcontainersKafka):
        return provider.stall()
    return None
