"""The ACK suite: a source that acknowledges messages in its source system loses nothing.

A queue (RabbitMQ, MQTT, JMS, SQS, Pub/Sub) hands each message out and forgets it only once
the connector acknowledges it; what is not acknowledged comes again. Such a source cannot
resume from an offset, so its delivery rests on one rule: acknowledge a message in the source
system only once Kafka has its record (in ``commit_record``, called after Kafka's
acknowledgement, or with ``metadata`` None for a record a transformation dropped or
``errors.tolerance=all`` skipped). The driver declares ``source_kind =
SourceKind.ACKNOWLEDGING`` and reads the source system's own state with ``pending_ids()``;
the checks compare that state with what Kafka holds:

- ACK-01 stalls the broker: records are polled but Kafka acknowledges none, and the worker is
  stopped cleanly while the broker is still stopped: the source system must still hold every
  one of them; once the broker is back every message reaches Kafka and is acknowledged.
- ACK-02 kills the worker (``kill -9``) while records wait in the producer: every message is in
  Kafka or still held by the source system, and after a restart the only duplicates are the
  messages Kafka had whose acknowledgement never reached the source system.
- ACK-03 stops the worker cleanly: nothing Kafka has is left unacknowledged, and a restart
  redelivers nothing.
- ACK-04 drops records with a transformation and skips poison records under
  ``errors.tolerance=all``: they are acknowledged too, so the queue drains.

The checks are skipped, as not applicable, for a replayable source (the default kind).
"""

from __future__ import annotations

from harness.certify.suites.ack.checks import (
    ack_after_kafka,
    clean_stop_acknowledges,
    crash_redelivers_missing,
    dropped_acknowledged,
)

__all__ = [
    "ack_after_kafka",
    "clean_stop_acknowledges",
    "crash_redelivers_missing",
    "dropped_acknowledged",
]
