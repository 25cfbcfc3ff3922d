"""The benchmark page: ``bench/report.html`` from the JSON results of the benchmarks.

``make bench`` runs the benchmarks (each writes ``bench/results/<bench>.json``, see
``bench/_results.py``) and then this script, which builds one self-contained HTML page (plots
drawn by matplotlib as SVG and inlined, no script, no external style or font):

- a summary table: each figure, the kit's median, the raw baseline's median, the ratio (median
  of the per-run ratios), the aim and whether it was met, missed or not run;
- a section per benchmark: the machine's load during the bench, and per figure a plot of the
  kit's and the baseline's runs and of the ratios against the aim, with a table of the runs
  (each with the 1-minute load average before, during and after it);
- the accelerators the environment had (``bench/accelerators.py``), the Python, platform and
  commit of each bench.

The figures the issues set aims for are always listed: one with no results yet (its bench was
not run, or does not exist) shows as "not run", never with a value. ``make test``'s wall time
comes from the phase times that ``make test`` records (``reports/make-test-times.json``, see
``bench/_timed.py``).

Run with ``.venv/bin/python bench/report.py [--results DIR] [--make-test-times FILE] [--out
FILE]``.
"""

from __future__ import annotations

import argparse
import datetime
import io
import json
import re
import statistics
import sys
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
DEFAULT_RESULTS = BENCH_DIR / "results"
DEFAULT_OUT = BENCH_DIR / "report.html"
DEFAULT_TIMES = REPO_ROOT / "reports" / "make-test-times.json"
MAKE_TEST_PHASES = ("lint", "typecheck", "docs", "unit", "test-spark")

MET, MISSED, NOT_RUN, NO_AIM = "met", "missed", "not run", "no aim"


@dataclass(frozen=True)
class Slot:
    """A figure the page always lists, with or without results."""

    name: str
    title: str
    bench: str  # the script (bench/<bench>.py) or source that measures it
    aim: dict[str, Any]
    unit: str
    issue: str


def _ratio(op: str, value: float) -> dict[str, Any]:
    return {"of": "ratio", "op": op, "value": value}


def _value(op: str, value: float) -> dict[str, Any]:
    return {"of": "value", "op": op, "value": value}


SLOTS: tuple[Slot, ...] = (
    Slot(
        "certify.sql.sqlite",
        "cdk certify reference_connectors/sql, SQLite",
        "certify_time",
        _value("<", 45),
        "s",
        "31",
    ),
    Slot(
        "certify.sql.postgresql",
        "cdk certify reference_connectors/sql, PostgreSQL",
        "certify_time",
        _value("<", 45),
        "s",
        "31",
    ),
    Slot(
        "certify.sql.mariadb",
        "cdk certify reference_connectors/sql, MariaDB",
        "certify_time",
        _value("<", 45),
        "s",
        "31",
    ),
    Slot(
        "certify.new_project",
        "cdk certify of the cdk new project",
        "certify_time",
        _value("<", 45),
        "s",
        "31",
    ),
    Slot("make_test.wall", "make test wall time", "make_test", _value("<", 900), "s", "31"),
    Slot(
        "spark.streaming_vs_batch",
        "Spark streaming write / SQLite batch read",
        "spark_datasource",
        _ratio(">=", 0.8),
        "rows/s",
        "31",
    ),
    Slot(
        "spark.read.sqlite",
        "spark.read SQLite / the worker into Kafka",
        "spark_datasource",
        _ratio(">=", 1.0),
        "rows/s",
        "31",
    ),
    Slot(
        "spark.read.filestream",
        "spark.read FileStream / the worker into Kafka",
        "spark_datasource",
        _ratio(">=", 1.0),
        "rows/s",
        "31",
    ),
    Slot(
        "filestream.sink",
        "FileStream sink / raw consume loop",
        "filestream_vs_raw",
        _ratio(">=", 1.3),
        "rec/s",
        "31",
    ),
    Slot(
        "filestream.source",
        "FileStream source / raw produce loop",
        "filestream_vs_raw",
        _ratio(">=", 0.9),
        "rec/s",
        "31",
    ),
    Slot(
        "eos.poll",
        "exactly once (transaction.boundary=poll) / at least once",
        "eos_vs_at_least_once",
        _ratio(">=", 0.7),
        "rec/s",
        "28",
    ),
    Slot(
        "eos.interval",
        "exactly once (transaction.boundary=interval, 1 s) / at least once",
        "eos_vs_at_least_once",
        _ratio(">=", 0.9),
        "rec/s",
        "28",
    ),
    Slot(
        "sql_source.steady",
        "SQL source (PostgreSQL) / raw loop",
        "sql_source_vs_raw",
        _ratio(">=", 0.7),
        "rows/s",
        "23",
    ),
    Slot(
        "worker.source",
        "generator source under the worker / hand-written loop",
        "worker_throughput",
        _ratio(">=", 0.8),
        "rec/s",
        "23",
    ),
    Slot(
        "worker.sink",
        "no-op sink under the worker / hand-written consume loop",
        "worker_throughput",
        _ratio(">=", 0.8),
        "rec/s",
        "23",
    ),
    Slot(
        "sql_sink.cpu",
        "SQL sink CPU per record / raw loop's, 1% -> 99%",
        "sql_sink_vs_raw",
        _ratio("<=", 1.3),
        "us/record",
        "23",
    ),
    Slot(
        "distributed.source.local2",
        "source task, distributed local[2] / standalone",
        "distributed_vs_standalone",
        _ratio(">=", 0.9),
        "rec/s",
        "23",
    ),
    Slot(
        "distributed.source.cluster",
        "source task, distributed 2-worker cluster / standalone",
        "distributed_vs_standalone",
        _ratio(">=", 0.9),
        "rec/s",
        "23",
    ),
    Slot(
        "json_converter.from_connect_data",
        "JsonConverter.from_connect_data / json.dumps of the dict (cost)",
        "json_converter",
        _ratio("<=", 3.0),
        "us/record",
        "6",
    ),
    Slot(
        "json_converter.to_connect_data_stdlib",
        "JsonConverter.to_connect_data, stdlib parser / json.loads (cost)",
        "json_converter",
        _ratio("<=", 3.0),
        "us/record",
        "6",
    ),
)


