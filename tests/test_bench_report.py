"""The benchmark page (bench/report.py) built from a small set of results written as the
benchmarks write them (bench/_results.py), and make test's phase times (bench/_timed.py)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from bench import _results, _timed, report


def _page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Path]:
    results_dir = tmp_path / "results"
    fs = _results.Results("filestream_vs_raw", str(results_dir / "filestream_vs_raw.json"))
    for _ in range(3):
        fs.run()
    fs.figure(  # met: median ratio 1.5 >= 1.3
        "filestream.sink",
        "FileStream sink / raw consume loop",
        "rec/s",
        [150.0, 160.0, 140.0],
        baseline=[100.0, 100.0, 100.0],
        baseline_name="raw consume loop",
        aim=_results.ratio_aim(">=", 1.3),
    )
    fs.figure(  # missed: median ratio 0.8 < 0.9, although one run (1.0) meets it
        "filestream.source",
        "FileStream source / raw produce loop",
        "rec/s",
        [80.0, 100.0, 70.0],
        baseline=[100.0, 100.0, 100.0],
        baseline_name="raw produce loop",
        aim=_results.ratio_aim(">=", 0.9),
    )
    assert fs.write() == results_dir / "filestream_vs_raw.json"
    cert = _results.Results("certify_time", str(results_dir / "certify_time.json"))
    cert.run()
    cert.figure(  # missed: 71 s against < 45 s
        "certify.sql.sqlite",
        "cdk certify reference_connectors/sql, SQLite",
        "s",
        [71.0],
        aim=_results.value_aim("<", 45),
        higher_is_better=False,
    )
    cert.figure(  # the bench ran but could not measure it: not run, with the reason
        "certify.sql.postgresql",
        "cdk certify reference_connectors/sql, PostgreSQL",
        "s",
        [],
        aim=_results.value_aim("<", 45),
        error="cdk certify did not run to its end (exits [2])",
    )
    cert.write()
    # a bench that died (its script's uncaught exception) leaves why, and no figure
    spark = _results.Results("spark_datasource", str(results_dir / "spark_datasource.json"))
    monkeypatch.setattr(sys, "excepthook", lambda *_: None)
    spark.write_on_failure()
    spark.run()
    error = RuntimeError("Python worker failed to connect back (postgresql://u:s3cret@db/x)")
    sys.excepthook(RuntimeError, error, None)
    # make test's phases, each through the wrapper the Makefile uses, as one make test run
    times = tmp_path / "make-test-times.json"
    monkeypatch.setenv("CDK_TEST_RUN", "2026-12-02T00:00:00Z")
    for phase in report.MAKE_TEST_PHASES:
        assert _timed.main(["--out", str(times), "--phase", phase, "--", "true"]) == 0
    monkeypatch.delenv("CDK_TEST_RUN")
    assert _timed.main(["--out", str(times), "--phase", "unit", "--", "false"]) == 1  # alone
    out = tmp_path / "report.html"
    code = report.main(
        ["--results", str(results_dir), "--make-test-times", str(times), "--out", str(out)]
    )
    assert code == 0
    return out.read_text(), times


def _status(page: str, figure: str) -> str:
    match = re.search(
        rf"<tr id='row-[^']*' data-figure='{re.escape(figure)}'>.*?data-status='([^']*)'", page
    )
    assert match, f"{figure} is not in the summary"
    return match.group(1)


def test_page_is_self_contained_and_marks_each_figure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page, times = _page(tmp_path, monkeypatch)

    # self-contained: no script, no stylesheet, image or font fetched from anywhere
    assert "<script" not in page
    assert "<link" not in page
    assert "@import" not in page
    assert not re.search(r"url\(\s*['\"]?(?!#)", page)  # only the SVGs' own #ids
    assert not re.search(r"\b(src|href)\s*=\s*['\"]?(https?:)?//", page)
    assert page.count("<svg") >= 4  # figures' plots and the benches' load, inlined

    assert _status(page, "filestream.sink") == "met"
    assert _status(page, "filestream.source") == "missed"
    assert _status(page, "certify.sql.sqlite") == "missed"
    assert _status(page, "certify.sql.postgresql") == "not run"
    assert "cdk certify did not run to its end (exits [2])" in page
    assert _status(page, "make_test.wall") == "met"  # five phases of a few ms, < 900 s
    # every figure the issues set an aim for is listed, those without results as not run
    for slot in report.SLOTS:
        assert f"data-figure='{slot.name}'" in page
    for missing in ("certify.sql.mariadb", "certify.new_project", "spark.streaming_vs_batch"):
        assert _status(page, missing) == "not run"
    section = page[page.index("id='fig-certify-new_project'") :]
    assert "Not run: no results from certify_time" in section[:500]
    section = page[page.index("id='fig-spark-streaming_vs_batch'") :]
    failure = "spark_datasource failed: RuntimeError: Python worker failed to connect back"
    assert failure in section[:600]
    assert "s3cret" not in page
    assert "postgresql://u:****@db/x" in page

    # the plots carry the aims; the runs' tables the load
    assert "aim &gt;= 1.3x" in page or "aim >= 1.3x" in page
    assert "aim &lt; 45 s" in page or "aim < 45 s" in page
    assert "load before" in page
    assert "Accelerators" in page

    # the wrapper kept every phase, the one run alone without a run id
    phases = json.loads(times.read_text())["phases"]
    assert [p["phase"] for p in phases] == [*report.MAKE_TEST_PHASES, "unit"]
    assert phases[-1]["run"] == ""
    assert phases[-1]["exit"] == 1


def test_results_reject_bad_figures(tmp_path: Path) -> None:
    results = _results.Results("x", None)
    with pytest.raises(ValueError, match="3 kit values but 2 baseline values"):
        results.figure("a", "a", "s", [1.0, 2.0, 3.0], baseline=[1.0, 2.0])
    with pytest.raises(ValueError, match="a ratio aim needs a baseline"):
        results.figure("a", "a", "s", [1.0], aim=_results.ratio_aim(">=", 1.0))
    with pytest.raises(ValueError, match="'op' must be one of"):
        _results.ratio_aim("=>", 1.0)
    assert results.write() is None  # --results '' writes nothing
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(ValueError, match=r"broken\.json: not JSON"):
        report.load_results(tmp_path)


def test_timed_runs_the_command_and_passes_its_exit(tmp_path: Path) -> None:
    out = tmp_path / "t.json"
    code = _timed.main(["--out", str(out), "--phase", "p", "--", sys.executable, "-c", "exit(3)"])
    assert code == 3
    (entry,) = json.loads(out.read_text())["phases"]
    assert entry["phase"] == "p"
    assert entry["exit"] == 3
    assert entry["end"] >= entry["start"]


def test_timed_records_the_cpu_the_machine_spent_during_the_phase(tmp_path: Path) -> None:
    out = tmp_path / "t.json"
    spin = "import time\nend = time.process_time() + 0.5\nwhile time.process_time() < end: pass"
    assert _timed.main(["--out", str(out), "--phase", "p", "--", sys.executable, "-c", spin]) == 0
    (entry,) = json.loads(out.read_text())["phases"]
    # the child alone kept a core busy for half a second; other processes only add to it
    assert entry["cpu_busy_s"] >= 0.4, entry
    assert 0 < entry["cpu_busy_share"] <= 1, entry
