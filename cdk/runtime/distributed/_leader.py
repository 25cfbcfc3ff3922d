"""The leader's lease and its fenced writes.

**Election.** The drivers of a cluster elect their leader through the assignments topic and the
broker's transactions, not through a consumer group (the embedded broker can leave a group stuck
for ever when a member leaves while another joins). The leader holds a *lease*: it writes a
``leader`` record (its id, REST URL and epoch) when it takes the lead and again every
``heartbeat.interval.ms``. A standby that has read no leader record for ``session.timeout.ms``
(the leader died or froze), or reads that the leader resigned (a clean stop), takes the lead:

**Fencing.** The leader writes the config and assignments topics in transactions with
``transactional.id`` ``connect-cluster-<group.id>`` (Kafka's leader uses the same id). Taking
the lead starts with ``init_transactions``, which fences every earlier producer of that id: a
deposed leader that wakes up (frozen longer than the session timeout, then continued) fails its
next write with a fencing error, and nothing it tries to write is ever read (everyone reads
committed records only). It then stands down, as it does as soon as it reads another driver's
leader record. When two standbys take over at once, the later ``init_transactions`` wins and
the other one's writes are fenced.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cdk.errors import ConnectException

__all__ = ["FencedException", "TransactionalWriter"]

log = logging.getLogger("cdk.runtime.distributed")


class FencedException(ConnectException):
    """This driver's transactional writes were fenced: another driver leads now."""


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
        #: a fatal client error reported through the error callback (fencing, mostly)
        self._fatal: Any = None

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
            self._fatal = None
            producer = new_producer({**self._config, "error_cb": self._on_error})
            try:
                producer.init_transactions(self._timeout_s)
            except Exception as e:
                raise ConnectException(
                    f"Could not initialise the leader's transactions ({self.transactional_id}): {e}"
                ) from e
            self._producer = producer
            self._fenced = False

    def _on_error(self, error: Any) -> None:
        # fatal errors arrive here instead of being raised inside a delivery callback
        if error.fatal():
            self._fatal = error
        else:
            log.debug("The leader's producer: %s", error)

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
                try:
                    producer.flush(self._timeout_s)
                except SystemError as exc:
                    # the client raises a fatal error (fencing) while it runs the delivery
                    # callbacks of what it purged: the error is the SystemError's cause
                    cause = exc.__cause__ or exc.__context__
                    if isinstance(cause, KafkaException):
                        raise cause from exc
                    raise
                fatal = self._fatal
                if fatal is not None:
                    raise KafkaException(fatal)
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
