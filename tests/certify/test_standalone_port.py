"""A check's ``cdk standalone`` whose REST port another process took starts again on another.

On a loaded machine a broker or a worker started at the same moment may bind the free port the
check picked before the worker does: the worker then cannot bind it, and what answers there is
not its REST API (a broker answers a GET with Kafka bytes).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import harness.certify._context as context_module
from harness.certify._checks import CheckFailed
from reference_connectors.filestream.certify import FileStreamSourceDriver
from tests.certify._support import context_for


@pytest.fixture
def kafka_like_port() -> Iterator[int]:
    """A port whose listener answers anything with bytes that are not HTTP (as a broker does)."""
    server = socket.create_server(("127.0.0.1", 0))
    done = threading.Event()

    def serve() -> None:
        server.settimeout(0.2)
        while not done.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.recv(1024)
                conn.sendall(b"d\x00\x00\x00\n")

    thread = threading.Thread(target=serve, name="kafka-like")
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        done.set()
        thread.join(5)
        server.close()


def test_a_taken_rest_port_starts_the_worker_on_another(
    tmp_path: Path, kafka_bootstrap: str, kafka_like_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    ports = [kafka_like_port]
    real = context_module.free_port
    monkeypatch.setattr(context_module, "free_port", lambda: ports.pop() if ports else real())
    ctx = context_for(tmp_path, FileStreamSourceDriver, kafka_bootstrap, "OFF-02")
    with ctx.standalone({}) as worker:
        assert worker.rest.get("/").status == 200
        assert not worker.rest.url.endswith(f":{kafka_like_port}")
    first = (tmp_path / "standalone-1.log").read_text()
    assert "Address already in use" in first  # the first one could not bind it


def test_a_worker_that_cannot_start_still_fails_with_its_log(
    tmp_path: Path, kafka_bootstrap: str
) -> None:
    ctx = context_for(tmp_path, FileStreamSourceDriver, kafka_bootstrap, "OFF-02")
    with (
        pytest.raises(CheckFailed, match="exited with code"),
        ctx.standalone(
            {},
            {"bootstrap.servers": kafka_bootstrap},  # no converters: refused at once
        ),
    ):
        pass
