"""Acknowledging sources with acknowledgement defects, one per ACK check, and their drivers.

Each is a small subclass of the RabbitMQ reference source task that gets one thing wrong about
when it acknowledges a message to RabbitMQ; its connector runs that task, and its driver is the
reference driver (a fresh queue per stream on the machine's RabbitMQ) pointed at it:

- :class:`AckOnPollSource`: acknowledges each message in ``poll()``, before Kafka has its
  record (a crash or a failed send then loses it);
- :class:`NeverAckSource`: never acknowledges (every message is redelivered after a restart,
  and the queue never drains);
- :class:`AckOnStopSource`: acknowledges everything the channel delivered in ``stop()``
  (``basic.ack`` with ``multiple``): the records still in flight and the messages buffered but
  never polled, whether or not Kafka has them;
- :class:`NoAckOnDropSource`: never acknowledges a record whose metadata is ``None`` (dropped
  by a transformation or skipped by ``errors.tolerance=all``), so those messages stay
  unacknowledged and come back forever.
"""

from __future__ import annotations

import contextlib
import threading
from typing import ClassVar

from typing_extensions import override

from cdk import RecordMetadata, SourceRecord, SourceTask
from reference_connectors.rabbitmq import RabbitMQSourceConnector, RabbitMQSourceTask
from reference_connectors.rabbitmq.certify import RabbitMQSourceDriver

__all__ = [
    "AckOnPollDriver",
    "AckOnPollSource",
    "AckOnPollSourceConnector",
    "AckOnStopDriver",
    "AckOnStopSource",
    "AckOnStopSourceConnector",
    "NeverAckDriver",
    "NeverAckSource",
    "NeverAckSourceConnector",
    "NoAckOnDropDriver",
    "NoAckOnDropSource",
    "NoAckOnDropSourceConnector",
]


# ---------------------------------------------------------------------------------------------
# (a) acknowledges in poll()


class AckOnPollSource(RabbitMQSourceTask):
    """Acknowledges each message as soon as ``poll()`` returns its record."""

    @override
    def poll(self) -> list[SourceRecord] | None:
        records = super().poll()
        for record in records or ():
            delivery = self._take(record)
            if delivery is not None:
                self._ack(delivery)
        return records

    @override
    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        """Acknowledged already (in poll)."""
        self._close_if_done()


class AckOnPollSourceConnector(RabbitMQSourceConnector):
    @override
    def task_class(self) -> type[SourceTask]:
        return AckOnPollSource


class AckOnPollDriver(RabbitMQSourceDriver):
    connector: ClassVar[type] = AckOnPollSourceConnector


# ---------------------------------------------------------------------------------------------
# (b) never acknowledges


class NeverAckSource(RabbitMQSourceTask):
    """Forgets each record in ``commit_record`` without acknowledging its message."""

    @override
    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        self._take(record)
        self._close_if_done()


class NeverAckSourceConnector(RabbitMQSourceConnector):
    @override
    def task_class(self) -> type[SourceTask]:
        return NeverAckSource


class NeverAckDriver(RabbitMQSourceDriver):
    connector: ClassVar[type] = NeverAckSourceConnector


# ---------------------------------------------------------------------------------------------
# (c) acknowledges everything outstanding in stop()


class AckOnStopSource(RabbitMQSourceTask):
    """Acknowledges every delivered message in ``stop()`` (``basic.ack`` multiple), then closes.

    The records in flight (Kafka may not have them: the producer's final flush has not
    finished when stop() comes first) and the messages buffered but never polled are
    acknowledged all the same, and lost.
    """

    @override
    def stop(self) -> None:
        if self._owner is not None and self._owner != threading.get_ident():
            connection = self._connection
            if connection is not None:
                with contextlib.suppress(Exception):  # closed already
                    connection.add_callback_threadsafe(self._ack_all_and_close)
            self._stopping.set()
            return
        self._ack_all_and_close()

    @override
    def commit(self) -> None:
        if self._stopping.is_set() and self._owner == threading.get_ident():
            self._ack_all_and_close()

    def _ack_all_and_close(self) -> None:
        self._stopping.set()
        channel = self._channel
        if channel is not None:
            with contextlib.suppress(Exception):  # a broken connection: nothing acknowledged
                channel.basic_ack(delivery_tag=0, multiple=True)
        self._unacked.clear()
        self._close()


class AckOnStopSourceConnector(RabbitMQSourceConnector):
    @override
    def task_class(self) -> type[SourceTask]:
        return AckOnStopSource


class AckOnStopDriver(RabbitMQSourceDriver):
    connector: ClassVar[type] = AckOnStopSourceConnector


# ---------------------------------------------------------------------------------------------
# (d) never acknowledges dropped or skipped records


class NoAckOnDropSource(RabbitMQSourceTask):
    """Acknowledges a message only with real metadata: dropped and skipped ones stay pending."""

    @override
    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        if metadata is None:
            self._take(record)  # forgotten, never acknowledged: redelivered forever
            self._close_if_done()
            return
        super().commit_record(record, metadata)


class NoAckOnDropSourceConnector(RabbitMQSourceConnector):
    @override
    def task_class(self) -> type[SourceTask]:
        return NoAckOnDropSource


class NoAckOnDropDriver(RabbitMQSourceDriver):
    connector: ClassVar[type] = NoAckOnDropSourceConnector
