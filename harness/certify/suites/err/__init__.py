"""The ERR suite: retriable errors, fatal errors, and errors.tolerance with the dead letter queue.

- ERR-01 makes the external system unavailable for a few seconds (the driver's ``outage()``):
  a correct connector raises :class:`cdk.RetriableException` (or retries by itself), keeps its
  task running and delivers every record once the system is back.
- ERR-02 breaks the external system for good (``break_external_system()``): a correct connector
  fails its task, soon, with a ConnectException-family error that says what went wrong, instead
  of hanging, swallowing the error or dying with a raw Python exception.
- ERR-03 runs with ``errors.tolerance=all``: poison records (unconvertible bytes for a sink, a
  failing harness transformation for a source) are skipped, a sink's go to the dead letter queue
  with the ``__connect.errors.*`` context headers, and every other record is delivered.
- ERR-04 and ERR-05 (:mod:`.broker`) stall the Kafka broker mid-stream: a source and a sink
  must lose nothing and recover without a restart.

The checks are in modules named for what they check: :mod:`.retriable` (ERR-01),
:mod:`.fatal` (ERR-02), :mod:`.tolerance` (ERR-03) and :mod:`.broker` (ERR-04, ERR-05); what
they share is in the private modules (the record flow in ``_common``, reading a task's trace in
``_traces``).
"""

from __future__ import annotations

from harness.certify.suites.err._traces import (
    TracedError,
    connector_error,
    describe_chain,
    parse_trace,
)
from harness.certify.suites.err.fatal import fatal_error
from harness.certify.suites.err.retriable import retriable_error
from harness.certify.suites.err.tolerance import tolerance

__all__ = [
    "TracedError",
    "connector_error",
    "describe_chain",
    "fatal_error",
    "parse_trace",
    "retriable_error",
    "tolerance",
]
