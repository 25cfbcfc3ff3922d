"""The bundle's HTML report (``report.html``): one self-contained page a reviewer reads.

Inline CSS, inline SVG plots, no external resources; it reads without JavaScript (a few lines
of inline script only add outcome filters). Sections: the verdict and counts, the checklist by
suite (every skip and failure with its reason, expected vs actual, details), performance
figures with their thresholds and plots, the generated configuration reference of each
connector, and the environment and timing of the run. Every value is escaped; the embedded
configuration reference is sanitized (:mod:`harness.certify._report_sanitize`); the checks'
descriptions, written in RST, are rendered by :mod:`harness.certify._rst_inline`.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from html import escape
from pathlib import Path

from harness.certify._checks import SUITES, CheckResult, Metric, Outcome
from harness.certify._plots import svg_plot
from harness.certify._report_common import (
    OUTCOME_ORDER,
    clean,
    counts,
    format_duration,
    suite_counts,
    verdict,
    verdict_reason,
)
from harness.certify._report_sanitize import sanitize
from harness.certify._rst_inline import render_rst
from harness.certify._runner import CertificationRun

__all__ = ["render_html", "write_html"]

_CSS = """
:root { --pass: #1a7f37; --fail: #cf222e; --error: #a0519f; --skip: #6e7781;
  --line: #d0d7de; --soft: #f6f8fa; --text: #1f2328; }
* { box-sizing: border-box; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif;
  color: var(--text); margin: 0; background: #fff; }
main { max-width: 1120px; margin: 0 auto; padding: 24px 28px 64px; }
h1 { font-size: 26px; margin: 0 0 8px; }
h2 { font-size: 21px; margin: 40px 0 12px; padding-bottom: 6px;
  border-bottom: 1px solid var(--line); }
h3 { font-size: 17px; margin: 24px 0 8px; }
code, pre, .check-id { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre { background: var(--soft); border: 1px solid var(--line); border-radius: 6px; padding: 10px;
  overflow-x: auto; white-space: pre-wrap; word-break: break-word; font-size: 13px; }
table { border-collapse: collapse; margin: 8px 0; }
th, td { border: 1px solid var(--line); padding: 4px 10px; text-align: left; vertical-align: top; }
th { background: var(--soft); }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
nav a { margin-right: 16px; }
.verdict { display: inline-block; font-size: 22px; font-weight: 700; letter-spacing: .04em;
  color: #fff; padding: 6px 18px; border-radius: 6px; margin: 8px 0; }
.verdict-certifiable { background: var(--pass); }
.verdict-failed { background: var(--fail); }
.verdict-incomplete { background: #9a6700; }
.meta { color: #57606a; }
.counts span { margin-right: 14px; }
.badge { display: inline-block; min-width: 72px; text-align: center; font-size: 12px;
  font-weight: 700; color: #fff; border-radius: 4px; padding: 1px 6px; }
.badge-passed { background: var(--pass); }
.badge-failed { background: var(--fail); }
.badge-error { background: var(--error); }
.badge-skipped { background: var(--skip); }
.result { border: 1px solid var(--line); border-left-width: 5px; border-radius: 6px;
  padding: 8px 12px; margin: 8px 0; }
.result.outcome-passed { border-left-color: var(--pass); }
.result.outcome-failed { border-left-color: var(--fail); }
.result.outcome-error { border-left-color: var(--error); }
.result.outcome-skipped { border-left-color: var(--skip); }
.result-head { display: flex; flex-wrap: wrap; gap: 10px; align-items: baseline; }
.check-id { font-weight: 700; }
.subject { color: #57606a; }
.time { margin-left: auto; color: #57606a; font-variant-numeric: tabular-nums; }
.tag { font-size: 12px; border: 1px solid var(--line); border-radius: 10px; padding: 0 8px; }
.reason { margin: 6px 0 2px; white-space: pre-wrap; word-break: break-word; }
table.ea { width: 100%; }
table.ea th { width: 90px; }
table.ea td { white-space: pre-wrap; word-break: break-word; }
details { margin: 6px 0; }
summary { cursor: pointer; color: #0969da; }
.suite-description { color: #57606a; margin-top: -4px; }
.check-description p, .check-fix p { margin: 6px 0; }
.check-description ul, .check-fix ul { margin: 4px 0; padding-left: 20px; }
.plot { display: block; max-width: 100%; height: auto; margin: 8px 0 16px; }
.plot .axis { stroke: #1f2328; stroke-width: 1; }
.plot .grid { stroke: #eaeef2; stroke-width: 1; }
.plot .tickmark { stroke: #1f2328; }
.plot .line { fill: none; stroke: #0969da; stroke-width: 2; }
.plot .dot { fill: #0969da; }
.plot text { font-size: 12px; fill: #1f2328; }
.plot .plot-title { font-size: 14px; font-weight: 600; }
.plot .axis-label { font-size: 13px; }
.met-yes { color: var(--pass); font-weight: 600; }
.met-no { color: var(--fail); font-weight: 600; }
.config-ref ul.config-list { padding-left: 18px; }
.config-ref h4, .config-ref h5 { margin: 14px 0 4px; font-family: ui-monospace, monospace; }
.error-text { color: var(--fail); }
#attention { border: 1px solid var(--fail); border-radius: 6px; padding: 8px 14px;
  background: #fff5f5; margin: 8px 0 12px; }
#attention ul { margin: 4px 0; padding-left: 20px; }
#filters { margin: 8px 0; }
#filters label { margin-right: 12px; }
body.hide-passed .result.outcome-passed, body.hide-failed .result.outcome-failed,
body.hide-error .result.outcome-error, body.hide-skipped .result.outcome-skipped { display: none; }
table.submission td.mark { white-space: nowrap; font-weight: 700; }
.mark-present { color: var(--pass); }
.mark-incomplete { color: #9a6700; }
.mark-missing { color: var(--fail); }
ul.missing { margin: 2px 0; padding-left: 18px; color: #57606a; }
table.provenance td { word-break: break-all; }
footer { margin-top: 48px; color: #57606a; font-size: 13px; }
"""

_SCRIPT = """
(function () {
  var filters = document.getElementById("filters");
  if (!filters) { return; }
  filters.hidden = false;
  filters.addEventListener("change", function (event) {
    var outcome = event.target.getAttribute("data-outcome");
    if (outcome) { document.body.classList.toggle("hide-" + outcome, !event.target.checked); }
  });
})();
"""


def _e(value: object) -> str:
    return escape(clean(value))


def _anchor(*parts: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", "-".join(parts)).strip("-")


def _badge(outcome: Outcome) -> str:
    return f'<span class="badge badge-{outcome.value}">{outcome.value.upper()}</span>'


def _when(moment: dt.datetime | None) -> str:
    return moment.isoformat(timespec="seconds") if moment is not None else "not finished"


def _number(value: float) -> str:
    if value != value or value in (float("inf"), float("-inf")):  # NaN, infinities
        return str(value)
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def render_html(run: CertificationRun) -> str:
    """The report page as one HTML string."""
    name = f"{run.project.name} {run.project.version}"
    found = verdict(run)
    body = [
        _header(run, found),
        _summary_table(run),
        _checklist(run),
        _performance(run),
        _config_reference(run),
        _environment(run),
        f"<footer>Generated by <code>cdk certify</code> "
        f"(connect-cdk {_e(run.environment.get('connect-cdk', ''))}) on "
        f"{_e(_when(run.finished_at))}.</footer>",
    ]
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Certification report: {_e(name)}: {found}</title>"
        f"<style>{_CSS}</style></head>\n"
        f'<body class="verdict-page-{found.lower()}"><main>\n'
        + "\n".join(body)
        + f"\n</main><script>{_SCRIPT}</script></body></html>\n"
    )


def _header(run: CertificationRun, found: str) -> str:
    total = counts(run.results)
    chips = "".join(
        f'<span class="count-{o.value}">{_badge(o)} {total[o.value]}</span>' for o in OUTCOME_ORDER
    )
    return (
        f"<header><h1>Certification report: {_e(run.project.name)} "
        f'<span class="meta">{_e(run.project.version)}</span></h1>'
        f'<div class="verdict verdict-{found.lower()}" id="verdict">{found}</div>'
        f'<p id="verdict-reason">{_e(verdict_reason(run))}</p>'
        f'<p class="counts">{chips}<span>{total["total"]} results</span></p>'
        + _attention(run)
        + _submission(run)
        + _provenance(run)
        + f'<p class="meta">Kafka: {_e(run.kafka)} · started {_e(_when(run.started_at))} · '
        f"took {_e(format_duration(run.duration_s))} · exit code {run.exit_code}</p>"
        + "<nav>"
        + ('<a href="#submission">Submission</a>' if run.submission else "")
        + ('<a href="#provenance">Provenance</a>' if run.provenance else "")
        + '<a href="#checklist">Checklist</a><a href="#performance">Performance</a>'
        '<a href="#config-reference">Configuration reference</a>'
        '<a href="#environment">Environment and timing</a></nav></header>'
    )


_STATUS_MARK = {"present": "\u2713", "incomplete": "!", "missing": "\u2717"}


def _submission(run: CertificationRun) -> str:
    """The submission checklist: each item the partner guide asks for, present or missing."""
    items = run.submission.get("items") or []
    if not items:
        return ""
    rows = []
    for item in items:
        status = str(item.get("status", "missing"))
        files = ", ".join(
            f'<a href="{_e(f)}"><code>{_e(f)}</code></a>' for f in item.get("files") or []
        )
        missing = "".join(f"<li>{_e(m)}</li>" for m in item.get("missing") or [])
        rows.append(
            f'<tr class="item-{_e(status)}" data-item="{_e(item.get("item", ""))}">'
            f'<td class="mark mark-{_e(status)}">{_STATUS_MARK.get(status, "?")} {_e(status)}</td>'
            f"<td>{_e(item.get('title', ''))}"
            + (f'<div class="meta">{_e(item["note"])}</div>' if item.get("note") else "")
            + f"</td><td>{files or 'none'}"
            + (f'<ul class="missing">{missing}</ul>' if missing else "")
            + "</td></tr>"
        )
    complete = bool(run.submission.get("complete"))
    head = (
        "Every item is in the bundle."
        if complete
        else "Not ready to submit: the items marked missing or incomplete need work. "
        "(The checklist does not change the verdict.)"
    )
    return (
        '<section id="submission"><h2>Submission checklist</h2>'
        f'<p class="meta">{_e(head)}</p><table class="submission"><thead><tr><th>Status</th>'
        "<th>What the partner guide asks for</th><th>In this bundle</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></section>"
    )


def _provenance(run: CertificationRun) -> str:
    """One line per fact of where the certified connector comes from."""
    data = run.provenance
    if not data:
        return ""
    source = data.get("source") or {}
    wheel = data.get("wheel") or {}
    broker = data.get("broker") or {}
    if source.get("commit"):
        state = "dirty: uncommitted changes" if source.get("dirty") else "clean"
        where = f" on {source['branch']}" if source.get("branch") else ""
        where += f" from {source['remote']}" if source.get("remote") else ""
        source_text = f"git {source['commit']}{where} ({state})" + (
            f"; {source['note']}" if source.get("note") else ""
        )
    else:
        source_text = str(source.get("note") or "unknown")
    wheel_text = (
        f"{wheel['file']} sha256 {wheel['sha256']}"
        if wheel.get("file")
        else f"none: {wheel.get('note') or 'not built'}"
    )
    broker_text = " ".join(str(broker.get(k) or "") for k in ("name", "version")).strip()
    broker_text = f"{broker_text or 'unknown'} ({broker.get('kind', '')})" + (
        f": {broker['note']}" if broker.get("note") else ""
    )
    project = data.get("project") or {}
    kit = data.get("kit") or {}
    python = data.get("python") or {}
    system = data.get("os") or {}
    rows = [
        ("Project", f"{project.get('name', '')} {project.get('version', '')}"),
        ("Source", source_text),
        ("Wheel", wheel_text),
        ("Kit", f"{kit.get('name', '')} {kit.get('version', '')}"),
        ("Python", f"{python.get('implementation', '')} {python.get('version', '')}"),
        ("OS", str(system.get("platform", ""))),
        ("Broker", broker_text),
    ]
    table = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows)
    relation = f'<p class="meta">{_e(wheel["relation"])}</p>' if wheel.get("relation") else ""
    return (
        '<section id="provenance"><h2>Provenance</h2>'
        f'<table class="provenance"><tbody>{table}</tbody></table>{relation}</section>'
    )


def _attention(run: CertificationRun) -> str:
    """Links to every failed or errored check, with its message, right under the verdict."""
    bad = [r for r in run.results if r.outcome in (Outcome.FAILED, Outcome.ERROR)]
    if not bad:
        return ""
    items = "".join(
        f'<li><a href="#{_e(_anchor("r", r.id, r.subject))}">{_e(r.id)} [{_e(r.subject)}]</a>'
        f"{'' if r.check.required else ' (optional)'}: {_e(_shorten(r.message))}</li>"
        for r in bad
    )
    return f'<div id="attention"><strong>Needs attention:</strong><ul>{items}</ul></div>'


def _shorten(text: str, limit: int = 240) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _summary_table(run: CertificationRun) -> str:
    rows = []
    by_suite = suite_counts(run.results)
    times: dict[str, float] = {}
    for result in run.results:
        times[result.check.suite] = times.get(result.check.suite, 0.0) + result.duration_s
    for suite, numbers in by_suite.items():
        cells = "".join(f'<td class="num">{numbers[o.value]}</td>' for o in OUTCOME_ORDER)
        rows.append(
            f'<tr><td><a href="#suite-{suite}">{_e(suite)}</a></td>'
            f"<td>{_e(SUITES.get(suite, ''))}</td>{cells}"
            f'<td class="num">{numbers["total"]}</td>'
            f'<td class="num">{_e(format_duration(times.get(suite, 0.0)))}</td></tr>'
        )
    total = counts(run.results)
    cells = "".join(f'<th class="num">{total[o.value]}</th>' for o in OUTCOME_ORDER)
    heads = "".join(f'<th class="num">{o.value}</th>' for o in OUTCOME_ORDER)
    return (
        '<section id="summary"><h2>Summary</h2><table class="summary"><thead><tr>'
        f'<th>Suite</th><th>What it proves</th>{heads}<th class="num">total</th>'
        f'<th class="num">time</th></tr></thead><tbody>{"".join(rows)}</tbody>'
        f'<tfoot><tr><th colspan="2">All suites</th>{cells}<th class="num">{total["total"]}</th>'
        f'<th class="num">{_e(format_duration(sum(times.values())))}</th></tr></tfoot>'
        "</table></section>"
    )


def _checklist(run: CertificationRun) -> str:
    by_suite: dict[str, list[CheckResult]] = {}
    for result in run.results:
        by_suite.setdefault(result.check.suite, []).append(result)
    filters = "".join(
        f'<label><input type="checkbox" data-outcome="{o.value}" checked> {o.value}</label>'
        for o in OUTCOME_ORDER
    )
    out = [
        '<section id="checklist"><h2>Checklist</h2>',
        f'<div id="filters" hidden>Show: {filters}</div>',
    ]
    if not run.results:
        out.append("<p>No check ran.</p>")
    for suite in suite_counts(run.results):
        out.append(
            f'<section class="suite" id="suite-{_e(suite)}"><h3>{_e(suite)}</h3>'
            f'<p class="suite-description">{_e(SUITES.get(suite, ""))}</p>'
        )
        # each check's subjects together (a stable sort keeps the drivers' order)
        out.extend(_result(r) for r in sorted(by_suite[suite], key=lambda r: r.id))
        out.append("</section>")
    out.append("</section>")
    return "\n".join(out)


def _result(result: CheckResult) -> str:
    c = result.check
    head = (
        f'<div class="result-head">{_badge(result.outcome)}'
        f'<span class="check-id">{_e(c.id)}</span><span class="title">{_e(c.title)}</span>'
        f'<span class="subject">[{_e(result.subject)}]</span>'
        + ("" if c.required else '<span class="tag">optional</span>')
        + f'<span class="time">{_e(format_duration(result.duration_s))}</span></div>'
    )
    parts = [head]
    if result.outcome is Outcome.SKIPPED:
        parts.append(f'<div class="reason">Skipped: {_e(result.message)}</div>')
    elif result.outcome is Outcome.ERROR:
        parts.append(f'<div class="reason">{_e(result.message)}</div>')
    elif result.outcome is Outcome.FAILED:
        if result.expected is not None or result.actual is not None:
            parts.append(
                '<table class="ea">'
                f"<tr><th>Expected</th><td>{_e(result.expected or '')}</td></tr>"
                f"<tr><th>Actual</th><td>{_e(result.actual or '')}</td></tr></table>"
            )
        else:
            parts.append(f'<div class="reason">{_e(result.message)}</div>')
    if result.metrics:
        parts.append(_metrics_table(result.metrics))
    inner = []
    if c.description:  # the kit's RST, rendered with every piece of text escaped
        inner.append(f'<div class="check-description">{render_rst(clean(c.description))}</div>')
    if c.fix:
        fix = (
            '<div class="check-fix"><p><strong>How to fix a failure:</strong></p>'
            f"{render_rst(clean(c.fix))}</div>"
        )
        # a failure shows its fix right under expected vs actual; otherwise it is background
        (parts if result.outcome is Outcome.FAILED else inner).append(fix)
    inner.append(
        f'<p class="meta">Applies to: {_e(", ".join(sorted(c.kinds)))}'
        f"{' (once per project)' if c.per_project else ''} · needs: "
        f"{_e(', '.join(sorted(c.needs)) or 'nothing')} · "
        f"{'required' if c.required else 'optional (reported only)'}</p>"
    )
    if result.details:
        label = "Trace" if result.outcome is Outcome.ERROR else "Details"
        inner.append(f"<p>{label}:</p><pre>{_e(result.details)}</pre>")
    summary = "Details" if result.details else "About this check"
    parts.append(f"<details><summary>{summary}</summary>{''.join(inner)}</details>")
    anchor = _anchor("r", c.id, result.subject)
    return (
        f'<div class="result outcome-{result.outcome.value}" id="{_e(anchor)}" '
        f'data-check="{_e(c.id)}" data-subject="{_e(result.subject)}" '
        f'data-outcome="{result.outcome.value}">{"".join(parts)}</div>'
    )


def _metrics_table(metrics: Iterable[Metric]) -> str:
    rows = []
    for m in metrics:
        if m.threshold is None:
            threshold, status = "none", "reported only"
            css = ""
        else:
            sign = ">=" if m.higher_is_better else "<="
            threshold = f"{sign} {_number(m.threshold)} {m.unit}"
            status, css = ("met", "met-yes") if m.met else ("NOT met", "met-no")
        rows.append(
            f"<tr><td><code>{_e(m.name)}</code></td>"
            f'<td class="num">{_e(_number(m.value))} {_e(m.unit)}</td>'
            f'<td>{_e(threshold)}</td><td class="{css}">{_e(status)}</td></tr>'
        )
    return (
        '<table class="metrics"><thead><tr><th>Metric</th><th class="num">Value</th>'
        f"<th>Threshold</th><th>Result</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _performance(run: CertificationRun) -> str:
    out = ['<section id="performance"><h2>Performance</h2>']
    measured = [r for r in run.results if r.metrics or r.series]
    if not measured:
        out.append("<p>No performance figures were measured in this run.</p>")
    else:
        out.append(
            "<p>Figures measured on this run's Kafka. A metric fails its check only when the "
            "project sets a threshold in <code>[tool.cdk.certify.thresholds]</code>.</p>"
        )
    plot_number = 0
    for result in measured:
        out.append(
            f"<h3>{_e(result.id)} {_e(result.check.title)} "
            f'<span class="subject">[{_e(result.subject)}]</span> {_badge(result.outcome)}</h3>'
        )
        if result.metrics:
            out.append(_metrics_table(result.metrics))
        for series in result.series:
            plot_number += 1
            out.append(svg_plot(series, element_id=f"plot-{plot_number}"))
    out.append("</section>")
    return "\n".join(out)


def _config_reference(run: CertificationRun) -> str:
    out = [
        '<section id="config-reference"><h2>Configuration reference</h2>',
        "<p>Generated from each connector's <code>ConfigDef</code>.</p>",
    ]
    if not run.config_docs:
        out.append("<p>No configuration reference was generated.</p>")
    for number, (connector, docs) in enumerate(run.config_docs.items(), start=1):
        anchor = f"cfg{number}-"
        out.append(
            f'<section class="config-ref" id="{anchor}ref"><h3><code>{_e(connector)}</code></h3>'
        )
        if "error" in docs:
            out.append(
                f'<p class="error-text">The reference could not be generated: '
                f"{_e(docs['error'])}</p>"
            )
        else:
            out.append(sanitize(docs.get("html", ""), anchor_prefix=anchor))
        out.append("</section>")
    out.append("</section>")
    return "\n".join(out)


def _environment(run: CertificationRun) -> str:
    rows = [("Project", f"{run.project.name} {run.project.version}"), ("Kafka", run.kafka)]
    rows += sorted(run.environment.items())
    rows += [
        ("Selected (--only)", ", ".join(run.only) or "all checks"),
        ("Skipped (--skip)", ", ".join(run.skip) or "none"),
        ("Started", _when(run.started_at)),
        ("Finished", _when(run.finished_at)),
        ("Duration", format_duration(run.duration_s)),
        ("Time in checks", format_duration(sum(r.duration_s for r in run.results))),
    ]
    table = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows)
    slowest = sorted(run.results, key=lambda r: r.duration_s, reverse=True)[:10]
    slow_rows = "".join(
        f'<tr><td><a href="#{_e(_anchor("r", r.id, r.subject))}">{_e(r.id)}</a></td>'
        f"<td>{_e(r.subject)}</td><td>{_badge(r.outcome)}</td>"
        f'<td class="num">{_e(format_duration(r.duration_s))}</td></tr>'
        for r in slowest
    )
    return (
        '<section id="environment"><h2>Environment and timing</h2>'
        f'<table class="environment"><tbody>{table}</tbody></table>'
        + (
            "<h3>Slowest checks</h3><table><thead><tr><th>Check</th><th>Subject</th>"
            f'<th>Outcome</th><th class="num">Time</th></tr></thead><tbody>{slow_rows}</tbody>'
            "</table>"
            if slowest
            else ""
        )
        + "</section>"
    )


def write_html(run: CertificationRun, path: Path) -> Path:
    """Write :func:`render_html` to ``path`` (UTF-8) and return the path."""
    path.write_text(render_html(run), encoding="utf-8")
    return path