# ----------------------------------------------------------------------------------- loading
def load_results(directory: Path) -> list[dict[str, Any]]:
    """Every bench's results in ``directory`` (sorted by bench name); bad files raise."""
    found = []
    if directory.is_dir():
        for path in sorted(directory.glob("*.json")):
            try:
                data = json.loads(path.read_text())
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}: not JSON ({exc})") from exc
            if not isinstance(data, dict) or "bench" not in data:
                raise ValueError(f"{path}: not a bench result (no 'bench' key)")
            data["_path"] = str(path)
            found.append(data)
    return found


def make_test_result(path: Path) -> dict[str, Any] | None:
    """``make test``'s phase times as a bench result (None when there are none).

    The last ``make test`` run (``run`` id) that recorded every phase gives the figure: its wall
    time from the first phase's start to the last one's end; without such a run, the figure is
    not run and says which phases were seen.
    """
    if not path.is_file():
        return None
    try:
        records = json.loads(path.read_text())["phases"]
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not make test phase times ({exc})") from exc
    runs: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        runs.setdefault(record.get("run") or "", []).append(record)
    complete = [
        (run, items)
        for run, items in runs.items()
        if run and set(MAKE_TEST_PHASES) <= {item["phase"] for item in items}
    ]
    result: dict[str, Any] = {
        "bench": "make_test",
        "_path": str(path),
        "notes": [
            "The phases of one make test run as bench/_timed.py recorded them (make test "
            "on this checkout; on a clean clone the virtualenv's install comes first and is "
            "not counted)."
        ],
        "runs": [],
        "figures": [],
    }
    if not complete:
        seen = sorted({item["phase"] for item in records})
        result["figures"].append(
            {
                "name": "make_test.wall",
                "title": "make test wall time",
                "unit": "s",
                "kit": {"name": "make test", "runs": []},
                "baseline": None,
                "aim": None,
                "error": "no make test run recorded every phase"
                + (f" (phases seen: {', '.join(seen)})" if seen else ""),
            }
        )
        return result
    run, items = max(complete, key=lambda pair: max(item["end"] for item in pair[1]))
    last = {}
    for item in sorted(items, key=lambda item: item["end"]):
        last[item["phase"]] = item
    start = min(item["start"] for item in last.values())
    end = max(item["end"] for item in last.values())
    failed = [phase for phase, item in last.items() if item.get("exit", 0) != 0]
    result["git"] = last[MAKE_TEST_PHASES[-1]].get("git")
    result["finished"] = datetime.datetime.fromtimestamp(end, datetime.timezone.utc).isoformat()
    result["runs"] = [
        {
            "index": 0,
            "seconds": round(end - start, 1),
            "load_before": min(last.values(), key=lambda i: i["start"]).get("load_before"),
            "load_after": max(last.values(), key=lambda i: i["end"]).get("load_after"),
            "load_during": None,
        }
    ]
    result["figures"].append(
        {
            "name": "make_test.wall",
            "title": "make test wall time",
            "unit": "s",
            "higher_is_better": False,
            "kit": {"name": "make test", "runs": [round(end - start, 1)]},
            "baseline": None,
            "aim": None,
            "runs": [0],
            "parts": {phase: round(item["seconds"], 1) for phase, item in last.items()},
            "note": f"one run ({run}); phases in seconds: "
            + ", ".join(f"{phase} {item['seconds']:.0f}" for phase, item in last.items())
            + (f"; FAILED: {', '.join(failed)}" if failed else ""),
        }
    )
    return result


