"""What a benchmark writes for the benchmark page (``bench/report.py`` reads it).

Each script makes one :class:`Results` when it starts, marks the start of each of its runs
(:meth:`Results.run`), adds its figures once measured (:meth:`Results.figure`) and writes one
JSON file (:meth:`Results.write`), by default ``bench/results/<bench>.json`` (``--results PATH``
chooses another, ``--results ''`` writes none). A figure holds the kit's runs, the raw
baseline's runs measured in the same runs, and the aim: a ratio kit / baseline (``>= 0.9``) or,
for a figure without a baseline (a wall time), a bound on the kit's value (``< 45``).

A thread samples the 1-minute load average (``os.getloadavg``) every second from the start, so
each run carries the load before, after and during it: on the shared machine the figures move
with the load, and the page shows it beside them.

The scripts run as ``python bench/<name>.py`` (``bench/`` first on ``sys.path``), so they
``import _results``; the tests import ``bench._results``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA = 1
BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
RESULTS_DIR = BENCH_DIR / "results"
OPS = (">=", ">", "<=", "<")


def add_option(parser: argparse.ArgumentParser, bench: str) -> None:
    """Add ``--results PATH`` (default ``bench/results/<bench>.json``; '' writes none)."""
    parser.add_argument(
        "--results",
        default=str(RESULTS_DIR / f"{bench}.json"),
        metavar="PATH",
        help="where to write the results as JSON for bench/report.py ('' writes none; "
        "default: %(default)s)",
    )


def git_commit(root: Path = REPO_ROOT) -> dict[str, Any]:
    """The checkout's commit and whether it has uncommitted changes (None outside git)."""
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        status = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}
    return {"commit": head, "dirty": bool(status.strip())}


def machine() -> dict[str, Any]:
    """Python and platform facts of this process."""
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "executable": sys.executable,
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
    }


def summary(values: list[float]) -> dict[str, float] | None:
    """Median, min and max of ``values`` (None when there are none)."""
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def check_aim(aim: dict[str, Any] | None) -> None:
    """Raise ValueError naming what is wrong with an aim."""
    if aim is None:
        return
    if aim.get("of") not in ("ratio", "value"):
        raise ValueError(f"aim {aim!r}: 'of' must be 'ratio' or 'value'")
    if aim.get("op") not in OPS:
        raise ValueError(f"aim {aim!r}: 'op' must be one of {', '.join(OPS)}")
    if not isinstance(aim.get("value"), (int, float)):
        raise ValueError(f"aim {aim!r}: 'value' must be a number")


def ratio_aim(op: str, value: float) -> dict[str, Any]:
    """An aim on kit / baseline, e.g. ``ratio_aim(">=", 0.9)``."""
    aim = {"of": "ratio", "op": op, "value": value}
    check_aim(aim)
    return aim


def value_aim(op: str, value: float) -> dict[str, Any]:
    """An aim on the kit's own value, e.g. ``value_aim("<", 45)`` seconds."""
    aim = {"of": "value", "op": op, "value": value}
    check_aim(aim)
    return aim


class LoadSampler:
    """Samples the 1-minute load average every ``interval`` seconds on a daemon thread."""

    def __init__(self, interval: float = 1.0) -> None:
        self.interval = interval
        self.t0 = time.monotonic()
        self.samples: list[tuple[float, float]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="bench-load", daemon=True)

    def start(self) -> LoadSampler:
        self.sample()
        self._thread.start()
        return self

    def sample(self) -> float:
        load = os.getloadavg()[0]
        with self._lock:
            self.samples.append((round(time.monotonic() - self.t0, 3), load))
        return load

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def now(self) -> float:
        return round(time.monotonic() - self.t0, 3)

    def between(self, start: float, end: float) -> list[float]:
        with self._lock:
            return [load for t, load in self.samples if start <= t <= end]


@dataclass
class _Run:
    index: int
    start: float
    load_before: float
    end: float | None = None
    load_after: float | None = None


