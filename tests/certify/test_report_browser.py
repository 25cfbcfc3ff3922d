"""The HTML report as a person sees it: rendered by headless Chromium, read over DevTools.

The run behind the report is real: quick checks against the FileStream drivers on the session
broker, plus two small broken drivers (a badly named connector that fails CFG-07, a driver
whose example config raises, which makes CFG-03 an ERROR). Chromium is Debian's ``chromium``
package (``.ci/run`` installs it); the test is skipped, saying so, where it is missing.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import signal
import struct
import subprocess
import urllib.request
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
import websocket

from harness.certify import CertificationRun, Outcome
from harness.certify._bundle import write_bundle
from harness.certify._evidence import compact_lines
from harness.certify._report_common import verdict
from reference_connectors.filestream import FileStreamSinkConnector, FileStreamSourceConnector
from reference_connectors.filestream.certify import FileStreamSinkDriver, FileStreamSourceDriver
from tests._wait import wait_until
from tests.certify._support import describe, project_for, run_checks

CHROMIUM = shutil.which("chromium")
pytestmark = [
    pytest.mark.slow,
    # one headless Chromium at a time: it is the heaviest process the suite starts
    pytest.mark.xdist_group("exclusive"),
    pytest.mark.skipif(
        CHROMIUM is None,
        reason="Debian's chromium package is not installed (apt-get install chromium; "
        ".ci/run installs it)",
    ),
]


class FileSource(FileStreamSourceConnector):
    """A FileStream source whose class name lacks the SourceConnector suffix (fails CFG-07)."""


class BadlyNamedSourceDriver(FileStreamSourceDriver):
    connector: ClassVar[type] = FileSource


class ExplodingSinkDriver(FileStreamSinkDriver):
    """A driver with a bug: its example config raises (the checks that need it are ERRORs)."""

    connector: ClassVar[type] = FileStreamSinkConnector

    def example_config(self, topics: str) -> dict[str, str]:
        raise RuntimeError("driver bug: <script>alert('x')</script> & no config")


class DevTools:
    """A minimal Chrome DevTools Protocol client for one page."""

    def __init__(self, url: str) -> None:
        self.ws = websocket.create_connection(url, timeout=60, suppress_origin=True)
        self.next_id = 0

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:  # events arrive in between; skip them
            message = json.loads(self.ws.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise AssertionError(f"{method} failed: {message['error']}")
                result: dict[str, Any] = message["result"]
                return result

    def evaluate(self, expression: str) -> Any:
        answer = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in answer:
            raise AssertionError(f"{expression} raised: {answer['exceptionDetails']}")
        return answer["result"].get("value")

    def close(self) -> None:
        self.ws.close()


@contextlib.contextmanager
def chromium(tmp_path: Path) -> Iterator[DevTools]:
    """Headless Chromium with remote debugging, stopped (its process group) whatever happens."""
    assert CHROMIUM is not None
    profile = tmp_path / "chromium-profile"
    log = (tmp_path / "chromium.log").open("wb")
    process = subprocess.Popen(
        [
            CHROMIUM,
            "--headless=new",
            "--remote-debugging-port=0",
            "--remote-allow-origins=*",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--no-default-browser-check",
            "--hide-scrollbars",
            "--window-size=1280,1000",
            f"--user-data-dir={profile}",
            "about:blank",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: the renderers stop with it
    )
    tools: DevTools | None = None
    try:
        port_file = profile / "DevToolsActivePort"
        wait_until(
            lambda: port_file.is_file() and len(port_file.read_text().splitlines()) >= 2,
            timeout=60,
            message=lambda: f"Chromium wrote no DevToolsActivePort; its log:\n{_tail(tmp_path)}",
        )
        port = int(port_file.read_text().splitlines()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30) as answer:
            targets = json.load(answer)
        page = next(t for t in targets if t.get("type") == "page")
        tools = DevTools(page["webSocketDebuggerUrl"])
        yield tools
    finally:
        if tools is not None:
            tools.close()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
        log.close()


def _tail(tmp_path: Path) -> str:
    return (tmp_path / "chromium.log").read_text(errors="replace")[-2000:]


def png_pixels(data: bytes) -> tuple[int, int, int, bytes]:
    """Decode an 8-bit RGB/RGBA PNG: (width, height, channels, raw rows without filters)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    position, chunks, header = 8, [], b""
    while position < len(data):
        (length,) = struct.unpack(">I", data[position : position + 4])
        kind = data[position + 4 : position + 8]
        body = data[position + 8 : position + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            chunks.append(body)
        position += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", header[:10])
    assert depth == 8, f"unexpected PNG bit depth {depth}"
    assert colour in (2, 6), f"unexpected PNG colour type {colour}"
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(chunks))
    stride = width * channels
    previous = bytearray(stride)
    rows = bytearray()
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                corner = previous[i - channels] if i >= channels else 0
                guess = left + up - corner
                pa, pb, pc = abs(guess - left), abs(guess - up), abs(guess - corner)
                pick = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + pick) & 0xFF
        rows += line
        previous = line
    return width, height, channels, bytes(rows)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory, kafka_bootstrap: str) -> Any:
    tmp = tmp_path_factory.mktemp("browser-report")
    project = project_for(
        tmp, FileStreamSourceDriver, BadlyNamedSourceDriver, ExplodingSinkDriver, name="fs-demo"
    )
    run = run_checks(
        project, ["CFG-01", "CFG-03", "CFG-07", "CFG-08", "ERR-02", "PRF-01"], kafka_bootstrap, tmp
    )
    outcomes = {r.outcome for r in run.results}
    assert outcomes == set(Outcome), f"the run should show every outcome:\n{describe(run)}"
    files = write_bundle(run, tmp / "report")
    return run, files["html"]