# ----------------------------------------------------------------------------------- figures
@dataclass
class Row:
    """One line of the summary: a figure with its status."""

    name: str
    title: str
    bench: str
    unit: str
    aim: dict[str, Any] | None
    figure: dict[str, Any] | None
    result: dict[str, Any] | None
    status: str
    reason: str = ""

    @property
    def kit_values(self) -> list[float]:
        return list(self.figure["kit"]["runs"]) if self.figure else []

    @property
    def baseline_values(self) -> list[float]:
        if self.figure and self.figure.get("baseline"):
            return list(self.figure["baseline"]["runs"])
        return []

    @property
    def ratios(self) -> list[float]:
        kit, base = self.kit_values, self.baseline_values
        if not base or len(base) != len(kit):
            return []
        return [k / b for k, b in zip(kit, base, strict=True) if b]


def compare(value: float, op: str, bound: float) -> bool:
    """``value op bound``."""
    return {
        ">=": value >= bound,
        ">": value > bound,
        "<=": value <= bound,
        "<": value < bound,
    }[op]


def status_of(
    figure: dict[str, Any] | None, aim: dict[str, Any] | None
) -> tuple[str, str, float | None]:
    """(status, reason, the figure compared with the aim)."""
    if figure is None:
        return NOT_RUN, "no results", None
    kit = list(figure["kit"]["runs"])
    if figure.get("error") or not kit:
        return NOT_RUN, figure.get("error") or "no runs", None
    if aim is None:
        return NO_AIM, "", None
    if aim["of"] == "ratio":
        base = list((figure.get("baseline") or {}).get("runs") or [])
        ratios = [k / b for k, b in zip(kit, base, strict=False) if b]
        if not ratios:
            return NOT_RUN, "no baseline measured", None
        measured = statistics.median(ratios)
    else:
        measured = statistics.median(kit)
    return (MET if compare(measured, aim["op"], aim["value"]) else MISSED), "", measured


def rows_of(results: list[dict[str, Any]]) -> list[Row]:
    """The summary's rows: every slot (in order), then the other figures found."""
    by_name: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    for found_result in results:
        for found_figure in found_result.get("figures", []):
            by_name[found_figure["name"]] = (found_figure, found_result)
    failed = {r["bench"]: r["failed"] for r in results if r.get("failed")}
    rows = []
    for slot in SLOTS:
        found = by_name.pop(slot.name, None)
        figure: dict[str, Any] | None = found[0] if found else None
        result: dict[str, Any] | None = found[1] if found else None
        aim = (figure or {}).get("aim") or slot.aim
        status, reason, _ = status_of(figure, aim)
        if figure is None:
            reason = f"no results from {slot.bench}"
            if slot.bench in failed:
                first = failed[slot.bench].splitlines()[0]
                short = first if len(first) <= 160 else first[:157] + "..."
                reason = f"{slot.bench} failed: {short}"  # the whole error: the bench's section
        rows.append(
            Row(slot.name, slot.title, slot.bench, slot.unit, aim, figure, result, status, reason)
        )
    for name, (figure, result) in by_name.items():
        status, reason, _ = status_of(figure, figure.get("aim"))
        rows.append(
            Row(
                name,
                figure["title"],
                result["bench"],
                figure["unit"],
                figure.get("aim"),
                figure,
                result,
                status,
                reason,
            )
        )
    return rows


