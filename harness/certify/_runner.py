"""Running the suites: selection, environment, one context per check, results, redaction.

:func:`certify` is what ``cdk certify`` and the pytest plugin call. It starts the Kafka cluster
the run asks for, runs every selected check against every driver of the project, and returns a
:class:`CertificationRun` that the report writers turn into the bundle.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import platform
import secrets
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from harness._driver import ConnectorDriver, SourceDriver, SourceKind
from harness.certify._checks import (
    Check,
    CheckFailed,
    CheckNotVerified,
    CheckResult,
    CheckSkipped,
    Kind,
    Outcome,
)
from harness.certify._context import CheckContext, source_kind_skip
from harness.certify._discovery import all_checks
from harness.certify._evidence import SECRET_NAME, redact_value
from harness.certify._project import Project
from harness.certify._report_config import config_reference_html
from harness.certify._timing import Span, timing

if TYPE_CHECKING:
    from harness.providers.kafka import BrokerStall, Stall

__all__ = [
    "EXIT_CERTIFIABLE",
    "EXIT_FAILED",
    "EXIT_INCOMPLETE",
    "CertificationRun",
    "ProgressListener",
    "certify",
    "plan",
    "redact",
]

_log = logging.getLogger("harness.certify")
HIDDEN = "[hidden]"


class ProgressListener(Protocol):
    """Receives live progress (the CLI prints it; the pytest plugin ignores it)."""

    def started(self, run: CertificationRun, planned: int) -> None:
        """The run starts ``planned`` checks."""

    def check_started(self, check: Check, subject: str) -> None:
        """A check starts."""

    def check_finished(self, result: CheckResult) -> None:
        """A check ended."""

    def finished(self, run: CertificationRun) -> None:
        """Every check ended."""


@dataclass
class CertificationRun:
    """The results of one certification run and what the report shows besides them."""

    project: Project
    kafka: str
    only: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()
    results: list[CheckResult] = field(default_factory=list)
    environment: dict[str, str] = field(default_factory=dict)
    config_docs: dict[str, dict[str, str]] = field(default_factory=dict)
    started_at: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.timezone.utc))
    finished_at: dt.datetime | None = None
    secrets: set[str] = field(default_factory=set)
    #: What an isolated run had to give up on, one line each (``OFF-07 [Driver]: why``).
    abandoned: list[str] = field(default_factory=list)
    #: The seed of the values the checks generated (``cdk certify --seed`` reruns them).
    seed: int = 0
    #: Filled by :func:`~harness.certify.write_bundle`: where what was certified comes from,
    #: and the submission checklist (both JSON-ready).
    provenance: dict[str, Any] = field(default_factory=dict)
    submission: dict[str, Any] = field(default_factory=dict)
    #: Where the run's time went (per suite, the critical path): see
    #: :func:`harness.certify._timing.timing`; ``summary.json`` keeps it under ``timing``.
    timing: dict[str, Any] = field(default_factory=dict)

    def count(self, outcome: Outcome) -> int:
        """How many results ended with ``outcome``."""
        return sum(1 for r in self.results if r.outcome is outcome)

    @property
    def passed(self) -> bool:
        """No required check failed or errored (a waiver never excuses a check that failed)."""
        return not any(
            r.outcome in (Outcome.FAILED, Outcome.ERROR) and r.check.required for r in self.results
        )

    @property
    def complete(self) -> bool:
        """Every required check was verified: ran and passed or did not apply, or is waived.

        Not complete when checks were left out (``--only``, ``--skip``, the project's
        ``[tool.cdk.certify] skip``), when a required check is not verified (the driver or the
        environment lacks what it needs) and no waiver covers it, or when no check ran.
        """
        return (
            bool(self.results)
            and not self.only
            and not self.skip
            and not self.left_out
            and not self.unverified
        )

    @property
    def left_out(self) -> list[CheckResult]:
        """The results of checks left out by request (``--skip``, ``[tool.cdk.certify] skip``)."""
        return [
            r
            for r in self.results
            if r.outcome is Outcome.NOT_VERIFIED and r.message.startswith(_USER_SKIP)
        ]

    @property
    def unverified(self) -> list[CheckResult]:
        """The required checks left not verified and not waived."""
        return [
            r
            for r in self.results
            if r.outcome is Outcome.NOT_VERIFIED and r.check.required and r.waiver is None
        ]

    @property
    def waived(self) -> list[CheckResult]:
        """The results the project's waivers stand in for (not verified, with a reason)."""
        return [r for r in self.results if r.outcome is Outcome.NOT_VERIFIED and r.waiver]

    @property
    def exit_code(self) -> int:
        """0 CERTIFIABLE, 1 FAILED (a required check failed or errored), 3 INCOMPLETE."""
        if not self.passed:
            return EXIT_FAILED
        return EXIT_CERTIFIABLE if self.complete else EXIT_INCOMPLETE

    @property
    def duration_s(self) -> float:
        """Wall time of the run so far."""
        end = self.finished_at or dt.datetime.now(dt.timezone.utc)
        return (end - self.started_at).total_seconds()


