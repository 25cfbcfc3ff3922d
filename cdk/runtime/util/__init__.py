"""Small pieces the runtime builds on (Kafka Connect's ``util`` package).

:class:`KafkaBasedLog` reads and writes a compacted topic as a log of keyed records (the
offset, config and status stores of distributed mode are built on it); :class:`FetchGaps`
notices a fetch that skipped records and has the reader read them again (the sink task runner
and :class:`KafkaBasedLog` use it); :func:`ensure_topic` creates the topics the runtime itself
needs; :func:`combine_futures` and :func:`completed_future` join the futures of error reports;
:class:`CommittedReader` and :func:`read_committed` read a topic as a ``read_committed``
consumer does on Kafka, from the transaction markers (the embedded broker does not hide aborted
transactions itself); :class:`MarkerProbe` finds which offsets of a topic hold those markers.
"""

from __future__ import annotations

from cdk.runtime.util._committed import (
    CommittedMessage,
    CommittedReader,
    MarkerProbe,
    UnsupportedFetch,
    read_committed,
)
from cdk.runtime.util._fetch_gaps import FetchGaps
from cdk.runtime.util._futures import combine_futures, completed_future
from cdk.runtime.util._kafka_log import KafkaBasedLog, check_compacted
from cdk.runtime.util._topics import ensure_topic

__all__ = [
    "CommittedMessage",
    "CommittedReader",
    "FetchGaps",
    "KafkaBasedLog",
    "MarkerProbe",
    "check_compacted",
    "combine_futures",
    "completed_future",
    "ensure_topic",
    "read_committed",
    "UnsupportedFetch",
]
