"""What the distributed checks run on: a ``cdk distributed`` driver on the run's Spark cluster.

In the distributed runtime (``cdk certify --runtime distributed``) the run starts a standalone
Spark cluster of 2 one-core workers; each check that needs Spark attaches to it
(:func:`spark_cluster`: it can kill and start workers) and runs the connector in an in-process
distributed driver (:func:`distributed_worker`: the herder, the REST API, the state in fresh
Kafka topics, the connector tasks on its workers, long-lived Spark tasks on the cluster's
executors).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

from harness.certify._checks import CheckFailed, CheckNotVerified
from harness.certify._context import JSON_CONVERTER, CheckContext, WorkerHandle
from harness.certify._rest import RestClient

__all__ = ["distributed_properties", "distributed_worker", "spark_cluster", "task_worker"]

#: Spark may retry a task this often (a task of a killed worker is retried once per kill).
TASK_MAX_FAILURES = "8"

#: How long :func:`task_worker` waits for the placement to settle (heartbeats every second).
SETTLE_TIMEOUT_S = 90.0


def spark_cluster(ctx: CheckContext) -> Any:
    """The run's standalone Spark cluster (a :class:`harness.providers.spark.StandaloneSpark`).

    Raises:
        CheckNotVerified: the run has no Spark cluster (not the distributed runtime).
    """
    if ctx.spark_dir is None:
        raise CheckNotVerified(
            "the run has no Spark cluster: the distributed checks run with "
            "cdk certify --runtime distributed"
        )
    from harness.providers.spark import StandaloneSpark

    return StandaloneSpark.attach(ctx.spark_dir)


def distributed_properties(ctx: CheckContext, **overrides: str) -> dict[str, str]:
    """Distributed worker properties: fresh state topics and group, the cluster's Spark keys."""
    cluster = spark_cluster(ctx)
    group = ctx.unique("cluster")
    props = {
        **{k: v for k, v in ctx.worker_properties().items() if k != "offset.storage.file.filename"},
        "group.id": group,
        "config.storage.topic": f"{group}-configs",
        "offset.storage.topic": f"{group}-offsets",
        "status.storage.topic": f"{group}-status",
        "config.storage.replication.factor": "1",
        "offset.storage.replication.factor": "1",
        "status.storage.replication.factor": "1",
        "key.converter": JSON_CONVERTER,
        "value.converter": JSON_CONVERTER,
        **cluster.spark_properties(),
        "spark.task.maxFailures": TASK_MAX_FAILURES,
        # a lost worker's tasks move once its heartbeats stop for this long
        "session.timeout.ms": "6000",
        "heartbeat.interval.ms": "1000",
    }
    props.update(overrides)
    return props


@contextlib.contextmanager
def distributed_worker(
    ctx: CheckContext, props: Mapping[str, str] | None = None
) -> Iterator[WorkerHandle]:
    """A distributed driver with its REST API on the run's cluster (stopped when the block ends).

    Start another with the same ``props`` to restart the driver: it recovers from the topics.
    """
    from cdk.spark import distributed_worker

    worker = distributed_worker(
        dict(props) if props is not None else distributed_properties(ctx),
        rest=True,
        extra_plugins=[ctx.connector_class],
    )
    try:
        worker.start()
    except Exception as exc:
        raise CheckFailed(
            "the distributed driver to start on the Spark cluster",
            f"it failed: {type(exc).__name__}: {exc}",
        ) from exc
    try:
        assert worker.rest_url is not None
        yield WorkerHandle(worker, RestClient(worker.rest_url), ctx)  # type: ignore[arg-type]
    finally:
        worker.stop()


def task_worker(ctx: CheckContext, w: WorkerHandle, name: str, task: int) -> tuple[str, int]:
    """The ``worker_id`` of a RUNNING task and the index of the Spark worker that runs it.

    Waits until the placement has settled first: every worker slot of the cluster heartbeats,
    the tasks are balanced across the workers, and the task's status names the worker whose
    heartbeat says it runs the task. Right after a connector starts, a worker that joined late
    takes tasks over from the first one; a status read then names a worker that is about to
    give the task away, and a check that kills that worker's Spark worker would kill the wrong
    one.

    Raises:
        CheckFailed: the task is not RUNNING, or runs on no worker of the cluster.
    """
    cluster = spark_cluster(ctx)
    herder = w.embedded.herder
    task_id = f"{name}-{task}"

    def settled() -> dict[str, Any] | None:
        tasks = {t["id"]: t for t in w.status(name).get("tasks", [])}
        status = tasks.get(task)
        if status is None or status["state"] != "RUNNING":
            return None
        live: dict[str, dict[str, Any]] = herder.workers()  # type: ignore[attr-defined]
        if len(live) < cluster.cores:
            return None  # a worker slot has not heartbeated yet: it will take tasks over
        loads = [len(info["tasks"]) for info in live.values()]
        if max(loads) - min(loads) > 1:
            return None  # unbalanced: the leader is moving tasks
        runners = [worker for worker, info in live.items() if task_id in info["tasks"]]
        if runners != [status.get("worker_id")]:
            return None
        return dict(status)

    status = ctx.wait_for(
        settled,
        SETTLE_TIMEOUT_S,
        expected=(
            f"task {task} of {name} RUNNING where the workers' heartbeats say, the tasks "
            f"balanced across the cluster's {cluster.cores} worker slots"
        ),
        actual=lambda: (
            f"the status is {w.status(name)}; the workers run {herder.workers()}"  # type: ignore[attr-defined]
        ),
    )
    worker_id = str(status.get("worker_id", ""))
    index = cluster.worker_of_executor(worker_id)
    if index is None:
        raise CheckFailed(
            f"task {task} of {name} to run on an executor of the Spark cluster",
            f"its status names worker_id {worker_id!r}, an executor of no worker",
        )
    return worker_id, index
