"""``cdk certify``: run the certification suites against a connector project and write the bundle.

Exit status, one per verdict: 0 CERTIFIABLE (every required check passed, did not apply, or is
waived while not verified), 1 FAILED (a required check failed or could not run), 3 INCOMPLETE
(a required check was not verified, checks were left out by ``--only``/``--skip``/``[tool.cdk.
certify] skip``, or none ran); 2 when the run could not start: a usage mistake (an unknown
check id, no ``pyproject.toml`` or ``[tool.cdk]`` table, a driver that cannot be imported, an
invalid waiver, a bad ``--kafka``) or a Kafka that could not be started.

``cdk certify verify BUNDLE`` checks a written bundle against its ``SHA256SUMS``: 0 intact, 1 a
file changed, missing or added (each named), 2 not a bundle. ``verify`` as the first argument
always means the subcommand; certify a project directory named ``verify`` as ``./verify``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import logging
import shutil
import signal
import sys
import tempfile
import threading
import traceback
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import click

from cdk.errors import ConnectException

if TYPE_CHECKING:
    from harness.certify import Check, Project, ProjectTests

__all__ = ["certify"]

#: How many checks ``cdk certify`` runs at the same time by default. The checks mostly wait on
#: Kafka (consumer group joins, restarts), not on the CPU: measured on 2 quiet cores, the SQLite
#: reference certification took 63 s with 6, 47 s with 10, 44 s with 12, 41 s with 14 and 42 s
#: with 20, using 33 to 41 s of the machine's CPU (docs/guide/certify.rst has the figures).
DEFAULT_JOBS = 12

_KAFKA_HELP = (
    "The Kafka to run on: 'embedded' (a Tansu broker, the default), 'embedded-tls' (the same "
    "broker reached over TLS only, with a throw-away certificate authority), 'testcontainers' "
    "(a broker in a Docker container) or the bootstrap servers of a cluster (host:port[,...]; "
    "its security settings in --kafka-config)."
)


def _kafka_settings(path: Path | None) -> dict[str, str]:
    """The ``--kafka-config`` properties, checked as a Kafka admin client would take them."""
    if path is None:
        return {}
    from cdk.config import load_properties
    from cdk.kafka._clients import check_client_config

    try:
        settings = load_properties(path)
    except (OSError, ValueError) as exc:
        raise click.BadParameter(
            f"cannot read {path}: {exc}", param_hint="'--kafka-config'"
        ) from None
    if "bootstrap.servers" in settings:
        raise click.BadParameter(
            f"{path} sets bootstrap.servers: give the cluster with --kafka HOST:PORT",
            param_hint="'--kafka-config'",
        )
    rejected = check_client_config("admin", settings)
    if rejected:
        raise click.BadParameter("; ".join(rejected.values()), param_hint="'--kafka-config'")
    return settings


class _CannotRun(click.ClickException):
    """The run could not start (exit status 2), with a message saying what is wrong."""

    exit_code = 2


def _split(values: Sequence[str]) -> list[str]:
    return [part.strip().upper() for value in values for part in value.split(",") if part.strip()]


def _checks() -> list[Check]:
    try:
        from harness.certify import all_checks

        return all_checks()
    except ModuleNotFoundError as exc:  # an extra is missing (hypothesis, tomli ...)
        raise _CannotRun(
            f"cdk certify needs the optional dependency '{exc.name}', which is not installed. "
            "Install it with: pip install 'connect-cdk[certify]'"
        ) from None


def _validate_selectors(checks: Sequence[Check], selectors: Sequence[str], option: str) -> None:
    suites = sorted({c.suite for c in checks})
    for selector in selectors:
        if not any(c.matches(selector) for c in checks):
            raise click.BadParameter(
                f"{selector!r} is neither a check id (like {checks[0].id if checks else 'OFF-01'})"
                f" nor a suite ({', '.join(suites)}); `cdk certify --list` shows them all",
                param_hint=f"'{option}'",
            )


def _load_project(path: Path) -> Project:
    from harness.certify import Project

    if not path.exists():
        raise _CannotRun(f"No connector project at {path}: the path does not exist.")
    try:
        return Project.load(path)
    except ConnectException as exc:
        raise _CannotRun(str(exc)) from None
    except Exception as exc:  # noqa: BLE001 - a driver module that fails to import is a user error
        where = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
        location = f" (at {where[0].filename}:{where[0].lineno})" if where else ""
        raise _CannotRun(
            f"Could not load the drivers of the project at {path}: "
            f"{type(exc).__name__}: {exc}{location}"
        ) from None


def _print_catalogue(checks: Sequence[Check], only: Sequence[str], skip: Sequence[str]) -> None:
    from harness.certify import SUITES

    shown = [
        c
        for c in checks
        if (not only or any(c.matches(s) for s in only)) and not any(c.matches(s) for s in skip)
    ]
    current = ""
    for c in shown:
        if c.suite != current:
            if current:
                click.echo()
            current = c.suite
            click.echo(f"{c.suite}  {SUITES.get(c.suite, '')}")
        notes = [", ".join(k for k in ("source", "sink") if k in c.kinds)]
        if c.source_kind is not None:
            notes[0] = f"{c.source_kind} {notes[0]}s only"
        if c.per_project:
            notes.append("once per project")
        if not c.required:
            notes.append("optional")
        extra = sorted(c.needs - {"kafka"})
        if extra:
            notes.append(f"needs {', '.join(extra)}")
        if c.capabilities:
            notes.append(f"driver: {', '.join(c.capabilities)}")
        if c.exclusive is True:
            notes.append("runs alone")
        elif c.exclusive == "kafka":
            notes.append("runs with no other check on Kafka")
        click.echo(f"  {c.id}  {c.title}  ({'; '.join(notes)})")
    click.echo(f"\n{len(shown)} check{'s' if len(shown) != 1 else ''}")


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread so the run unwinds as it does on Ctrl-C."""


