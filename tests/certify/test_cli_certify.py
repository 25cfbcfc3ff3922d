"""``cdk certify`` as a user runs it: a subprocess, its output, its exit status and its bundle.

Exit status 0 CERTIFIABLE, 1 FAILED, 3 INCOMPLETE, 2 when the run could not start (a usage
mistake, named, without a traceback). The runs use the session broker through
``--kafka <bootstrap>`` and ``--only`` a few quick checks (so they are INCOMPLETE at best).
"""

from __future__ import annotations

import importlib
import json
import re
import signal
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.certify import Outcome, all_checks
from harness.providers._docker import dockerd_installed, ping
from harness.providers.tls import TlsKafka
from tests._procs import descendants, process_alive
from tests._wait import wait_until
from tests.certify._support import describe, project_for, run_checks

CDK = Path(sys.executable).with_name("cdk")
GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide" / "certify.rst"
SECRET = "hunter2-the-file-server-password"

GOOD_PYPROJECT = """\
[project]
name = "fs-connectors"
version = "2.0.0"

[tool.cdk]
drivers = [
    "reference_connectors.filestream.certify:FileStreamSourceDriver",
    "reference_connectors.filestream.certify:FileStreamSinkDriver",
]
"""

# A source connector with a PASSWORD key that it logs: CFG-08 fails it, and the report shows the
# failure without the password.
LEAKY_MODULE = f'''\
from __future__ import annotations

import logging
from typing import ClassVar

from cdk.config import ConfigDef, Importance, Type
from reference_connectors.filestream import FileStreamSourceConnector
from reference_connectors.filestream.certify import FileStreamSourceDriver

log = logging.getLogger("leaky")


class LeakySourceConnector(FileStreamSourceConnector):
    """Logs its password when it starts."""

    def config(self) -> ConfigDef:
        return ConfigDef(super().config()).define(
            "file.password", Type.PASSWORD, None, None, Importance.HIGH, "The server password"
        )

    def start(self, props: dict[str, str]) -> None:
        log.warning("connecting with password %s", props.get("file.password"))
        super().start({{k: v for k, v in props.items() if k != "file.password"}})


class LeakyDriver(FileStreamSourceDriver):
    connector: ClassVar[type] = LeakySourceConnector

    def example_config(self, topic: str) -> dict[str, str]:
        return {{**super().example_config(topic), "file.password": "{SECRET}"}}
'''


def cdk(*args: str | Path, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CDK), "certify", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def project(tmp_path: Path, pyproject: str, **files: str) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    for name, text in files.items():
        (root / f"{name}.py").write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def test_list_prints_the_catalogue() -> None:
    answer = cdk("--list")
    assert answer.returncode == 0, answer.stderr
    ids = {c.id for c in all_checks()}
    assert ids
    for check_id in ids:
        assert f"  {check_id}  " in answer.stdout
    assert f"{len(ids)} checks" in answer.stdout

    only = cdk("--list", "--only", "cfg", "--skip", "CFG-01")
    assert only.returncode == 0, only.stderr
    assert "CFG-02" in only.stdout
    assert "CFG-01" not in only.stdout
    assert "OFF-" not in only.stdout