@dataclass
class Results:
    """One benchmark's results; see the module docstring."""

    bench: str
    path: str | None
    argv: list[str] = field(default_factory=lambda: list(sys.argv))
    sampler: LoadSampler = field(default_factory=lambda: LoadSampler().start())
    started: str = field(
        default_factory=lambda: datetime.datetime.now(datetime.timezone.utc).isoformat()
    )
    figures: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    failed: str | None = None
    _runs: list[_Run] = field(default_factory=list)
    _written: bool = False

    def write_on_failure(self) -> None:
        """If the script dies of an exception, write the results so far, saying why (the page
        shows the bench's missing figures as not run, with the reason)."""
        previous = sys.excepthook

        def hook(kind: type[BaseException], value: BaseException, tb: Any) -> None:
            if not self._written:
                text = f"{kind.__name__}: {value}"[:500]
                # a URL's password (a server's URL from the environment) stays out of the page
                self.failed = re.sub(r"://([^:/@\s]+):[^@\s]*@", r"://\1:****@", text)
                try:
                    self.write()
                except (OSError, TypeError, ValueError) as exc:  # the bench's own error first
                    print(f"results: not written ({exc})", file=sys.stderr)
            previous(kind, value, tb)

        sys.excepthook = hook

    @classmethod
    def from_args(cls, bench: str, args: argparse.Namespace) -> Results:
        """The results of ``bench``, written where ``--results`` says (see :func:`add_option`)."""
        results = cls(bench, args.results or None)
        results.write_on_failure()
        return results

    def run(self) -> int:
        """Mark the start of the next run (and the end of the one before); its index."""
        self._end_run()
        index = len(self._runs)
        self._runs.append(_Run(index, self.sampler.now(), self.sampler.sample()))
        return index

    def _end_run(self) -> None:
        if self._runs and self._runs[-1].end is None:
            last = self._runs[-1]
            last.load_after = self.sampler.sample()
            last.end = self.sampler.now()

    def note(self, text: str) -> None:
        """A line shown with the bench on the page (what was measured, a caveat)."""
        self.notes.append(text)

    def figure(
        self,
        name: str,
        title: str,
        unit: str,
        kit: list[float],
        *,
        baseline: list[float] | None = None,
        baseline_name: str | None = None,
        kit_name: str = "kit",
        aim: dict[str, Any] | None = None,
        higher_is_better: bool = True,
        runs: list[int] | None = None,
        note: str | None = None,
        error: str | None = None,
    ) -> None:
        """Add a figure: the kit's values per run, the baseline's per run (same runs) and the aim.

        ``runs`` gives each value's run index (default: 0, 1, ...); ``error`` says why a figure
        has no values (the page shows it as not run, with the reason).
        """
        check_aim(aim)
        if aim is not None and aim["of"] == "ratio" and baseline is None:
            raise ValueError(f"figure {name}: a ratio aim needs a baseline")
        if baseline is not None and len(baseline) != len(kit):
            raise ValueError(
                f"figure {name}: {len(kit)} kit values but {len(baseline)} baseline values "
                "(each run measures both)"
            )
        ratios = (
            [k / b for k, b in zip(kit, baseline, strict=True) if b]
            if baseline is not None
            else None
        )
        self.figures.append(
            {
                "name": name,
                "title": title,
                "unit": unit,
                "higher_is_better": higher_is_better,
                "kit": {"name": kit_name, "runs": list(kit), **(summary(list(kit)) or {})},
                "baseline": None
                if baseline is None
                else {
                    "name": baseline_name or "raw baseline",
                    "runs": list(baseline),
                    **(summary(list(baseline)) or {}),
                },
                "ratios": None if ratios is None else {"runs": ratios, **(summary(ratios) or {})},
                "aim": aim,
                "runs": list(runs) if runs is not None else list(range(len(kit))),
                "note": note,
                "error": error,
            }
        )

    def ratios(
        self,
        measured: dict[str, list[float]],
        figures: list[tuple[str, str, str, str, str, float]],
        *,
        unit: str,
        note: str | None = None,
    ) -> None:
        """Add figures from a script's ``{what: [value per run]}``: one per
        ``(name, title, kit key, baseline key, aim op, aim ratio)``; a key without values gives
        a figure that was not run."""
        for name, title, kit_key, base_key, op, aim in figures:
            kit, base = measured.get(kit_key) or [], measured.get(base_key) or []
            missing = [key for key, values in ((kit_key, kit), (base_key, base)) if not values]
            self.figure(
                name,
                title,
                unit,
                kit if not missing else [],
                baseline=base if not missing else [],
                baseline_name=base_key,
                kit_name=kit_key,
                aim=ratio_aim(op, aim),
                note=note,
                error=f"not measured: {', '.join(missing)}" if missing else None,
            )

    def to_dict(self) -> dict[str, Any]:
        self._end_run()
        runs = []
        for run in self._runs:
            end = run.end if run.end is not None else self.sampler.now()
            during = self.sampler.between(run.start, end)
            runs.append(
                {
                    "index": run.index,
                    "start": run.start,
                    "end": end,
                    "seconds": round(end - run.start, 3),
                    "load_before": run.load_before,
                    "load_after": run.load_after,
                    "load_during": summary(during),
                }
            )
        return {
            "schema": SCHEMA,
            "bench": self.bench,
            "argv": self.argv,
            "started": self.started,
            "finished": datetime.datetime.now(datetime.timezone.utc).isoformat(),
            "seconds": self.sampler.now(),
            "machine": machine(),
            "git": git_commit(),
            "load": {"interval": self.sampler.interval, "samples": list(self.sampler.samples)},
            "runs": runs,
            "figures": self.figures,
            "notes": self.notes,
            "failed": self.failed,
        }

    def write(self) -> Path | None:
        """Write the JSON file (none when ``--results ''``); its path."""
        data = self.to_dict()
        self.sampler.stop()
        self._written = True
        if not self.path:
            return None
        path = Path(self.path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(data, indent=1) + "\n")
        tmp.replace(path)
        print(f"results: {path}", file=sys.stderr)
        return path
