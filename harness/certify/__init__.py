"""Certification: the conformance suites and the run that produces the submission bundle.

``cdk certify`` calls :func:`certify` and writes its :class:`CertificationRun` with
:func:`write_bundle`. The checks live in :mod:`harness.certify.suites`, a module or a package per
suite; each is a function registered with :func:`check` under a stable id, and
:func:`all_checks` finds them.
"""

from __future__ import annotations

from harness.certify._bundle import SecretLeakError, write_bundle
from harness.certify._checks import (
    KINDS,
    SUITES,
    Check,
    CheckFailed,
    CheckResult,
    CheckSkipped,
    Metric,
    Outcome,
    Series,
    check,
)
from harness.certify._context import CheckContext, DecodedRecord, ProcessWorker, WorkerHandle
from harness.certify._discovery import all_checks
from harness.certify._probe import SourceProbe, offset_key
from harness.certify._progress import TerminalProgress
from harness.certify._project import Project
from harness.certify._rest import RestClient, RestResponse
from harness.certify._runner import CertificationRun, ProgressListener, certify, plan, redact

__all__ = [
    # running
    "certify",
    "plan",
    "CertificationRun",
    "ProgressListener",
    "TerminalProgress",
    "write_bundle",
    "SecretLeakError",
    "Project",
    # checks
    "check",
    "all_checks",
    "Check",
    "CheckContext",
    "CheckFailed",
    "CheckSkipped",
    "CheckResult",
    "Outcome",
    "Metric",
    "Series",
    "KINDS",
    "SUITES",
    # what checks use
    "DecodedRecord",
    "WorkerHandle",
    "ProcessWorker",
    "RestClient",
    "RestResponse",
    "SourceProbe",
    "offset_key",
    "redact",
]
