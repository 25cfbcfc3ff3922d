"""``cdk certify --jobs N``: checks run at the same time give the results of a serial run.

The runs use the session broker and a few quick checks. A run with several jobs must give the
same outcomes, in the same (plan) order, with the same verdict and exit status as one with a
single job; a broken connector fails the same checks; the checks marked exclusive run alone;
and the terminal prints each check's lines whole, in the order the checks end.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness._driver import ConnectorDriver
from harness.certify import (
    Check,
    CheckResult,
    Outcome,
    Project,
    TerminalProgress,
    all_checks,
    certify,
    plan,
)
from harness.certify._isolate import may_start, run_order
from reference_connectors.filestream.certify import FileStreamSinkDriver, FileStreamSourceDriver
from tests.certify import _support
from tests.certify.broken import rst as broken
from tests.certify.broken._sqlite_base.certify import SqliteSinkDriver, SqliteSourceDriver

CDK = Path(sys.executable).with_name("cdk")
SQL = Path(__file__).resolve().parents[2] / "reference_connectors" / "sql"
#: Quick checks of each kind: in process, on Kafka against sources and sinks, once per project
#: (PKG's three share one wheel build), and two exclusive ones (ERR-04 is not verified on the
#: session broker, an existing cluster that cannot be stalled; PRF-02 measures).
SUBSET = "CFG-03,CFG-07,SCH-01,SCH-02,RST-01,RST-05,OFF-04,DOC-01,PKG,ERR-04,PRF-02"


def _cli(kafka: str, report: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], Any]:
    try:
        answer = subprocess.run(
            [
                str(CDK),
                "certify",
                str(SQL),
                "--kafka",
                kafka,
                "--report-dir",
                str(report),
                *args,
            ],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
            env={**os.environ, "CDK_SQL_DIALECT": "sqlite"},
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"cdk certify did not exit within 300s; output so far:\n{exc.stdout!r}")
    summary = report / "summary.json"
    assert summary.is_file(), answer.stdout + answer.stderr
    return answer, json.loads(summary.read_text(encoding="utf-8"))


def _outcomes(summary: Any) -> list[tuple[str, str, str]]:
    return [(c["id"], c["subject"], c["outcome"]) for c in summary["checks"]]


def test_jobs_3_gives_the_outcomes_order_and_verdict_of_jobs_1(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    serial, serial_summary = _cli(
        kafka_bootstrap, tmp_path / "serial", "--only", SUBSET, "--jobs", "1"
    )
    parallel, summary = _cli(kafka_bootstrap, tmp_path / "parallel", "--only", SUBSET, "-j", "3")
    output = parallel.stdout + parallel.stderr
    assert _outcomes(summary) == _outcomes(serial_summary), output
    assert parallel.returncode == serial.returncode == 3, output  # INCOMPLETE: --only
    assert summary["verdict"] == serial_summary["verdict"], output
    # the report lists the checks in plan order, whatever order they ended in
    planned = plan(Project.load(SQL), SUBSET.split(","))
    assert [(c["id"], c["subject"]) for c in summary["checks"]] == [
        (c.id, d.__name__ if not c.per_project else "cdk-sql-connector") for c, d, _ in planned
    ]
    found = {(c["id"], c["subject"]): c for c in summary["checks"]}
    assert found[("ERR-04", "SqlSourceDriver")]["outcome"] == "not verified", output
    assert {found[("PKG-0" + n, "cdk-sql-connector")]["outcome"] for n in "123"} == {"passed"}
    # the terminal: one whole line per check, numbered in the order they ended
    lines = [line for line in parallel.stdout.splitlines() if re.match(r"\[\s*\d+/", line)]
    total = len(planned)
    assert len(lines) == total, output
    for number, line in enumerate(lines, start=1):
        assert re.fullmatch(
            rf"\[\s*{number}/{total}\] (PASS |FAIL |ERROR|SKIP |NOTV ) [A-Z]{{3}}-\d\d  .+ "
            r"\[[\w-]+\]  \(\d.*s\)",
            line,
        ), line
    assert "3 checks at a time" in summary["environment"]["isolation"], summary["environment"]


class _Recorder:
    """A progress listener that keeps every event, in order."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []

    def started(self, run: object, planned: int) -> None:
        pass

    def check_started(self, check: Check, subject: str) -> None:
        self.events.append(("start", check.id, subject))

    def check_finished(self, result: CheckResult) -> None:
        self.events.append(("end", result.id, result.subject))

    def finished(self, run: object) -> None:
        pass


