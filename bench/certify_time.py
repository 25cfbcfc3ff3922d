"""Wall time of ``cdk certify``: the SQL reference on SQLite, PostgreSQL and MariaDB, and the
``cdk new`` project (issue 31's aim: under 45 s each).

Each run certifies every target once, the order rotating from run to run, with the CLI as a
partner runs it (a subprocess, the default ``--jobs``, the embedded broker), and times it from
the start of the process to its exit. The ``cdk new`` project is made, installed into a
virtualenv of its own and its tests run once before the first run, as ``make demo`` does
(``--tests-junit``); that set-up is not timed. PostgreSQL and MariaDB come from
``CDK_TEST_POSTGRES_URL`` / ``CDK_TEST_MARIADB_URL`` (by default the local servers), as for
``make reference``. There is no raw baseline: the figure is the wall time against its aim.

Run with ``.venv/bin/python bench/certify_time.py [--targets sqlite,new] [--runs 3]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _results

REPO_ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
TARGETS = ("sqlite", "postgresql", "mariadb", "new")
TITLES = {
    "sqlite": "cdk certify reference_connectors/sql, SQLite",
    "postgresql": "cdk certify reference_connectors/sql, PostgreSQL",
    "mariadb": "cdk certify reference_connectors/sql, MariaDB",
    "new": "cdk certify of the cdk new project",
}
NAMES = {
    "sqlite": "certify.sql.sqlite",
    "postgresql": "certify.sql.postgresql",
    "mariadb": "certify.sql.mariadb",
    "new": "certify.new_project",
}
VERDICTS = {0: "CERTIFIABLE", 1: "FAILED", 2: "could not start", 3: "INCOMPLETE"}
AIM_S = 45.0
TIMEOUT_S = 900.0  # one certify run; a run past it is ended and reported


def _run(command: list[str], *, cwd: Path | None = None, timeout: float = 900.0) -> None:
    done = subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(command)} exited {done.returncode}:\n{done.stdout[-2000:]}"
            f"\n{done.stderr[-2000:]}"
        )


def new_project(work: Path) -> tuple[list[str], Path]:
    """Make, install and test the ``cdk new`` project as ``make demo`` does: (cdk, junit)."""
    _run([str(BIN / "cdk"), "new", "demo-connector", "--no-input", "--output-dir", str(work)])
    venv = work / ".venv"
    uv = str(BIN / "uv")
    constraints = str(REPO_ROOT / ".ci" / "constraints.txt")
    _run([uv, "venv", "--quiet", "--seed", "--python", sys.executable, str(venv)])
    python = str(venv / "bin" / "python")
    project = work / "demo-connector"
    install = [uv, "pip", "install", "--quiet", "--python", python, "-c", constraints]
    _run([*install, ".[certify]"], cwd=REPO_ROOT)
    _run([*install, "-e", f"{project}[dev]"])
    junit = work / "tests-junit.xml"
    subprocess.run(  # the project's tests, for --tests-junit (their verdict is the report's)
        [str(venv / "bin" / "pytest"), "-q", "-p", "no:cacheprovider", f"--junitxml={junit}"],
        cwd=project,
        capture_output=True,
        timeout=900,
        check=False,
    )
    return [str(venv / "bin" / "cdk"), "certify", str(project), "--tests-junit", str(junit)], junit


def certify_once(command: list[str], report_dir: Path, env: dict[str, str]) -> tuple[float, int]:
    """(wall seconds, exit code) of one ``cdk certify``; exit -1 when it overran TIMEOUT_S."""
    started = time.monotonic()
    try:
        done = subprocess.run(
            [*command, "--report-dir", str(report_dir)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return time.monotonic() - started, -1
    return time.monotonic() - started, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--targets",
        default=",".join(TARGETS),
        help=f"comma-separated, of {', '.join(TARGETS)} (default: all)",
    )
    parser.add_argument("--runs", type=int, default=3, help="runs (medians are reported)")
    _results.add_option(parser, "certify_time")
    args = parser.parse_args()
    targets = [t.strip() for t in args.targets.split(",") if t.strip()]
    unknown = [t for t in targets if t not in TARGETS]
    if unknown or not targets:
        parser.error(f"--targets: unknown {', '.join(unknown) or '(none)'}; choose of {TARGETS}")
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    page = _results.Results.from_args("certify_time", args)
    times: dict[str, list[float]] = {t: [] for t in targets}
    exits: dict[str, list[int]] = {t: [] for t in targets}
    runs_of: dict[str, list[int]] = {t: [] for t in targets}
    with tempfile.TemporaryDirectory(prefix="cdk-bench-certify-") as tmp:
        work = Path(tmp)
        commands: dict[str, tuple[list[str], dict[str, str]]] = {}
        for target in targets:
            if target == "new":
                command, _ = new_project(work / "new")
                commands[target] = (command, dict(os.environ))
            else:
                command = [str(BIN / "cdk"), "certify", str(REPO_ROOT / "reference_connectors/sql")]
                commands[target] = (command, {**os.environ, "CDK_SQL_DIALECT": target})
        for run in range(args.runs):
            index = page.run()
            order = targets[run % len(targets) :] + targets[: run % len(targets)]
            for target in order:
                command, env = commands[target]
                seconds, code = certify_once(command, work / f"report-{target}-{run}", env)
                times[target].append(seconds)
                exits[target].append(code)
                runs_of[target].append(index)
                verdict = VERDICTS.get(code, "timed out" if code < 0 else f"exit {code}")
                print(f"run {run + 1} {target:<11} {seconds:6.1f} s  {verdict}", flush=True)
    print(f"\ncdk certify wall time, medians of {args.runs} (aim < {AIM_S:g} s):")
    for target in targets:
        median = statistics.median(times[target])
        print(f"  {TITLES[target]:<52} {median:6.1f} s")
        codes = exits[target]
        broken = [c for c in codes if c not in (0, 1, 3)]
        page.figure(
            NAMES[target],
            TITLES[target],
            "s",
            [] if broken else times[target],
            kit_name="cdk certify",
            aim=_results.value_aim("<", AIM_S),
            higher_is_better=False,
            runs=runs_of[target],
            note="verdicts: " + ", ".join(VERDICTS.get(c, f"exit {c}") for c in codes),
            error=f"cdk certify did not run to its end (exits {codes})" if broken else None,
        )
    page.write()


if __name__ == "__main__":
    main()
