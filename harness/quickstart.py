"""The quickstart pipeline behind ``make demo``: Kafka's FileStream quickstart, run by the kit.

It starts the embedded broker (Tansu), writes Kafka's three quickstart properties files, runs
``cdk standalone`` as a real subprocess with the FileStream source and sink, and follows the
lines from ``input.txt`` through Kafka into ``output.txt``. It then appends more lines, stops the
worker, restarts it to show that it resumes from its committed offsets (nothing lost, nothing
copied twice), and prints what happened. Run it with ``python -m harness.quickstart``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cdk.kafka import EmbeddedKafka, free_port

WORKER_PROPERTIES = """\
bootstrap.servers={bootstrap}
key.converter=org.apache.kafka.connect.json.JsonConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
key.converter.schemas.enable=true
value.converter.schemas.enable=true
offset.storage.file.filename={workdir}/connect.offsets
offset.flush.interval.ms=1000
listeners=http://127.0.0.1:{port}
"""

SOURCE_PROPERTIES = """\
name=local-file-source
connector.class=FileStreamSource
tasks.max=1
file={workdir}/input.txt
topic=connect-test
"""

SINK_PROPERTIES = """\
name=local-file-sink
connector.class=FileStreamSink
tasks.max=1
file={workdir}/output.txt
topics=connect-test
"""


def _say(message: str) -> None:
    print(f"[quickstart] {message}", flush=True)


def _wait(
    what: str, condition: Callable[[], bool], timeout: float, worker: subprocess.Popen[bytes]
) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if worker.poll() is not None:
            raise SystemExit(
                f"quickstart: the worker exited with {worker.returncode} while waiting for {what}"
            )
        if time.monotonic() > deadline:
            raise SystemExit(f"quickstart: timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.1)


def _get(url: str) -> Any:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return json.loads(response.read())
    except (urllib.error.URLError, ConnectionError, json.JSONDecodeError):
        return None


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def _start_worker(workdir: Path, log: Path) -> subprocess.Popen[bytes]:
    cdk = shutil.which("cdk", path=str(Path(sys.executable).parent)) or "cdk"
    files = [workdir / n for n in ("worker.properties", "source.properties", "sink.properties")]
    with log.open("ab") as out:
        return subprocess.Popen([cdk, "standalone", *map(str, files)], stdout=out, stderr=out)


def _stop_worker(worker: subprocess.Popen[bytes]) -> None:
    worker.send_signal(signal.SIGTERM)
    try:
        worker.wait(timeout=30)
    except subprocess.TimeoutExpired:
        worker.kill()
        worker.wait()
        raise SystemExit("quickstart: the worker did not stop within 30s of SIGTERM") from None


def run(lines: int, workdir: Path) -> None:
    """Run the quickstart with ``lines`` input lines in ``workdir``."""
    input_file, output_file = workdir / "input.txt", workdir / "output.txt"
    expected = [f"line {i}: hello from connect-cdk" for i in range(lines)]
    input_file.write_text("".join(f"{line}\n" for line in expected), encoding="utf-8")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    started = time.monotonic()
    with EmbeddedKafka() as kafka:
        _say(f"embedded Kafka broker (Tansu {kafka.version}) on {kafka.bootstrap_servers}")
        values = {"bootstrap": kafka.bootstrap_servers, "workdir": workdir, "port": port}
        for name, text in (
            ("worker.properties", WORKER_PROPERTIES),
            ("source.properties", SOURCE_PROPERTIES),
            ("sink.properties", SINK_PROPERTIES),
        ):
            (workdir / name).write_text(text.format(**values), encoding="utf-8")
        log = workdir / "worker.log"
        _say(f"cdk standalone worker.properties source.properties sink.properties (REST {url})")
        worker = _start_worker(workdir, log)
        try:
            _wait("the REST API", lambda: _get(f"{url}/") is not None, 60, worker)
            _wait(
                f"{lines} lines in output.txt",
                lambda: len(_lines(output_file)) >= lines,
                120,
                worker,
            )
            _say(f"copied {len(_lines(output_file))} lines input.txt -> Kafka -> output.txt")
            for name in ("local-file-source", "local-file-sink"):
                status = _get(f"{url}/connectors/{name}/status") or {}
                tasks = ", ".join(f"task {t['id']} {t['state']}" for t in status.get("tasks", []))
                _say(f"{name}: {status.get('connector', {}).get('state')} ({tasks})")
            more = [f"line {i}: appended while running" for i in range(lines, lines + lines // 2)]
            with input_file.open("a", encoding="utf-8") as out:
                out.writelines(f"{line}\n" for line in more)
            expected += more
            _wait(
                "the appended lines", lambda: len(_lines(output_file)) >= len(expected), 120, worker
            )
            _say(f"appended {len(more)} lines; the source picked them up while running")
        finally:
            _stop_worker(worker)
        stored = json.loads((workdir / "connect.offsets").read_text(encoding="utf-8"))["offsets"]
        positions = ", ".join(entry["value"] for entry in stored)
        _say(f"worker stopped; committed source offset in connect.offsets: {positions}")
        again = [
            f"line {i}: written while stopped" for i in range(len(expected), len(expected) + 10)
        ]
        with input_file.open("a", encoding="utf-8") as out:
            out.writelines(f"{line}\n" for line in again)
        expected += again
        worker = _start_worker(workdir, log)
        try:
            _wait(
                "the worker to resume",
                lambda: len(_lines(output_file)) >= len(expected),
                120,
                worker,
            )
        finally:
            _stop_worker(worker)
    copied = _lines(output_file)
    if copied != expected:
        missing = len(set(expected) - set(copied))
        raise SystemExit(
            f"quickstart: output.txt differs from input.txt ({len(copied)} lines, "
            f"{missing} missing, {len(copied) - len(set(copied))} duplicated); see {log}"
        )
    _say(
        f"restarted: resumed from the committed offsets; output.txt == input.txt "
        f"({len(copied)} lines, none lost, none duplicated) in {time.monotonic() - started:.1f}s"
    )
    _say(f"files and the worker log are in {workdir}")


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1000, help="input lines (default 1000)")
    parser.add_argument("--workdir", type=Path, help="where to write files (default: a temp dir)")
    args = parser.parse_args(argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="cdk-quickstart-"))
    workdir.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    run(args.lines, workdir.resolve())


if __name__ == "__main__":
    main()