@pytest.mark.parametrize(
    ("args", "files", "message"),
    [
        (["--only", "CFG-01,XYZ-99"], None, "'XYZ-99' is neither a check id"),
        (
            [],
            {"pyproject": GOOD_PYPROJECT + '\n[tool.cdk.certify]\nwaive = { "ERR-99" = "x" }\n'},
            "waive in {root}/pyproject.toml names 'ERR-99', which is not a check id",
        ),
        (
            [],
            {"pyproject": GOOD_PYPROJECT + '\n[tool.cdk.certify]\nwaive = { "RBL" = "x" }\n'},
            "waivers name single checks, not a suite",
        ),
        (
            [],
            {"pyproject": GOOD_PYPROJECT + '\n[tool.cdk.certify]\nwaive = { "ERR-01" = " " }\n'},
            "ERR-01 needs a written reason",
        ),
        (
            [],
            {
                "pyproject": "[tool.cdk]\ndrivers = ['wrong_streams:Driver']\n",
                "wrong_streams": (
                    "from reference_connectors.filestream.certify import FileStreamSourceDriver\n"
                    "class Driver(FileStreamSourceDriver):\n"
                    "    streams = '4'\n"
                ),
            },
            "streams must be a positive int (a class attribute `streams = 4`, or a property "
            "returning one), not '4'",
        ),
        (["--skip", "NOPE"], None, "'NOPE' is neither a check id"),
        (["--kafka", "no-port-here"], None, "--kafka"),
        (["{tmp}/missing"], None, "the path does not exist"),
        ([], {}, "No pyproject.toml"),
        ([], {"pyproject": "[project]\nname = 'x'\n"}, "has no [tool.cdk] table"),
        (
            [],
            {"pyproject": "[tool.cdk]\ndrivers = ['no_such_module:Driver']\n"},
            "Cannot import driver module 'no_such_module'",
        ),
        (
            [],
            {
                "pyproject": "[tool.cdk]\ndrivers = ['broken_syntax:Driver']\n",
                "broken_syntax": "def oops(:\n",
            },
            "SyntaxError",
        ),
        (
            [],
            {
                "pyproject": "[tool.cdk]\ndrivers = ['raises:Driver']\n",
                "raises": "raise RuntimeError('the driver module is broken')\n",
            },
            "RuntimeError: the driver module is broken",
        ),
    ],
    ids=[
        "unknown-id",
        "waiver-unknown-id",
        "waiver-names-a-suite",
        "waiver-without-reason",
        "streams-wrong-form",
        "unknown-suite",
        "bad-kafka",
        "missing-path",
        "no-pyproject",
        "no-tool-cdk",
        "unimportable-driver",
        "syntax-error",
        "driver-raises",
    ],
)
def test_usage_errors_exit_2_with_a_clear_message(
    tmp_path: Path, args: list[str], files: dict[str, str] | None, message: str
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    if files is None:
        (root / "pyproject.toml").write_text(GOOD_PYPROJECT, encoding="utf-8")
    else:
        for name, text in files.items():
            target = root / ("pyproject.toml" if name == "pyproject" else f"{name}.py")
            target.write_text(text, encoding="utf-8")
    argv = [a.format(tmp=tmp_path) for a in args]
    if not any(a.startswith(str(tmp_path)) for a in argv):
        argv.insert(0, str(root))
    answer = cdk(*argv, timeout=60)
    output = answer.stdout + answer.stderr
    assert answer.returncode == 2, output
    assert message.format(root=root) in " ".join(output.split()), output
    assert "Traceback" not in output
    assert not (root / "certification-report").exists()


def test_certify_passes_a_correct_connector(tmp_path: Path, kafka_bootstrap: str) -> None:
    root = project(tmp_path, GOOD_PYPROJECT)
    answer = cdk(root, "--kafka", kafka_bootstrap, "--only", "CFG-01", "--only", "cfg-07")
    assert answer.returncode == 3, answer.stdout + answer.stderr
    lines = answer.stdout.splitlines()
    assert lines[0] == (
        "cdk certify: fs-connectors 2.0.0 (FileStreamSourceDriver, FileStreamSinkDriver)"
    )
    assert lines[1].startswith("4 checks planned on Kafka ")
    assert sum(1 for line in lines if " PASS  CFG-0" in line) == 4
    assert "\x1b[" not in answer.stdout
    assert "running" not in answer.stdout
    assert "Exit status: 3" in lines  # --only: INCOMPLETE, which a CI gate must not take for 0

    report = root / "certification-report"  # the default report directory
    assert f"Report: {report / 'report.html'}" in lines
    assert {p.name for p in report.iterdir()} == {
        "junit.xml",
        "summary.json",
        "report.html",
        "manifest.json",  # the Connector Hub details
        "docs",  # the README and each connector's configuration reference
        "SHA256SUMS",  # what `cdk certify verify` checks (tests/certify/test_bundle.py)
    }
    data = json.loads((report / "summary.json").read_text(encoding="utf-8"))
    assert (data["verdict"], data["exit_code"], data["counts"]["passed"]) == ("INCOMPLETE", 3, 4)
    assert len(list(ET.parse(report / "junit.xml").getroot().iter("testcase"))) == 4


def test_the_seed_is_given_shown_and_recorded(tmp_path: Path, kafka_bootstrap: str) -> None:
    root = project(tmp_path, GOOD_PYPROJECT)
    report = tmp_path / "report"
    args = ("--kafka", kafka_bootstrap, "--only", "SCH-09", "--report-dir", report)
    answer = cdk(root, *args, "--seed", "7")
    assert answer.returncode == 3, answer.stdout + answer.stderr  # --only: INCOMPLETE
    assert answer.stdout.splitlines()[1].endswith(", seed 7 (only SCH-09)")
    data = json.loads((report / "summary.json").read_text(encoding="utf-8"))
    assert data["seed"] == 7
    assert data["environment"]["seed"] == "7"
    for check in data["checks"]:
        assert (check["id"], check["outcome"]) == ("SCH-09", "passed"), check
        assert check["evidence"]["values drawn with seed"] == 7
        (limit,) = check["evidence"]["declared limits"]
        assert limit.startswith("every field: no newline (\\n)")
        assert "within the driver's declared limits" in check["message"]
    refused = cdk(root, "--seed", "-1", "--list")
    assert refused.returncode == 2, refused.stdout + refused.stderr


def test_certify_fails_a_leaky_connector_without_leaking(
    tmp_path: Path, kafka_bootstrap: str
) -> None:
    root = project(
        tmp_path,
        '[project]\nname = "leaky"\nversion = "0.1"\n\n'
        '[tool.cdk]\ndrivers = ["leaky:LeakyDriver"]\n',
        leaky=LEAKY_MODULE,
    )
    report = tmp_path / "elsewhere" / "bundle"
    answer = cdk(
        root, "--kafka", kafka_bootstrap, "--only", "CFG-07,CFG-08", "--report-dir", report
    )
    output = answer.stdout + answer.stderr
    assert answer.returncode == 1, output
    assert " FAIL  CFG-08  " in answer.stdout
    assert " PASS  CFG-07  " in answer.stdout
    assert "Exit status: 1" in answer.stdout
    assert f"Report: {report / 'report.html'}" in answer.stdout
    assert SECRET not in output

    data = json.loads((report / "summary.json").read_text(encoding="utf-8"))
    assert data["verdict"] == "FAILED"
    failed = [c for c in data["checks"] if c["outcome"] == "failed"]
    assert [c["id"] for c in failed] == ["CFG-08"]
    assert "log" in failed[0]["message"].lower()
    for path in report.rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_text(encoding="utf-8"), f"{path.name} leaks it"
    assert not (root / "certification-report").exists()


@pytest.mark.docker
@pytest.mark.xdist_group("exclusive")  # one Docker engine on the machine
@pytest.mark.slow
@pytest.mark.skipif(
    not dockerd_installed() and not ping("unix:///var/run/docker.sock"),
    reason="no Docker engine answers and dockerd is not installed (apt-get install docker.io)",
)
def test_certify_on_testcontainers(tmp_path: Path) -> None:
    root = project(tmp_path, GOOD_PYPROJECT)
    answer = cdk(root, "--kafka", "testcontainers", "--only", "CFG-03,OFF-01,SCH-02", timeout=600)
    assert answer.returncode == 3, answer.stdout + answer.stderr  # INCOMPLETE: --only
    assert "checks planned on Kafka testcontainers" in answer.stdout
    data = json.loads((root / "certification-report" / "summary.json").read_text("utf-8"))
    assert data["counts"]["passed"] == data["counts"]["total"] == 5
    assert data["environment"]["kafka"] == "testcontainers"


def test_a_driver_without_error_capabilities_is_not_certifiable(
    tmp_path: Path, kafka_bootstrap: str
) -> None:
    # The FileStream drivers offer neither outage() nor break_external_system(): ERR-01/02 used
    # to be skipped, and the run could be CERTIFIABLE. Now they are not verified, the verdict
    # names them, and the exit status is 3 (INCOMPLETE), not 0.
    root = project(tmp_path, GOOD_PYPROJECT)
    answer = cdk(root, "--kafka", kafka_bootstrap, "--only", "ERR-01,ERR-02")
    assert answer.returncode == 3, answer.stdout + answer.stderr
    assert sum(1 for line in answer.stdout.splitlines() if " NOTV  ERR-0" in line) == 4
    text = " ".join(answer.stdout.split())  # the reasons wrap at the terminal's width
    assert "does not implement outage(), which this check needs" in text
    assert "Verdict: INCOMPLETE." in text
    assert "4 required check(s) not verified" in text
    data = json.loads((root / "certification-report" / "summary.json").read_text("utf-8"))
    assert data["exit_code"] == 3
    assert data["counts"]["not verified"] == 4
    assert {c["outcome"] for c in data["checks"]} == {"not verified"}
    assert "ERR-02 [FileStreamSinkDriver]" in data["verdict_reason"]


def test_waivers_are_shown_next_to_the_check_everywhere(
    tmp_path: Path, kafka_bootstrap: str
) -> None:
    reason = "the files live on local disk <and never go away>"
    root = project(
        tmp_path,
        GOOD_PYPROJECT + f'\n[tool.cdk.certify]\nwaive = {{ "err-01" = "{reason}" }}\n',
    )
    answer = cdk(root, "--kafka", kafka_bootstrap, "--only", "ERR-01")
    assert answer.returncode == 3, answer.stdout + answer.stderr  # --only: INCOMPLETE at best
    text = " ".join(answer.stdout.split())  # the reasons wrap at the terminal's width
    assert f"waived in [tool.cdk.certify] waive: {reason}" in text
    assert f"Waived: ERR-01 [FileStreamSinkDriver] (not verified): {reason}" in text
    report = root / "certification-report"
    data = json.loads((report / "summary.json").read_text("utf-8"))
    assert [c["waiver"] for c in data["checks"]] == [reason, reason]
    cases = list(ET.parse(report / "junit.xml").getroot().iter("testcase"))
    assert len(cases) == 2
    for case in cases:
        properties = {p.get("name"): p.get("value") for p in case.iter("property")}
        assert properties == {"outcome": "not verified", "waiver": reason}
    page = (report / "report.html").read_text("utf-8")
    assert "waive: the files live on local disk &lt;and never go away&gt;</div>" in page


# --- the guide page (docs/guide/certify.rst) ---------------------------------------------


def test_the_guide_lists_every_check() -> None:
    listed = re.findall(r"^   \* - ([A-Z]{3}-\d{2})$", GUIDE.read_text(encoding="utf-8"), re.M)
    registered = [c.id for c in all_checks()]
    assert sorted(set(registered) - set(listed)) == [], "checks missing from the guide's table"
    assert sorted(set(listed) - set(registered)) == [], "the guide lists unknown checks"
    assert len(listed) == len(set(listed))


def test_the_guides_example_drivers_pass(tmp_path: Path, kafka_bootstrap: str) -> None:
    # the guide shows the FileStream reference drivers as they are (literalinclude)
    (included,) = re.findall(
        r"^\.\. literalinclude:: \.\./\.\./(reference_connectors/filestream/\w+)\.py$",
        GUIDE.read_text(encoding="utf-8"),
        re.M,
    )
    module = importlib.import_module(included.replace("/", "."))
    drivers = [module.FileStreamSourceDriver, module.FileStreamSinkDriver]
    run = run_checks(
        project_for(tmp_path, *drivers),  # type: ignore[arg-type]
        ["CFG-03", "SCH-02"],
        kafka_bootstrap,
        tmp_path,
    )
    assert [r.outcome for r in run.results] == [Outcome.PASSED] * 4, describe(run)


@pytest.mark.skipif(sys.platform != "linux", reason="reads the process tree from /proc")
def test_sigterm_stops_what_the_run_started(tmp_path: Path) -> None:
    """SIGTERM mid-run (a cancelled CI job): the broker and the check processes stop with it."""
    root = project(tmp_path, GOOD_PYPROJECT)
    proc = subprocess.Popen(
        [str(CDK), "certify", str(root), "--kafka", "embedded", "--jobs", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        for line in proc.stdout:  # a check has finished: the broker and a check process run
            if " PASS  " in line or " FAIL  " in line:
                break
        started = descendants(proc.pid)
        assert started, "the run started no process"
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + signal.SIGTERM, stderr
    assert "terminated (SIGTERM)" in stderr
    assert "Traceback" not in stderr
    wait_until(
        lambda: not any(process_alive(pid) for pid in started),
        30,
        message=lambda: f"the run's processes to end: {[p for p in started if process_alive(p)]}",
    )
    assert not (root / "certification-report").exists()


def test_certify_over_tls_with_client_certificates(tmp_path: Path, mtls_kafka: TlsKafka) -> None:
    """``--kafka HOST:PORT --kafka-config FILE`` on a broker reached over mutual TLS only."""
    root = project(tmp_path, GOOD_PYPROJECT)
    settings = mtls_kafka.client_config()
    password = settings["ssl.keystore.password"]
    config = tmp_path / "client.properties"
    config.write_text("".join(f"{k}={v}\n" for k, v in settings.items()), encoding="utf-8")
    report = tmp_path / "report"
    answer = cdk(
        root,
        *("--kafka", mtls_kafka.bootstrap_servers, "--kafka-config", config),
        *("--only", "OFF-01,OFF-06", "--report-dir", report),
    )
    assert answer.returncode == 3, answer.stdout + answer.stderr  # --only: INCOMPLETE
    data = json.loads((report / "summary.json").read_text(encoding="utf-8"))
    outcomes = {(c["id"], c["subject"]): c["outcome"] for c in data["checks"]}
    assert set(outcomes.values()) == {"passed"}, outcomes
    assert len(outcomes) == 2
    assert data["environment"]["kafka_security_protocol"] == "SSL"
    for path in report.rglob("*"):
        if path.is_file():
            assert password.encode() not in path.read_bytes(), path
    assert password not in answer.stdout + answer.stderr
    # a trust store that is a Java KeyStore is refused before anything runs, naming keytool
    jks = tmp_path / "trust.jks"
    jks.write_bytes(b"\xfe\xed\xfe\xed" + bytes(60))
    config.write_text(f"security.protocol=SSL\nssl.truststore.location={jks}\n", encoding="utf-8")
    refused = cdk(root, "--kafka", mtls_kafka.bootstrap_servers, "--kafka-config", config)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "keytool -importkeystore" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_certify_on_the_embedded_tls_broker(tmp_path: Path) -> None:
    root = project(tmp_path, GOOD_PYPROJECT)
    report = tmp_path / "report"
    answer = cdk(root, "--kafka", "embedded-tls", "--only", "OFF-01", "--report-dir", report)
    assert answer.returncode == 3, answer.stdout + answer.stderr
    data = json.loads((report / "summary.json").read_text(encoding="utf-8"))
    assert [c["outcome"] for c in data["checks"]] == ["passed"]
    assert data["environment"]["kafka"] == "embedded-tls"
    assert data["environment"]["kafka_security_protocol"] == "SSL"
    assert data["environment"]["broker"].endswith("behind a TLS-terminating proxy")