_USER_SKIP = "left out by request"

#: Exit status of ``cdk certify`` for each verdict (2 is a usage error: the run could not start).
EXIT_CERTIFIABLE = 0
EXIT_FAILED = 1
EXIT_INCOMPLETE = 3

#: Where the connector runs in a certification run (``cdk certify --runtime``).
RUNTIMES = ("embedded", "distributed", "spark")
#: The Spark workers of a distributed run's standalone cluster.
SPARK_WORKERS = 2
#: Why a check that needs Spark is skipped in the embedded runtime.
NEEDS_DISTRIBUTED = (
    "runs the connector in distributed mode on a Spark cluster: needs --runtime distributed "
    f"(cdk certify --runtime distributed starts a standalone cluster of {SPARK_WORKERS} "
    "workers for it)"
)

#: Why a check of the connector inside Spark pipelines is skipped in the other runtimes.
NEEDS_SPARK_PIPELINES = (
    'runs the connector inside Spark pipelines (format("cdk") on local[2]): needs --runtime spark'
)


#: The environment variable that fixes the seed of every run (a CI that wants the same values
#: each time); ``--seed`` wins over it.
SEED_ENV = "CDK_CERTIFY_SEED"


def new_seed() -> int:
    """The seed of a run that was given none: ``CDK_CERTIFY_SEED`` when set, else a fresh one.

    Raises:
        ValueError: ``CDK_CERTIFY_SEED`` is not a non-negative integer (the message names it).
    """
    fixed = os.environ.get(SEED_ENV, "").strip()
    if fixed:
        if not fixed.isdigit():
            raise ValueError(f"{SEED_ENV} must be a non-negative integer, not {fixed!r}")
        return int(fixed)
    return secrets.randbelow(2**32)


def plan(
    project: Project, only: Sequence[str] = (), skip: Sequence[str] = ()
) -> list[tuple[Check, type[ConnectorDriver], str | None]]:
    """The (check, driver, skip reason or None) triples a run will go through, in order.

    Raises:
        ValueError: a selector in ``only``/``skip`` matches no check (it names it).
    """
    checks = all_checks()
    for selector in [*only, *skip]:
        if not any(c.matches(selector) for c in checks):
            known = sorted({c.suite for c in checks})
            raise ValueError(
                f"{selector!r} is neither a check id (like OFF-01) nor a suite ({', '.join(known)})"
            )
    out: list[tuple[Check, type[ConnectorDriver], str | None]] = []
    for position, driver in enumerate(project.drivers):
        kind: Kind = "source" if issubclass(driver, SourceDriver) else "sink"
        for c in checks:
            if c.per_project and position > 0:
                continue
            if kind not in c.kinds and not c.per_project:
                continue
            if only and not any(c.matches(s) for s in only):
                continue
            reason = None
            if any(c.matches(s) for s in skip):
                reason = f"{_USER_SKIP} on the command line (--skip)"
            for selector, why in project.skip.items():
                if c.matches(selector):
                    reason = f"{_USER_SKIP} in [tool.cdk.certify] skip: {why}"
            out.append((c, driver, reason))
    return out