# ----------------------------------------------------------------------------------- plots
KIT_COLOUR, BASE_COLOUR, AIM_COLOUR, LOAD_COLOUR = "#1f6fb4", "#9a9a9a", "#c0392b", "#7d5ba6"
AIM_BOX = {"facecolor": "white", "edgecolor": "none", "alpha": 0.85, "pad": 1}


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update(
        {
            "svg.fonttype": "none",  # text stays text: smaller, and the page's font
            "svg.hashsalt": "cdk-bench",  # the same ids for the same plot
            "font.size": 9,
            "axes.spines.top": False,
            "axes.spines.right": False,
        }
    )
    return plt


def _svg(fig: Any) -> str:
    plt = _pyplot()
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None})
    plt.close(fig)
    text = buffer.getvalue()
    # inline: no XML prolog or DOCTYPE (the one matplotlib writes names a DTD by URL)
    text = re.sub(r"^<\?xml[^>]*>\s*", "", text)
    text = re.sub(r"<!DOCTYPE[^>]*>\s*", "", text)
    return re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.S)


def _aim_line(ax: Any, value: float, label: str) -> None:
    """The aim as a dashed line across the plot, labelled at its right end."""
    ax.axhline(value, color=AIM_COLOUR, linestyle="--", linewidth=1.2)
    ax.annotate(
        label,
        (0.99, value),
        xycoords=("axes fraction", "data"),
        color=AIM_COLOUR,
        ha="right",
        va="bottom",
        bbox=AIM_BOX,
        zorder=5,
    )


def _aim_text(aim: dict[str, Any] | None) -> str:
    if aim is None:
        return "—"
    suffix = "x" if aim["of"] == "ratio" else ""
    return f"{aim['op']} {aim['value']:g}{suffix}"


def figure_plot(row: Row) -> str:
    """The figure's plot (SVG): the runs of kit and baseline, and the ratios or value vs aim."""
    plt = _pyplot()
    assert row.figure is not None
    kit, base, ratios = row.kit_values, row.baseline_values, row.ratios
    parts = row.figure.get("parts")
    panels = 2 if (ratios or parts) else 1
    fig, axes = plt.subplots(1, panels, figsize=(4.2 * panels, 2.5), squeeze=False)
    ax = axes[0][0]
    x = list(range(1, len(kit) + 1))
    width = 0.38 if base else 0.6
    kit_label = row.figure["kit"].get("name", "kit")
    ax.bar(
        [i - width / 2 if base else i for i in x],
        kit,
        width,
        color=KIT_COLOUR,
        label=kit_label,
    )
    if base:
        ax.bar(
            [i + width / 2 for i in x],
            base,
            width,
            color=BASE_COLOUR,
            label=row.figure["baseline"].get("name", "baseline"),
        )
    ax.axhline(statistics.median(kit), color=KIT_COLOUR, linestyle=":", linewidth=1)
    if row.aim is not None and row.aim["of"] == "value":
        _aim_line(ax, row.aim["value"], f"aim {_aim_text(row.aim)} {row.unit}")
    ax.set_xticks(x, [f"run {i}" for i in x])
    ax.set_ylabel(row.unit)
    top = max([*kit, *base]) * 1.45  # room for the legend above the bars
    if row.aim is not None and row.aim["of"] == "value":
        top = max(top, row.aim["value"] * 1.45)
    ax.set_ylim(0, top)
    ax.legend(loc="upper left", fontsize=7, framealpha=0.8)
    ax.set_title("runs (dotted: kit median)", fontsize=9)
    if ratios:
        ax2 = axes[0][1]
        ax2.plot(x, ratios, marker="o", color=KIT_COLOUR, linestyle="-", label="kit / baseline")
        ax2.axhline(statistics.median(ratios), color=KIT_COLOUR, linestyle=":", linewidth=1)
        top = max(ratios)
        if row.aim is not None and row.aim["of"] == "ratio":
            _aim_line(ax2, row.aim["value"], f"aim {_aim_text(row.aim)}")
            top = max(top, row.aim["value"])
        ax2.set_ylim(0, top * 1.2)
        ax2.set_xticks(x, [f"run {i}" for i in x])
        ax2.set_ylabel("kit / baseline")
        ax2.set_title("ratio per run (dotted: median)", fontsize=9)
    elif parts:
        ax2 = axes[0][1]
        names = list(parts)
        ax2.barh(names, [parts[n] for n in names], color=KIT_COLOUR)
        ax2.invert_yaxis()
        ax2.set_xlabel("s")
        ax2.set_title("phases", fontsize=9)
    # fixed margins: a tight layout measures every text again, and doubles the plot's cost
    fig.subplots_adjust(
        left=0.12 if panels == 2 else 0.16, right=0.98, bottom=0.16, top=0.88, wspace=0.35
    )
    return _svg(fig)


