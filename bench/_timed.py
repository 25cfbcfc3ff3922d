"""Run one phase of ``make test`` and record its wall time (``bench/report.py`` shows them).

``make test``'s phases (lint, typecheck, docs, unit, test-spark) run their commands through
this wrapper::

    python bench/_timed.py --out reports/make-test-times.json --phase unit -- pytest ...

It runs the command, prints one timing line (``timing: unit 521.3 s, exit 0``) and adds the
phase to the JSON file: its start and end (epoch seconds), seconds, exit code, the 1-minute load
average before and after, the machine's CPU use over the phase (busy core-seconds and the busy
share of all cores, from ``/proc/stat``, so a reader sees whether the phase waited or computed),
the commit, and the ``make test`` run it belongs to (``$CDK_TEST_RUN``,
which ``make test`` sets once for all its phases; empty when a phase runs alone). The file keeps
the phases of the last 20 runs. The command's exit code is the wrapper's.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path

try:  # imported by the tests
    from bench import _results
except ImportError:  # run as bench/_timed.py: bench/ is first on sys.path
    import _results

KEEP_RUNS = 20


def record(out: Path, entry: dict[str, object]) -> None:
    """Add ``entry`` to the phases in ``out`` (created if missing), under a file lock."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.with_name(out.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        phases: list[dict[str, object]] = []
        if out.is_file():
            with contextlib.suppress(json.JSONDecodeError, KeyError, TypeError):
                phases = list(json.loads(out.read_text())["phases"])
        phases.append(entry)
        runs = list(dict.fromkeys(str(p.get("run") or "") for p in phases))
        kept = set(runs[-KEEP_RUNS:])
        phases = [p for p in phases if str(p.get("run") or "") in kept]
        tmp = out.with_name(out.name + ".tmp")
        tmp.write_text(json.dumps({"phases": phases}, indent=1) + "\n")
        tmp.replace(out)


def cpu_seconds() -> tuple[float, float] | None:
    """The machine's busy and total CPU seconds since boot (all cores), or None without /proc."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()
    except OSError:
        return None
    ticks = [int(v) for v in fields[1:]]
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)  # idle + iowait
    hz = os.sysconf("SC_CLK_TCK")
    return (sum(ticks) - idle) / hz, sum(ticks) / hz


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="the JSON file of phase times")
    parser.add_argument("--phase", required=True, help="the phase's name (make's target)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- the command to run")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command to run (after --)")
    load_before = os.getloadavg()[0]
    cpu_before = cpu_seconds()
    start, t0 = time.time(), time.monotonic()
    try:
        code = subprocess.call(command)
    except KeyboardInterrupt:
        code = 130
    except OSError as exc:
        print(f"timing: {args.phase}: cannot run {command[0]}: {exc}", file=sys.stderr)
        code = 127
    seconds = time.monotonic() - t0
    if code < 0:  # killed by a signal: the shell's convention
        code = 128 - code
    cpu_after = cpu_seconds()
    busy = share = None
    if cpu_before is not None and cpu_after is not None:
        busy = cpu_after[0] - cpu_before[0]
        total = cpu_after[1] - cpu_before[1]
        share = busy / total if total > 0 else None
    used = f", CPU {busy:.1f} core-s ({share:.0%} of all cores busy)" if share is not None else ""
    print(f"timing: {args.phase} {seconds:.1f} s, exit {code}{used}", flush=True)
    record(
        args.out,
        {
            "phase": args.phase,
            "run": os.environ.get("CDK_TEST_RUN", ""),
            "start": round(start, 3),
            "end": round(start + seconds, 3),
            "seconds": round(seconds, 3),
            "exit": code,
            "load_before": load_before,
            "load_after": os.getloadavg()[0],
            "cpu_busy_s": None if busy is None else round(busy, 1),
            "cpu_busy_share": None if share is None else round(share, 3),
            "git": _results.git_commit(),
        },
    )
    return code


if __name__ == "__main__":
    sys.exit(main())