@contextlib.contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    """Turn SIGTERM into :class:`_Terminated` while the block runs.

    Without it SIGTERM (a CI job cancelled, ``kill``) ends the process on the spot and what
    the run started (the embedded broker, the Spark cluster's JVMs, the check processes) is left
    running; raised as an exception, the ``finally`` blocks that stop them run.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_sigterm(signum: int, frame: object) -> None:
        raise _Terminated

    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def _logging_to(level: str | None) -> Iterator[None]:
    """Send the run's log records to stderr at ``level``, or nowhere (the report has them)."""
    root = logging.getLogger()
    handler: logging.Handler
    if level is None:
        handler = logging.NullHandler()
    else:
        handler = logging.StreamHandler(sys.stderr)
        handler.setLevel(getattr(logging, level.upper()))
        handler.setFormatter(logging.Formatter("[%(asctime)s] %(levelname)s %(name)s: %(message)s"))
        if root.level == logging.NOTSET or root.level > handler.level:
            root.setLevel(handler.level)
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)


@click.command("verify")
@click.argument("bundle", type=click.Path(path_type=Path))
def verify(bundle: Path) -> None:
    """Check the certification bundle BUNDLE (a report directory) against its SHA256SUMS.

    Every file listed must be there with the same SHA-256, and no other file may be there.
    Exit status: 0 intact; 1 a file changed, is missing or was added (each is named); 2 BUNDLE
    is not a bundle.
    """
    from harness.certify import NotABundleError, verify_bundle

    try:
        found = verify_bundle(bundle)
    except NotABundleError as exc:
        raise _CannotRun(str(exc)) from None
    click.echo(f"{bundle}/SHA256SUMS sha256 {found.manifest_sha256}")
    if found.ok:
        click.echo(f"Intact: {len(found.intact)} files match SHA256SUMS.")
        return
    for line in found.problems():
        click.echo(line)
    click.echo(
        f"NOT intact: {len(found.problems())} problem(s); {len(found.intact)} files match.",
    )
    click.get_current_context().exit(1)