def load_plot(result: dict[str, Any]) -> str | None:
    """The bench's load average over its time, its runs shaded (SVG); None without samples."""
    samples = (result.get("load") or {}).get("samples") or []
    if len(samples) < 2:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8.4, 1.6))
    ax.plot([t for t, _ in samples], [v for _, v in samples], color=LOAD_COLOUR, linewidth=1.2)
    for run in result.get("runs", []):
        ax.axvspan(run["start"], run["end"], color=LOAD_COLOUR, alpha=0.08)
        ax.annotate(
            f"run {run['index'] + 1}",
            ((run["start"] + run["end"]) / 2, 1.0),
            xycoords=("data", "axes fraction"),
            ha="center",
            va="top",
            fontsize=7,
        )
    ax.set_ylim(bottom=0)
    ax.set_xlabel("s since the bench started")
    ax.set_ylabel("load (1 min)")
    fig.subplots_adjust(left=0.07, right=0.99, bottom=0.28, top=0.95)
    return _svg(fig)


# ----------------------------------------------------------------------------------- HTML
STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1.5em auto;
       max-width: 84em; color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1em; margin-bottom: 0.3em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: left; }
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.aim { white-space: nowrap; }
th { background: #f4f4f4; }
.status { font-weight: bold; white-space: nowrap; }
td.status .note { font-weight: normal; white-space: normal; }
.met { color: #1e7d32; } .missed { color: #b71c1c; } .not-run { color: #777; }
.no-aim { color: #555; }
.figure { margin: 1em 0 2em; } .note { color: #555; font-size: 0.9em; }
svg { max-width: 100%; height: auto; }
"""


def _num(value: float | None, unit: str = "") -> str:
    if value is None:
        return ""
    if abs(value) >= 1000:
        text = f"{value:,.0f}"
    elif abs(value) >= 100:
        text = f"{value:.0f}"
    elif abs(value) >= 10:
        text = f"{value:.1f}"
    else:
        text = f"{value:.2f}"
    return f"{text}{'' if unit == 'x' else ' '}{unit}".strip()


def _spread(values: list[float], unit: str = "") -> str:
    if not values:
        return ""
    median = statistics.median(values)
    if len(values) == 1:
        return _num(median, unit)
    low, high = _num(min(values)), _num(max(values))
    return f"{_num(median, unit)} <span class=note>({low}&ndash;{high})</span>"


def _status_cell(row: Row) -> str:
    css = row.status.replace(" ", "-")
    reason = f"<br><span class=note>{escape(row.reason)}</span>" if row.reason else ""
    return f"<td class='status {css}' data-status='{escape(row.status)}'>{row.status}{reason}</td>"


def _anchor(name: str) -> str:
    return "fig-" + re.sub(r"[^A-Za-z0-9_-]", "-", name)


def _aim_unit(row: Row) -> str:
    return " " + row.unit if row.aim and row.aim["of"] == "value" else ""


def summary_table(rows: list[Row], table_id: str = "summary") -> str:
    out = [
        f"<table id={table_id}><tr><th>figure</th><th>kit (median, min&ndash;max)</th>"
        "<th>baseline (median)</th><th>kit / baseline (median, min&ndash;max)</th><th>aim</th>"
        "<th>status</th><th>runs</th><th>load during (max)</th></tr>"
    ]
    for row in rows:
        kit = row.kit_values if row.status != NOT_RUN else []
        base = row.baseline_values if row.status != NOT_RUN else []
        ratios = row.ratios if row.status != NOT_RUN else []
        loads = _run_loads(row) if row.status != NOT_RUN else []
        peak = max((load for load in loads if load is not None), default=None)
        aim_unit = _aim_unit(row)
        out.append(
            f"<tr id='row-{_anchor(row.name)}' data-figure='{escape(row.name)}'>"
            f"<td><a href='#{_anchor(row.name)}'>{escape(row.title)}</a></td>"
            f"<td class=n>{_spread(kit, row.unit)}</td>"
            f"<td class=n>{_num(statistics.median(base), row.unit) if base else ''}</td>"
            f"<td class=n>{_spread(ratios, 'x') if ratios else ''}</td>"
            f"<td class=aim>{escape(_aim_text(row.aim))}{aim_unit}</td>"
            f"{_status_cell(row)}<td class=n>{len(kit) or ''}</td>"
            f"<td class=n>{_num(peak)}</td></tr>"
        )
    out.append("</table>")
    return "\n".join(out)


def _run_loads(row: Row) -> list[float | None]:
    """The highest load average during each of the figure's runs."""
    if row.figure is None or row.result is None:
        return []
    runs = {run["index"]: run for run in row.result.get("runs", [])}
    loads: list[float | None] = []
    for index in row.figure.get("runs") or []:
        run = runs.get(index)
        if run is None:
            loads.append(None)
            continue
        during = run.get("load_during") or {}
        candidates = [
            v
            for v in (run.get("load_before"), during.get("max"), run.get("load_after"))
            if v is not None
        ]
        loads.append(max(candidates) if candidates else None)
    return loads


def runs_table(row: Row) -> str:
    assert row.figure is not None
    assert row.result is not None
    runs = {run["index"]: run for run in row.result.get("runs", [])}
    kit, base, ratios = row.kit_values, row.baseline_values, row.ratios
    head = "<tr><th>run</th><th>kit</th>"
    if base:
        head += "<th>baseline</th><th>kit / baseline</th>"
    head += "<th>load before</th><th>load during (median, max)</th><th>load after</th></tr>"
    out = ["<table class=runs>", head]
    indices = row.figure.get("runs") or list(range(len(kit)))
    for position, value in enumerate(kit):
        run = runs.get(indices[position] if position < len(indices) else -1, {})
        during = run.get("load_during") or {}
        cells = f"<td>{position + 1}</td><td class=n>{_num(value, row.unit)}</td>"
        if base:
            cells += f"<td class=n>{_num(base[position], row.unit)}</td>"
            ratio = _num(ratios[position]) + "x" if position < len(ratios) else ""
            cells += f"<td class=n>{ratio}</td>"
        during_text = f"{_num(during.get('median'))}, {_num(during.get('max'))}" if during else ""
        cells += (
            f"<td class=n>{_num(run.get('load_before'))}</td><td class=n>{during_text}</td>"
            f"<td class=n>{_num(run.get('load_after'))}</td>"
        )
        out.append(f"<tr>{cells}</tr>")
    out.append("</table>")
    return "\n".join(out)


def figure_section(row: Row) -> str:
    head = (
        f"<div class=figure id='{_anchor(row.name)}' data-figure='{escape(row.name)}'>"
        f"<h3>{escape(row.title)} <span class='status {row.status.replace(' ', '-')}'>"
        f"[{row.status}]</span></h3>"
    )
    aim = f"aim: {escape(_aim_text(row.aim))}{_aim_unit(row)}"
    if row.status == NOT_RUN:
        return (
            f"{head}<p class=note>Not run: {escape(row.reason)}. {aim}. Measured by "
            f"<code>{escape(_how(row.bench))}</code>.</p></div>"
        )
    parts = [head]
    _, _, measured = status_of(row.figure, row.aim)
    if measured is not None:
        what = "median ratio" if row.aim and row.aim["of"] == "ratio" else "median"
        shown = _num(measured, "x" if what == "median ratio" else row.unit)
        parts.append(f"<p>{what} {shown}, {aim}: <b>{row.status}</b>.</p>")
    assert row.figure is not None
    if row.figure.get("note"):
        parts.append(f"<p class=note>{escape(row.figure['note'])}</p>")
    parts.append(figure_plot(row))
    parts.append(runs_table(row))
    parts.append("</div>")
    return "\n".join(parts)


def _how(bench: str) -> str:
    if bench == "make_test":
        return "make test (phase times in reports/make-test-times.json)"
    return f".venv/bin/python bench/{bench}.py"


def bench_header(result: dict[str, Any]) -> str:
    git = result.get("git") or {}
    commit = (git.get("commit") or "")[:12]
    machine = result.get("machine") or {}
    facts = [
        f"commit {commit}{' (with local changes)' if git.get('dirty') else ''}" if commit else "",
        f"finished {result.get('finished', '')[:19].replace('T', ' ')} UTC"
        if result.get("finished")
        else "",
        f"{result['seconds']:.0f} s" if result.get("seconds") is not None else "",
        f"Python {machine.get('python')}" if machine.get("python") else "",
        machine.get("platform", ""),
        " ".join(result.get("argv", [])[1:]) and "options: " + " ".join(result["argv"][1:]),
    ]
    out = [
        f"<h2 id='bench-{escape(result['bench'])}'>{escape(result['bench'])}</h2>",
        "<p class=note>" + escape("; ".join(f for f in facts if f)) + "</p>",
    ]
    if result.get("failed"):
        out.append(f"<p class='status missed'>The bench failed: {escape(result['failed'])}</p>")
    for note in result.get("notes") or []:
        out.append(f"<p class=note>{escape(note)}</p>")
    plot = load_plot(result)
    if plot:
        out.append("<p class=note>The machine's 1-minute load average during the bench:</p>")
        out.append(plot)
    return "\n".join(out)


def accelerators_section(results: list[dict[str, Any]]) -> str:
    found = next((r for r in results if r["bench"] == "accelerators"), None)
    if found is not None:
        items = found.get("accelerators") or []
        when = "as bench/accelerators.py found them when the benches ran"
    else:
        sys.path.insert(0, str(BENCH_DIR))
        try:
            import accelerators

            items = [list(pair) for pair in accelerators.report()]
        finally:
            sys.path.remove(str(BENCH_DIR))
        when = "found when this page was built (bench/accelerators.py did not record a run)"
    rows = "".join(
        f"<tr><td>{escape(name)}</td><td>{escape(text)}</td></tr>" for name, text in items
    )
    return (
        f"<h2 id=accelerators>Accelerators</h2><p class=note>{escape(when)}</p>"
        f"<table><tr><th>accelerator</th><th>found</th></tr>{rows}</table>"
    )


def build(results: list[dict[str, Any]]) -> str:
    """The page (HTML text) for ``results``."""
    rows = rows_of(results)
    counts = {s: sum(1 for r in rows if r.status == s) for s in (MET, MISSED, NOT_RUN)}
    generated = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out = [
        "<!DOCTYPE html>",
        "<html lang=en><head><meta charset=utf-8>",
        "<meta name=viewport content='width=device-width, initial-scale=1'>",
        "<title>connect-cdk benchmarks</title>",
        f"<style>{STYLE}</style></head><body>",
        "<h1>connect-cdk benchmarks</h1>",
        f"<p>Built {generated} from {len(results)} result file(s). "
        f"<span class='status met'>{counts[MET]} met</span>, "
        f"<span class='status missed'>{counts[MISSED]} missed</span>, "
        f"<span class='status not-run'>{counts[NOT_RUN]} not run</span>. Each figure is "
        "measured against its raw baseline in the same run; the ratio is the median of the "
        "per-run ratios. The load is the 1-minute load average (2 cores: above 2, processes "
        "wait for a core).</p>",
        "<h2 id=aims>Figures with an aim</h2>",
        summary_table([r for r in rows if r.aim is not None]),
        "<h2 id=others>Other figures (no aim: shown for the headroom)</h2>",
        summary_table([r for r in rows if r.aim is None], "others-table"),
        accelerators_section(results),
    ]
    by_bench: dict[str, list[Row]] = {}
    for row in rows:
        key = row.result["bench"] if row.result is not None else row.bench
        by_bench.setdefault(key, []).append(row)
    results_by_bench = {r["bench"]: r for r in results}
    for bench, bench_rows in by_bench.items():
        result = results_by_bench.get(bench)
        if result is not None:
            out.append(bench_header(result))
        else:
            out.append(f"<h2 id='bench-{escape(bench)}'>{escape(bench)}</h2>")
            out.append(f"<p class=note>No results: <code>{escape(_how(bench))}</code>.</p>")
        out.extend(figure_section(row) for row in bench_rows)
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=DEFAULT_RESULTS, help="JSON results")
    parser.add_argument("--make-test-times", type=Path, default=DEFAULT_TIMES)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    results = load_results(args.results)
    make_test = make_test_result(args.make_test_times)
    if make_test is not None:
        results.append(make_test)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(build(results))
    rows = rows_of(results)
    for row in rows:
        print(f"  {row.status:<8} {row.title}")
    print(f"benchmark page: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
