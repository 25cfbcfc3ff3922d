"""FileStream source and sink: Kafka's classic example connectors, on the public ``cdk`` API.

``FileStreamSourceConnector`` tails a text file and writes each line to a topic as a STRING
value, resuming from the byte position stored in its offsets; ``FileStreamSinkConnector``
appends each record's value to a file (or stdout). Their keys, defaults and offsets match Kafka's
``org.apache.kafka.connect.file`` connectors, so Kafka's quickstart properties run unchanged.
"""

from __future__ import annotations

from reference_connectors.filestream._sink import FileStreamSinkConnector, FileStreamSinkTask
from reference_connectors.filestream._source import (
    FileStreamSourceConnector,
    FileStreamSourceTask,
)

__all__ = [
    "FileStreamSinkConnector",
    "FileStreamSinkTask",
    "FileStreamSourceConnector",
    "FileStreamSourceTask",
]
