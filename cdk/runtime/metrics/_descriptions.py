"""What Kafka Connect's metrics are named and what each means.

The names, groups and tags are Kafka Connect's (``ConnectMetricsRegistry``): a metric is a
``(group, name, tags)`` triple such as ``("sink-task-metrics", "sink-record-read-rate",
{"connector": "c", "task": "0"})``. The group names are here, and each metric's description
(the HELP text of the Prometheus endpoint), read with :func:`description`.
"""

from __future__ import annotations

__all__ = [
    "CONNECTOR_GROUP",
    "ERROR_GROUP",
    "SINK_TASK_GROUP",
    "SOURCE_TASK_GROUP",
    "TASK_GROUP",
    "WORKER_GROUP",
    "description",
]

WORKER_GROUP = "connect-worker-metrics"
CONNECTOR_GROUP = "connector-metrics"
TASK_GROUP = "connector-task-metrics"
SOURCE_TASK_GROUP = "source-task-metrics"
SINK_TASK_GROUP = "sink-task-metrics"
ERROR_GROUP = "task-error-metrics"

# (group, name) -> what the metric means (the HELP text of the Prometheus endpoint)
_DESCRIPTIONS: dict[tuple[str, str], str] = {
    (WORKER_GROUP, "connector-count"): "Connectors held by this worker.",
    (WORKER_GROUP, "task-count"): "Tasks run by this worker.",
    (WORKER_GROUP, "connector-startup-attempts-total"): "Connector starts this worker attempted.",
    (WORKER_GROUP, "connector-startup-success-total"): "Connector starts that succeeded.",
    (WORKER_GROUP, "connector-startup-failure-total"): "Connector starts that failed.",
    (WORKER_GROUP, "connector-startup-success-percentage"): (
        "Fraction (0 to 1) of the connector starts in the window that succeeded."
    ),
    (WORKER_GROUP, "connector-startup-failure-percentage"): (
        "Fraction (0 to 1) of the connector starts in the window that failed."
    ),
    (WORKER_GROUP, "task-startup-attempts-total"): "Task starts this worker attempted.",
    (WORKER_GROUP, "task-startup-success-total"): "Task starts that succeeded.",
    (WORKER_GROUP, "task-startup-failure-total"): "Task starts that failed.",
    (WORKER_GROUP, "task-startup-success-percentage"): (
        "Fraction (0 to 1) of the task starts in the window that succeeded."
    ),
    (WORKER_GROUP, "task-startup-failure-percentage"): (
        "Fraction (0 to 1) of the task starts in the window that failed."
    ),
    (WORKER_GROUP, "connector-total-task-count"): "Tasks of the connector on this worker.",
    (WORKER_GROUP, "connector-running-task-count"): "RUNNING tasks of the connector.",
    (WORKER_GROUP, "connector-paused-task-count"): "PAUSED tasks of the connector.",
    (WORKER_GROUP, "connector-failed-task-count"): "FAILED tasks of the connector.",
    (WORKER_GROUP, "connector-unassigned-task-count"): "UNASSIGNED tasks of the connector.",
    (WORKER_GROUP, "connector-destroyed-task-count"): "DESTROYED tasks of the connector.",
    (WORKER_GROUP, "connector-restarting-task-count"): "RESTARTING tasks of the connector.",
    (CONNECTOR_GROUP, "status"): "The connector's state (lower case).",
    (CONNECTOR_GROUP, "connector-type"): "source or sink.",
    (CONNECTOR_GROUP, "connector-class"): "The connector's class.",
    (CONNECTOR_GROUP, "connector-version"): "The version the connector reports.",
    (TASK_GROUP, "status"): "The task's state (lower case).",
    (TASK_GROUP, "running-ratio"): "Fraction of its time the task spent RUNNING.",
    (TASK_GROUP, "pause-ratio"): "Fraction of its time the task spent PAUSED.",
    (TASK_GROUP, "offset-commit-max-time-ms"): "Longest successful offset commit (ms).",
    (TASK_GROUP, "offset-commit-avg-time-ms"): "Average successful offset commit (ms).",
    (TASK_GROUP, "offset-commit-success-percentage"): (
        "Fraction (0 to 1) of the offset commits in the window that succeeded."
    ),
    (TASK_GROUP, "offset-commit-failure-percentage"): (
        "Fraction (0 to 1) of the offset commits in the window that failed."
    ),
    (TASK_GROUP, "batch-size-max"): "Largest batch the task processed.",
    (TASK_GROUP, "batch-size-avg"): "Average batch the task processed.",
    (SOURCE_TASK_GROUP, "source-record-poll-rate"): (
        "Records returned by poll() per second (before the transformations)."
    ),
    (SOURCE_TASK_GROUP, "source-record-poll-total"): (
        "Records returned by poll() since the task started (before the transformations)."
    ),
    (SOURCE_TASK_GROUP, "source-record-write-rate"): (
        "Records written to Kafka per second (after the transformations; filtered records left "
        "out)."
    ),
    (SOURCE_TASK_GROUP, "source-record-write-total"): (
        "Records written to Kafka since the task started (after the transformations)."
    ),
    (
        SOURCE_TASK_GROUP,
        "poll-batch-max-time-ms",
    ): "Longest poll() returning records (ms).",
    (
        SOURCE_TASK_GROUP,
        "poll-batch-avg-time-ms",
    ): "Average poll() returning records (ms).",
    (SOURCE_TASK_GROUP, "source-record-active-count"): (
        "Records polled but not yet written to Kafka (nor dropped)."
    ),
    (SOURCE_TASK_GROUP, "source-record-active-count-max"): "Maximum of source-record-active-count.",
    (SOURCE_TASK_GROUP, "source-record-active-count-avg"): "Average of source-record-active-count.",
    (SOURCE_TASK_GROUP, "transaction-size-min"): (
        "The number of records in the smallest transaction the task has committed so far."
    ),
    (SOURCE_TASK_GROUP, "transaction-size-max"): (
        "The number of records in the largest transaction the task has committed so far."
    ),
    (SOURCE_TASK_GROUP, "transaction-size-avg"): (
        "The average number of records in the transactions the task has committed so far."
    ),
    (SINK_TASK_GROUP, "sink-record-read-rate"): (
        "Records read from Kafka per second (before the transformations)."
    ),
    (SINK_TASK_GROUP, "sink-record-read-total"): "Records read from Kafka since the task started.",
    (SINK_TASK_GROUP, "sink-record-send-rate"): (
        "Records put to the task per second (after the transformations; filtered records left out)."
    ),
    (SINK_TASK_GROUP, "sink-record-send-total"): "Records put to the task since it started.",
    (SINK_TASK_GROUP, "put-batch-max-time-ms"): "Longest put() call (ms).",
    (SINK_TASK_GROUP, "put-batch-avg-time-ms"): "Average put() call (ms).",
    (SINK_TASK_GROUP, "partition-count"): "Topic partitions assigned to the task.",
    (SINK_TASK_GROUP, "offset-commit-seq-no"): "Sequence number of the latest offset commit.",
    (SINK_TASK_GROUP, "offset-commit-completion-rate"): (
        "Offset commits completed successfully per second."
    ),
    (SINK_TASK_GROUP, "offset-commit-completion-total"): (
        "Offset commits completed successfully since the task started."
    ),
    (SINK_TASK_GROUP, "offset-commit-skip-rate"): (
        "Offset commit completions per second that arrived after a newer commit started (ignored)."
    ),
    (SINK_TASK_GROUP, "offset-commit-skip-total"): (
        "Offset commit completions that arrived after a newer commit started (ignored)."
    ),
    (SINK_TASK_GROUP, "fetch-gap-heal-rate"): (
        "Fetches per second that skipped records the broker holds, healed by reading again."
    ),
    (SINK_TASK_GROUP, "fetch-gap-heal-total"): (
        "Fetches that skipped records the broker holds, healed by reading the partition again "
        "from the offset expected, since the task started."
    ),
    (SINK_TASK_GROUP, "sink-record-active-count"): (
        "Records read from Kafka whose offsets are not committed yet."
    ),
    (SINK_TASK_GROUP, "sink-record-active-count-max"): "Maximum of sink-record-active-count.",
    (SINK_TASK_GROUP, "sink-record-active-count-avg"): "Average of sink-record-active-count.",
    (ERROR_GROUP, "total-record-failures"): "Record processing failures (each failed attempt).",
    (ERROR_GROUP, "total-record-errors"): "Records whose processing failed (after retries).",
    (ERROR_GROUP, "total-records-skipped"): "Records skipped because of errors.",
    (ERROR_GROUP, "total-retries"): "Operations retried.",
    (ERROR_GROUP, "total-errors-logged"): "Errors logged (errors.log.enable).",
    (ERROR_GROUP, "deadletterqueue-produce-requests"): "Writes attempted to the dead letter queue.",
    (
        ERROR_GROUP,
        "deadletterqueue-produce-failures",
    ): "Failed writes to the dead letter queue.",
    (ERROR_GROUP, "last-error-timestamp"): "When the task last met an error (epoch ms, 0: never).",
}


def description(group: str, name: str) -> str:
    """What metric ``name`` of ``group`` means (empty for an unknown metric)."""
    return _DESCRIPTIONS.get((group, name), "")
