"""OFF-09: offsets across the loss of a Spark worker (distributed runtime).

The body is in :mod:`harness.certify.suites._spark`, with the other distributed checks.
"""

from __future__ import annotations

from harness.certify._checks import check
from harness.certify._context import CheckContext
from harness.certify.suites import _spark
from harness.certify.suites._spark import SPARK_NEEDS


@check(
    "OFF-09",
    "Resumes without loss when the Spark worker running its task dies mid-stream",
    needs=SPARK_NEEDS,
    exclusive=True,
    fix=(
        "Keep the position only in the offsets the worker stores (sources) or the records "
        "it commits (sinks), never in executor-local state: a rescheduled task starts on "
        "another machine and must resume from the committed position."
    ),
)
def resume_after_worker_loss(ctx: CheckContext) -> None:
    """The connector loses nothing when the Spark worker running its task is killed.

    The connector runs in distributed mode with one task. Once its first records are delivered
    and committed, more are written and the Spark worker running the task is killed
    (SIGKILL of the worker, its executor and Python workers). Spark reschedules the task on
    the other worker; it must be RUNNING there, resume from the committed position and deliver
    every record. Only the records written after the commit may arrive twice.
    """
    _spark.resume_after_worker_loss(ctx)
