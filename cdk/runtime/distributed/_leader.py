"""Which driver leads, and the leader's fenced writes.

**Election.** Every driver of a cluster joins the consumer group ``group.id`` (as Kafka Connect's
workers join it) and subscribes to the one-partition assignments topic with the cooperative
sticky assignor: the member that holds the partition leads, and keeps it while others come and
go. When the leader leaves (a clean stop) the group moves the partition at once; when it dies or
freezes, the coordinator removes it after ``session.timeout.ms`` without heartbeats and another
driver takes over. The group's other use by Kafka Connect means a Java worker and a kit driver
cannot share it at the same time: the broker refuses the second protocol, which keeps two
clusters from leading the same topics.

**Fencing.** The leader writes the config and assignments topics in transactions with
``transactional.id`` ``connect-cluster-<group.id>`` (Kafka's leader uses the same id). A new
leader's ``init_transactions`` fences the previous one: a deposed leader that wakes up (frozen
longer than the session timeout, then continued) fails its next write with a fencing error, and
nothing it tries to write is ever read (everyone reads committed records only). It then stands
down.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from cdk.errors import ConnectException

__all__ = [
    "ElectionListener",
    "FencedException",
    "LeaderElection",
    "TransactionalWriter",
]

log = logging.getLogger("cdk.runtime.distributed")


class FencedException(ConnectException):
    """This driver's transactional writes were fenced: another driver leads now."""


class ElectionListener(Protocol):
    """What the election tells the herder (from the election's thread)."""

    def elected(self) -> None:
        """This driver leads now."""

    def deposed(self) -> None:
        """This driver no longer leads."""


