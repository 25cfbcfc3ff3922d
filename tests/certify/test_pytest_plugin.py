"""``pytest -p harness.pytest_plugin --cdk-project=PATH``: the suites as plain pytest items.

End to end with ``pytester``: a project directory, an inner pytest run, its outcomes and output.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from harness.certify import all_checks
from harness.providers.tls import TlsKafka

# The suites are imported here, before any inner run: pytester forgets the modules an in-process
# run imports, and re-importing the suites would register their checks a second time.
all_checks()

pytest_plugins = ["pytester"]

PYPROJECT = """\
[project]
name = "fs-connectors"
version = "2.0.0"

[tool.cdk]
drivers = [
    "reference_connectors.filestream.certify:FileStreamSourceDriver",
    "reference_connectors.filestream.certify:FileStreamSinkDriver",
]
"""

BROKEN_PYPROJECT = """\
[project]
name = "misnamed"
version = "0.1"

[tool.cdk]
drivers = ["misnamed:MisnamedDriver"]

[tool.cdk.certify]
skip = { "CFG-01" = "documented elsewhere, for this test" }
"""

BROKEN_MODULE = """\
from typing import ClassVar

from reference_connectors.filestream import FileStreamSourceConnector
from reference_connectors.filestream.certify import FileStreamSourceDriver


class FileTailer(FileStreamSourceConnector):
    '''A source whose class name lacks the SourceConnector suffix (CFG-07 fails it).'''


class MisnamedDriver(FileStreamSourceDriver):
    connector: ClassVar[type] = FileTailer
"""


def _project(pytester: pytest.Pytester, pyproject: str, **modules: str) -> Path:
    root = pytester.path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    for name, text in modules.items():
        (root / f"{name}.py").write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def _tansu_children() -> set[int]:
    """The Tansu brokers this process started (the session broker among them)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == os.getpid() and b"tansu" in cmdline.lower():
            found.add(int(entry.name))
    return found


def test_one_item_per_planned_check(pytester: pytest.Pytester, kafka_bootstrap: str) -> None:
    _project(pytester, PYPROJECT)
    result = pytester.runpytest(
        "-p",
        "harness.pytest_plugin",
        "--cdk-project=proj",
        f"--cdk-kafka={kafka_bootstrap}",
        "--cdk-only=CFG-01,cfg-07",
        "--cdk-seed=31337",
        "-v",
    )
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(
        [
            "cdk certify: fs-connectors 2.0.0, 4 checks planned, kafka *, seed 31337 "
            "(--cdk-seed 31337 draws the same values again)",
            "*collected 4 items*",
            "proj/pyproject.toml::CFG-01[[]FileStreamSourceDriver[]] PASSED*",
            "proj/pyproject.toml::CFG-07[[]FileStreamSourceDriver[]] PASSED*",
            "proj/pyproject.toml::CFG-01[[]FileStreamSinkDriver[]] PASSED*",
            "proj/pyproject.toml::CFG-07[[]FileStreamSinkDriver[]] PASSED*",
        ]
    )

    selected = pytester.runpytest(
        "-p",
        "harness.pytest_plugin",
        "--cdk-project=proj",
        f"--cdk-kafka={kafka_bootstrap}",
        "--cdk-only=CFG-01,CFG-07",
        "-k",
        "CFG-07 and Sink",
    )
    selected.assert_outcomes(passed=1, deselected=3)


def test_failures_and_skips_carry_the_checks_words(
    pytester: pytest.Pytester, kafka_bootstrap: str
) -> None:
    _project(pytester, BROKEN_PYPROJECT, misnamed=BROKEN_MODULE)
    result = pytester.runpytest(
        "-p",
        "harness.pytest_plugin",
        "--cdk-project=proj",
        f"--cdk-kafka={kafka_bootstrap}",
        "--cdk-only=CFG-01,CFG-07,ERR-02",
        "-rs",
    )
    result.assert_outcomes(failed=1, skipped=2)
    result.stdout.fnmatch_lines(
        [
            "*CFG-07 * [[]MisnamedDriver[]]: failed",
            "Expected: *SourceConnector*",
            "Actual: *FileTailer*",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "SKIPPED * left out by request in [[]tool.cdk.certify[]] skip: documented elsewhere, "
            "for this test",
            "SKIPPED * break_external_system()*",
        ],
        consecutive=False,
    )
    assert "Traceback" not in result.stdout.str()


def test_kafka_is_started_once_and_stopped(pytester: pytest.Pytester) -> None:
    _project(pytester, PYPROJECT)
    before = _tansu_children()
    result = pytester.runpytest(
        "-p", "harness.pytest_plugin", "--cdk-project=proj", "--cdk-only=CFG-03"
    )
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        ["cdk certify: 2 check run(s); Kafka embedded started 1 time(s) and stopped"]
    )
    assert _tansu_children() == before  # the broker it started is gone


def test_a_bad_project_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("-p", "harness.pytest_plugin", "--cdk-project=nowhere")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--cdk-project nowhere: No pyproject.toml in *nowhere*"])

    _project(pytester, PYPROJECT)
    unknown = pytester.runpytest(
        "-p", "harness.pytest_plugin", "--cdk-project=proj", "--cdk-only=XYZ-01"
    )
    assert unknown.ret == pytest.ExitCode.USAGE_ERROR
    unknown.stderr.fnmatch_lines(["*'XYZ-01' is neither a check id*"])


def test_without_the_option_the_plugin_does_nothing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_plain():\n    assert True\n")
    result = pytester.runpytest("-p", "harness.pytest_plugin")
    result.assert_outcomes(passed=1)
    assert "cdk certify" not in result.stdout.str()


def test_checks_over_tls_with_the_cluster_s_settings(
    pytester: pytest.Pytester, mtls_kafka: TlsKafka
) -> None:
    """``--cdk-kafka HOST:PORT --cdk-kafka-config FILE``: a mutual-TLS cluster's checks pass."""
    _project(pytester, PYPROJECT)
    settings = pytester.path / "client.properties"
    settings.write_text(
        "".join(f"{k}={v}\n" for k, v in mtls_kafka.client_config().items()), encoding="utf-8"
    )
    result = pytester.runpytest(
        "-p",
        "harness.pytest_plugin",
        "--cdk-project=proj",
        f"--cdk-kafka={mtls_kafka.bootstrap_servers}",
        f"--cdk-kafka-config={settings}",
        "--cdk-only=OFF-06",
    )
    result.assert_outcomes(passed=1)
