"""Connectors: :class:`Connector`, :class:`SourceConnector`, :class:`SinkConnector`, contexts.

A connector describes a copy job. It validates its configuration, decides how many tasks to run
and what each task does (``task_configs``); the framework then runs the tasks. A connector does
not copy data itself.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

from cdk.api._coordinates import TopicPartition
from cdk.api._versioned import package_version
from cdk.config import Config, ConfigDef
from cdk.errors import ConnectException

if TYPE_CHECKING:
    from cdk.api._task import OffsetStorageReader, Task

__all__ = [
    "Connector",
    "ConnectorContext",
    "ConnectorTransactionBoundaries",
    "ExactlyOnceSupport",
    "SinkConnector",
    "SinkConnectorContext",
    "SourceConnector",
    "SourceConnectorContext",
]


class ExactlyOnceSupport(enum.Enum):
    """Whether a source connector can run with exactly-once delivery (KIP-618)."""

    SUPPORTED = "SUPPORTED"
    UNSUPPORTED = "UNSUPPORTED"


class ConnectorTransactionBoundaries(enum.Enum):
    """Whether a source connector can define its own transaction boundaries (KIP-618)."""

    SUPPORTED = "SUPPORTED"
    UNSUPPORTED = "UNSUPPORTED"


class ConnectorContext(ABC):
    """What the framework offers a running connector (``self.context``)."""

    @abstractmethod
    def request_task_reconfiguration(self) -> None:
        """Ask the framework to call ``task_configs`` again, e.g. when the input changed.

        Tasks are restarted only if the new task configs differ from the running ones.
        """

    @abstractmethod
    def raise_error(self, error: BaseException) -> None:
        """Report an unrecoverable error from a connector thread: the connector goes FAILED."""


class SourceConnectorContext(ConnectorContext):
    """The context of a source connector: adds read access to the stored source offsets."""

    @property
    @abstractmethod
    def offset_storage_reader(self) -> OffsetStorageReader:
        """The committed source offsets of this connector."""


class SinkConnectorContext(ConnectorContext):
    """The context of a sink connector."""


class Connector(ABC):
    """The base of every connector: implement a :class:`SourceConnector` or :class:`SinkConnector`.

    Lifecycle, driven by the framework: ``initialize(context)`` → ``start(props)`` →
    ``task_configs(max_tasks)`` (again whenever reconfiguration is requested) → ``stop()``.
    ``validate(props)`` and ``config()`` may be called on an instance that was never started.
    """

    _context: ConnectorContext | None = None

    def initialize(self, context: ConnectorContext) -> None:
        """Give the connector its context; the framework calls this before :meth:`start`."""
        self._context = context

    @property
    def context(self) -> ConnectorContext:
        """The context the framework gave this connector.

        Raises:
            ConnectException: when the connector has not been initialized by a framework.
        """
        if self._context is None:
            raise ConnectException(
                f"{type(self).__name__} has no context: the framework calls initialize() first"
            )
        return self._context

    def version(self) -> str:
        """The connector's version: by default, that of the distribution that ships it."""
        return package_version(type(self))

    @abstractmethod
    def start(self, props: dict[str, str]) -> None:
        """Start the connector with its (validated) configuration.

        As in Kafka Connect, the same instance may be started again after :meth:`stop`: pausing
        a connector stops it (its tasks only pause) and resuming starts it again.
        """

    @abstractmethod
    def task_class(self) -> type[Task]:
        """The :class:`~cdk.api.Task` subclass that runs this connector's work."""

    @abstractmethod
    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        """The configuration of each task to run: at most ``max_tasks`` string maps."""

    @abstractmethod
    def stop(self) -> None:
        """Stop the connector and release what :meth:`start` acquired.

        Also called when the connector is paused; :meth:`start` follows on resume.
        """

    @abstractmethod
    def config(self) -> ConfigDef:
        """The connector's configuration definition: validation, docs and tests derive from it."""

    def validate(self, props: dict[str, str]) -> Config:
        """Validate a configuration without starting the connector.

        The default validates ``props`` against :meth:`config`; override to add checks that span
        several keys (add errors to the returned :class:`~cdk.config.ConfigValue` objects).
        """
        return Config(self.config().validate(props))


class SourceConnector(Connector):
    """A connector that reads from an external system and writes to Kafka."""

    @property
    def context(self) -> SourceConnectorContext:
        """The source connector context (with its offset storage reader)."""
        context = super().context
        if not isinstance(context, SourceConnectorContext):
            raise ConnectException(f"{type(self).__name__} was given a non-source context")
        return context

    def exactly_once_support(self, props: dict[str, str]) -> ExactlyOnceSupport | None:
        """Whether the connector can deliver exactly once with ``props``; None if it cannot tell."""
        return None

    def can_define_transaction_boundaries(
        self, props: dict[str, str]
    ) -> ConnectorTransactionBoundaries:
        """Whether the connector can define transaction boundaries with ``props``."""
        return ConnectorTransactionBoundaries.UNSUPPORTED

    def alter_offsets(
        self,
        props: dict[str, str],
        offsets: list[tuple[dict[str, Any], dict[str, Any] | None]],
    ) -> bool:
        """Hook called before the offsets REST API alters or resets this connector's offsets.

        Args:
            props: the connector's configuration.
            offsets: ``(source_partition, source_offset)`` pairs; an offset of None is a reset.

        Returns:
            True if the connector itself handled the change in the external system; False (the
            default) lets the framework change only the stored offsets. Raise to refuse.
        """
        return False


class SinkConnector(Connector):
    """A connector that reads from Kafka topics and writes to an external system."""

    TOPICS_CONFIG = "topics"
    """The configuration key that lists the topics a sink consumes."""

    @property
    def context(self) -> SinkConnectorContext:
        """The sink connector context."""
        context = super().context
        if not isinstance(context, SinkConnectorContext):
            raise ConnectException(f"{type(self).__name__} was given a non-sink context")
        return context

    def alter_offsets(
        self, props: dict[str, str], offsets: dict[TopicPartition, int | None]
    ) -> bool:
        """Hook called before the offsets REST API alters or resets this connector's offsets.

        Args:
            props: the connector's configuration.
            offsets: the next offset to consume per partition; None is a reset.

        Returns:
            True if the connector handled the change itself; False (the default) lets the
            framework change the consumer group's committed offsets. Raise to refuse.
        """
        return False