def certify(
    project: Project | str | Path,
    *,
    kafka: str = "embedded",
    only: Sequence[str] = (),
    skip: Sequence[str] = (),
    listener: ProgressListener | None = None,
    workdir: Path | None = None,
    environment: Iterable[str] = ("kafka",),
    isolate: bool = False,
    check_timeout: float | None = None,
    log_level: str | None = None,
    jobs: int = 1,
    runtime: str = "embedded",
    seed: int | None = None,
    kafka_config: Mapping[str, str] | None = None,
    own_brokers: bool = True,
    durations: Mapping[tuple[str, str], float] | None = None,
) -> CertificationRun:
    """Run the certification suites against ``project`` and return the run.

    A failing connector does not raise: its failures are results.

    Args:
        project: a loaded project, or its directory.
        kafka: ``embedded``, ``embedded-tls``, ``testcontainers``, or bootstrap servers.
        only: check ids or suites to run (all when empty).
        skip: check ids or suites to skip.
        listener: progress callbacks.
        workdir: where checks keep their files (a temporary directory, removed, by default).
        environment: what this run provides besides Kafka (checks needing more are skipped).
        isolate: run the connector code in child processes (what ``cdk certify`` does), so a
            leaked thread, a hung ``stop()`` or a crash cannot hang or kill the caller: such a
            check is an ERROR that says it was abandoned, and the next checks run in a fresh
            child. The drivers must then be importable by name (module-level classes). In
            process (the default, and what the pytest plugin uses) checks run in the caller.
        check_timeout: with ``isolate``, the deadline of each check in seconds (by default
            300 s, three times that for checks that need Spark).
        log_level: with ``isolate``, the level at which the children print their log records
            on standard error (None: not printed; the report keeps each check's log).
        jobs: with ``isolate``, how many checks run at the same time, each in its own child
            process and its own context (topics, groups, connector names, directories)
            against the one Kafka; the checks marked exclusive run alone, after the others.
            The results are in plan order whatever the order they ended in, so the run and its
            reports are those of a serial run. Checks in process always run one at a time.
        runtime: ``embedded`` (the default), ``distributed`` or ``spark``. In ``spark`` the
            checks that need ``pyspark`` run the connector inside Spark pipelines
            (``format("cdk")`` on ``local[2]``). The checks that need Spark
            (the distributed ones) run only in the distributed runtime, on a standalone Spark
            cluster of 2 one-core workers started for the run (and stopped after it); in the
            embedded runtime they are skipped, with the reason.
        seed: the seed of the values the checks generate (SCH-09's hostile values): the same
            seed draws the same values, so a failure can be reproduced. None (the default)
            draws a fresh one; the run records it in its environment (``seed``).
        kafka_config: the cluster's client security settings in Kafka's terms
            (``security.protocol=SSL``, ``ssl.truststore.location``, ``sasl.*``...), given to
            every client and worker of the run (unprefixed, ``producer.`` and ``consumer.``);
            merged over those of the provider (``embedded-tls`` brings its own). Their secret
            values are redacted from the bundle like connector secrets.
        own_brokers: with ``isolate``, ``jobs`` above 1 and the embedded broker, each check
            that needs the broker to itself (``exclusive="kafka"``: ERR-04 and ERR-05 stall
            it, OFF-13 kills its worker) runs on an embedded broker of its own, next to the
            other checks. False (and on any other Kafka) they share the run's broker, which
            the run stops for them once the other checks on Kafka have ended.
        durations: with ``isolate`` and ``jobs`` above 1, how long each check took in an
            earlier run (seconds, by check id and subject, as ``summary.json`` lists them):
            the longest start first (``cdk certify`` reads them from the report directory's
            previous bundle). Which checks run, and how, does not change.

    Raises:
        ConnectException: Kafka could not be started, or (isolated) the child process that
            runs the checks could not start.
        ValueError: ``jobs`` is less than 1, or more than 1 without ``isolate``, or
            ``runtime`` is not one of :data:`RUNTIMES`.
    """
    from harness.providers.kafka import broker_stall, kafka_provider

    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, not {jobs}")
    if runtime not in RUNTIMES:
        raise ValueError(f"runtime must be one of {', '.join(RUNTIMES)}, not {runtime!r}")
    if jobs > 1 and not isolate:
        raise ValueError(
            "jobs > 1 needs isolate=True: checks run in process share the caller's process "
            "(its logging, its threads), so they run one at a time"
        )
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise ValueError(f"seed must be a non-negative int, not {seed!r}")
    loaded = project if isinstance(project, Project) else Project.load(project)
    planned = plan(loaded, only, skip)
    run = CertificationRun(loaded, kafka=kafka, only=tuple(only), skip=tuple(skip))
    run.seed = seed if seed is not None else new_seed()
    own_dir = workdir is None
    base = Path(tempfile.mkdtemp(prefix="cdk-certify-")) if workdir is None else workdir
    base.mkdir(parents=True, exist_ok=True)
    provided = frozenset(environment) | ({"spark"} if runtime == "distributed" else set())
    if runtime == "spark":  # the connector inside Spark pipelines, on local[2] (spark_checks)
        provided |= {"pyspark"}
    root = logging.getLogger()
    old_level = root.level
    if root.level > logging.INFO or root.level == logging.NOTSET:
        root.setLevel(logging.INFO)
    given = dict(kafka_config or {})
    external = bool(given) and _kafka_kind(kafka) == "external"
    provider = kafka_provider(kafka, **({"client_config": given} if external else {}))
    spark = _SparkForRun(runtime)
    begun = time.monotonic()
    spans: list[Span] = []
    extra_brokers: list[Any] = []
    try:
        if listener is not None:
            listener.started(run, len(planned))
        needs_kafka = any(reason is None and "kafka" in c.needs for c, _, reason in planned)
        bootstrap = ""
        if needs_kafka:
            provider.start()
            bootstrap = provider.bootstrap_servers
        security = {**provider.client_config(), **dict(kafka_config or {})}
        run.secrets |= {str(v) for k, v in security.items() if SECRET_NAME.search(k) and v}
        run.environment = _environment(loaded, kafka, provider)
        run.environment["kafka_security_protocol"] = str(
            security.get("security.protocol", "PLAINTEXT")
        )
        run.environment["runtime"] = runtime
        run.environment["seed"] = str(run.seed)
        if runtime == "distributed" and any(
            reason is None and "spark" in c.needs for c, _, reason in planned
        ):
            spark.start(base / "spark")
            run.environment["spark"] = spark.describe()
        stall = broker_stall(provider) if needs_kafka else None
        items = [(i, c, d, reason) for i, (c, d, reason) in enumerate(planned, start=1)]
        own: dict[int, tuple[str, BrokerStall | None]] = {}
        if own_brokers and isolate and jobs > 1 and kafka == "embedded" and stall is not None:
            own = _own_brokers(items, extra_brokers)
            if own:
                run.environment["own brokers"] = (
                    ", ".join(
                        f"{c.id} [{project_subject(loaded, c, d)}]"
                        for i, c, d, _ in items
                        if i in own
                    )
                    + ": each on an embedded broker of its own, next to the other checks"
                )
        if isolate:
            run.environment["isolation"] = (
                "each check's connector code in a child process"
                + (f" (deadline {check_timeout:g}s per check)" if check_timeout else "")
                + (
                    f"; {jobs} checks at a time, the exclusive ones alone"
                    if jobs > 1
                    else "; one check at a time"
                )
            )
            _run_isolated(
                run,
                items,
                bootstrap,
                security,
                kafka,
                provided,
                base,
                listener,
                stall,
                check_timeout,
                log_level,
                jobs,
                spark.directory,
                own=own,
                begun=begun,
                spans=spans,
                cost=_cost(loaded, items, durations),
            )
        else:
            run.config_docs = _config_docs(loaded)
            previous: int | None = None
            for index, c, driver, reason in items:
                if listener is not None:
                    listener.check_started(c, project_subject(loaded, c, driver))
                started = time.monotonic() - begun
                result = _run_one(
                    c,
                    driver,
                    reason,
                    loaded,
                    bootstrap,
                    kafka,
                    provided,
                    base / f"{index:03d}",
                    run,
                    broker=stall,
                    spark_dir=spark.directory,
                    seed=run.seed,
                    kafka_config=security,
                )
                run.results.append(result)
                if reason is None:
                    spans.append(
                        Span(
                            index,
                            c.id,
                            result.subject,
                            started,
                            time.monotonic() - begun,
                            result.cpu_s,
                            previous,
                        )
                    )
                    previous = index
                if listener is not None:
                    listener.check_finished(result)
    finally:
        try:
            spark.stop()
            for extra in extra_brokers:
                extra.stop()
            provider.stop()
        finally:
            root.setLevel(old_level)
            if own_dir:
                shutil.rmtree(base, ignore_errors=True)
    run.finished_at = dt.datetime.now(dt.timezone.utc)
    run.timing = timing(spans, time.monotonic() - begun)
    if listener is not None:
        listener.finished(run)
    return run