def _normal(text: str) -> str:
    return " ".join(text.split())


def test_report_reads_in_chromium(report: tuple[CertificationRun, Path], tmp_path: Path) -> None:
    run, html = report
    with chromium(tmp_path) as page:
        page.call("Page.navigate", url=html.resolve().as_uri())
        wait_until(
            lambda: (
                page.evaluate("document.readyState") == "complete"
                and page.evaluate("document.getElementById('verdict') !== null")
            ),
            timeout=60,
            message="the report did not load",
        )
        text = _normal(page.evaluate("document.body.innerText"))

        # the verdict, as the banner shows it
        assert verdict(run) == "FAILED"
        assert page.evaluate("document.getElementById('verdict').innerText") == "FAILED"
        assert "Certification report: fs-demo" in text
        attention = _normal(page.evaluate("document.getElementById('attention').innerText"))
        assert "CFG-07 [BadlyNamedSourceDriver]" in attention
        assert "CFG-03 [ExplodingSinkDriver]" in attention

        # every check, with its outcome and, for anything but a pass, why
        for result in run.results:
            selector = f'.result[data-check="{result.id}"][data-subject="{result.subject}"]'
            shown = page.evaluate(f"document.querySelector({json.dumps(selector)})?.innerText")
            assert shown, f"{result.id} [{result.subject}] is not on the page"
            shown = _normal(shown)
            assert result.id in shown
            assert str(result.outcome).upper() in shown
            if result.outcome is Outcome.FAILED:
                assert _normal(result.expected or "") in shown
                assert _normal(result.actual or "") in shown
            elif result.outcome in (Outcome.SKIPPED, Outcome.ERROR, Outcome.NOT_VERIFIED):
                assert _normal(result.message) in shown, (result.message, shown)
            if result.outcome is Outcome.PASSED:  # what it saw, visible without unfolding
                lines = compact_lines(result.evidence)
                assert lines, f"{result.id} [{result.subject}] passed without evidence"
                visible = _normal(
                    page.evaluate(
                        f"document.querySelector({json.dumps(selector + ' .evidence')})"
                        "?.innerText || ''"
                    )
                )
                for line in lines:
                    assert _normal(line) in visible, (line, visible)
        # the driver's "<script>" is text on the page, never markup
        assert "<script>alert('x')</script>" in text
        assert page.evaluate("document.querySelectorAll('main script').length") == 0

        # the configuration reference of each connector, every key visible
        reference = _normal(page.evaluate("document.getElementById('config-reference').innerText"))
        for cls in (FileStreamSourceConnector, FileSource, FileStreamSinkConnector):
            keys = [k.name for k in cls().config().config_keys().values() if not k.internal_config]
            assert keys
            for key in keys:
                assert key in reference, f"{cls.__name__} key {key} is not visible"

        # the throughput plot is drawn, with labelled axes
        plots = page.evaluate(
            "Array.from(document.querySelectorAll('svg.plot')).map(p => {"
            " const box = p.getBoundingClientRect();"
            " return {w: box.width, h: box.height, text: p.textContent,"
            " lines: p.querySelectorAll('polyline').length}; })"
        )
        series = [s for r in run.results for s in r.series]
        assert series, "PRF-01 reported no series"
        assert len(plots) == len(series)
        for plot, drawn in zip(plots, series, strict=True):
            assert plot["w"] > 300, plot
            assert plot["h"] > 150, plot
            assert plot["lines"] == 1
            assert drawn.x_label in plot["text"]
            assert drawn.y_label in plot["text"]

        # the filters work (inline script) and the page reads without them
        page.evaluate("document.querySelector('#filters input[data-outcome=\"passed\"]').click()")
        hidden = page.evaluate(
            "Array.from(document.querySelectorAll('.result.outcome-passed'))"
            ".every(e => e.offsetParent === null)"
        )
        assert hidden
        page.evaluate("document.querySelector('#filters input[data-outcome=\"passed\"]').click()")

        # a screenshot of the top of the page is not blank and shows the red verdict banner
        shot = page.call(
            "Page.captureScreenshot",
            format="png",
            clip={"x": 0, "y": 0, "width": 1280, "height": 900, "scale": 0.5},
        )
        png = base64.b64decode(shot["data"])
        (tmp_path / "report.png").write_bytes(png)
        width, height, channels, pixels = png_pixels(png)
        total = width * height
        non_white = sum(
            1
            for i in range(0, len(pixels), channels)
            if min(pixels[i], pixels[i + 1], pixels[i + 2]) < 235
        )
        red = sum(
            1
            for i in range(0, len(pixels), channels)
            if pixels[i] > 180 and pixels[i + 1] < 80 and pixels[i + 2] < 80
        )
        assert non_white > total * 0.03, f"the screenshot is almost blank ({non_white}/{total})"
        assert red > 500, f"no red FAILED banner in the screenshot ({red} red pixels)"
