"""What the metrics cost: worker throughput of this checkout against an earlier commit.

Runs ``bench/worker_throughput.py`` of two trees against one embedded broker, alternating
(base, this, this, base, base, this, ...), ``--runs`` times each: this checkout (metrics on:
they are always on) and ``--base-rev`` exported with ``git archive`` into a temporary directory
(e.g. the commit before the metrics). Each invocation measures the source and sink pipelines and
their hand-written loops in the same run (see bench/README.md); this script prints the medians
per tree, the worker/loop ratios, and the change from base to this checkout. The machine's load
(``/proc/loadavg``) is printed before and after: the figures mean little on a busy machine.

    .venv/bin/python bench/metrics_overhead.py --base-rev 4850317 [--records 200000] [--runs 3]
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from cdk.kafka import EmbeddedKafka  # noqa: E402

_RUN = re.compile(
    r"run \d+: source ([\d,]+)/([\d,]+) \(\d+%\), sink ([\d,]+)/([\d,]+) \(\d+%\).*"
    r"CPU us/record: source ([\d.]+)/([\d.]+), sink ([\d.]+)/([\d.]+)"
)
#: (source worker, source loop, sink worker, sink loop) rates, then the same four CPU figures
_Figures = tuple[float, float, float, float, float, float, float, float]


def _load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def measure(tree: Path, bootstrap: str, records: int) -> _Figures:
    """One worker_throughput run of ``tree``: rates and CPU per record (see ``_Figures``)."""
    done = subprocess.run(
        [
            sys.executable,
            str(tree / "bench" / "worker_throughput.py"),
            "--bootstrap",
            bootstrap,
            "--records",
            str(records),
            "--results",
            "",  # not a figure of the benchmark page
        ],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    match = _RUN.search(done.stderr)
    if done.returncode != 0 or match is None:
        raise RuntimeError(f"{tree}: worker_throughput failed:\n{done.stdout}\n{done.stderr}")
    v = [float(g.replace(",", "")) for g in match.groups()]
    return v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--base-rev", required=True, help="the commit to compare with")
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=3, help="runs per tree")
    args = parser.parse_args()

    print(f"load before: {_load()}", flush=True)
    with tempfile.TemporaryDirectory() as tmp, EmbeddedKafka() as broker:
        base = Path(tmp) / "base"
        base.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "archive", args.base_rev],
            capture_output=True,
            check=True,
        )
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive.stdout, check=True)
        # the same measuring script for both trees: only the kit under it differs
        shutil.copy(REPO_ROOT / "bench" / "worker_throughput.py", base / "bench")
        shutil.copy(REPO_ROOT / "bench" / "_results.py", base / "bench")
        trees = {"base": base, "this": REPO_ROOT}
        results: dict[str, list[_Figures]] = {"base": [], "this": []}
        order = []
        for run in range(args.runs):
            order += ["base", "this"] if run % 2 == 0 else ["this", "base"]
        for label in order:
            figures = measure(trees[label], broker.bootstrap_servers, args.records)
            results[label].append(figures)
            print(
                f"{label}: source {figures[0]:,.0f} (loop {figures[1]:,.0f}), "
                f"sink {figures[2]:,.0f} (loop {figures[3]:,.0f}); CPU us/record: "
                f"source {figures[4]:.1f} (loop {figures[5]:.1f}), "
                f"sink {figures[6]:.1f} (loop {figures[7]:.1f})",
                file=sys.stderr,
                flush=True,
            )
    print(f"load after: {_load()}")
    print()
    print(f"{args.records:,} records, {args.runs} runs per tree, medians; base = {args.base_rev}")
    print()
    print("| pipeline | base (rec/s) | this (rec/s) | change | base/loop | this/loop |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, worker, loop in (("source", 0, 1), ("sink", 2, 3)):
        b = statistics.median(r[worker] for r in results["base"])
        t = statistics.median(r[worker] for r in results["this"])
        b_ratio = statistics.median(r[worker] / r[loop] for r in results["base"])
        t_ratio = statistics.median(r[worker] / r[loop] for r in results["this"])
        print(
            f"| {name} | {b:,.0f} | {t:,.0f} | {t / b - 1:+.1%} | {b_ratio:.0%} | {t_ratio:.0%} |"
        )
    print()
    print("Worker CPU per record (this process, all threads; less sensitive to other load):")
    print()
    print("| pipeline | base (us/rec) | this (us/rec) | change | loop base | loop this |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, worker, loop in (("source", 4, 5), ("sink", 6, 7)):
        b = statistics.median(r[worker] for r in results["base"])
        t = statistics.median(r[worker] for r in results["this"])
        lb = statistics.median(r[loop] for r in results["base"])
        lt = statistics.median(r[loop] for r in results["this"])
        print(f"| {name} | {b:.1f} | {t:.1f} | {t / b - 1:+.1%} | {lb:.1f} | {lt:.1f} |")


if __name__ == "__main__":
    main()