def _cost(
    project: Project,
    items: Sequence[tuple[int, Check, type[ConnectorDriver], str | None]],
    durations: Mapping[tuple[str, str], float] | None,
) -> dict[int, float]:
    """How long each check (by index) takes: as in an earlier run, else as typically."""
    from harness.certify._isolate import TYPICAL_COST

    if durations:
        return {
            i: durations[(c.id, project_subject(project, c, d))]
            for i, c, d, _ in items
            if (c.id, project_subject(project, c, d)) in durations
        }
    return {
        i: TYPICAL_COST[(c.id, "source" if issubclass(d, SourceDriver) else "sink")]
        for i, c, d, _ in items
        if (c.id, "source" if issubclass(d, SourceDriver) else "sink") in TYPICAL_COST
    }


def _own_brokers(
    items: Sequence[tuple[int, Check, type[ConnectorDriver], str | None]], started: list[Any]
) -> dict[int, tuple[str, BrokerStall | None]]:
    """Start an embedded broker for each check that needs the broker to itself, and say which.

    A check marked ``exclusive="kafka"`` (it stalls the broker, or kills the worker it runs)
    gets a broker of its own (about 0.2 s to start), so it runs next to every other check
    instead of holding back those on the shared broker. Each broker started is appended to
    ``started`` (the caller stops them).

    Returns:
        The index of each such check, with its broker's bootstrap servers and stall.
    """
    from cdk.kafka import EmbeddedKafka
    from harness.certify._isolate import runs
    from harness.providers.kafka import broker_stall

    own: dict[int, tuple[str, BrokerStall | None]] = {}
    for item in items:
        index, c, _, _ = item
        if c.exclusive != "kafka" or "kafka" not in c.needs or not runs(item):
            continue
        broker = EmbeddedKafka()
        started.append(broker)
        broker.start()
        own[index] = (broker.bootstrap_servers, broker_stall(broker))
    return own


