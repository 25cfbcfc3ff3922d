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
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from cdk.kafka import EmbeddedKafka  # noqa: E402

_RUN = re.compile(r"run \d+: source ([\d,]+)/([\d,]+) \(\d+%\), sink ([\d,]+)/([\d,]+) \(\d+%\)")


def _load() -> str:
    try:
        return Path("/proc/loadavg").read_text().split(" 1")[0].strip()
    except OSError:
        return "unknown"


def measure(tree: Path, bootstrap: str, records: int) -> tuple[float, float, float, float]:
    """One worker_throughput run of ``tree``: (source worker, source loop, sink worker, loop)."""
    done = subprocess.run(
        [
            sys.executable,
            str(tree / "bench" / "worker_throughput.py"),
            "--bootstrap",
            bootstrap,
            "--records",
            str(records),
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
    src_w, src_l, snk_w, snk_l = (float(g.replace(",", "")) for g in match.groups())
    return src_w, src_l, snk_w, snk_l


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
        trees = {"base": base, "this": REPO_ROOT}
        results: dict[str, list[tuple[float, float, float, float]]] = {"base": [], "this": []}
        order = []
        for run in range(args.runs):
            order += ["base", "this"] if run % 2 == 0 else ["this", "base"]
        for label in order:
            figures = measure(trees[label], broker.bootstrap_servers, args.records)
            results[label].append(figures)
            print(
                f"{label}: source {figures[0]:,.0f} (loop {figures[1]:,.0f}), "
                f"sink {figures[2]:,.0f} (loop {figures[3]:,.0f})",
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


if __name__ == "__main__":
    main()