class _CertifyCommand(click.Command):
    """``cdk certify [PATH]``, and ``cdk certify verify BUNDLE`` when the first word is verify."""

    subcommands: ClassVar[dict[str, click.Command]] = {"verify": verify}

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] in self.subcommands:
            ctx.meta["cdk.certify.subcommand"] = (args[0], args[1:])
            return []
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> object:
        chosen = ctx.meta.get("cdk.certify.subcommand")
        if chosen is None:
            return super().invoke(ctx)
        name, rest = chosen
        command = self.subcommands[name]
        # no parent context: the usage line reads `cdk certify verify`, not `... [PATH] verify`
        with command.make_context(
            f"{ctx.command_path} {name}",
            rest,
            help_option_names=ctx.help_option_names,
            max_content_width=ctx.max_content_width,
        ) as sub:
            return command.invoke(sub)

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_epilog(ctx, formatter)
        with formatter.section("Subcommands"):
            formatter.write_dl([("verify BUNDLE", "check a written bundle against its SHA256SUMS")])


@click.command(cls=_CertifyCommand)
@click.argument("path", required=False, default=".", type=click.Path(path_type=Path))
@click.option(
    "--kafka",
    default="embedded",
    show_default=True,
    metavar="embedded|embedded-tls|testcontainers|HOST:PORT",
    help=_KAFKA_HELP,
)
@click.option(
    "--kafka-config",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    metavar="FILE",
    help="A properties file of the cluster's client settings in Kafka's terms "
    "(security.protocol=SSL or SASL_SSL, ssl.truststore.location, ssl.keystore.*, "
    "sasl.mechanism, sasl.jaas.config...), as Kafka's tools take with --command-config: every "
    "client and worker of the run gets them. Secret values never reach the report.",
)
@click.option(
    "--runtime",
    type=click.Choice(["embedded", "distributed", "spark"]),
    default="embedded",
    show_default=True,
    help="Where the connector runs: the embedded worker, or also distributed mode on a "
    "standalone Spark cluster of 2 workers started for the run (the checks that need Spark, "
    'skipped otherwise), or inside Spark pipelines (format("cdk") on local[2]: the '
    "OFF-10..12 checks).",
)
@click.option(
    "--only",
    multiple=True,
    metavar="IDS",
    help="Run only these checks: comma-separated ids (OFF-01) or suites (OFF). Repeatable.",
)
@click.option(
    "--skip",
    multiple=True,
    metavar="IDS",
    help="Skip these checks: comma-separated ids or suites. Repeatable.",
)
@click.option(
    "--report-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where to write the bundle [default: PATH/certification-report].",
)
@click.option(
    "--list",
    "list_checks",
    is_flag=True,
    help="Print the check catalogue (filtered by --only/--skip) and exit without running.",
)
@click.option(
    "--check-timeout",
    type=click.FloatRange(min=1.0),
    default=None,
    metavar="SECONDS",
    help="The deadline of each check: a check still running after it is abandoned (its "
    "process killed) and reported as an ERROR [default: 300, 900 for checks that need Spark].",
)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=DEFAULT_JOBS,
    show_default=True,
    metavar="N",
    help="Run up to N checks at the same time, each in its own process and context against "
    "the one Kafka (on the embedded broker a check that stalls the broker gets one of its "
    "own; a check that measures runs alone, after the others; with a previous bundle in the "
    "report directory the longest checks start first). The results, reports and exit status "
    "are those of a serial run (--jobs 1).",
)
@click.option(
    "--run-tests",
    is_flag=True,
    help="Also run the project's own tests (python -m pytest in PATH) and put their JUnit "
    "results into the bundle.",
)
@click.option(
    "--tests-junit",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    metavar="FILE",
    help="Put the project's test results from this JUnit XML file into the bundle.",
)
@click.option(
    "--seed",
    type=click.IntRange(min=0),
    default=None,
    metavar="N",
    help="The seed of the values the checks generate (SCH-09's hostile values): the same seed "
    "draws the same values, so a failure found with it can be run again. The report and "
    "summary.json name the seed of every run [default: CDK_CERTIFY_SEED when set, else a "
    "fresh one].",
)
@click.option(
    "--log-level",
    type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"], case_sensitive=False),
    default=None,
    help="Also print the checks' log on stderr at this level (default: not shown).",
)
def certify(
    path: Path,
    kafka: str,
    kafka_config: Path | None,
    runtime: str,
    only: tuple[str, ...],
    skip: tuple[str, ...],
    report_dir: Path | None,
    list_checks: bool,
    check_timeout: float | None,
    jobs: int,
    run_tests: bool,
    tests_junit: Path | None,
    seed: int | None,
    log_level: str | None,
) -> None:
    """Certify the connector project at PATH (default: the current directory).

    The project's pyproject.toml names its certification drivers in [tool.cdk] drivers. Every
    check of the suites runs against each driver on Kafka, with live progress; the bundle
    (junit.xml, summary.json and a self-contained report.html) is written to the report
    directory with the submission material (Connector Hub manifest.json, documentation, the
    wheel, the project's test results with --run-tests or --tests-junit), provenance and a
    SHA256SUMS manifest.

    The connector code runs in child processes, never in cdk certify itself: a check that
    crashes its process, overruns its deadline (--check-timeout) or leaves non-daemon threads
    running is abandoned, reported as an ERROR that says why, and the next checks run in a
    fresh process; the run ends within seconds of its last check and lists what it abandoned.
    Up to --jobs checks run at the same time; each line of progress is printed whole as a
    check ends, and the reports list the checks in plan order.

    \b
    Exit status, one per verdict:
      0  CERTIFIABLE: every required check passed, did not apply, or was not
         verified and is waived ([tool.cdk.certify] waive, with a reason)
      1  FAILED: a required check failed or could not run (waived or not)
      2  the run could not start (a usage mistake; the message says why)
      3  INCOMPLETE: a required check was not verified (the driver lacks a
         capability, or the environment something) and is not waived, or
         checks were left out (--only, --skip, [tool.cdk.certify] skip)
    """  # noqa: D301 - click's \b keeps the table's lines
    checks = _checks()
    only_ids, skip_ids = _split(only), _split(skip)
    _validate_selectors(checks, only_ids, "--only")
    _validate_selectors(checks, skip_ids, "--skip")
    if list_checks:
        _print_catalogue(checks, only_ids, skip_ids)
        return

    from harness.certify import (
        BundleError,
        SecretLeakError,
        TerminalProgress,
        TestResultsError,
        attach_tests,
        check_report_dir,
        git_state,
        plan,
        sha256_file,
        write_bundle,
    )
    from harness.certify import certify as run_certification
    from harness.providers.kafka import kafka_provider

    try:
        kafka_provider(kafka)
    except ConnectException as exc:
        raise click.BadParameter(str(exc), param_hint="'--kafka'") from None
    security = _kafka_settings(kafka_config)
    project = _load_project(path)
    if not plan(project, only_ids, skip_ids):
        raise _CannotRun(
            "No check applies: the selection "
            f"({'--only ' + ','.join(only_ids) if only_ids else 'all checks'}"
            f"{', --skip ' + ','.join(skip_ids) if skip_ids else ''}) matches no check for the "
            f"project's drivers ({', '.join(d.__name__ for d in project.drivers)})."
        )
    target = report_dir if report_dir is not None else project.path / "certification-report"
    if run_tests and tests_junit is not None:
        raise click.UsageError("--run-tests and --tests-junit exclude each other: choose one")
    if run_tests and importlib.util.find_spec("pytest") is None:
        raise _CannotRun(
            f"--run-tests runs the project's tests with `python -m pytest`, but pytest is not "
            f"installed for {sys.executable}: pip install pytest (or attach results with "
            "--tests-junit FILE)"
        )
    try:
        check_report_dir(target)
        attached = attach_tests(tests_junit) if tests_junit is not None else None
    except (BundleError, TestResultsError) as exc:
        raise _CannotRun(str(exc)) from None
    _tolerant_output()
    source = git_state(project.path, exclude=target)  # before anything runs in the project
    workdir = Path(tempfile.mkdtemp(prefix="cdk-certify-"))
    try:
        try:
            with _sigterm_unwinds(), _logging_to(log_level):
                run = run_certification(
                    project,
                    kafka=kafka,
                    only=only_ids,
                    skip=skip_ids,
                    listener=TerminalProgress(),
                    workdir=workdir,
                    isolate=True,
                    check_timeout=check_timeout,
                    log_level=log_level,
                    jobs=jobs,
                    runtime=runtime,
                    seed=seed,
                    kafka_config=security,
                    durations=_previous_durations(target),
                )
        except ConnectException as exc:
            raise _CannotRun(f"The run could not start (--kafka {kafka}): {exc}") from None
        except _Terminated:
            click.echo(
                "\ncdk certify: terminated (SIGTERM); the run's processes were stopped and no "
                "report was written",
                err=True,
            )
            click.get_current_context().exit(128 + signal.SIGTERM)
        tests = attached if attached is not None else _project_tests(project, workdir, run_tests)
        try:
            files = write_bundle(run, target, workdir=workdir, tests=tests, source=source)
        except SecretLeakError as exc:
            raise click.ClickException(str(exc)) from None
        except (OSError, BundleError) as exc:
            raise _CannotRun(f"Could not write the report to {target}: {exc}") from None
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    click.echo(f"\nReport: {files['html']}")
    click.echo(f"JUnit XML: {files['junit']}  JSON summary: {files['summary']}")
    submission = run.submission
    gaps = [i["item"] for i in submission.get("items", []) if i["status"] != "present"]
    click.echo(
        "Submission: every item is in the bundle"
        if not gaps
        else f"Submission: not ready ({', '.join(gaps)} missing or incomplete; see the report)"
    )
    click.echo(
        f"Bundle manifest: {files['manifest']} sha256 {sha256_file(files['manifest'])} "
        f"(check it with: cdk certify verify {target})"
    )
    _exit_despite_threads(run.exit_code)
    click.get_current_context().exit(run.exit_code)