def _run_isolated(
    run: CertificationRun,
    items: list[tuple[int, Check, type[ConnectorDriver], str | None]],
    bootstrap: str,
    security: dict[str, str],
    kafka: str,
    provided: frozenset[str],
    base: Path,
    listener: ProgressListener | None,
    stall: BrokerStall | None,
    check_timeout: float | None,
    log_level: str | None,
    jobs: int,
    spark_dir: str | None = None,
    *,
    own: Mapping[int, tuple[str, BrokerStall | None]] | None = None,
    begun: float | None = None,
    spans: list[Span] | None = None,
    cost: Mapping[int, float] | None = None,
) -> None:
    """Run ``items`` in child processes (see :mod:`harness.certify._isolate`).

    The listener hears of each check as it starts and ends; ``run.results`` and
    ``run.abandoned`` are in plan order (by index) once every check ended, each result redacted
    with every secret any check registered. The checks in ``own`` run on a broker of their
    own (index: bootstrap servers and stall). Each check that ran is appended to ``spans``
    (its start and end in seconds from ``begun``).
    """
    from cdk.errors import ConnectException
    from harness.certify._isolate import ChildFailed, run_isolated

    project = run.project

    def make_result(
        item: tuple[int, Check, type[ConnectorDriver], str | None], fields: dict[str, Any]
    ) -> CheckResult:
        secrets = fields.pop("_secrets", [])
        run.secrets |= set(secrets)
        result = CheckResult(check=item[1], **fields)
        redact(result, run.secrets)
        return result

    def error_result(
        item: tuple[int, Check, type[ConnectorDriver], str | None],
        message: str,
        details: str | None,
    ) -> CheckResult:
        _, c, driver, _ = item
        kind: Kind = "source" if issubclass(driver, SourceDriver) else "sink"
        result = CheckResult(
            c, project_subject(project, c, driver), kind, Outcome.ERROR, message, details=details
        )
        result.duration_s = time.monotonic() - started_at.get(item[0], time.monotonic())
        abandoned[item[0]] = f"{c.id} [{result.subject}]: {message.removeprefix('abandoned: ')}"
        redact(result, run.secrets)
        return result

    started_at: dict[int, float] = {}
    results: dict[int, CheckResult] = {}
    abandoned: dict[int, str] = {}

    own = dict(own or {})
    # the checks that will not run for what the run lacks (Spark...) wait for nothing
    inert = frozenset(i for i, c, _, reason in items if reason is None and c.needs - provided)
    begun = time.monotonic() if begun is None else begun
    after: dict[int, int | None] = {}
    ended_at: dict[int, float] = {}

    def on_started(item: tuple[int, Check, type[ConnectorDriver], str | None]) -> None:
        started_at[item[0]] = time.monotonic()
        if listener is not None:
            listener.check_started(item[1], project_subject(project, item[1], item[2]))

    def on_result(
        item: tuple[int, Check, type[ConnectorDriver], str | None],
        result: CheckResult,
        leaked: list[str],
    ) -> None:
        if leaked:
            note = (
                "abandoned: the check left non-daemon threads running after everything it "
                f"started was stopped: {'; '.join(leaked)}. A connector must end every thread "
                "it starts by the time stop() returns; the next checks run in a fresh process"
            )
            if result.outcome is Outcome.PASSED:
                result.outcome, result.message = Outcome.ERROR, note
            else:
                result.message = f"{result.message}\n{note}" if result.message else note
            abandoned[item[0]] = (
                f"{result.id} [{result.subject}]: left non-daemon threads running: "
                + "; ".join(leaked)
            )
            redact(result, run.secrets)
        results[item[0]] = result
        ended_at[item[0]] = time.monotonic()
        if listener is not None:
            listener.check_finished(result)

    def on_config_docs(docs: dict[str, dict[str, str]]) -> None:
        run.config_docs = docs

    def after_child() -> None:
        if stall is not None:
            stall.resume()  # a child killed in the middle of a stall leaves the broker stopped
        for _, own_stall in own.values():
            if own_stall is not None:
                own_stall.resume()  # harmless when not stopped

    job = {
        "project": project,
        "bootstrap": bootstrap,
        "kafka_config": security,
        "kafka": kafka,
        "provided": provided,
        "log_level": log_level,
        "broker": stall,
        "spark_dir": spark_dir,
        "seed": run.seed,
        "own_brokers": own,
    }
    try:
        run_isolated(
            items,
            job,
            base=base,
            timeout=check_timeout,
            make_result=make_result,
            error_result=error_result,
            on_started=on_started,
            on_result=on_result,
            on_config_docs=on_config_docs,
            after_child=after_child,
            jobs=jobs,
            stall=None if stall is None else lambda stop: stall.pause() if stop else stall.resume(),
            own=frozenset(own) | inert,
            after=after,
            cost=cost,
        )
    except ChildFailed as exc:
        raise ConnectException(str(exc)) from None
    finally:
        run.results = [results[i] for i in sorted(results)]
        run.abandoned = [abandoned[i] for i in sorted(abandoned)]
        if spans is not None:
            for item in items:
                index, c, _, reason = item
                if reason is None and index in started_at and index in results:
                    lane = (
                        "own broker"
                        if index in own
                        else "alone"
                        if c.exclusive is True and jobs > 1 and index not in inert
                        else "shared"
                    )
                    spans.append(
                        Span(
                            index,
                            c.id,
                            results[index].subject,
                            started_at[index] - begun,
                            ended_at.get(index, time.monotonic()) - begun,
                            results[index].cpu_s,
                            after.get(index),
                            lane,
                        )
                    )
        for result in run.results:  # a secret may have been registered by a later check
            redact(result, run.secrets)


