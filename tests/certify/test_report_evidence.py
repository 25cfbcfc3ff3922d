"""Evidence: what each check saw reaches summary.json, the JUnit properties, the HTML page and
the terminal, for passed checks too, and a secret never does.

The hand-made results test the wording of every format; a real run on the session broker tests
that the context records the comparisons and the config a check used, PASSWORD values hidden.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import math
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, ClassVar

import pytest

from cdk import ConfigDef, Importance, Type
from harness.certify import CertificationRun, Check, CheckContext, CheckFailed, CheckResult, Outcome
from harness.certify._bundle import write_bundle
from harness.certify._evidence import compact_lines, flatten, format_value, plain, tables
from harness.certify._progress import TerminalProgress
from harness.certify._report_html import render_html
from harness.certify._report_json import summary
from harness.certify._report_junit import junit_xml
from reference_connectors.filestream import FileStreamSourceConnector
from reference_connectors.filestream.certify import FileStreamSourceDriver
from tests.certify._support import describe, project_for, run_checks

CANARY = "canary-s3cr3t-<&>-42"
COMPARISON = "after a clean stop of the worker"


def _check(check_id: str = "OFF-01", title: str = "resumes after a clean stop") -> Check:
    return Check(
        check_id,
        title,
        frozenset({"source"}),
        frozenset({"kafka"}),
        True,
        lambda ctx: None,
        description="What it proves.",
    )


def _evidence() -> dict[str, Any]:
    return {
        COMPARISON: {"sent": 100, "stored": 100, "duplicates": 0, "lost": 0},
        "resumed from offset": 42,
        "restarts": 2,
        "stop() took (s)": 0.25,
        "config": {"connector.class": "demo.DemoSource", "db.password": "[hidden]"},
    }


def _run(tmp_path: Path, results: list[CheckResult]) -> CertificationRun:
    project = project_for(tmp_path, FileStreamSourceDriver, name="demo")
    run = CertificationRun(project, kafka="embedded", results=results)
    run.environment = {"connect-cdk": "0.1.0"}
    run.finished_at = run.started_at + dt.timedelta(seconds=3)
    return run


def test_wording_of_evidence() -> None:
    evidence = _evidence()
    assert compact_lines(evidence) == [
        f"{COMPARISON}: 100 sent, 100 stored, 0 duplicates, 0 lost",
        "resumed from offset: 42, 2 restarts, stop() took (s): 0.25",
    ]
    assert tables(evidence) == {
        "config": [("connector.class", "demo.DemoSource"), ("db.password", "[hidden]")]
    }
    assert ("config.db.password", "[hidden]") in flatten(evidence)
    assert (f"{COMPARISON}.sent", "100") in flatten(evidence)
    # counts are whole numbers, whatever type they arrived as
    assert format_value(100.0) == "100"
    assert compact_lines({"stored": 100.0}) == ["stored: 100"]
    # only an integer under a lowercase word reads as a count: a topic partition does not
    assert compact_lines({"committed offsets": {"topic-a[0]": 120}}) == [
        "committed offsets: topic-a[0]: 120"
    ]
    assert format_value([1, 2.0, None, True]) == "1, 2, none, yes"
    assert format_value(list(range(12))).endswith("9, … (2 more)")


def test_plain_makes_json_data() -> None:
    data = plain(
        {
            "path": Path("/tmp/x"),
            "ids": {3, 1, 2},
            "nan": math.nan,
            "bytes": b"ab\xff",
            "ratio": 1 / 3,
            "deep": {"a": {"b": {"c": {"d": {"e": 1}}}}},
            7: (1, 2),
        }
    )
    assert json.loads(json.dumps(data, allow_nan=False)) == data
    assert data["ids"] == [1, 2, 3]
    assert data["nan"] == "nan"
    assert data["ratio"] == 0.333333
    assert data["7"] == [1, 2]
    assert data["deep"]["a"]["b"]["c"] == "{'d': {'e': 1}}"


def test_passed_check_evidence_in_every_format(tmp_path: Path) -> None:
    result = CheckResult(
        _check(),
        "FileStreamSourceDriver",
        "source",
        Outcome.PASSED,
        duration_s=2.0,
        evidence=_evidence(),
    )
    run = _run(tmp_path, [result])

    data = json.loads(json.dumps(summary(run), allow_nan=False))
    assert data["checks"][0]["evidence"] == _evidence()

    case = next(junit_xml(run).iter("testcase"))
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert props[f"{COMPARISON}.stored"] == "100"
    assert props["resumed from offset"] == "42"
    assert props["stop() took (s)"] == "0.25"
    assert props["config.db.password"] == "[hidden]"
    assert next(iter(case)).tag == "properties"  # before any failure element

    page = render_html(run)
    assert (
        '<div class="evidence"><strong>Evidence:</strong><ul>'
        f"<li>{COMPARISON}: 100 sent, 100 stored, 0 duplicates, 0 lost</li>"
    ) in page
    assert "<li>resumed from offset: 42, 2 restarts, stop() took (s): 0.25</li>" in page
    assert "<tr><th>db.password</th><td>[hidden]</td></tr>" in page
    # the evidence sits in the result's box, outside its folded details
    box = page[page.index('id="r-OFF-01-FileStreamSourceDriver"') :]
    assert box.index("Evidence:") < box.index("<details>") < box.index("db.password")

    out = io.StringIO()
    progress = TerminalProgress(out)
    progress.started(run, 1)
    progress.check_finished(result)
    lines = out.getvalue().splitlines()
    passed = next(n for n, line in enumerate(lines) if "PASS  OFF-01" in line)
    assert lines[passed + 1] == f"        {COMPARISON}: 100 sent, 100 stored, 0 duplicates, 0 lost"
    assert lines[passed + 2].strip().startswith("resumed from offset: 42")


def test_evidence_is_escaped_and_redacted(tmp_path: Path) -> None:
    from harness.certify import redact

    hostile = "<script>alert(1)</script>"
    result = CheckResult(
        _check(),
        "FileStreamSourceDriver",
        "source",
        Outcome.FAILED,
        message="expected x; but y",
        expected="x",
        actual="y",
        evidence=plain({hostile: f"seen {CANARY}", "config": {"key": CANARY, CANARY: "v"}}),
    )
    redact(result, {CANARY})
    run = _run(tmp_path, [result])
    run.secrets = {CANARY}
    files = write_bundle(run, tmp_path / "bundle")  # its own scan raises on a leak
    for path in files.values():
        text = path.read_text(encoding="utf-8")
        assert "s3cr3t" not in text, path.name
        if path.suffix != ".json":  # JSON holds the text as data
            assert "<script>alert(1)" not in text, path.name
    page = files["html"].read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;: seen [hidden]" in page


# --- the context records it ---------------------------------------------------------------


class SecretSourceConnector(FileStreamSourceConnector):
    """The FileStream source with a PASSWORD key it ignores (for the evidence's config)."""

    def config(self) -> ConfigDef:
        definition = ConfigDef()
        for key in super().config().config_keys().values():
            definition.define(key)
        return definition.define(
            "api.password", Type.PASSWORD, None, importance=Importance.HIGH, documentation="Secret."
        )


class SecretSourceDriver(FileStreamSourceDriver):
    """Gives the connector a secret under its PASSWORD key."""

    connector: ClassVar[type] = SecretSourceConnector

    def example_config(self, topic: str) -> dict[str, str]:
        return {**super().example_config(topic), "api.password": CANARY}


def _context(tmp_path: Path) -> CheckContext:
    return CheckContext(
        check=_check(),
        project=project_for(tmp_path, SecretSourceDriver),
        driver_class=SecretSourceDriver,
        bootstrap_servers="",
        kafka_kind="embedded",
        environment=frozenset({"kafka"}),
        workdir=tmp_path,
    )


def test_context_records_comparisons_and_configs(tmp_path: Path) -> None:
    ctx = _context(tmp_path)
    config = {"connector.class": "x.Y", "tasks.max": "1", "api.password": CANARY, "file": "in"}
    ctx.evidence_config(config)
    ctx.evidence_config(dict(config))  # the same config again: recorded once
    ctx.evidence_config(
        {
            **config,
            "tasks.max": "3",
            "consumer.override.sasl.jaas.config": "j",
            "value.converter.basic.auth.user.info": "u:p",
        }
    )
    assert ctx.recorded["config"]["api.password"] == "[hidden]"
    assert ctx.recorded["config"]["tasks.max"] == "1"
    assert ctx.recorded["config 2 (changes)"] == {
        "tasks.max": "3",
        "consumer.override.sasl.jaas.config": "[hidden]",
        "value.converter.basic.auth.user.info": "[hidden]",
    }
    assert "config 3 (changes)" not in ctx.recorded

    assert ctx.compare_ids([1, 2, 3], [1, 2, 2, 3], what="the burst", allow_duplicates=True) == 1
    assert ctx.recorded["the burst"] == {"delivered": 4, "duplicates": 1, "lost": 0, "sent": 3}
    with pytest.raises(CheckFailed):
        ctx.compare_ids([1, 2, 3], [1, 4], what="after the restart")
    assert ctx.recorded["after the restart"] == {
        "sent": 3,
        "delivered": 2,
        "duplicates": 0,
        "lost": 2,
        "unexpected": 1,
    }  # recorded before the failure is raised

    ctx.secret("hunter2-hunter2")
    ctx.evidence("log line", "password=hunter2-hunter2")
    assert ctx.recorded["log line"] == "password=[hidden]"
    assert CANARY not in json.dumps(ctx.recorded)


def test_real_run_carries_evidence_into_the_bundle(tmp_path: Path, kafka_bootstrap: str) -> None:
    project = project_for(tmp_path, SecretSourceDriver)
    run = run_checks(project, ["OFF-01"], kafka_bootstrap, tmp_path)
    assert run.passed, describe(run)
    (result,) = run.results
    assert result.outcome is Outcome.PASSED
    comparisons = {k: v for k, v in result.evidence.items() if k.startswith(COMPARISON)}
    assert len(comparisons) == 1, result.evidence
    ((what, counts),) = comparisons.items()
    assert counts["sent"] == counts["delivered"] > 0
    assert (counts["duplicates"], counts["lost"]) == (0, 0)
    assert result.evidence["config"]["api.password"] == "[hidden]"
    assert result.evidence["config"]["connector.class"].endswith("SecretSourceConnector")

    files = write_bundle(run, tmp_path / "bundle")
    for path in files.values():
        assert CANARY not in path.read_text(encoding="utf-8"), path.name
    data = json.loads(files["summary"].read_text(encoding="utf-8"))
    assert data["checks"][0]["evidence"] == result.evidence
    props = {
        p.get("name"): p.get("value") for p in ET.parse(files["junit"]).getroot().iter("property")
    }
    assert props[f"{what}.sent"] == str(counts["sent"])
    assert props["config.api.password"] == "[hidden]"
    page = files["html"].read_text(encoding="utf-8")
    sent = counts["sent"]
    assert f"{sent} sent, {sent} delivered, 0 duplicates, 0 lost</li>" in page
    assert "<tr><th>api.password</th><td>[hidden]</td></tr>" in page


def test_probe_records_tasks_polls_offsets_and_stop_times(tmp_path: Path) -> None:
    ctx = _context(tmp_path)
    lines = tmp_path / "input.txt"
    lines.write_text("record-1\nrecord-2\nrecord-3\n", encoding="utf-8")
    config = {"file": str(lines), "topic": "t", "api.password": CANARY}
    with ctx.probe(SecretSourceConnector, config) as probe:
        assert len(probe.poll(count=3, timeout=10.0)) == 3
    assert ctx.recorded["tasks started"] == 1
    assert ctx.recorded["polled"] == 3
    assert set(ctx.recorded["stop() took (s)"]) == {"task 0", "connector"}
    assert ctx.recorded["config"]["api.password"] == "[hidden]"
    assert "resumed from offsets" not in ctx.recorded

    offsets = {'{"filename": "in"}': {"position": 9}}
    with ctx.probe(SecretSourceConnector, config, offsets=offsets):
        pass
    assert ctx.recorded["resumed from offsets"] == {'{"filename": "in"}': {"position": 9}}
    assert "config 2 (changes)" not in ctx.recorded  # the same config
    assert compact_lines(ctx.recorded)[0].startswith("tasks started: 1, 3 polled")
    assert CANARY not in json.dumps(ctx.recorded)
