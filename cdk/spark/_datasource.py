"""The ``cdk`` PySpark data source: any connector as a Spark source or sink, batch and streaming.

Register it once per session with :func:`register`, then::

    df = (spark.read.format("cdk")
          .option("connector.class", "FileStreamSource")
          .option("file", "/data/in.txt").option("topic", "lines")
          .load())
    df.write.format("cdk").option("connector.class", "SqliteSink")...save()
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from cdk.spark._datasource_arrow import arrow_batches
from cdk.spark._datasource_arrow_write import ArrowSinkRecordMaker
from cdk.spark._datasource_options import Options, parse_options, start_connector
from cdk.spark._datasource_rows import SinkRecordMaker, infer_schema
from cdk.spark._datasource_stream import ConnectorStreamReader, ConnectorStreamWriter
from cdk.spark._datasource_tasks import read_bounded, write_arrow_partition
from cdk.spark._lazy import require
from cdk.spark._register import FORMAT

require("pyspark.sql.datasource")  # an actionable error when the spark extra is missing
from pyspark import TaskContext  # noqa: E402
from pyspark.sql.datasource import (  # noqa: E402
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    InputPartition,
    WriterCommitMessage,
)

__all__ = ["ConnectorDataSource", "ConnectorReader", "ConnectorWriter", "SinkCommitMessage"]

log = logging.getLogger(__name__)


def topic_option(options: Options) -> str:
    topics = [t.strip() for t in options.config.get("topics", "").split(",") if t.strip()]
    return topics[0] if topics else options.config.get("topic", options.name)


def _infer(options: Options) -> Any:
    connector, configs = start_connector(options, "source")
    try:
        records = []
        for config in configs:
            records += list(_first_records(options, config))
    finally:
        connector.stop()
    return infer_schema(records)


def _first_records(options: Options, config: dict[str, str]) -> Iterator[Any]:
    from cdk.spark._datasource_tasks import SourceTaskRun

    run = SourceTaskRun(options, config, {})
    try:
        for _ in range(max(options.idle_polls, 3)):
            records = run.poll()
            if records:
                yield from records
                return
    finally:
        run.stop()


@dataclass(frozen=True)
class SinkCommitMessage(WriterCommitMessage):
    """What one Spark partition of a write reports to the driver."""

    partition: int
    written: int
    skipped: int


class _Partition(InputPartition):
    """One task config of the connector."""

    def __init__(self, index: int, config: dict[str, str]) -> None:
        super().__init__(index)
        self.index = index
        self.config = config


class ConnectorReader(DataSourceReader):
    """Bounded read: each task from the start until it has nothing new."""

    def __init__(self, options: Options, schema: Any) -> None:
        self.options = options
        self.schema = schema

    def partitions(self) -> Sequence[Any]:
        """One partition per task config."""
        connector, configs = start_connector(self.options, "source")
        connector.stop()
        return [_Partition(i, c) for i, c in enumerate(configs)]

    def read(self, partition: Any) -> Iterator[Any]:
        """The rows of one task as Arrow record batches (on an executor)."""
        return arrow_batches(read_bounded(self.options, partition.config, {}), self.schema)


class ConnectorWriter(DataSourceArrowWriter):
    """Batch write: each Spark partition through a sink task."""

    def __init__(self, options: Options, schema: Any) -> None:
        self.options = options
        self.schema = schema
        SinkRecordMaker(schema, topic_option(options))  # bad schemas fail on the driver
        connector, self.configs = start_connector(options, "sink")
        connector.stop()
        self.write_id = options.write_id if options.write_id is not None else int(time.time())

    def write(self, iterator: Iterator[Any]) -> SinkCommitMessage:
        """Write one partition, as Arrow record batches (on an executor)."""
        partition = partition_id()
        maker = ArrowSinkRecordMaker(self.schema, topic_option(self.options))
        config = self.configs[partition % len(self.configs)]
        written, skipped = write_arrow_partition(
            iterator, self.options, config, maker, self.write_id, partition
        )
        return SinkCommitMessage(partition, written, skipped)

    def commit(self, messages: list[Any]) -> None:
        """Log what was written."""
        log_commit(self.options, messages, None)


class ConnectorDataSource(DataSource):
    """Any connector as a Spark data source and sink (``format("cdk")``)."""

    @classmethod
    def name(cls) -> str:
        """The format name."""
        return FORMAT

    def __init__(self, options: Any) -> None:
        super().__init__(options)
        self.parsed = parse_options(options)

    def schema(self) -> Any:
        """Inferred from the first records of the connector's tasks."""
        return _infer(self.parsed)

    def reader(self, schema: Any) -> Any:
        """The bounded reader."""
        return ConnectorReader(self.parsed, schema)

    def writer(self, schema: Any, overwrite: bool) -> Any:
        """The batch writer."""
        return ConnectorWriter(self.parsed, schema)

    def streamReader(self, schema: Any) -> Any:
        """The streaming reader (offsets: the connector's source offsets)."""
        return ConnectorStreamReader(self.parsed, schema)

    def streamWriter(self, schema: Any, overwrite: bool) -> Any:
        """The streaming writer (offsets: the micro-batch ids)."""
        return ConnectorStreamWriter(self.parsed, schema)


def log_commit(options: Options, messages: Sequence[Any], batch_id: int | None) -> None:
    """Log what a write committed."""
    written = sum(m.written for m in messages if m is not None)
    skipped = sum(m.skipped for m in messages if m is not None)
    log.info(
        "%s wrote %d rows%s (%d written before, skipped)",
        options.name,
        written,
        "" if batch_id is None else f" in micro-batch {batch_id}",
        skipped,
    )


def partition_id() -> int:
    task_context = TaskContext.get()
    return int(task_context.partitionId()) if task_context is not None else 0