def _run_one(
    c: Check,
    driver: type[ConnectorDriver],
    reason: str | None,
    project: Project,
    bootstrap: str,
    kafka: str,
    provided: frozenset[str],
    workdir: Path,
    run: CertificationRun,
    *,
    broker: Stall | None = None,
    spark_dir: str | None = None,
    seed: int = 0,
    kafka_config: Mapping[str, str] | None = None,
) -> CheckResult:
    kind: Kind = "source" if issubclass(driver, SourceDriver) else "sink"
    subject = project_subject(project, c, driver)
    result = CheckResult(c, subject, kind, Outcome.SKIPPED, waiver=project.waive.get(c.id))
    missing = sorted(c.needs - provided)
    if reason is not None:
        # not run, so not verified: SKIPPED means only "does not apply"
        result.outcome = Outcome.NOT_VERIFIED
        result.message = reason
        return result
    if c.source_kind is not None and kind == "source":
        skip = source_kind_skip(SourceKind(c.source_kind), driver)
        if skip is not None:
            result.message = skip.reason
            return result
    if missing == ["spark"]:
        result.message = NEEDS_DISTRIBUTED
        return result
    if missing == ["pyspark"]:
        result.message = NEEDS_SPARK_PIPELINES
        return result
    if missing:
        result.outcome = Outcome.NOT_VERIFIED
        result.message = (
            f"needs {', '.join(missing)}, which this run does not provide "
            f"(it provides {', '.join(sorted(provided))})"
        )
        return result
    workdir.mkdir(parents=True, exist_ok=True)
    ctx = CheckContext(
        check=c,
        project=project,
        driver_class=driver,
        bootstrap_servers=bootstrap,
        kafka_config=dict(kafka_config or {}),
        kafka_kind=_kafka_kind(kafka),
        environment=provided,
        workdir=workdir,
        broker=broker,
        spark_dir=spark_dir,
        seed=seed,
    )
    handler = _ListHandler(ctx.log_lines)
    logging.getLogger().addHandler(handler)
    start, cpu = time.monotonic(), _cpu_s()
    try:
        c.run(ctx)
        result.outcome = Outcome.PASSED
    except CheckFailed as exc:
        result.outcome = Outcome.FAILED
        result.expected, result.actual, result.details = exc.expected, exc.actual, exc.details
        result.message = str(exc)
    except CheckSkipped as exc:
        result.outcome = Outcome.SKIPPED
        result.message = exc.reason
    except CheckNotVerified as exc:
        result.outcome = Outcome.NOT_VERIFIED
        result.message = exc.reason
    except Exception as exc:  # noqa: BLE001 - a broken check or driver is an ERROR result
        result.outcome = Outcome.ERROR
        result.message = f"the check could not run: {type(exc).__name__}: {exc}"
        result.details = traceback.format_exc()
    finally:
        try:
            ctx.close()
        finally:
            logging.getLogger().removeHandler(handler)
            result.duration_s = time.monotonic() - start
            result.cpu_s = _cpu_s() - cpu
    result.metrics = ctx.metrics
    result.series = ctx.series
    if result.outcome is Outcome.PASSED and ctx.teardown_errors:
        last = ctx.teardown_errors[0].strip().splitlines()[-1]
        result.outcome = Outcome.ERROR
        result.message = (
            f"the driver's teardown() raised {last}: the check's external system was not "
            "cleaned up as the driver contract asks, so its result cannot stand (fix the "
            "driver's teardown(); the trace is in the evidence)"
        )
        result.details = "\n".join(ctx.teardown_errors)
    if result.outcome is Outcome.PASSED and ctx.notes:
        result.message = "; ".join(ctx.notes)
    result.evidence = ctx.recorded
    unmet = [m for m in ctx.metrics if m.met is False]
    if result.outcome is Outcome.PASSED and unmet:
        result.outcome = Outcome.FAILED
        result.expected = "; ".join(
            f"{m.name} {'>=' if m.higher_is_better else '<='} {m.threshold:g} {m.unit}"
            for m in unmet
        )
        result.actual = "; ".join(f"{m.name} measured {m.value:.4g} {m.unit}" for m in unmet)
        result.message = f"expected {result.expected}; but {result.actual}"
    run.secrets |= ctx.secrets
    redact(result, run.secrets)
    return result


