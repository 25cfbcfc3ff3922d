"""``/admin/loggers`` (KIP-495) and ``GET /`` over HTTP, as Kafka Connect 3.9 answers them.

Kafka's shapes: the listing maps each logger with an explicit level (and ``root``) to
``{"level", "last_modified"}``, sorted by name; ``PUT`` answers the sorted names it set
(``?scope=cluster``: 204, standalone being its own cluster); an unknown logger and an invalid
level are 404 with Kafka's texts, a body without ``level`` is 400.
"""

from __future__ import annotations

import logging
import subprocess
import time
from collections.abc import Callable, Iterator

import pytest

from cdk.runtime._loggers import kafka_level_name
from tests.integration._support import REPO_ROOT, Connect, unique


@pytest.fixture
def restore_levels() -> Iterator[None]:
    """Put every logger's level back as it was (the tests change process-wide levels)."""
    manager = logging.Logger.manager
    before = {
        name: lg.level
        for name, lg in manager.loggerDict.copy().items()
        if isinstance(lg, logging.Logger)
    }
    root_level = logging.getLogger().level
    yield
    for name, lg in manager.loggerDict.copy().items():
        if isinstance(lg, logging.Logger):
            lg.setLevel(before.get(name, logging.NOTSET))
    logging.getLogger().setLevel(root_level)


@pytest.fixture
def worker(connect: Callable[..., Connect], restore_levels: None) -> Connect:
    return connect()


def test_set_and_read_levels(worker: Connect) -> None:
    http = worker.rest.http
    logging.getLogger().setLevel(logging.WARNING)  # known effective levels (restored after)
    base = unique("cdk.test.loggers").replace("-", "_")
    child = logging.getLogger(f"{base}.child")
    child.setLevel(logging.ERROR)  # explicitly set: listed, and PUT on the parent resets it
    unrelated = logging.getLogger(f"{base}_sibling")  # shares the prefix, not a descendant
    unrelated.setLevel(logging.WARNING)

    listing = http.get("/admin/loggers").json()
    assert list(listing) == sorted(listing)
    assert set(listing["root"]) == {"level", "last_modified"}
    assert listing["root"]["level"] == kafka_level_name(logging.getLogger().level)
    assert listing[f"{base}.child"] == {"level": "ERROR", "last_modified": None}
    assert base not in listing  # no explicit level

    before = int(time.time() * 1000)
    r = http.put(f"/admin/loggers/{base}", json={"level": "debug"})
    assert r.status_code == 200, r.text
    assert r.json() == [base, f"{base}.child"]  # the namespace and its descendants, sorted
    assert logging.getLogger(base).level == logging.DEBUG
    assert child.level == logging.DEBUG
    assert unrelated.level == logging.WARNING

    one = http.get(f"/admin/loggers/{base}").json()
    assert one["level"] == "DEBUG"
    assert before <= one["last_modified"] <= int(time.time() * 1000)
    listing = http.get("/admin/loggers").json()
    assert listing[base] == one
    assert listing[f"{base}.child"]["level"] == "DEBUG"

    # every Kafka level maps to Python's and back
    for kafka, python in [
        ("TRACE", 5),
        ("INFO", logging.INFO),
        ("WARN", logging.WARNING),
        ("ERROR", logging.ERROR),
        ("FATAL", logging.CRITICAL),
        ("OFF", logging.CRITICAL + 1),
    ]:
        assert http.put(f"/admin/loggers/{base}", json={"level": kafka}).status_code == 200
        assert child.level == python
        assert http.get(f"/admin/loggers/{base}.child").json()["level"] == kafka

    # a logger without a level of its own reads as its effective level
    grandchild = logging.getLogger(f"{base}.child.grand")
    assert grandchild.level == logging.NOTSET
    assert http.get(f"/admin/loggers/{base}.child.grand").json() == {
        "level": "OFF",
        "last_modified": None,
    }


def test_java_logger_names_and_scopes(worker: Connect) -> None:
    http = worker.rest.http
    name = f"org.apache.kafka.connect.runtime.{unique('WorkerSourceTask').replace('-', '_')}"
    assert http.get(f"/admin/loggers/{name}").status_code == 404  # not created yet
    r = http.put(f"/admin/loggers/{name}?scope=worker", json={"level": "TRACE"})
    assert (r.status_code, r.json()) == (200, [name])
    assert logging.getLogger(name).level == 5
    assert http.get(f"/admin/loggers/{name}").json()["level"] == "TRACE"

    r = http.put(f"/admin/loggers/{name}?scope=cluster", json={"level": "INFO"})
    assert (r.status_code, r.content) == (204, b"")
    assert logging.getLogger(name).level == logging.INFO
    # an unknown scope falls back to the worker, as in Kafka
    r = http.put(f"/admin/loggers/{name}?scope=galaxy", json={"level": "ERROR"})
    assert (r.status_code, r.json()) == (200, [name])


def test_root_sets_every_logger(worker: Connect) -> None:
    http = worker.rest.http
    some = logging.getLogger(unique("cdk.test.root").replace("-", "_"))
    some.setLevel(logging.DEBUG)
    # a logger without a level whose effective level is already the new one is left as it
    # is (Kafka 3.9 skips those too), so the test checks the effective levels
    plain = logging.getLogger(unique("cdk.test.plain").replace("-", "_"))
    r = http.put("/admin/loggers/ROOT", json={"level": "ERROR"})
    assert r.status_code == 200, r.text
    names = r.json()
    assert "root" in names
    assert some.name in names
    assert names == sorted(names)
    assert logging.getLogger().level == logging.ERROR
    assert some.level == logging.ERROR
    assert plain.getEffectiveLevel() == logging.ERROR
    assert http.get("/admin/loggers/root").json()["level"] == "ERROR"


def test_errors_have_kafka_texts(worker: Connect) -> None:
    http = worker.rest.http
    name = unique("no.such.logger")
    r = http.get(f"/admin/loggers/{name}")
    assert r.status_code == 404
    assert r.json() == {"error_code": 404, "message": f"Logger {name} not found."}
    r = http.put("/admin/loggers/cdk", json={"level": "LOUD"})
    assert r.status_code == 404  # Kafka's LoggingResource answers an unknown level with 404
    assert r.json() == {"error_code": 404, "message": "invalid log level 'LOUD'."}
    r = http.put("/admin/loggers/cdk", json={"lvl": "INFO"})
    assert r.status_code == 400
    assert r.json() == {
        "error_code": 400,
        "message": "Desired 'level' parameter was not specified in request.",
    }
    r = http.put("/admin/loggers/cdk", content=b'{"level": "INFO"}')
    assert r.status_code == 415  # JSON only, as Kafka's @Consumes


def test_root_reports_version_and_commit(worker: Connect) -> None:
    from cdk import __version__

    body = worker.rest.http.get("/").json()
    assert set(body) == {"version", "commit", "kafka_cluster_id"}
    assert body["version"] == __version__
    if not (REPO_ROOT / ".git").exists():
        assert body["commit"] == "unknown" or len(body["commit"]) == 16
        return
    # the tests run from the kit's git checkout (make venv installs it editable)
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert body["commit"] == head[:16]
    assert isinstance(body["kafka_cluster_id"], str)
    assert body["kafka_cluster_id"]
