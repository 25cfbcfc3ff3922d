"""Run the certification suites with plain pytest: one test per planned check.

::

    pytest -p harness.pytest_plugin --cdk-project=. [--cdk-kafka=embedded] [--cdk-only=OFF]
           [--cdk-runtime=embedded|distributed] [--cdk-kafka-config=client.properties]

Each check the project's drivers plan becomes a test item of the project's ``pyproject.toml``,
``pyproject.toml::<id>[<subject>]`` (``-k OFF-01`` selects it): it passes when the check passes,
fails with the check's message (expected vs actual, then the details), and is skipped with the
check's reason (a check left not verified too, its reason starting ``not verified:``: pytest has
no such outcome; ``cdk certify`` gives the verdict). The Kafka named
by ``--cdk-kafka`` (``embedded``, ``embedded-tls``, ``testcontainers`` or bootstrap servers, whose
security settings ``--cdk-kafka-config`` gives) is started once, when the first check needs it,
and stopped at the end of the session. ``cdk certify`` runs the same
checks and writes the report bundle; pytest's ``--junitxml`` gives the JUnit part here.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from cdk.errors import ConnectException
from cdk.kafka import KafkaProvider
from harness._driver import ConnectorDriver
from harness.certify import Check, CheckResult, Outcome, Project, certify, plan
from harness.certify._runner import new_seed

__all__ = ["CertificationItem"]

_PLUGIN_NAME = "cdk-certify-session"


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add the ``--cdk-*`` options."""
    group = parser.getgroup("cdk", "connect-cdk certification")
    group.addoption(
        "--cdk-project",
        metavar="PATH",
        default=None,
        help="Certify the connector project at PATH (its pyproject.toml names the drivers).",
    )
    group.addoption(
        "--cdk-kafka",
        metavar="SPEC",
        default="embedded",
        help="Kafka for the checks: embedded (default), embedded-tls, testcontainers or "
        "host:port[,...].",
    )
    group.addoption(
        "--cdk-kafka-config",
        metavar="FILE",
        default=None,
        help="A properties file of the cluster's client security settings (security.protocol, "
        "ssl.*, sasl.*), as cdk certify --kafka-config.",
    )
    group.addoption(
        "--cdk-runtime",
        choices=("embedded", "distributed"),
        default="embedded",
        help="embedded (default; the distributed checks are skipped) or distributed (they run "
        "on a standalone Spark cluster of 2 workers, started for each of them).",
    )
    group.addoption(
        "--cdk-only",
        metavar="IDS",
        action="append",
        default=[],
        help="Plan only these checks (comma-separated ids or suites; repeatable).",
    )
    group.addoption(
        "--cdk-skip",
        metavar="IDS",
        action="append",
        default=[],
        help="Skip these checks (comma-separated ids or suites; repeatable).",
    )
    group.addoption(
        "--cdk-seed",
        metavar="N",
        type=int,
        default=None,
        help="The seed of the values the checks generate (SCH-09's hostile values), as "
        "cdk certify --seed: a failure's seed (in its evidence) draws the same values again "
        "(default: a fresh one for the session, shown in the header).",
    )


def _split(values: Sequence[str]) -> list[str]:
    return [part.strip().upper() for value in values for part in value.split(",") if part.strip()]


def pytest_configure(config: pytest.Config) -> None:
    """Load the project and plan its checks (a usage error names what is wrong)."""
    path = config.getoption("cdk_project")
    if path is None:
        return
    from harness.providers.kafka import kafka_provider

    spec = str(config.getoption("cdk_kafka"))
    only, skip = _split(config.getoption("cdk_only")), _split(config.getoption("cdk_skip"))
    try:
        kafka_provider(spec)
        project = Project.load(path)
        planned = plan(project, only, skip)
    except (ConnectException, ValueError) as exc:
        raise pytest.UsageError(f"--cdk-project {path}: {exc}") from None
    seed = config.getoption("cdk_seed")
    if seed is not None and seed < 0:
        raise pytest.UsageError(f"--cdk-seed {seed}: a seed is a non-negative integer")
    session = _CertificationSession(project, planned, spec)
    settings = config.getoption("cdk_kafka_config")
    if settings is not None:
        from cdk.config import load_properties

        try:
            session.kafka_config = load_properties(settings)
        except (OSError, ValueError) as exc:
            raise pytest.UsageError(f"--cdk-kafka-config {settings}: {exc}") from None
    session.runtime = str(config.getoption("cdk_runtime"))
    session.seed = seed if seed is not None else new_seed()
    config.pluginmanager.register(session, _PLUGIN_NAME)


