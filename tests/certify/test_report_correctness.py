"""The HTML report shows what a connector supplies as written, and says what it measured.

A connector's documentation strings, names, display names, groups, defaults and valid values are
text, never markup: ``<topic.prefix>`` in a doc string stays visible, ``<script>`` is inert,
``&`` stays ``&`` and RST-looking text is not interpreted. "Meets its threshold" is only said
when a threshold is set, and counts print as whole numbers.
"""

from __future__ import annotations

import datetime as dt
from html.parser import HTMLParser
from pathlib import Path
from typing import ClassVar

import pytest

from cdk import ConfigDef, Importance, Type
from cdk.config.validators import ValidString
from harness.certify import CertificationRun, Check, CheckResult, Metric, Outcome
from harness.certify._evidence import format_value
from harness.certify._report_config import config_reference_html
from harness.certify._report_html import render_html
from harness.certify._report_sanitize import sanitize
from harness.certify._runner import _config_docs
from reference_connectors.filestream import FileStreamSourceConnector
from reference_connectors.filestream.certify import FileStreamSourceDriver
from tests.certify._support import project_for
from tests.certify.test_report import SAFE_TAGS

DOC = (
    "Prepended to every topic: <topic.prefix>.<table> & co.\n"
    "Write ``Literal`` or :class:`~cdk.X` - RST that must stay text. "
    "<script>alert(1)</script><b>bold?</b>"
)


def _hostile_definition() -> ConfigDef:
    return (
        ConfigDef()
        .define(
            "topic.prefix",
            Type.STRING,
            "<none>",
            ValidString.of("a&b", "<c>", "<none>"),
            importance=Importance.HIGH,
            documentation=DOC,
            group="Naming & <Routing>",
            order_in_group=1,
            display_name="<b>Prefix</b>",
            dependents=["<other>"],
        )
        .define(
            "api.password",
            Type.PASSWORD,
            "pw-default-s3cret",
            importance=Importance.HIGH,
            documentation="The API's password.",
        )
        .define("quiet", Type.INT, 5, importance=Importance.LOW, documentation=None)
    )


class HostileDocsConnector(FileStreamSourceConnector):
    """A source whose config documentation looks like markup."""

    def config(self) -> ConfigDef:
        return _hostile_definition()


class HostileDocsDriver(FileStreamSourceDriver):
    connector: ClassVar[type] = HostileDocsConnector


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)


def _page(tmp_path: Path, results: list[CheckResult], **docs: dict[str, str]) -> str:
    project = project_for(tmp_path, HostileDocsDriver, name="demo")
    run = CertificationRun(project, kafka="embedded", results=results)
    run.config_docs = docs or _config_docs(project)  # what the runner generates
    run.finished_at = run.started_at + dt.timedelta(seconds=1)
    return render_html(run)


def test_config_reference_escapes_every_connector_text(tmp_path: Path) -> None:
    page = _page(tmp_path, [])
    section = page[page.index('id="config-reference"') : page.index('id="environment"')]
    assert "HostileDocsConnector" in section
    # the doc string as written, line break kept
    assert (
        "<p>Prepended to every topic: &lt;topic.prefix&gt;.&lt;table&gt; &amp; co.<br>"
        "Write ``Literal`` or :class:`~cdk.X` - RST that must stay text. "
        "&lt;script&gt;alert(1)&lt;/script&gt;&lt;b&gt;bold?&lt;/b&gt;</p>"
    ) in section
    assert "Naming &amp; &lt;Routing&gt;" in section  # the group
    assert "<td>&lt;b&gt;Prefix&lt;/b&gt;</td>" in section  # the display name
    assert "<td>&lt;none&gt;</td>" in section  # the default
    assert "a&amp;b" in section  # the valid values
    assert "&lt;c&gt;" in section
    assert "<td>&lt;other&gt;</td>" in section  # the dependents
    assert "<td>[hidden]</td>" in section  # a PASSWORD default
    assert "s3cret" not in page
    assert "<script>alert" not in page
    assert "<b>" not in section
    # anchors are prefixed per connector, so that two references can share a page
    assert 'id="cfg1-topic.prefix" href="#cfg1-topic.prefix"' in section
    parser = _Tags()
    parser.feed(page)
    assert parser.tags <= SAFE_TAGS


def test_kafka_format_html_is_still_made_and_tag_like_text_survives_its_sanitizing(
    tmp_path: Path,
) -> None:
    # ConfigDef.to_html() stays Kafka's byte-for-byte format (unescaped); a report given only
    # that format still shows <topic.prefix> rather than dropping it as an unknown tag
    kafka_html = _hostile_definition().to_html()
    assert "<topic.prefix>" in kafka_html
    docs = _config_docs(project_for(tmp_path, HostileDocsDriver))
    (entry,) = docs.values()
    assert entry["html"] == kafka_html
    assert entry["reference"] == config_reference_html(_hostile_definition())
    page = _page(tmp_path, [], **{"demo.Legacy": {"html": kafka_html}})
    assert "every topic: &lt;topic.prefix&gt;." in page
    assert "alert(1)" not in page  # a script is still dropped with its content


@pytest.mark.parametrize(
    ("markup", "cleaned"),
    [
        ("<p>x <topic.prefix> y</p>", "<p>x &lt;topic.prefix&gt; y</p>"),
        ("<p><my_key>v</my_key></p>", "<p>&lt;my_key&gt;v&lt;/my_key&gt;</p>"),
        ('<p><a-b c="d">e</p>', '<p>&lt;a-b c="d"&gt;e</p>'),
        ("<p>1 < 2 & 3 > 2</p>", "<p>1 &lt; 2 &amp; 3 &gt; 2</p>"),
    ],
)
def test_sanitize_shows_tag_like_text(markup: str, cleaned: str) -> None:
    assert sanitize(markup) == cleaned


def _prf(metrics: list[Metric], outcome: Outcome = Outcome.PASSED) -> CheckResult:
    check = Check(
        "PRF-01",
        "Throughput is measured (records/s)",
        frozenset({"source"}),
        frozenset({"kafka"}),
        True,
        lambda ctx: None,
    )
    return CheckResult(check, "HostileDocsDriver", "source", outcome, metrics=metrics)


def test_threshold_is_only_claimed_when_one_is_set(tmp_path: Path) -> None:
    page = _page(tmp_path, [_prf([Metric("source.throughput", 5000.0, "records/s")])])
    assert '<span class="tag">no threshold set: reported only</span>' in page
    assert "threshold met" not in page
    assert "meets its threshold" not in page
    page = _page(
        tmp_path, [_prf([Metric("source.throughput", 5000.0, "records/s", threshold=1000)])]
    )
    assert '<span class="tag met-yes">threshold met</span>' in page
    page = _page(
        tmp_path,
        [_prf([Metric("source.throughput", 50.5, "records/s", threshold=1000)], Outcome.FAILED)],
    )
    assert '<span class="tag met-no">threshold NOT met</span>' in page


def test_counts_print_as_whole_numbers(tmp_path: Path) -> None:
    page = _page(
        tmp_path,
        [
            _prf(
                [
                    Metric("source.records", 5000.0, "records"),
                    Metric("source.batches", 7.0, "batches"),
                    Metric("source.latency.p50", 2.5, "ms", higher_is_better=False),
                ]
            )
        ],
    )
    assert '<td class="num">5,000 records</td>' in page
    assert '<td class="num">7 batches</td>' in page
    assert '<td class="num">2.50 ms</td>' in page
    assert "7.00" not in page
    assert "5000.0" not in page
    assert format_value(100.0) == "100"
    assert format_value(0.125) == "0.125"
