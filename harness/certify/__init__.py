"""Certification: the conformance suites and the run that produces the submission bundle.

``cdk certify`` calls :func:`certify` and writes its :class:`CertificationRun` with
:func:`write_bundle`. The checks live in :mod:`harness.certify.suites`, a module or a package per
suite; each is a function registered with :func:`check` under a stable id, and
:func:`all_checks` finds them.
"""

from __future__ import annotations

from harness.certify._bundle import BundleError, SecretLeakError, check_report_dir, write_bundle
from harness.certify._checks import (
    KINDS,
    NOT_APPLICABLE,
    SUITES,
    Check,
    CheckFailed,
    CheckNotVerified,
    CheckResult,
    CheckSkipped,
    Metric,
    Outcome,
    Series,
    check,
)
from harness.certify._context import CheckContext, DecodedRecord, ProcessWorker, WorkerHandle
from harness.certify._discovery import all_checks
from harness.certify._hub import HubManifest, hub_manifest
from harness.certify._manifest import (
    BundleVerification,
    NotABundleError,
    sha256_file,
    verify_bundle,
)
from harness.certify._probe import SourceProbe, offset_key
from harness.certify._progress import TerminalProgress
from harness.certify._project import Project
from harness.certify._provenance import git_state
from harness.certify._rest import RestClient, RestResponse
from harness.certify._runner import CertificationRun, ProgressListener, certify, plan, redact
from harness.certify._submission import ProjectTests, TestResultsError, attach_tests, run_tests

__all__ = [
    # running
    "certify",
    "plan",
    "CertificationRun",
    "ProgressListener",
    "TerminalProgress",
    "write_bundle",
    "check_report_dir",
    "BundleError",
    "SecretLeakError",
    # the bundle's submission material and its verification
    "verify_bundle",
    "BundleVerification",
    "NotABundleError",
    "sha256_file",
    "git_state",
    "hub_manifest",
    "HubManifest",
    "ProjectTests",
    "TestResultsError",
    "attach_tests",
    "run_tests",
    "Project",
    # checks
    "check",
    "all_checks",
    "Check",
    "CheckContext",
    "CheckFailed",
    "CheckNotVerified",
    "CheckSkipped",
    "CheckResult",
    "Outcome",
    "Metric",
    "Series",
    "KINDS",
    "NOT_APPLICABLE",
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
