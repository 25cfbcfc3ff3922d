"""The bundle writers: JUnit XML, the JSON summary, the HTML page, the secret scan, the progress.

Most tests build a :class:`CertificationRun` from hand-made results (every outcome, hostile
text); one writes the bundle of a real run on the session broker.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

from harness.certify import (
    CertificationRun,
    Check,
    CheckResult,
    Metric,
    Outcome,
    Series,
    redact,
)
from harness.certify._bundle import SecretLeakError, write_bundle
from harness.certify._plots import nice_ticks, svg_plot
from harness.certify._progress import TerminalProgress
from harness.certify._report_common import verdict
from harness.certify._report_html import render_html
from harness.certify._report_json import summary
from harness.certify._report_junit import junit_xml
from harness.certify._report_sanitize import sanitize
from harness.certify._rst_inline import render_inline, render_rst
from reference_connectors.filestream.certify import FileStreamSinkDriver, FileStreamSourceDriver
from tests.certify._support import describe, project_for, run_checks

SAFE_TAGS = {
    "html",
    "head",
    "meta",
    "title",
    "style",
    "body",
    "main",
    "header",
    "nav",
    "section",
    "footer",
    "div",
    "span",
    "p",
    "a",
    "b",
    "h1",
    "h2",
    "h3",
    "h4",
    "ul",
    "li",
    "table",
    "thead",
    "tbody",
    "tfoot",
    "tr",
    "th",
    "td",
    "code",
    "pre",
    "em",
    "cite",
    "details",
    "summary",
    "label",
    "input",
    "br",
    "svg",
    "line",
    "text",
    "polyline",
    "circle",
    "script",
    "strong",
}
HOSTILE = '<script>alert(1)</script> & "quotes" <img src=http://evil.example/x.png>'


def _check(check_id: str, title: str = "does the thing", *, required: bool = True) -> Check:
    return Check(
        check_id,
        title,
        frozenset({"source", "sink"}),
        frozenset({"kafka"}),
        required,
        lambda ctx: None,
        description=f"What {check_id} proves.",
    )


def _run(tmp_path: Path, results: list[CheckResult], **fields: object) -> CertificationRun:
    project = project_for(tmp_path, FileStreamSourceDriver, name="demo")
    run = CertificationRun(project, kafka="embedded", results=results, **fields)  # type: ignore[arg-type]
    run.environment = {"connect-cdk": "0.1.0", "python": "CPython 3.11"}
    run.finished_at = run.started_at + dt.timedelta(seconds=12.5)
    return run


def _mixed(tmp_path: Path) -> CertificationRun:
    return _run(
        tmp_path,
        [
            CheckResult(
                _check("CFG-01"),
                "FileStreamSourceDriver",
                "source",
                Outcome.PASSED,
                duration_s=0.25,
            ),
            CheckResult(
                _check("CFG-06", "task configs are bounded"),
                "FileStreamSourceDriver",
                "source",
                Outcome.FAILED,
                message=f"expected at most 2 task configs; but 5 {HOSTILE}",
                expected="at most 2 task configs for max_tasks=2",
                actual=f"5 task configs {HOSTILE}\x00\x1b[31m",
                details="task_configs(2) returned:\n  {...}",
                duration_s=1.5,
            ),
            CheckResult(
                _check("OFF-01"),
                "FileStreamSourceDriver",
                "source",
                Outcome.ERROR,
                message="the check could not run: RuntimeError: boom",
                details="Traceback (most recent call last):\n  RuntimeError: boom",
                duration_s=0.5,
            ),
            CheckResult(
                _check("SCH-05"),
                "FileStreamSourceDriver",
                "source",
                Outcome.SKIPPED,
                message="the driver does not implement evolve_schema()",
            ),
            CheckResult(
                _check("PRF-01", "throughput"),
                "FileStreamSourceDriver",
                "source",
                Outcome.PASSED,
                duration_s=3.0,
                metrics=[
                    Metric("source.throughput", 1234.5, "records/s", threshold=1000.0),
                    Metric("source.odd", float("nan"), "ms"),
                ],
                series=[
                    Series(
                        "records delivered over time",
                        "seconds since start",
                        "records delivered",
                        tuple((i / 10, i * 50.0) for i in range(40)),
                    )
                ],
            ),
        ],
    )


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, attrs))


def _tags(page: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    parser = _Tags()
    parser.feed(page)
    return parser.found


def _links(page: str) -> list[tuple[str, str, str]]:
    """Every attribute that could load or link something: (tag, attribute, value)."""
    return [
        (tag, name, value or "")
        for tag, attrs in _tags(page)
        for name, value in attrs
        if name in ("src", "href", "xlink:href", "action", "srcset", "poster", "data")
    ]


# --- verdict ------------------------------------------------------------------------------


def test_verdicts(tmp_path: Path) -> None:
    passed = CheckResult(_check("CFG-01"), "S", "source", Outcome.PASSED)
    optional_failed = CheckResult(
        _check("CFG-02", required=False), "S", "source", Outcome.FAILED, message="x"
    )
    failed = CheckResult(_check("CFG-03"), "S", "source", Outcome.FAILED, message="x")
    configured_skip = CheckResult(
        _check("CFG-04"),
        "S",
        "source",
        Outcome.NOT_VERIFIED,
        message="left out by request in [tool.cdk.certify] skip: not for us",
    )
    own_skip = CheckResult(_check("CFG-05"), "S", "source", Outcome.SKIPPED, message="no outage()")

    assert verdict(_run(tmp_path / "a", [passed, optional_failed, own_skip])) == "CERTIFIABLE"
    assert verdict(_run(tmp_path / "b", [passed, failed])) == "FAILED"
    assert verdict(_run(tmp_path / "c", [passed, configured_skip])) == "INCOMPLETE"
    assert verdict(_run(tmp_path / "d", [passed], only=("CFG",))) == "INCOMPLETE"
    assert verdict(_run(tmp_path / "e", [])) == "INCOMPLETE"
    assert summary(_run(tmp_path / "c", [passed, configured_skip]))["verdict_reason"].endswith(
        "CFG-04 left out in [tool.cdk.certify] skip."
    )


def test_not_verified_is_never_certifiable_unless_waived(tmp_path: Path) -> None:
    passed = CheckResult(_check("ERR-03"), "S", "sink", Outcome.PASSED)

    def not_verified(waiver: str | None = None, required: bool = True) -> CheckResult:
        return CheckResult(
            _check("ERR-01", required=required),
            "S",
            "sink",
            Outcome.NOT_VERIFIED,
            message="the driver S does not implement outage()",
            waiver=waiver,
        )

    def failed(waiver: str | None) -> CheckResult:
        return CheckResult(_check("ERR-02"), "S", "sink", Outcome.FAILED, "x", waiver=waiver)

    cases = [
        ([passed, not_verified()], "INCOMPLETE", 3),
        ([passed, not_verified(required=False)], "CERTIFIABLE", 0),
        ([passed, not_verified("the system cannot be unavailable")], "CERTIFIABLE", 0),
        ([passed, failed("a waiver does not excuse a failure")], "FAILED", 1),
        ([passed, not_verified(), failed(None)], "FAILED", 1),
        ([], "INCOMPLETE", 3),
    ]
    for index, (results, expected, code) in enumerate(cases):
        run = _run(tmp_path / str(index), results)
        assert (verdict(run), run.exit_code) == (expected, code), (index, describe(run))
    reason = summary(_run(tmp_path / "r1", [passed, not_verified()]))["verdict_reason"]
    assert "1 required check(s) not verified" in reason
    assert "ERR-01 [S]" in reason
    waived = summary(_run(tmp_path / "r2", [passed, not_verified("local disk only")]))
    assert "ERR-01: not verified, waived" in waived["verdict_reason"]
    assert waived["checks"][1]["waiver"] == "local disk only"


# --- JUnit XML ----------------------------------------------------------------------------


def test_junit_has_a_suite_per_suite_and_a_case_per_result(tmp_path: Path) -> None:
    run = _mixed(tmp_path)
    path = tmp_path / "junit.xml"
    ET.ElementTree(junit_xml(run)).write(path, encoding="utf-8", xml_declaration=True)
    root = ET.parse(path).getroot()  # parses: control characters were replaced

    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("errors"), root.get("skipped")) == (
        "5",
        "1",
        "1",
        "1",
    )
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert list(suites) == ["CFG", "SCH", "OFF", "PRF"]  # report order
    assert suites["CFG"].get("tests") == "2"
    assert suites["CFG"].get("failures") == "1"
    cases = {c.get("name"): c for c in root.iter("testcase")}
    failed = cases["CFG-06 task configs are bounded [FileStreamSourceDriver]"]
    assert failed.get("classname") == "CFG"
    assert failed.get("time") == "1.500"
    failure = failed.find("failure")
    assert failure is not None
    assert "expected at most 2 task configs" in (failure.get("message") or "")
    assert "Expected: at most 2 task configs for max_tasks=2" in (failure.text or "")
    assert "task_configs(2) returned" in (failure.text or "")
    error = cases["OFF-01 does the thing [FileStreamSourceDriver]"].find("error")
    assert error is not None
    assert "RuntimeError: boom" in (error.text or "")
    skipped = cases["SCH-05 does the thing [FileStreamSourceDriver]"].find("skipped")
    assert skipped is not None
    assert skipped.get("message") == "the driver does not implement evolve_schema()"
    out = cases["PRF-01 throughput [FileStreamSourceDriver]"].find("system-out")
    assert out is not None
    assert "source.throughput = 1234.5 records/s (threshold 1000: met)" in (out.text or "")


# --- JSON ---------------------------------------------------------------------------------


def test_summary_json(tmp_path: Path) -> None:
    run = _mixed(tmp_path)
    data = json.loads(json.dumps(summary(run), allow_nan=False))  # strict JSON
    assert data["project"] == "demo"
    assert data["version"] == "0.0.1"
    assert data["verdict"] == "FAILED"
    assert (data["passed"], data["complete"], data["exit_code"]) == (False, True, 1)
    assert data["counts"] == {
        "passed": 2,
        "failed": 1,
        "error": 1,
        "skipped": 1,
        "not verified": 0,
        "total": 5,
    }
    assert data["suites"]["CFG"]["failed"] == 1
    assert data["environment"]["connect-cdk"] == "0.1.0"
    assert data["duration_s"] == 12.5
    assert dt.datetime.fromisoformat(data["finished"]) > dt.datetime.fromisoformat(data["started"])
    assert [c["id"] for c in data["checks"]] == ["CFG-01", "CFG-06", "OFF-01", "SCH-05", "PRF-01"]
    assert data["checks"][1] == {**run.results[1].to_json()}
    metrics = data["checks"][4]["metrics"]
    assert metrics[0]["met"] is True
    assert metrics[1]["value"] == "nan"


# --- HTML ---------------------------------------------------------------------------------


def test_html_escapes_every_value(tmp_path: Path) -> None:
    run = _mixed(tmp_path)
    page = render_html(run)
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<img" not in page
    assert "\x00" not in page
    assert "\x1b" not in page
    assert page.count("<script>") == 1  # the page's own filter script, at the end


def test_html_is_self_contained(tmp_path: Path) -> None:
    run = _mixed(tmp_path)
    run.config_docs = {
        "demo.DemoSourceConnector": {
            "html": '<ul class="config-list"><li><h4><a id="topic"></a><a id="topic" '
            'href="#topic">topic</a></h4><p>Where <b>records</b> go. <a href="https://evil.example">'
            'docs</a><img src="https://evil.example/t.png" onerror="alert(1)">'
            "<script>alert(2)</script><style>body{background:url(https://evil.example)}</style>"
            "</p><table><tbody><tr><th>Type:</th><td>string</td></tr></tbody></table></li></ul>"
        },
        "demo.BrokenSinkConnector": {"error": "RuntimeError: <config() failed>"},
    }
    page = render_html(run)
    links = _links(page)
    assert links
    assert all(value.startswith("#") for _, _, value in links), links
    assert {tag for tag, _ in _tags(page)} <= SAFE_TAGS
    assert "@import" not in page
    assert "url(" not in page
    assert "onerror" not in page
    assert "alert(2)" not in page
    assert 'href="#cfg1-topic"' in page
    assert 'id="cfg1-topic"' in page
    assert "Where <b>records</b> go." in page
    assert "RuntimeError: &lt;config() failed&gt;" in page


def test_html_sections(tmp_path: Path) -> None:
    page = render_html(_mixed(tmp_path))
    for anchor in ("summary", "checklist", "performance", "config-reference", "environment"):
        assert f'id="{anchor}"' in page
    assert '<div class="verdict verdict-failed" id="verdict">FAILED</div>' in page
    assert "Configuration: definition, documentation" in page  # the suite's description
    assert "Skipped: the driver does not implement evolve_schema()" in page
    assert '<div class="reason">the check could not run: RuntimeError: boom</div>' in page
    assert "<th>Expected</th><td>at most 2 task configs for max_tasks=2</td>" in page
    assert "<details><summary>Details</summary>" in page
    assert '<div id="attention"><strong>Needs attention:</strong>' in page
    assert '<a href="#r-CFG-06-FileStreamSourceDriver">CFG-06 [FileStreamSourceDriver]</a>' in page
    assert "&gt;= 1,234" not in page
    assert "&gt;= 1,000 records/s" in page
    assert page.count('<svg class="plot"') == 1
    assert "CPython 3.11" in page


def test_html_renders_check_descriptions_and_fixes_as_markup(tmp_path: Path) -> None:
    described = Check(
        "CFG-01",
        "documents every key",
        frozenset({"source"}),
        frozenset(),
        True,
        lambda ctx: None,
        description=(
            "``config()`` returns a :class:`~cdk.config.ConfigDef` with *every* key.\n\n"
            f"- one ``{HOSTILE}``\n- two {HOSTILE}"
        ),
        fix="Give each key a **documentation** string in ``define``.",
    )
    result = CheckResult(described, "FileStreamSourceDriver", "source", Outcome.PASSED)
    page = render_html(_run(tmp_path, [result]))
    assert (
        '<div class="check-description"><p><code>config()</code> returns a '
        "<code>ConfigDef</code> with <em>every</em> key.</p><ul><li>one <code>&lt;script&gt;"
    ) in page
    assert "``" not in page
    assert "<script>alert(1)" not in page
    assert "<img" not in page
    assert (
        "<strong>How to fix a failure:</strong></p><p>Give each key a "
        "<strong>documentation</strong> string in <code>define</code>.</p>"
    ) in page
    assert {tag for tag, _ in _tags(page)} <= SAFE_TAGS
    # a passed check keeps its fix in the collapsed block; a failed one shows it
    assert page.index("How to fix a failure") > page.index("<summary>About this check</summary>")
    failed = CheckResult(
        described, "FileStreamSourceDriver", "source", Outcome.FAILED, "no", "a doc", "none"
    )
    page = render_html(_run(tmp_path, [failed]))
    assert page.index("How to fix a failure") < page.index("<summary>About this check</summary>")
    assert page.count("How to fix a failure") == 1


def test_every_registered_description_renders_without_raw_rst() -> None:
    from harness.certify import all_checks

    raw = re.compile(r"``|:[a-z:]+:`|^\.\. |\s\.\. [a-z-]+::|::</p>|\|\w+\||^[=~^-]{3,}$", re.M)
    for c in all_checks():
        for text in (c.description, c.fix):
            html = render_rst(text)
            found = raw.search(re.sub(r"<code>.*?</code>|<pre>.*?</pre>", "", html, flags=re.S))
            assert found is None, (c.id, found, html)


@pytest.mark.parametrize(
    ("rst", "html"),
    [
        ("a ``b <c>`` d", "a <code>b &lt;c&gt;</code> d"),
        ("*em* and **strong**", "<em>em</em> and <strong>strong</strong>"),
        (":func:`cdk.x.run` :meth:`~A.b`", "<code>cdk.x.run()</code> <code>b()</code>"),
        (":class:`the def <cdk.config.ConfigDef>`", "<code>the def</code>"),
        ("`Kafka <https://kafka.apache.org>`_", '<a href="https://kafka.apache.org">Kafka</a>'),
        ("`no <javascript:alert(1)>`_", "no"),
        ("a*b*c, 2 * 3 * 4 and \\*x\\*", "a*b*c, 2 * 3 * 4 and *x*"),
        ("<script>&amp;", "&lt;script&gt;&amp;amp;"),
    ],
)
def test_render_inline(rst: str, html: str) -> None:
    assert render_inline(rst) == html


def test_render_rst_blocks() -> None:
    text = "One\nparagraph.\n\n- item ``a``\n  continued\n\n- item b\n\nCode::\n\n    x <y>\n\nEnd."
    assert render_rst(text) == (
        "<p>One paragraph.</p><ul><li>item <code>a</code> continued</li><li>item b</li></ul>"
        "<p>Code:</p><pre>x &lt;y&gt;</pre><p>End.</p>"
    )


def test_render_rst_lists_directives_and_titles() -> None:
    text = (
        "Title\n=====\n\n1. one\n2. two ``x``\n#. three\n\n"
        ".. note:: Be careful\n   with <this>.\n\n"
        ".. code-block:: python\n   :caption: x\n\n   a < b\n\n"
        ".. a comment\n   more\n\n"
        ".. admonition:: Why\n\n   Because |x|.\n\n"
        "See :ref:`the guide <certify-guide>` and :doc:`install`."
    )
    assert render_rst(text) == (
        "<p><strong>Title</strong></p>"
        "<ol><li>one</li><li>two <code>x</code></li><li>three</li></ol>"
        "<p><strong>Note:</strong> Be careful with &lt;this&gt;.</p>"
        "<pre>a &lt; b</pre>"
        "<p><strong>Why:</strong> Because x.</p>"
        "<p>See the guide and install.</p>"
    )


def test_plot_draws_axes_and_labels() -> None:
    series = Series("latency per record", "record", "latency (ms)", ((1, 5.0), (2, 7.5), (3, 6.0)))
    svg = svg_plot(series, element_id="p1")
    assert svg.startswith('<svg class="plot" id="p1"')
    assert ">record</text>" in svg
    assert ">latency (ms)</text>" in svg
    assert svg.count("<circle") == 3
    assert svg.count("<polyline") == 1
    empty = svg_plot(Series("nothing", "x", "y", ()))
    assert "no data points" in empty
    many = svg_plot(Series("many", "x", "y", tuple((i, i * i) for i in range(10_000))))
    assert many.count(",") < 2000  # thinned
    hostile = svg_plot(Series(HOSTILE, HOSTILE, HOSTILE, ((0, 1), (1, float("inf")))))
    assert "<script>" not in hostile
    assert "<img" not in hostile


def test_nice_ticks_cover_the_range() -> None:
    assert nice_ticks(0, 5000) == [0, 1000, 2000, 3000, 4000, 5000]
    ticks = nice_ticks(0.13, 0.91)
    assert ticks[0] <= 0.13
    assert ticks[-1] >= 0.91
    assert 3 <= len(ticks) <= 8
    assert len(nice_ticks(7, 7)) >= 2


def test_sanitize_keeps_text_markup_only() -> None:
    cleaned = sanitize(
        '<p onclick="x()">a <code>b</code><iframe src="//x"></iframe><br/>c &amp; d</td></p>'
        "<unknown>kept text</unknown><div",
        anchor_prefix="p-",
    )
    assert cleaned == "<p>a <code>b</code><br>c &amp; d</p>kept text&lt;div"


# --- the bundle and its secret scan -------------------------------------------------------


def test_write_bundle_writes_the_reports(tmp_path: Path) -> None:
    run = _mixed(tmp_path)
    files = write_bundle(run, tmp_path / "out" / "report")
    assert {k: p.name for k, p in files.items()} == {
        "junit": "junit.xml",
        "summary": "summary.json",
        "html": "report.html",
        "hub": "manifest.json",  # the rest of the bundle: tests/certify/test_bundle.py
        "manifest": "SHA256SUMS",
    }
    assert all(
        files[k].is_file() and files[k].stat().st_size > 500 for k in ("junit", "summary", "html")
    )
    ET.parse(files["junit"])
    json.loads(files["summary"].read_text(encoding="utf-8"))


def test_write_bundle_refuses_to_ship_a_secret(tmp_path: Path) -> None:
    canary = "canary-Pa55<w0rd>-0123456789"
    leaky = CheckResult(
        _check("CFG-08"),
        "FileStreamSourceDriver",
        "source",
        Outcome.FAILED,
        message=f"the log shows password={canary}",
        expected="no PASSWORD value in the log",
        actual=f"log line: password={canary}",
    )
    run = _run(tmp_path, [leaky])
    run.secrets = {canary}
    with pytest.raises(SecretLeakError) as caught:
        write_bundle(run, tmp_path / "leaky")
    assert canary not in str(caught.value)
    assert "report.html contains a secret of 28 characters" in str(caught.value)
    assert list((tmp_path / "leaky").iterdir()) == []  # nothing left to submit

    redact(leaky, run.secrets)  # what the runner does before any report sees a result
    files = write_bundle(run, tmp_path / "redacted")
    for path in (files["junit"], files["summary"], files["html"]):
        text = path.read_text(encoding="utf-8")
        assert "Pa55" not in text
        assert "[hidden]" in text


# --- progress ---------------------------------------------------------------------------


def _replay(run: CertificationRun, progress: TerminalProgress) -> None:
    progress.started(run, len(run.results))
    for result in run.results:
        progress.check_started(result.check, result.subject)
        progress.check_finished(result)
    progress.finished(run)


def test_progress_in_a_log(tmp_path: Path) -> None:
    run = _mixed(tmp_path)
    out = io.StringIO()
    _replay(run, TerminalProgress(out))
    text = out.getvalue()
    assert "\x1b[" not in text
    assert "running" not in text
    lines = text.splitlines()
    assert lines[0] == "cdk certify: demo 0.0.1 (FileStreamSourceDriver)"
    assert lines[1] == "5 checks planned on Kafka embedded, seed 0"
    assert "[1/5] PASS  CFG-01  does the thing [FileStreamSourceDriver]  (0.25 s)" in lines
    failed = lines.index(
        "[2/5] FAIL  CFG-06  task configs are bounded [FileStreamSourceDriver]  (1.50 s)"
    )
    assert lines[failed + 1].strip().startswith("expected at most 2 task configs; but 5")
    assert any(line.startswith("[4/5] SKIP  SCH-05") for line in lines)
    assert "        the driver does not implement evolve_schema()" in lines
    assert any(line.startswith("[3/5] ERROR OFF-01") for line in lines)
    table = [line.split() for line in lines if line.startswith("  ")]
    assert [
        "suite",
        "passed",
        "failed",
        "error",
        "skipped",
        "not-verified",
        "total",
        "time",
    ] in table
    assert ["CFG", "1", "1", "0", "0", "0", "2", "1.75", "s"] in table
    assert ["all", "2", "1", "1", "1", "0", "5", "12.5", "s"] in table
    assert lines[-2].startswith("Verdict: FAILED. 2 required check(s) failed or could not run")
    assert lines[-1] == "Exit status: 1"


def test_progress_on_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    run = _mixed(tmp_path)
    out = io.StringIO()
    _replay(run, TerminalProgress(out, tty=True))
    text = out.getvalue()
    assert "[1/5] running CFG-01 does the thing [FileStreamSourceDriver] ..." in text
    assert "\r\x1b[2K" in text  # the running line is replaced by the result
    assert "\x1b[31mFAIL \x1b[0m" in text
    assert "\x1b[32mPASS \x1b[0m" in text
    assert "Verdict: \x1b[1;31mFAILED\x1b[0m" in text

    monkeypatch.setenv("NO_COLOR", "1")
    plain = io.StringIO()
    _replay(run, TerminalProgress(plain, tty=True))
    assert "\x1b[31m" not in plain.getvalue()
    assert "running CFG-01" in plain.getvalue()


# --- a real run ---------------------------------------------------------------------------


def test_bundle_of_a_real_run(tmp_path: Path, kafka_bootstrap: str) -> None:
    project = project_for(tmp_path, FileStreamSourceDriver, FileStreamSinkDriver)
    run = run_checks(project, ["CFG-01", "CFG-07"], kafka_bootstrap, tmp_path)
    assert run.passed, describe(run)
    files = write_bundle(run, tmp_path / "report")

    data = json.loads(files["summary"].read_text(encoding="utf-8"))
    assert data["verdict"] == "INCOMPLETE"  # --only
    assert data["counts"]["passed"] == data["counts"]["total"] == 4
    assert {(c["id"], c["subject"]) for c in data["checks"]} == {
        (i, s)
        for i in ("CFG-01", "CFG-07")
        for s in ("FileStreamSourceDriver", "FileStreamSinkDriver")
    }
    names = [c.get("name") for c in ET.parse(files["junit"]).getroot().iter("testcase")]
    assert len(names) == 4
    assert all(n and n.endswith("Driver]") for n in names)
    page = files["html"].read_text(encoding="utf-8")
    assert "FileStreamSourceConnector" in page
    assert 'id="cfg1-file"' in page
