"""The bodies of the distributed checks: the connector in distributed mode on a Spark cluster.

The checks are registered in their suites' modules (OFF-09 in ``off.spark``, RST-06 in
``rst``, RBL-05 and RBL-06 in ``rbl``). They need ``spark`` and run only with ``cdk certify
--runtime distributed``, which starts a standalone Spark cluster of 2 one-core workers for the
run; in the embedded runtime they are skipped with that reason. Each runs an in-process
distributed driver (herder, REST API, state in fresh Kafka topics) whose tasks are Spark tasks
on the cluster's executors, and kills, starts or restarts what a real cluster loses: a Spark
worker, the driver. They run alone (``exclusive``): they share the cluster and kill its workers.
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Sequence
from typing import Any

from harness._driver import Delivery
from harness.certify._checks import CheckFailed, CheckNotVerified
from harness.certify._context import CheckContext, WorkerHandle
from harness.certify._distributed import (
    distributed_properties,
    distributed_worker,
    spark_cluster,
    task_worker,
)
from harness.certify.suites._flows import (
    BATCH,
    Flow,
    await_running,
    brief_status,
    call,
    failures,
    trace_head,
)

#: Spark schedules a task in a few seconds on an idle cluster; a loaded 2-core machine and a
#: driver's SparkSession start take longer.
SPARK_STATE_TIMEOUT_S = 120.0
SPARK_DELIVERY_TIMEOUT_S = 120.0
#: How long every task may run at another count than tasks.max asks before RBL-06 fails: the
#: driver writes the new task configs as soon as the connector has restarted.
TASK_COUNT_SETTLED_S = 30.0
#: How long committed offsets must stay the same to count as settled (several flush intervals).
SETTLED_S = 2.0

__all__ = [
    "SPARK_NEEDS",
    "driver_restart",
    "resume_after_worker_loss",
    "tasks_max_distributed",
    "worker_leaves_and_rejoins",
]

#: What every distributed check needs from the run.
SPARK_NEEDS = ("kafka", "spark")


def _settle_offsets(ctx: CheckContext, w: WorkerHandle, name: str, flow: Flow) -> None:
    """Wait until what was delivered so far is committed (source offsets or sink group)."""
    if ctx.kind == "sink":
        group = f"connect-{name}"
        wanted = len(flow.sent)
        ctx.wait_for(
            lambda: sum(ctx.committed_offsets(group, flow.topic).values()) >= wanted,
            SPARK_DELIVERY_TIMEOUT_S,
            expected=f"the sink's group {group} to commit the {wanted} records it stored",
            actual=lambda: f"it committed {ctx.committed_offsets(group, flow.topic)}",
        )
        return
    seen: dict[str, Any] = {"value": None, "since": time.monotonic()}

    def settled() -> bool:
        answer = w.rest.get(f"/connectors/{name}/offsets")
        offsets = answer.json.get("offsets") if answer.status == 200 and answer.json else None
        now = time.monotonic()
        if offsets != seen["value"]:
            seen["value"], seen["since"] = offsets, now
            return False
        return bool(offsets) and now - seen["since"] >= SETTLED_S

    ctx.wait_for(
        settled,
        SPARK_DELIVERY_TIMEOUT_S,
        expected=f"the source's committed offsets (GET /connectors/{name}/offsets) to settle",
        actual=lambda: f"they read {seen['value']}",
        interval=0.25,
    )


def _bounded(
    ctx: CheckContext,
    flow: Flow,
    got: Sequence[Hashable],
    committed: Sequence[Hashable],
    what: str,
    why: str,
) -> int:
    """Fail when a ``committed`` record was delivered twice; return the duplicates.

    Only records written after the last commit may be delivered again (none for a connector
    that claims exactly-once delivery).
    """
    seen: dict[Hashable, int] = {}
    for record in got:
        seen[record] = seen.get(record, 0) + 1
    duplicates = sum(n - 1 for n in seen.values())
    ctx.evidence(f"duplicates {what}", duplicates)
    exactly_once = flow.driver.delivery is Delivery.EXACTLY_ONCE
    again = sorted(
        (r for r in (flow.sent if exactly_once else committed) if seen.get(r, 0) > 1), key=str
    )
    if again:
        if exactly_once:
            why = "the connector claims exactly-once delivery"
        shown = ", ".join(str(r) for r in again[:10]) + (" …" if len(again) > 10 else "")
        raise CheckFailed(
            f"no committed record delivered again {what} ({why})",
            f"{len(again)} of them were delivered more than once (ids {shown}); "
            f"{duplicates} duplicates in all",
        )
    return duplicates


def _await_moved(ctx: CheckContext, w: WorkerHandle, name: str, task: int, old: str) -> str:
    """Wait until ``task`` is RUNNING on another executor than ``old``; return the new one."""

    def moved() -> str | None:
        for t in w.status(name).get("tasks", []):
            if t["id"] == task and t["state"] == "RUNNING" and t.get("worker_id") != old:
                return str(t.get("worker_id"))
            if t["id"] == task and t["state"] == "FAILED":
                raise CheckFailed(
                    f"task {task} of {name} to be RUNNING again on another executor",
                    f"it FAILED: {trace_head(t.get('trace'))}",
                    details=t.get("trace"),
                )
        return None

    return str(
        ctx.wait_for(
            moved,
            SPARK_STATE_TIMEOUT_S,
            expected=f"task {task} of {name} to run again on another executor than {old}",
            actual=lambda: f"the status is {brief_status(w.status(name))}",
        )
    )


def _expect_all(
    w: WorkerHandle, name: str, flow: Flow, what: str, timeout: float
) -> list[Hashable]:
    """:meth:`Flow.expect_all`; when records are missing and a task FAILED, say which and why.

    A task can fail after the last status check (a moved task whose ``start()`` raises): the
    records it should have moved are missing, and its trace is the reason.
    """
    try:
        return flow.expect_all(what, timeout)
    except CheckFailed as exc:
        failed = failures(w.status(name))
        if not failed:
            raise
        who, trace = failed[0]
        raise CheckFailed(
            exc.expected,
            f"{exc.actual}; {who} FAILED: {trace_head(trace)}",
            details=trace or exc.details,
        ) from None


def resume_after_worker_loss(ctx: CheckContext) -> None:
    """The body of OFF-09 (registered in its suite's module)."""
    cluster = spark_cluster(ctx)
    killed: int | None = None
    with ctx.driver() as d, distributed_worker(ctx) as w:
        try:
            flow = Flow.open(ctx, d)
            name = ctx.unique("off09")
            flow.send(BATCH, "written before the kill")
            w.create(name, flow.config())
            await_running(w, name, when="on the Spark cluster", timeout=SPARK_STATE_TIMEOUT_S)
            _expect_all(
                w, name, flow, "the records written before the kill", SPARK_DELIVERY_TIMEOUT_S
            )
            _settle_offsets(ctx, w, name, flow)
            old, killed = task_worker(ctx, w, name, 0)
            flow.send(BATCH, "written as the Spark worker is killed")
            cluster.kill_worker(killed)
            ctx.evidence("killed Spark worker running the task", old)
            new = _await_moved(ctx, w, name, 0, old)
            ctx.evidence("executor running the task after the kill", new)
            flow.send(BATCH, "written after the task moved")
            got = _expect_all(
                w,
                name,
                flow,
                "every record, across the kill of the Spark worker",
                SPARK_DELIVERY_TIMEOUT_S,
            )
            duplicates = _bounded(
                ctx,
                flow,
                got,
                flow.phases[0][1],
                "after the Spark worker was killed",
                f"the first {BATCH} records were committed before the kill: only those "
                "written after it may be delivered again",
            )
            ctx.metric(
                "spark.worker-loss.duplicates", duplicates, "records", higher_is_better=False
            )
        finally:
            if killed is not None:
                cluster.start_worker(killed)


def driver_restart(ctx: CheckContext) -> None:
    """The body of RST-06 (registered in its suite's module)."""
    props = distributed_properties(ctx)
    with ctx.driver() as d:
        flow = Flow.open(ctx, d)
        name = ctx.unique("rst06")
        config = flow.config()
        with distributed_worker(ctx, props) as w:
            flow.send(BATCH, "written before the driver restart")
            w.create(name, config)
            await_running(w, name, when="on the Spark cluster", timeout=SPARK_STATE_TIMEOUT_S)
            _expect_all(
                w, name, flow, "the records written before the restart", SPARK_DELIVERY_TIMEOUT_S
            )
            tasks = len(w.status(name).get("tasks", []))
            call(w, "PUT", f"/connectors/{name}/pause")
            w.wait_state(name, "PAUSED", timeout=SPARK_STATE_TIMEOUT_S)
        flow.send(BATCH, "written while the driver was down")
        with distributed_worker(ctx, props) as w:
            status = w.wait_state(name, "PAUSED", tasks=tasks, timeout=SPARK_STATE_TIMEOUT_S)
            ctx.evidence("status after the driver restart", brief_status(status))
            call(w, "PUT", f"/connectors/{name}/resume")
            await_running(w, name, when="after the restart and resume", tasks=tasks)
            got = _expect_all(
                w,
                name,
                flow,
                "every record, written before and after the driver restart",
                SPARK_DELIVERY_TIMEOUT_S,
            )
            _bounded(
                ctx,
                flow,
                got,
                flow.phases[0][1],
                "after a clean driver restart",
                "the driver stopped cleanly: every delivered record was committed",
            )


def worker_leaves_and_rejoins(ctx: CheckContext) -> None:
    """The body of RBL-05 (registered in its suite's module)."""
    if ctx.kind == "source" and ctx.source_streams() < 2:
        raise CheckNotVerified(
            f"the driver {ctx.driver_class.__name__} declares one input stream: 2 tasks need "
            "2 streams (declare the streams the external system can hold)"
        )
    streams = 2 if ctx.kind == "source" else 1
    cluster = spark_cluster(ctx)
    killed: int | None = None
    with ctx.driver() as d, distributed_worker(ctx) as w:
        try:
            flow = Flow.open(ctx, d, partitions=2)
            name = ctx.unique("rbl05")
            flow.send(BATCH, "written with 2 workers", streams=streams)
            w.create(name, flow.config(tasks_max=2))
            await_running(
                w, name, when="on the Spark cluster", tasks=2, timeout=SPARK_STATE_TIMEOUT_S
            )
            _expect_all(
                w, name, flow, "the records written with 2 workers", SPARK_DELIVERY_TIMEOUT_S
            )
            old, killed = task_worker(ctx, w, name, 0)
            cluster.kill_worker(killed)
            flow.send(BATCH, "written while a Spark worker was gone", streams=streams)
            cluster.start_worker(killed)
            index, killed = killed, None
            ctx.evidence("Spark worker that left and rejoined", index)
            new = _await_moved(ctx, w, name, 0, old)
            ctx.evidence("executor running task 0 after the rejoin", new)
            await_running(w, name, when="after the worker rejoined", tasks=2)
            flow.send(BATCH, "written after the worker rejoined", streams=streams)
            _expect_all(
                w,
                name,
                flow,
                "every record, before, during and after the loss of a worker",
                SPARK_DELIVERY_TIMEOUT_S,
            )
        finally:
            if killed is not None:
                cluster.start_worker(killed)


def tasks_max_distributed(ctx: CheckContext) -> None:
    """The body of RBL-06 (registered in its suite's module)."""
    if ctx.kind == "source" and ctx.source_streams() < 2:
        raise CheckNotVerified(
            f"the driver {ctx.driver_class.__name__} declares one input stream: 2 tasks need "
            "2 streams (declare the streams the external system can hold)"
        )
    streams = 2 if ctx.kind == "source" else 1
    with ctx.driver() as d, distributed_worker(ctx) as w:
        flow = Flow.open(ctx, d, partitions=2)
        name = ctx.unique("rbl06")
        config = flow.config(tasks_max=1)
        flow.send(BATCH, "written with tasks.max=1", streams=streams)
        w.create(name, config)
        await_running(w, name, when="with tasks.max=1", tasks=1, timeout=SPARK_STATE_TIMEOUT_S)
        _expect_all(w, name, flow, "the records written with tasks.max=1", SPARK_DELIVERY_TIMEOUT_S)
        for before, after in ((1, 2), (2, 1)):
            changed = {**config, "tasks.max": str(after)}
            call(w, "PUT", f"/connectors/{name}/config", changed)
            ctx.evidence_config(changed)
            await_running(
                w,
                name,
                when=f"after tasks.max {before} -> {after}",
                tasks=after,
                timeout=SPARK_STATE_TIMEOUT_S,
                why=f"task_configs(max_tasks) must split the work across up to {after} tasks",
                # the driver regenerates task configs as the connector restarts, in seconds
                settled_s=TASK_COUNT_SETTLED_S,
            )
            flow.send(BATCH, f"written after tasks.max {before} -> {after}", streams=streams)
            _expect_all(
                w,
                name,
                flow,
                f"every record, written before and after tasks.max {before} -> {after}",
                SPARK_DELIVERY_TIMEOUT_S,
            )