class LeaderElection:
    """A driver's membership of its cluster's group.

    Args:
        group_id: ``group.id``.
        topic: the assignments topic (one partition; its holder leads).
        consumer_config: librdkafka settings (``bootstrap.servers``, security).
        listener: told when this driver is elected or deposed.
        session_timeout_ms: ``session.timeout.ms``.
        heartbeat_interval_ms: ``heartbeat.interval.ms``.
    """

    def __init__(
        self,
        group_id: str,
        topic: str,
        consumer_config: Mapping[str, Any],
        listener: ElectionListener,
        *,
        session_timeout_ms: int = 10000,
        heartbeat_interval_ms: int = 3000,
    ) -> None:
        self.group_id = group_id
        self.topic = topic
        self._config = {
            **consumer_config,
            "group.id": group_id,
            "partition.assignment.strategy": "cooperative-sticky",
            "session.timeout.ms": session_timeout_ms,
            "heartbeat.interval.ms": min(heartbeat_interval_ms, session_timeout_ms // 3),
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            "auto.offset.reset": "latest",
        }
        self._listener = listener
        self._consumer: Any = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._leading = False
        self._error: str | None = None

    @property
    def leading(self) -> bool:
        """Whether this driver holds the partition now."""
        return self._leading

    @property
    def error(self) -> str | None:
        """Why the group could not be joined, when it could not (e.g. a Java worker is in it)."""
        return self._error

    def start(self) -> None:
        """Join the group; the election runs on a thread of its own."""
        from cdk.kafka import new_consumer

        self._consumer = new_consumer(dict(self._config))
        self._consumer.subscribe(
            [self.topic],
            on_assign=self._on_assign,
            on_revoke=self._on_revoke,
            on_lost=self._on_lost,
        )
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="cdk-leader-election", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Leave the group (another driver takes over at once); stop leading first.

        The member leaves only once the group is stable (or after the session timeout): a
        member that leaves while the group re-forms can leave it stuck on brokers that keep a
        departed member (the embedded Tansu, as for sink tasks: :mod:`cdk.runtime._leave_order`),
        and no other driver would ever take the lead.
        """
        self._await_stable(self._config["session.timeout.ms"] / 1000.0 + 5.0)
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None
        consumer, self._consumer = self._consumer, None
        if consumer is not None:
            try:
                consumer.close()  # leaves the group: revokes first, so deposed() runs
            except Exception:
                log.exception("Could not leave the group %s", self.group_id)
        if self._leading:
            self._set_leading(False)

    def _await_stable(self, timeout_s: float) -> None:
        """Wait (the election's thread still polling) until the group is not re-forming."""
        from confluent_kafka import ConsumerGroupState

        from cdk.kafka import new_admin

        if self._consumer is None:
            return
        settings = {k: v for k, v in self._config.items() if not _consumer_only(k)}
        admin = new_admin(settings)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                future = admin.describe_consumer_groups([self.group_id], request_timeout=5)
                state = future[self.group_id].result().state
            except Exception:  # noqa: BLE001 - cannot tell: leave now
                return
            if state in (ConsumerGroupState.STABLE, ConsumerGroupState.EMPTY):
                return
            time.sleep(0.2)  # polling the coordinator while the group re-forms
        log.warning(
            "Group %s did not settle within %.0f s; leaving it anyway", self.group_id, timeout_s
        )

    def _run(self) -> None:
        from confluent_kafka import KafkaError

        while not self._stop.is_set():
            consumer = self._consumer
            if consumer is None:
                return
            try:
                message = consumer.poll(0.2)
            except Exception as e:  # noqa: BLE001 - logged; the loop goes on
                log.warning("Leader election: %s", e)
                continue
            if message is None or message.error() is None:
                continue
            error = message.error()
            if error.code() == KafkaError._PARTITION_EOF:
                continue
            text = str(error)
            if error.code() == KafkaError.INCONSISTENT_GROUP_PROTOCOL:
                text = (
                    f"group.id {self.group_id} is in use by members of another protocol (a Java "
                    "Kafka Connect cluster?): a kit driver cannot lead the same topics while they "
                    "run"
                )
            if text != self._error:
                log.error("Leader election in group %s: %s", self.group_id, text)
            self._error = text

    def _on_assign(self, consumer: Any, partitions: Sequence[Any]) -> None:
        if partitions:
            # the partition's records are not needed here: the herder follows the topic
            consumer.pause(list(partitions))
            self._error = None
            self._set_leading(True)

    def _on_revoke(self, _consumer: Any, partitions: Sequence[Any]) -> None:
        if partitions and self._leading:
            self._set_leading(False)

    def _on_lost(self, _consumer: Any, partitions: Sequence[Any]) -> None:
        if self._leading:
            log.warning("This driver lost its place in group %s (session expired)", self.group_id)
            self._set_leading(False)

    def _set_leading(self, leading: bool) -> None:
        self._leading = leading
        log.info(
            "%s the partition of %s in group %s",
            "Holds" if leading else "Gave up",
            self.topic,
            self.group_id,
        )
        try:
            if leading:
                self._listener.elected()
            else:
                self._listener.deposed()
        except Exception:
            log.exception("The election listener failed")


class TransactionalWriter:
    """The leader's producer: every send is a transaction of its own.

    Args:
        transactional_id: ``connect-cluster-<group.id>``.
        producer_config: librdkafka settings (``bootstrap.servers``, security).
        timeout_s: how long initialising, one write or one commit may take.
        on_fenced: called when a write finds this producer fenced.
    """

    def __init__(
        self,
        transactional_id: str,
        producer_config: Mapping[str, Any],
        *,
        timeout_s: float = 30.0,
        on_fenced: Callable[[], None] | None = None,
    ) -> None:
        self.transactional_id = transactional_id
        self._config = {
            **producer_config,
            "transactional.id": transactional_id,
            "acks": "all",
            "enable.idempotence": True,
            "linger.ms": 0,
        }
        self._timeout_s = timeout_s
        self._on_fenced = on_fenced
        self._producer: Any = None
        self._lock = threading.Lock()
        self._fenced = False

    @property
    def fenced(self) -> bool:
        """Whether a newer leader fenced this producer."""
        return self._fenced

    def start(self) -> None:
        """Create the producer and fence every earlier one with the same id.

        Raises:
            ConnectException: the transaction coordinator cannot be reached in time.
        """
        from cdk.kafka import new_producer

        with self._lock:
            producer = new_producer(dict(self._config))
            try:
                producer.init_transactions(self._timeout_s)
            except Exception as e:
                raise ConnectException(
                    f"Could not initialise the leader's transactions ({self.transactional_id}): {e}"
                ) from e
            self._producer = producer
            self._fenced = False

    def close(self) -> None:
        """Drop the producer (a later :meth:`start` fences again)."""
        with self._lock:
            self._producer = None

    def send(self, topic: str, records: Sequence[tuple[bytes, bytes | None]]) -> list[int]:
        """Write ``records`` to ``topic`` in one transaction; their offsets.

        Raises:
            FencedException: another driver leads now (nothing was written).
            ConnectException: the write failed otherwise (it was aborted).
        """
        from confluent_kafka import KafkaException

        with self._lock:
            producer = self._producer
            if producer is None or self._fenced:
                raise FencedException(
                    "This driver does not lead the cluster any more (its writes are fenced)"
                )
            offsets = [-1] * len(records)
            errors: list[Any] = []

            def on_delivery(index: int) -> Callable[[Any, Any], None]:
                def done(err: Any, msg: Any) -> None:
                    if err is not None:
                        errors.append(err)
                    else:
                        offsets[index] = msg.offset()

                return done

            try:
                producer.begin_transaction()
                for index, (key, value) in enumerate(records):
                    producer.produce(topic, key=key, value=value, on_delivery=on_delivery(index))
                producer.flush(self._timeout_s)
                if errors:
                    raise ConnectException(f"Could not write to {topic}: {errors[0]}")
                producer.commit_transaction(self._timeout_s)
            except KafkaException as e:
                error = e.args[0] if e.args else None
                if error is not None and _is_fenced(error):
                    self._fenced = True
                    self._producer = None
                    log.error("This driver's writes were fenced: another driver leads now")
                    callback = self._on_fenced
                    if callback is not None:
                        threading.Thread(target=callback, daemon=True).start()
                    raise FencedException(
                        "This driver does not lead the cluster any more (its writes are fenced)"
                    ) from e
                _abort(producer, self._timeout_s)
                raise ConnectException(f"Could not write to {topic}: {e}") from e
            except ConnectException:
                _abort(producer, self._timeout_s)
                raise
            return offsets


def _consumer_only(key: str) -> bool:
    return key in {
        "group.id",
        "partition.assignment.strategy",
        "session.timeout.ms",
        "heartbeat.interval.ms",
        "enable.auto.commit",
        "enable.auto.offset.store",
        "auto.offset.reset",
    }


def _is_fenced(error: Any) -> bool:
    from confluent_kafka import KafkaError

    code = error.code() if hasattr(error, "code") else None
    return bool(
        code in (KafkaError._FENCED, KafkaError.PRODUCER_FENCED, KafkaError.INVALID_PRODUCER_EPOCH)
        or (hasattr(error, "fatal") and error.fatal())
    )


def _abort(producer: Any, timeout_s: float) -> None:
    try:
        producer.abort_transaction(timeout_s)
    except Exception:
        log.debug("Could not abort the leader's transaction", exc_info=True)