def _cpu_s() -> float:
    """The CPU time of this process and of the processes it waited for, in seconds."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def project_subject(project: Project, c: Check, driver: type[ConnectorDriver]) -> str:
    """What a check is about: the project for per-project checks, else the driver's name."""
    return project.name if c.per_project else driver.__name__


def redact(result: CheckResult, secrets: Iterable[str]) -> None:
    """Replace every secret value in the result's texts and evidence with ``[hidden]``."""
    values = sorted((s for s in secrets if s), key=len, reverse=True)
    if not values:
        return
    result.evidence = redact_value(result.evidence, values)
    for name in ("message", "expected", "actual", "details", "waiver"):
        text = getattr(result, name)
        if text:
            for value in values:
                text = text.replace(value, HIDDEN)
            setattr(result, name, text)


class _ListHandler(logging.Handler):
    def __init__(self, lines: list[str]) -> None:
        super().__init__(logging.DEBUG)
        self.lines = lines
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.lines.append(self.format(record))
        except Exception:  # noqa: BLE001 - logging must never break a check
            self.handleError(record)


class _SparkForRun:
    """The standalone Spark cluster of a distributed run, started when a check needs it."""

    def __init__(self, runtime: str) -> None:
        self.runtime = runtime
        self.cluster: Any = None

    @property
    def directory(self) -> str | None:
        """The cluster's folder, which checks attach to (None when no cluster runs)."""
        return str(self.cluster.workdir) if self.cluster is not None else None

    def start(self, directory: Path) -> None:
        from harness.providers.spark import StandaloneSpark

        cluster = StandaloneSpark(SPARK_WORKERS, cores=1, memory="1g", workdir=directory)
        cluster.start()
        self.cluster = cluster

    def describe(self) -> str:
        from harness.providers.spark import spark_version

        return (
            f"PySpark {spark_version()}, a standalone cluster of {SPARK_WORKERS} one-core "
            f"workers ({self.cluster.master_url})"
        )

    def stop(self) -> None:
        if self.cluster is not None:
            self.cluster.stop()
            self.cluster = None