class _CertificationSession:
    """The planned checks, the Kafka they share, and the hooks that run them."""

    def __init__(
        self,
        project: Project,
        planned: list[tuple[Check, type[ConnectorDriver], str | None]],
        kafka: str,
    ) -> None:
        self.project = project
        self.planned = planned
        self.kafka = kafka
        self.provider: KafkaProvider | None = None
        self.start_error: str | None = None
        self.starts = 0
        self.ran = 0
        self.workdir = Path(tempfile.mkdtemp(prefix="cdk-certify-pytest-"))
        self.runtime = "embedded"
        self.seed = 0
        self.kafka_config: dict[str, str] = {}

    def bootstrap(self) -> str:
        """The bootstrap servers of the session's Kafka, started on first use."""
        if self.start_error is not None:
            raise ConnectException(self.start_error)
        if self.provider is None:
            from harness.providers.kafka import kafka_provider

            external = bool(self.kafka_config) and self.kafka not in (
                "embedded",
                "embedded-tls",
                "testcontainers",
            )
            options = {"client_config": self.kafka_config} if external else {}
            provider = kafka_provider(self.kafka, **options)
            try:
                provider.start()
            except Exception as exc:
                self.start_error = f"Kafka ({self.kafka}) could not be started: {exc}"
                raise ConnectException(self.start_error) from exc
            self.provider = provider
            self.starts += 1
        return self.provider.bootstrap_servers

    def run(self, check: Check, driver: type[ConnectorDriver]) -> CheckResult:
        """Run one check against one driver and return its result."""
        bootstrap = self.bootstrap() if "kafka" in check.needs else self.kafka
        project = dataclasses.replace(self.project, drivers=[driver])
        self.ran += 1
        run = certify(
            project,
            kafka=bootstrap,
            only=[check.id],
            workdir=self.workdir / f"{self.ran:03d}-{check.id}",
            runtime=self.runtime,
            seed=self.seed,
            kafka_config={
                **(self.provider.client_config() if self.provider is not None else {}),
                **self.kafka_config,
            },
        )
        return run.results[0]

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(self, collector: pytest.Collector) -> Any:
        """Add the project's checks to what the session collects (so -k, -m and counts apply)."""
        report = yield
        if isinstance(collector, pytest.Session) and report.passed:
            report.result.append(
                _ProjectChecks.from_parent(
                    collector, path=self.project.path / "pyproject.toml", certification=self
                )
            )
        return report

    def pytest_report_header(self, config: pytest.Config) -> str:
        return (
            f"cdk certify: {self.project.name} {self.project.version}, "
            f"{len(self.planned)} checks planned, kafka {self.kafka}, seed {self.seed} "
            f"(--cdk-seed {self.seed} draws the same values again)"
        )

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        import shutil

        try:
            if self.provider is not None:
                self.provider.stop()
        finally:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        started = f"started {self.starts} time(s) and stopped" if self.starts else "not started"
        terminalreporter.write_line(
            f"cdk certify: {self.ran} check run(s); Kafka {self.kafka} {started}"
        )


class _ProjectChecks(pytest.File):
    """The project's ``pyproject.toml``, collected as the planned checks."""

    def __init__(self, *, certification: _CertificationSession, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.certification = certification

    def collect(self) -> list[CertificationItem]:
        items = []
        project = self.certification.project
        for check, driver, reason in self.certification.planned:
            subject = project.name if check.per_project else driver.__name__
            items.append(
                CertificationItem.from_parent(
                    self,
                    name=f"{check.id}[{subject}]",
                    check=check,
                    driver=driver,
                    subject=subject,
                    reason=reason,
                    certification=self.certification,
                )
            )
        return items


class _CheckDidNotPass(Exception):
    """Raised by a certification item whose check failed or could not run."""

    def __init__(self, result: CheckResult) -> None:
        super().__init__(result.message)
        self.result = result


class CertificationItem(pytest.Item):
    """One planned check against one driver."""

    def __init__(
        self,
        *,
        check: Check,
        driver: type[ConnectorDriver],
        subject: str,
        reason: str | None,
        certification: _CertificationSession,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.check = check
        self.driver = driver
        self.subject = subject
        self.reason = reason
        self.certification = certification
        self.result: CheckResult | None = None
        self.extra_keyword_matches.update({check.id, check.suite, subject})

    def runtest(self) -> None:
        if self.reason is not None:
            pytest.skip(self.reason)
        self.result = self.certification.run(self.check, self.driver)
        if self.result.outcome is Outcome.SKIPPED:
            pytest.skip(self.result.message)
        if self.result.outcome is Outcome.NOT_VERIFIED:
            waived = f" (waived: {self.result.waiver})" if self.result.waiver else ""
            pytest.skip(f"not verified: {self.result.message}{waived}")
        if self.result.outcome in (Outcome.FAILED, Outcome.ERROR):
            raise _CheckDidNotPass(self.result)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, _CheckDidNotPass):
            result = excinfo.value.result
            lines = [f"{result.id} {result.check.title} [{result.subject}]: {result.outcome}"]
            if result.expected is not None or result.actual is not None:
                lines += [f"Expected: {result.expected}", f"Actual:   {result.actual}"]
            else:
                lines.append(result.message)
            if result.details:
                lines += ["", result.details]
            return "\n".join(lines)
        if isinstance(excinfo.value, ConnectException):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"{self.check.id} {self.check.title} [{self.subject}]"
