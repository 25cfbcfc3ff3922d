"""What a ``read_committed`` consumer reads, decided from the transaction markers.

The reader is the runtime's (:mod:`cdk.runtime.util._committed`, which the exactly-once worker
reads its offsets topic with): the embedded broker (Tansu 0.6.0) lists no aborted transaction in
its fetch answers, so its ``read_committed`` consumers receive aborted records; this reader hides
them from the markers, as a Kafka broker's answer would.
"""

from __future__ import annotations

from cdk.runtime.util import CommittedMessage, UnsupportedFetch, read_committed

__all__ = ["CommittedMessage", "UnsupportedFetch", "read_committed"]