def _project_tests(project: Project, workdir: Path, run_tests: bool) -> ProjectTests | None:
    """Run the project's tests (``--run-tests``), saying so on the terminal."""
    if not run_tests:
        return None
    from harness.certify import run_tests as run_project_tests

    click.echo(f"\nRunning the project's tests: python -m pytest (in {project.path}) ...")
    tests = run_project_tests(project.path, workdir / "project-tests")
    click.echo(f"Project tests: {tests.summary()}")
    return tests


def _exit_despite_threads(code: int) -> None:
    """Exit now if a non-daemon thread (started by a driver module on import) would hold us.

    The checks run in child processes; only importing the project's drivers runs its code
    here. Whatever such a thread does, ``cdk certify`` ends once its bundle is written.
    """
    import os
    import threading

    stuck = [t for t in threading.enumerate() if not t.daemon and t is not threading.main_thread()]
    if not stuck:
        return
    names = ", ".join(t.name for t in stuck)
    click.echo(
        f"cdk certify: abandoned non-daemon thread(s) started when the project was imported: "
        f"{names}; exiting anyway",
        err=True,
    )
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def _tolerant_output() -> None:
    """Never fail on a character the terminal's encoding lacks (a check message may hold any)."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if callable(reconfigure):
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="backslashreplace")


def _previous_durations(report_dir: Path) -> dict[tuple[str, str], float]:
    """How long each check took in the previous bundle of ``report_dir`` (none: empty).

    Only the order in which the checks start depends on it (the longest first); a missing or
    unreadable ``summary.json`` gives nothing.
    """
    try:
        data = json.loads((report_dir / "summary.json").read_text(encoding="utf-8"))
        return {
            (str(c["id"]), str(c["subject"])): float(c["duration_s"])
            for c in data.get("checks", [])
            if isinstance(c.get("duration_s"), (int, float))
        }
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return {}