def _kafka_kind(spec: str) -> str:
    return spec if spec in ("embedded", "embedded-tls", "testcontainers") else "external"


def _environment(project: Project, kafka: str, provider: object) -> dict[str, str]:
    import confluent_kafka

    import cdk
    from cdk.kafka import tansu_version

    env = {
        "project": f"{project.name} {project.version}",
        "connect-cdk": cdk.__version__,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "platform": platform.platform(),
        "confluent-kafka": str(confluent_kafka.__version__),
        "librdkafka": confluent_kafka.libversion()[0],
        "kafka": _kafka_kind(kafka),
    }
    if _kafka_kind(kafka) != "external":
        env["broker"] = (
            f"Tansu {tansu_version()}"
            + (" behind a TLS-terminating proxy" if kafka == "embedded-tls" else "")
            if kafka in ("embedded", "embedded-tls")
            else repr(provider)
        )
    env["executable"] = sys.executable
    return env


def _config_docs(project: Project) -> dict[str, dict[str, str]]:
    from cdk.runtime import Plugins

    docs: dict[str, dict[str, str]] = {}
    plugins = Plugins()
    for driver in project.drivers:
        target = driver.connector
        try:
            cls = target if isinstance(target, type) else plugins.connector_class(target)
            definition = cls().config()
            docs[f"{cls.__module__}.{cls.__qualname__}"] = {
                "rst": definition.to_rst(),
                "html": definition.to_html(),
                "reference": config_reference_html(definition),
                "markdown": definition.to_markdown(),
            }
        except Exception as exc:  # noqa: BLE001 - CFG/DOC checks report it; the report says so
            docs[str(target)] = {"error": f"{type(exc).__name__}: {exc}"}
    return docs