def test_exclusive_checks_run_alone_while_the_others_overlap(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    project = _support.project_for(tmp_path, FileStreamSourceDriver, FileStreamSinkDriver)
    recorder = _Recorder()
    # ERR-04 stalls the broker (not verified on the session broker, which cannot be stalled:
    # it runs as any check on Kafka; tests/certify/test_stall.py has the stall granted);
    # PRF-02 measures; CFG-04 needs no Kafka
    only = ["CFG-03", "CFG-04", "SCH-02", "RST-01", "RST-05", "ERR-04", "PRF-02"]
    run = certify(
        project,
        kafka=kafka_bootstrap,
        only=only,
        workdir=tmp_path / "run",
        listener=recorder,
        isolate=True,
        jobs=3,
    )
    expected = {r.id: Outcome.PASSED for r in run.results} | {"ERR-04": Outcome.NOT_VERIFIED}
    assert {r.id: r.outcome for r in run.results} == expected, _support.describe(run)
    checks = {c.id: c for c in all_checks()}
    assert {i for i, c in checks.items() if c.exclusive is True} >= {"PRF-01", "PRF-02"}
    assert {i for i, c in checks.items() if c.exclusive == "kafka"} >= {"ERR-04", "ERR-05"}
    running: set[tuple[str, str]] = set()
    most = 0
    for event, check_id, subject in recorder.events:
        if event == "start":
            others = [checks[c] for c, _ in running]
            if checks[check_id].exclusive is True or any(o.exclusive is True for o in others):
                assert not running, f"{check_id} started next to {running}: {recorder.events}"
            running.add((check_id, subject))
            most = max(most, len(running))
        else:
            running.remove((check_id, subject))
    assert most == 3, recorder.events  # the others did run at the same time
    # the checks that run alone ran last; the results are in plan order
    starts = [check_id for event, check_id, _ in recorder.events if event == "start"]
    assert starts[-2:] == ["PRF-02", "PRF-02"], starts
    assert [(r.id, r.subject) for r in run.results] == [
        (c.id, d.__name__) for c, d, _ in plan(project, only)
    ]


@pytest.mark.parametrize("jobs", [1, 3])
def test_a_broken_connector_fails_the_same_checks_with_any_jobs(
    kafka_bootstrap: str, tmp_path: Path, jobs: int
) -> None:
    project = _support.project_for(
        tmp_path,
        broken.LockingConnectorDriver,
        broken.LockingTaskDriver,
        FileStreamSinkDriver,
    )
    run = certify(
        project,
        kafka=kafka_bootstrap,
        only=["RST-01", "RST-02"],
        workdir=tmp_path / "run",
        isolate=True,
        jobs=jobs,
    )
    found = [(r.id, r.subject, r.outcome) for r in run.results]
    assert found == [
        ("RST-01", "LockingConnectorDriver", Outcome.FAILED),
        ("RST-02", "LockingConnectorDriver", Outcome.PASSED),
        ("RST-01", "LockingTaskDriver", Outcome.PASSED),
        ("RST-02", "LockingTaskDriver", Outcome.FAILED),
        ("RST-01", "FileStreamSinkDriver", Outcome.PASSED),
        ("RST-02", "FileStreamSinkDriver", Outcome.PASSED),
    ], _support.describe(run)
    assert run.exit_code == 1
    failures = {r.subject: r.message for r in run.results if r.outcome is Outcome.FAILED}
    assert ".connector.lock" in failures["LockingConnectorDriver"], failures
    assert ".task.lock" in failures["LockingTaskDriver"], failures


def test_jobs_need_isolation_and_at_least_one(tmp_path: Path) -> None:
    project = _support.project_for(tmp_path, FileStreamSourceDriver)
    with pytest.raises(ValueError, match="jobs > 1 needs isolate=True"):
        certify(project, kafka="embedded", only=["CFG-01"], jobs=2)
    with pytest.raises(ValueError, match="jobs must be at least 1, not 0"):
        certify(project, kafka="embedded", only=["CFG-01"], isolate=True, jobs=0)


def _items(drivers: list[type[ConnectorDriver]]) -> list[tuple[int, Check, Any, Any]]:
    project = Project(path=Path("."), name="p", version="1", drivers=list(drivers))
    return [(i, c, d, r) for i, (c, d, r) in enumerate(plan(project), start=1)]


def _kind(item: tuple[int, Check, Any, Any]) -> str:
    _, c, driver, reason = item
    if c.exclusive is True:
        return "alone"
    # the ACK checks do not apply to the (replayable) SQLite source: they run nothing
    if reason is not None or "kafka" not in c.needs or c.source_kind == "acknowledging":
        return "no kafka"
    if c.exclusive == "kafka":
        return "stall"
    return "source" if driver is SqliteSourceDriver or c.per_project else "sink"


EXCLUSIVE = ("stall", "alone")


def test_one_job_keeps_the_plan_order_and_more_start_the_longest_first() -> None:
    items = _items([SqliteSourceDriver, SqliteSinkDriver])
    assert run_order(items, 1) == items
    order = run_order(items, 4)
    assert sorted(order, key=lambda i: i[0]) == items
    kinds = [_kind(item) for item in order]
    # the broker stalls first, with the checks that need no Kafka (they run while the broker
    # is stopped); then sinks on Kafka (group joins), then sources; then the checks that run
    # alone
    groups = [k for n, k in enumerate(kinds) if n == 0 or kinds[n - 1] != k]
    assert groups == ["stall", "no kafka", "sink", "source", "alone"], kinds
    exclusive = [(c.id, d.__name__) for _, c, d, _ in order if _kind((0, c, d, None)) in EXCLUSIVE]
    assert exclusive == [
        # OFF-13 kills its own worker process on fresh topics: nothing else on Kafka meanwhile
        ("OFF-13", "SqliteSourceDriver"),
        ("ERR-04", "SqliteSourceDriver"),
        ("ERR-05", "SqliteSinkDriver"),
        # the distributed checks share the Spark cluster and kill its workers; the Spark
        # pipeline checks share the local session
        ("OFF-09", "SqliteSourceDriver"),
        ("OFF-10", "SqliteSourceDriver"),
        ("OFF-11", "SqliteSourceDriver"),
        ("RST-06", "SqliteSourceDriver"),
        ("RBL-05", "SqliteSourceDriver"),
        ("RBL-06", "SqliteSourceDriver"),
        ("PRF-01", "SqliteSourceDriver"),
        ("PRF-02", "SqliteSourceDriver"),
        ("OFF-09", "SqliteSinkDriver"),
        ("OFF-12", "SqliteSinkDriver"),
        ("RST-06", "SqliteSinkDriver"),
        ("RBL-05", "SqliteSinkDriver"),
        ("RBL-06", "SqliteSinkDriver"),
        ("PRF-01", "SqliteSinkDriver"),
        ("PRF-02", "SqliteSinkDriver"),
    ]
    # within a group, plan order
    sinks = [item[0] for item, kind in zip(order, kinds, strict=True) if kind == "sink"]
    assert sinks == sorted(sinks)


def test_the_durations_of_an_earlier_run_start_the_longest_first_within_each_group() -> None:
    items = _items([SqliteSourceDriver, SqliteSinkDriver])
    plain = run_order(items, 4)
    kinds = {item[0]: _kind(item) for item in items}
    sinks = [item[0] for item in plain if kinds[item[0]] == "sink"]
    # the last sink check in plan order took longest before, then the first: they start first
    cost = {sinks[-1]: 20.0, sinks[0]: 9.0, sinks[1]: 0.5}
    order = run_order(items, 4, cost=cost)
    assert [kinds[i[0]] for i in order] == [kinds[i[0]] for i in plain]
    ordered_sinks = [item[0] for item in order if kinds[item[0]] == "sink"]
    assert ordered_sinks[:2] == [sinks[-1], sinks[0]], ordered_sinks
    assert ordered_sinks[2:] == [i for i in sinks if i not in (sinks[-1], sinks[0])]
    assert sorted(order, key=lambda i: i[0]) == items  # every check, once
    assert run_order(items, 1, cost=cost) == items  # one job: plan order whatever the cost
    # on Kafka, a long source check starts before the shorter sink checks
    sources = [item[0] for item in plain if kinds[item[0]] == "source"]
    order = run_order(items, 4, cost={**cost, sources[-1]: 10.0})
    on_kafka = [item[0] for item in order if kinds[item[0]] in ("sink", "source")]
    assert on_kafka[:3] == [sinks[-1], sources[-1], sinks[0]], on_kafka
    assert [kinds[i] for i in on_kafka[3:]] == sorted(
        (kinds[i] for i in on_kafka[3:]), key=("sink", "source").index
    )


def test_a_check_with_a_broker_of_its_own_needs_nothing_of_the_shared_one() -> None:
    by_key = {(c.id, d): (i, c, d, r) for i, c, d, r in _items([SqliteSourceDriver])}
    stall = by_key[("ERR-04", SqliteSourceDriver)]
    on_kafka = by_key[("OFF-01", SqliteSourceDriver)]
    own = {stall[0]}
    # while the shared broker is stopped or pending, a check with its own broker may start,
    # and does not hold back the others
    assert may_start(stall, [on_kafka], "held", own)
    assert may_start(on_kafka, [stall], "free", own)
    assert not may_start(on_kafka, [stall], "held", own)  # the shared one is stopped
    # it starts first (it is long), before the checks that need no Kafka
    order = run_order(list(by_key.values()), 4, own)
    assert [(i[1].id, i[0] in own) for i in order[:2]] == [("OFF-13", False), ("ERR-04", True)]


def test_the_critical_path_follows_what_each_check_waited_for() -> None:
    from harness.certify._timing import Span, describe, timing

    spans = [
        Span(1, "CFG-01", "D", 2.0, 3.0, 0.5, None),
        Span(2, "OFF-02", "D", 2.0, 20.0, 2.0, None),
        Span(3, "SCH-01", "D", 3.1, 9.0, 0.2, 1),
        Span(4, "PRF-01", "D", 20.2, 30.0, 1.0, 2, "alone"),
        Span(5, "ERR-04", "D", 2.0, 25.0, 1.0, None, "own broker"),
    ]
    data = timing(spans, 31.0)
    path = [(s["check"], s["waited_s"]) for s in data["critical_path"]]
    assert path == [("OFF-02", 2.0), ("PRF-01", 0.2)], data
    assert data["before_first_check_s"] == 2.0
    assert data["after_last_check_s"] == 1.0
    assert data["own_broker"] == ["ERR-04 [D]"]
    assert data["suites"]["OFF"]["wall_s"] == 18.0
    assert data["suites"]["CFG"]["cpu_s"] == 0.5
    assert data["checks_busy_s"] == round(1.0 + 18.0 + 5.9 + 9.8 + 23.0, 2)
    text = "\n".join(describe(data))
    for part in ("Critical path", "PRF-01 [D]", "alone", "after 0.2 s waiting"):
        assert part in text, text
    assert describe({}) == []


def test_what_may_start_next_to_what_runs() -> None:
    by_key = {(c.id, d): (i, c, d, r) for i, c, d, r in _items([SqliteSourceDriver])}
    stall = by_key[("ERR-04", SqliteSourceDriver)]
    measure = by_key[("PRF-01", SqliteSourceDriver)]
    on_kafka = by_key[("OFF-01", SqliteSourceDriver)]
    no_kafka = by_key[("CFG-01", SqliteSourceDriver)]
    assert all(may_start(i, []) for i in (stall, measure, on_kafka, no_kafka))
    # a broker stall check runs next to the others; only the stall itself is granted alone
    assert may_start(stall, [on_kafka])
    assert may_start(on_kafka, [stall])  # its broker may not be stalled (no broker to stall)
    # while a stall check has not been granted its stall, nothing else starts on Kafka but
    # another stall check (it shares the stall), and while the broker is stopped nothing does
    assert not may_start(on_kafka, [stall], "pending")
    assert may_start(stall, [stall], "pending")
    assert may_start(no_kafka, [stall], "pending")
    assert not may_start(stall, [stall], "held")
    assert not may_start(on_kafka, [stall], "held")
    assert may_start(no_kafka, [stall], "held")
    # a measurement: with nothing at all
    for other in (stall, on_kafka, no_kafka):
        assert not may_start(measure, [other])
        assert not may_start(other, [measure])
    assert may_start(on_kafka, [on_kafka, no_kafka])
    # a check skipped by request runs nothing: it is exclusive of nothing
    skipped = (measure[0], measure[1], measure[2], "left out by request")
    assert may_start(skipped, [on_kafka])


def _result(check_id: str, subject: str) -> CheckResult:
    (c,) = [c for c in all_checks() if c.id == check_id]
    return CheckResult(c, subject, "source", Outcome.PASSED, "", duration_s=1.0)


def test_the_terminal_names_every_check_in_progress_and_prints_results_whole() -> None:
    stream = io.StringIO()
    progress = TerminalProgress(stream, tty=True, colour=False)
    progress.planned = 3
    checks = {c.id: c for c in all_checks()}
    progress.check_started(checks["OFF-01"], "A")
    progress.check_started(checks["RST-01"], "A")
    progress.check_started(checks["RST-01"], "B")
    assert stream.getvalue().endswith("[1/3] running OFF-01 [A], RST-01 [A], RST-01 [B] ...")
    progress.check_finished(_result("RST-01", "A"))
    text = stream.getvalue()
    # the running line is cleared, the result printed whole, the running line drawn again
    assert text.endswith(
        "\r\x1b[2K[1/3] PASS  RST-01  "
        + checks["RST-01"].title
        + " [A]  (1.00 s)\n[2/3] running OFF-01 [A], RST-01 [B] ..."
    ), text
    progress.check_finished(_result("OFF-01", "A"))
    progress.check_finished(_result("RST-01", "B"))
    assert stream.getvalue().endswith(
        f"[3/3] PASS  RST-01  {checks['RST-01'].title} [B]  (1.00 s)\n"
    )
    # not a terminal: only the result lines
    plain = io.StringIO()
    progress = TerminalProgress(plain, tty=False)
    progress.planned = 2
    progress.check_started(checks["OFF-01"], "A")
    progress.check_started(checks["RST-01"], "A")
    progress.check_finished(_result("RST-01", "A"))
    progress.check_finished(_result("OFF-01", "A"))
    assert plain.getvalue().splitlines() == [
        f"[1/2] PASS  RST-01  {checks['RST-01'].title} [A]  (1.00 s)",
        f"[2/2] PASS  OFF-01  {checks['OFF-01'].title} [A]  (1.00 s)",
    ]
    # the running line is numbered as the result lines are
    padded = io.StringIO()
    progress = TerminalProgress(padded, tty=True, colour=False)
    progress.planned = 12
    progress.check_started(checks["OFF-01"], "A")
    progress.check_started(checks["RST-01"], "A")
    assert padded.getvalue().endswith("[ 1/12] running OFF-01 [A], RST-01 [A] ...")


def test_the_catalogue_says_which_checks_run_alone() -> None:
    answer = subprocess.run(
        [str(CDK), "certify", "--list", "--only", "ERR-04,PRF-01,OFF-01"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    lines = {line.split()[0]: line for line in answer.stdout.splitlines() if "-0" in line}
    assert lines["ERR-04"].endswith("; runs with no other check on Kafka)"), answer.stdout
    assert lines["PRF-01"].endswith("; runs alone)"), answer.stdout
    assert "runs" not in lines["OFF-01"], answer.stdout


def _build_in_another_process(project: Path, run_dir: Path, out: Any) -> None:
    from types import SimpleNamespace

    from harness.certify.suites import pkg

    build = pkg._build(
        SimpleNamespace(project=SimpleNamespace(path=project), workdir=run_dir / "001")  # type: ignore[arg-type]
    )
    out.put((str(build.wheel), build.seconds, build.returncode))


def test_checks_in_several_processes_share_one_wheel_build(tmp_path: Path) -> None:
    # PKG-01..03 may run at the same time in different children: one builds, the others wait
    # for it (a file lock) and read what it built
    import multiprocessing
    import shutil

    project = tmp_path / "filestream_demo"
    shutil.copytree(Path(__file__).parent / "projects" / "filestream_demo", project)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    context = multiprocessing.get_context("spawn")
    out = context.Queue()
    workers = [
        context.Process(target=_build_in_another_process, args=(project, run_dir, out))
        for _ in range(3)
    ]
    for worker in workers:
        worker.start()
    try:
        builds = [out.get(timeout=300) for _ in workers]
    finally:
        for worker in workers:
            worker.join(60)
    assert all(code == 0 for _, _, code in builds), builds
    # one wheel, built once: the same file and the same build time for all three
    assert len({(wheel, seconds) for wheel, seconds, _ in builds}) == 1, builds
    assert len(list(run_dir.glob("wheel-*/wheels/*.whl"))) == 1
