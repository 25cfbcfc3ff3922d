"""The class-data archive of Spark's classes (harness/providers/_spark_cds.py).

The JVM tests start ``spark-class`` (a launcher JVM, then a master that prints its usage and
exits), so they run with the Spark tests; the archive is the machine's, made once (the test
session's own, tests/conftest.py).
"""

from __future__ import annotations

import logging
import os
import subprocess
from pathlib import Path

import pytest

from harness.providers import _spark_cds
from harness.providers._spark_base import spark_home
from tests.conftest import TEST_JVM_OPTIONS

pytest.importorskip("pyspark", reason="pyspark is not installed (the spark extra)")


def _master_usage(tmp_path: Path, options: str) -> tuple[subprocess.CompletedProcess[str], str]:
    """Run the standalone master's ``--help`` with ``options``; its output and class-load log."""
    log = tmp_path / "classes.log"
    proc = subprocess.run(
        [str(spark_home() / "bin" / "spark-class"), "org.apache.spark.deploy.master.Master", "-h"],
        env={
            **os.environ,
            "JAVA_TOOL_OPTIONS": f"{options} -Xlog:class+load=info:file={log}",
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return proc, log.read_text(errors="replace") if log.exists() else ""


@pytest.mark.xdist_group("spark-cds")
def test_spark_jvms_load_spark_classes_from_the_archive(tmp_path: Path) -> None:
    archive = _spark_cds.class_data_archive(TEST_JVM_OPTIONS)
    assert archive is not None
    assert archive.stat().st_size > 0
    options = f"{TEST_JVM_OPTIONS} {_spark_cds.archive_options(archive)}"
    proc, classes = _master_usage(tmp_path, options)
    assert "Usage: Master" in proc.stderr + proc.stdout, proc.stderr[-2000:]
    top = [line for line in classes.splitlines() if "source: shared objects file (top)" in line]
    # Spark's, Scala's and the libraries' classes the job loaded (the master's own are not in
    # it: the job runs no master)
    assert len(top) > 1000, len(top)
    assert any("org.apache.spark.SparkConf " in line for line in top), top[:5]
    # and without it, the same classes come from the jars
    proc, classes = _master_usage(tmp_path, TEST_JVM_OPTIONS)
    assert "org.apache.spark.deploy.master.Master source: jar:" in classes or (
        "org.apache.spark.deploy.master.Master source: file:" in classes
    ), classes[-2000:]


@pytest.mark.xdist_group("spark-cds")
def test_an_archive_that_does_not_fit_is_ignored_without_a_word(tmp_path: Path) -> None:
    foreign = tmp_path / "foreign.jsa"
    foreign.write_bytes(b"not an archive" * 1000)
    proc, _ = _master_usage(tmp_path, f"{TEST_JVM_OPTIONS} {_spark_cds.archive_options(foreign)}")
    output = proc.stdout + proc.stderr
    assert "Usage: Master" in output, output[-2000:]
    assert "shared archive" not in output.lower(), output[-2000:]
    assert "[cds" not in output, output[-2000:]


def test_a_failed_job_gives_no_archive_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(
        _spark_cds, "_JOB", "import sys; print('no Java here', file=sys.stderr); sys.exit(3)"
    )
    with caplog.at_level(logging.WARNING, logger=_spark_cds.__name__):
        assert _spark_cds.class_data_archive(TEST_JVM_OPTIONS) is None
    assert "the job exited 3: no Java here" in caplog.text
    assert not list((tmp_path / "connect-cdk" / "spark-cds").glob("*.jsa*"))  # nothing half-made


def test_each_pyspark_install_has_an_archive_of_its_own(tmp_path: Path) -> None:
    # the same jars in two virtualenvs: a JVM refuses an archive made with the other's paths
    homes = [tmp_path / "a" / "pyspark", tmp_path / "b" / "pyspark"]
    for home in homes:
        (home / "jars").mkdir(parents=True)
        (home / "jars" / "spark-core.jar").write_bytes(b"jar")
    assert _spark_cds._key(homes[0]) != _spark_cds._key(homes[1])
    assert _spark_cds._key(homes[0]) == _spark_cds._key(homes[0])
