"""The connector inside Spark pipelines: ``format("cdk")`` on ``local[2]`` (``--runtime spark``).

They need ``pyspark`` (provided by ``cdk certify --runtime spark``; skipped with the reason in
the other runtimes) and run alone: each starts a local SparkSession (one per process) and
keeps both cores busy. The source checks read the connector with ``spark.readStream`` and
compare what arrives with what the embedded worker delivers; the sink check writes rows with
``writeStream`` and reads back what the sink stored.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections import Counter
from collections.abc import Hashable, Iterator
from pathlib import Path
from typing import Any

from harness.certify._checks import CheckFailed, check
from harness.certify._context import CheckContext
from harness.certify.suites._flows import BATCH, Flow, await_running

#: A local session starts in seconds; a loaded 2-core machine takes longer.
QUERY_TIMEOUT_S = 240.0
#: How long a replayed micro-batch may poll before its offsets count as not replayable.
REPLAY_TIMEOUT_MS = "20000"


@contextlib.contextmanager
def _spark() -> Iterator[Any]:
    """A local[2] session with the cdk format (an active session is reused and left running)."""
    from pyspark.sql import SparkSession

    import cdk.spark

    active = SparkSession.getActiveSession()
    if active is not None:
        cdk.spark.register(active)
        yield active
        return
    # Spark's Python processes (the data source planner too) must run this interpreter.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.master("local[2]").appName("cdk-certify-pipelines")
    settings = {
        **cdk.spark.session_conf(),
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "2",
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
    }
    for key, value in settings.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    try:
        cdk.spark.register(session)
        yield session
    finally:
        session.stop()


def _source_options(flow: Flow) -> dict[str, str]:
    return {**flow.config(), "cdk.replay.timeout.ms": REPLAY_TIMEOUT_MS, "cdk.idle.polls": "2"}


class _Collect:
    """foreachBatch: the (key, value) of each row as Connect data, the ids by the driver."""

    def __init__(self, ctx: CheckContext, driver: Any, fail_batch: int | None = None) -> None:
        self.ctx, self.driver, self.fail_batch = ctx, driver, fail_batch
        self.batches: list[tuple[int, list[Hashable], bool]] = []

    def __call__(self, df: Any, batch_id: int) -> None:
        from cdk.spark._datasource_rows import SinkRecordMaker

        maker = SinkRecordMaker(df.schema, "t")
        ids = []
        for row in df.collect():
            record = maker.record(row, 0, 0)
            ids.append(self.driver.record_id(record.key, record.value))
        failing = batch_id == self.fail_batch
        self.batches.append((batch_id, ids, failing))
        if failing:
            raise RuntimeError(f"failure injected by the check into micro-batch {batch_id}")

    def delivered(self) -> list[Hashable]:
        return [i for _, ids, failed in self.batches if not failed for i in ids]


def _stream(spark: Any, options: dict[str, str], sink: _Collect, checkpoint: Path) -> None:
    query = (
        spark.readStream.format("cdk")
        .options(**options)
        .load()
        .writeStream.foreachBatch(sink)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    try:
        if not query.awaitTermination(QUERY_TIMEOUT_S):
            raise CheckFailed(
                f"the streaming query to read every record within {QUERY_TIMEOUT_S:.0f} s",
                f"it was still running ({query.status})",
            )
    finally:
        query.stop()


def _failure(exc: BaseException) -> str:
    text = str(exc)
    marker = "ConnectException:"
    at = text.find(marker)
    return (text[at : at + 600] if at >= 0 else text[:600]).strip()


@check(
    "OFF-10",
    "Read through spark.readStream, the records match the embedded worker's, id for id",
    kinds=("source",),
    source_kind="replayable",
    needs=("kafka", "pyspark"),
    exclusive=True,
    fix=(
        "Emit the same records for the same input however the task is started: the "
        "``cdk`` Spark format starts each task from its source offsets and polls it like the "
        "worker does."
    ),
)
def spark_source_matches_worker(ctx: CheckContext) -> None:
    """``spark.readStream.format("cdk")`` yields the records the embedded worker delivers.

    Records are written into the source; the embedded worker delivers them to Kafka, and a
    streaming query (``Trigger.AvailableNow``) reads the same connector config on ``local[2]``.
    The ids of the query's rows must be those the worker delivered, each once. Not applicable
    to an acknowledging source (Spark replays micro-batches from offsets; a queue cannot).
    """
    ctx.require_replayable_source()
    with ctx.driver() as d:
        flow = Flow.open(ctx, d)
        flow.send(BATCH * 2, "written before the worker and the query ran")
        with ctx.worker() as w:
            name = ctx.unique("off10")
            w.create(name, flow.config())
            await_running(w, name, when="on the embedded worker")
            worker_ids = flow.expect_all("the records the worker delivers")
        collect = _Collect(ctx, d)
        with _spark() as spark:
            try:
                _stream(spark, _source_options(flow), collect, ctx.workdir / "off10-checkpoint")
            except CheckFailed:
                raise
            except Exception as exc:
                raise CheckFailed(
                    "the streaming query to read the connector", _failure(exc)
                ) from exc
        got = collect.delivered()
        ctx.evidence("ids read by spark.readStream", got[:20])
        if Counter(got) != Counter(worker_ids):
            missing = sorted(set(worker_ids) - set(got), key=str)[:10]
            extra = sorted(set(got) - set(worker_ids), key=str)[:10]
            dup = sorted((i for i, n in Counter(got).items() if n > 1), key=str)[:10]
            raise CheckFailed(
                f"the {len(worker_ids)} records the embedded worker delivered, each once",
                f"spark.readStream read {len(got)}: missing {missing}, unexpected {extra}, "
                f"duplicated {dup}",
            )


@check(
    "OFF-11",
    "A streaming query restarted from its checkpoint after a failure loses and repeats nothing",
    kinds=("source",),
    source_kind="replayable",
    needs=("pyspark",),
    exclusive=True,
    fix=(
        "Make source offsets replayable: a task started from a record's offset must emit "
        "exactly the records after it (no wall-clock or random offsets), so Spark can replay "
        "a micro-batch."
    ),
)
def spark_source_restart(ctx: CheckContext) -> None:
    """A streaming query killed and restarted from its checkpoint loses and repeats nothing.

    A query reads the first records, then more are written and the next query fails in its
    first micro-batch after reading it; a third query restarts from the checkpoint and Spark
    replays that micro-batch: it must hold the same records, and in the end every record was
    delivered once. A connector whose offsets cannot be replayed fails with the replay's error.
    Not applicable to an acknowledging source (a queue cannot replay a micro-batch).
    """
    ctx.require_replayable_source()
    with ctx.driver() as d:
        flow = Flow.open(ctx, d)
        checkpoint = ctx.workdir / "off11-checkpoint"
        options = _source_options(flow)
        delivered: list[Hashable] = []
        with _spark() as spark:
            try:
                flow.send(BATCH, "written before the first query")
                first = _Collect(ctx, d)
                _stream(spark, options, first, checkpoint)
                delivered += first.delivered()
                flow.send(BATCH, "written before the failing query")
                failing = _Collect(ctx, d, fail_batch=-1)
                failing.fail_batch = _next_batch(checkpoint)
                with contextlib.suppress(Exception):
                    _stream(spark, options, failing, checkpoint)
                attempted = [ids for _, ids, failed in failing.batches if failed]
                third = _Collect(ctx, d)
                _stream(spark, options, third, checkpoint)
                delivered += failing.delivered() + third.delivered()
            except CheckFailed:
                raise
            except Exception as exc:
                raise CheckFailed(
                    "the restarted query to replay the failed micro-batch", _failure(exc)
                ) from exc
        if (
            attempted
            and third.batches
            and sorted(third.batches[0][1], key=str) != sorted(attempted[0], key=str)
        ):
            raise CheckFailed(
                "the replayed micro-batch to hold the records of the failed attempt",
                f"the attempt read {attempted[0][:10]}..., the replay {third.batches[0][1][:10]}",
            )
        counts = Counter(delivered)
        missing = sorted(set(flow.sent) - set(counts), key=str)[:10]
        dup = sorted((i for i, n in counts.items() if n > 1), key=str)[:10]
        ctx.evidence("micro-batches", [(b, len(ids), f) for b, ids, f in third.batches])
        if missing or dup:
            raise CheckFailed(
                f"the {len(flow.sent)} records across the restart, each once",
                f"missing {missing}, duplicated {dup}",
            )


def _next_batch(checkpoint: Path) -> int:
    offsets = checkpoint / "offsets"
    ids = [int(p.name) for p in offsets.iterdir() if p.name.isdigit()] if offsets.exists() else []
    return max(ids, default=-1) + 1


@check(
    "OFF-12",
    "Written through writeStream, the sink stores every row (once when it claims exactly-once)",
    kinds=("sink",),
    needs=("pyspark",),
    exclusive=True,
    fix=(
        "Store what put() receives by the end of flush()/pre_commit(): Spark commits a "
        "micro-batch once its partitions' tasks flushed and closed."
    ),
)
def spark_sink_stores_every_row(ctx: CheckContext) -> None:
    """``df.writeStream.format("cdk")`` stores every row of two micro-batches.

    Rows with the driver's value (and key) schema are written as parquet files and streamed
    into the sink (``Trigger.AvailableNow``) twice, with new files in between. Every id must
    be stored; a sink that claims exactly-once must store each once.
    """
    from cdk.spark import connect_to_spark, to_spark_value

    with ctx.driver() as d:
        flow = Flow(ctx, d, ctx.topic())
        schema, key_schema = d.value_schema(), d.key_schema()
        with _spark() as spark:
            t = __import__("pyspark.sql.types", fromlist=["StructType"])
            value_type = connect_to_spark(schema)
            fields = (
                list(value_type.fields)
                if isinstance(value_type, t.StructType)
                else [t.StructField("value", value_type, schema.optional)]
            )
            if key_schema is not None:
                fields.append(t.StructField("_key", connect_to_spark(key_schema), True))
            row_type = t.StructType(fields)
            data = ctx.workdir / "off12-rows"

            def write(count: int, phase: str) -> None:
                ids = ctx.ids(count)
                flow.sent += ids
                flow.phases.append((phase, ids))
                rows = []
                for i in ids:
                    value = to_spark_value(schema, d.value(i, schema))
                    row = list(value) if isinstance(value_type, t.StructType) else [value]
                    if key_schema is not None:
                        row.append(to_spark_value(key_schema, d.key(i)))
                    rows.append(tuple(row))
                spark.createDataFrame(rows, row_type).write.mode("append").parquet(str(data))

            options = flow.config()
            for phase in ("the first micro-batch", "the second micro-batch"):
                write(BATCH, phase)
                query = (
                    spark.readStream.schema(row_type)
                    .parquet(str(data))
                    .writeStream.format("cdk")
                    .options(**options)
                    .option("checkpointLocation", str(ctx.workdir / "off12-checkpoint"))
                    .trigger(availableNow=True)
                    .start()
                )
                try:
                    query.awaitTermination(QUERY_TIMEOUT_S)
                    error = query.exception()
                    if error is not None:
                        raise CheckFailed(f"writeStream to write {phase}", _failure(error))
                finally:
                    query.stop()
        flow.expect_all("every row written through writeStream", 30.0)
        ctx.evidence("rows written", json.dumps(len(flow.sent)))
