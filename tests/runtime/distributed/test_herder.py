"""The distributed herder on the embedded broker, its workers on threads.

The driver (:class:`DistributedWorker`) keeps everything in the Kafka topics; its workers (the
same :class:`~cdk.runtime.distributed.ClusterWorker` Spark hosts) run the tasks the leader
assigns them. These tests check the herder's and the workers' part: what is written, who runs
what, what a restarted driver recovers, and what a second driver does.
"""

from __future__ import annotations

import logging
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from cdk.errors import ConfigException, ConnectException, NotFoundException
from cdk.runtime._status import TargetState
from cdk.runtime.distributed._worker import DistributedWorker
from cdk.runtime.rest._requests import BadRequestException
from tests._tls import STORE_PASSWORD, TlsFiles
from tests._wait import wait_until
from tests.integration._support import (
    all_keys,
    generator_config,
    make_topic,
    reading,
    recording_config,
    wait_store_keys,
)
from tests.runtime.distributed._support import distributed_props, wait_states
from tests.runtime.distributed._thread_placement import ThreadPlacement
from tests.runtime.storage.test_kafka_stores import _records

Driver = Callable[..., DistributedWorker]


@pytest.fixture
def props(kafka_bootstrap: str) -> dict[str, str]:
    return distributed_props(kafka_bootstrap, prefix="dh")


@pytest.fixture
def driver(props: dict[str, str]) -> Iterator[Driver]:
    """Start drivers on ``props``: ``driver(rest=False, workers=2)``; all stopped at teardown.

    The first one started leads (it is awaited).
    """
    started: list[DistributedWorker] = []

    def start(
        *, rest: bool = False, workers: int = 2, cluster_id_timeout: float = 0
    ) -> DistributedWorker:
        worker = DistributedWorker(
            props,
            placement=ThreadPlacement(workers),
            rest=rest,
            cluster_id_timeout=cluster_id_timeout,
        )
        started.append(worker)
        worker.start()
        assert worker.await_leader(60), "no driver of the cluster took the lead"
        mine = {_placement(worker).worker_id(i) for i in range(workers)}
        wait_until(
            lambda: mine <= set(worker.herder.workers()),
            60,
            message=lambda: f"workers {mine} to heartbeat, have {worker.herder.workers()}",
        )
        return worker

    yield start
    for worker in reversed(started):
        worker.stop()


def _placement(worker: DistributedWorker) -> ThreadPlacement:
    placement = worker.placement
    assert isinstance(placement, ThreadPlacement)
    return placement


# ------------------------------------------------------------------------------ pipelines
def test_source_and_sink_move_every_record_through_the_workers(
    driver: Driver, props: dict[str, str], kafka_bootstrap: str, tmp_path: Path
) -> None:
    topic = make_topic(kafka_bootstrap, partitions=2)
    worker = driver()
    herder = worker.herder
    assert herder.leading
    info = herder.create_connector(
        "src", generator_config(topic, records=40, partitions=2, tasks_max=2, poll_interval_ms=20)
    )
    assert info["tasks"] == [{"connector": "src", "task": 0}, {"connector": "src", "task": 1}]
    herder.create_connector("sink", recording_config(topic, tmp_path / "store"))
    status = wait_states(worker, "src", "RUNNING", ["RUNNING", "RUNNING"])
    wait_states(worker, "sink", "RUNNING", ["RUNNING"])
    assert status["connector"]["worker_id"] == herder.worker_id
    # each task reports the worker that runs it; the two source tasks are spread
    placement = _placement(worker)
    ids = {placement.worker_id(0), placement.worker_id(1)}
    assert {t["worker_id"] for t in status["tasks"]} == ids
    store = wait_store_keys(tmp_path / "store", all_keys(2, 40))
    assert sum(store.keys().values()) == 80  # no loss, no duplicate
    # the config topic reads as a Java cluster's
    keys = [k for _p, k, _v in _records(kafka_bootstrap, props["config.storage.topic"])]
    assert keys[:4] == [b"connector-src", b"task-src-0", b"task-src-1", b"commit-src"]
    assignment = worker.assignments.assignment
    assert assignment is not None
    assigned = sorted(str(t.id) for ts in assignment.workers.values() for t in ts)
    assert assigned == ["sink-0", "src-0", "src-1"]


def test_tasks_max_changes_restart_the_tasks_without_loss(
    driver: Driver, kafka_bootstrap: str
) -> None:
    topic = make_topic(kafka_bootstrap, partitions=1)
    worker = driver()
    herder = worker.herder
    config = generator_config(topic, records=300, partitions=2, poll_interval_ms=30, batch_size=5)
    herder.create_connector("src", config)
    wait_states(worker, "src", "RUNNING", ["RUNNING"])
    first = herder.generation("src")
    with reading(kafka_bootstrap, topic) as reader:
        reader.wait_for(20)
        herder.put_connector_config("src", {**config, "tasks.max": "2"})
        wait_states(worker, "src", "RUNNING", ["RUNNING", "RUNNING"])
        second = herder.generation("src")
        assert second is not None
        assert first is not None
        assert second > first
        wait_until(lambda: len(_placement(worker).running("src")) == 2, 30)
        reader.wait_for(len(reader.messages) + 20)
        herder.put_connector_config("src", {**config, "tasks.max": "1"})
        wait_states(worker, "src", "RUNNING", ["RUNNING"])
        assert (herder.generation("src") or 0) > second
        reader.wait_for(600)
        keys = reader.keys()
    assert set(keys) == set(all_keys(2, 300))
    # graceful ends commit first: a key is seen again only within the uncommitted window
    assert sum(keys.values()) - 600 <= 2 * 300


def test_one_worker_runs_many_tasks_and_two_share_them_evenly(
    driver: Driver, kafka_bootstrap: str
) -> None:
    worker = driver(workers=1)
    herder = worker.herder
    for n in range(5):
        herder.create_connector(
            f"c{n}",
            generator_config(
                make_topic(kafka_bootstrap, partitions=4),
                records=-1,
                partitions=4,
                tasks_max=4,
                poll_interval_ms=500,
            ),
        )
    for n in range(5):
        wait_states(worker, f"c{n}", "RUNNING", ["RUNNING"] * 4)
    placement = _placement(worker)
    only = placement.cluster_workers[0]
    assert only is not None
    assert len(only.task_ids) == 20
    # a second driver's worker joins: half the tasks move to it, one revoke round later
    other = driver(workers=1)
    other_worker = _placement(other).cluster_workers[0]
    assert other_worker is not None
    wait_until(lambda: len(other_worker.task_ids) == 10 and len(only.task_ids) == 10, 60)
    for n in range(5):
        wait_states(worker, f"c{n}", "RUNNING", ["RUNNING"] * 4)


# ------------------------------------------------------------------------------ states
def test_pause_resume_stop_and_delete_go_through_the_config_topic(
    driver: Driver, props: dict[str, str], kafka_bootstrap: str
) -> None:
    topic = make_topic(kafka_bootstrap)
    worker = driver()
    herder = worker.herder
    herder.create_connector("src", generator_config(topic, records=-1, poll_interval_ms=200))
    wait_states(worker, "src", "RUNNING", ["RUNNING"])
    herder.pause_connector("src")
    wait_states(worker, "src", "PAUSED", ["PAUSED"])  # the task paused in place
    herder.resume_connector("src")
    wait_states(worker, "src", "RUNNING", ["RUNNING"])
    with pytest.raises(BadRequestException, match="STOPPED state"):
        herder.reset_connector_offsets("src")
    herder.stop_connector("src")
    wait_states(worker, "src", "STOPPED", [])
    wait_until(lambda: _placement(worker).running("src") == [], 30)
    assert herder.tasks("src") == []
    offsets = herder.connector_offsets("src")["offsets"]
    assert offsets
    assert offsets[0]["partition"] == {"partition": "p0"}
    herder.alter_connector_offsets(
        "src", [{"partition": {"partition": "p0"}, "offset": {"seq": 1000}}]
    )
    assert herder.connector_offsets("src")["offsets"][0]["offset"] == {"seq": 1000}
    herder.resume_connector("src")
    wait_states(worker, "src", "RUNNING", ["RUNNING"])
    herder.delete_connector("src")
    wait_until(lambda: _placement(worker).running("src") == [], 30)
    with pytest.raises(NotFoundException):
        herder.connector_status("src")
    records = _records(kafka_bootstrap, props["config.storage.topic"])
    keys = [(k, v) for _p, k, v in records]
    stop_at = keys.index((b"target-state-src", b'{"state":"PAUSED","state.v2":"STOPPED"}'))
    assert keys[stop_at - 1] == (b"commit-src", b'{"tasks":0}')  # Kafka's stop: empty commit
    assert keys[-2:] == [(b"connector-src", None), (b"target-state-src", None)]
    status_keys = {k: v for _p, k, v in _records(kafka_bootstrap, props["status.storage.topic"])}
    assert status_keys[b"status-connector-src"] is None
    assert status_keys[b"status-task-src-0"] is None


def test_a_restarted_driver_recovers_connectors_states_and_offsets(
    driver: Driver, kafka_bootstrap: str
) -> None:
    topic = make_topic(kafka_bootstrap)
    first = driver()
    herder = first.herder
    herder.create_connector(
        "run", generator_config(topic, records=400, poll_interval_ms=20, batch_size=5)
    )
    herder.create_connector(
        "paused", generator_config(make_topic(kafka_bootstrap), poll_interval_ms=200)
    )
    herder.create_connector(
        "stopped", generator_config(make_topic(kafka_bootstrap), poll_interval_ms=200), "STOPPED"
    )
    herder.pause_connector("paused")
    wait_states(first, "run", "RUNNING", ["RUNNING"])
    wait_states(first, "paused", "PAUSED", ["PAUSED"])
    task_configs = herder.task_configs("run")
    with reading(kafka_bootstrap, topic) as reader:
        reader.wait_for(30)
        first.stop()  # the driver goes away: its workers commit and stop
        assert _placement(first).running("run") == []
        second = driver()
        again = second.herder
        assert again.connectors() == ["run", "paused", "stopped"]
        assert again.target_state("paused") is TargetState.PAUSED
        assert again.target_state("stopped") is TargetState.STOPPED
        assert again.task_configs("run") == task_configs
        wait_states(second, "run", "RUNNING", ["RUNNING"])
        wait_states(second, "paused", "PAUSED", ["PAUSED"])
        wait_states(second, "stopped", "STOPPED", [])
        reader.wait_for(400)
        keys = reader.keys()
    assert set(keys) == set(all_keys(1, 400))
    assert sum(keys.values()) == 400  # resumed from the offsets committed at the clean stop


# ------------------------------------------------------------------------------ failures
def test_a_failed_task_stays_failed_its_sibling_runs_and_a_restart_brings_it_back(
    driver: Driver, kafka_bootstrap: str
) -> None:
    worker = driver()
    herder = worker.herder
    herder.create_connector(
        "src",
        generator_config(
            make_topic(kafka_bootstrap),
            tasks_max=2,
            partitions=2,
            poll_interval_ms=100,
            fail_after=5,
            fail_stream="p1",
        ),
    )
    wait_states(worker, "src", "RUNNING", ["RUNNING", "FAILED"])
    assert "injected failure" in herder.task_status("src", 1)["trace"]
    generation = herder.generation("src")
    plan = herder.restart_connector_and_tasks("src", only_failed=True, include_tasks=True)
    assert [t["state"] for t in plan["tasks"]] == ["RUNNING", "RESTARTING"]
    wait_states(worker, "src", "RUNNING", ["RUNNING", "RUNNING"])
    assert herder.generation("src") == generation, "a restart is not a new generation"
    herder.restart_task("src", 0)
    wait_states(worker, "src", "RUNNING", ["RUNNING", "RUNNING"])
    with pytest.raises(NotFoundException, match="not found"):
        herder.restart_task("src", 5)


def test_a_silent_worker_s_tasks_run_on_the_others(
    driver: Driver, kafka_bootstrap: str, caplog: pytest.LogCaptureFixture
) -> None:
    topic = make_topic(kafka_bootstrap, partitions=2)
    worker = driver(workers=2)
    herder = worker.herder
    with reading(kafka_bootstrap, topic) as reader:
        herder.create_connector(
            "src",
            generator_config(
                topic, tasks_max=2, partitions=2, records=2000, poll_interval_ms=20, batch_size=5
            ),
        )
        wait_states(worker, "src", "RUNNING", ["RUNNING", "RUNNING"])
        placement = _placement(worker)
        reader.wait_for(50)
        with caplog.at_level(logging.WARNING, logger="cdk.runtime.distributed"):
            placement.freeze(0)  # it runs on, the leader no longer hears from it
            survivor = placement.worker_id(1)
            wait_states(worker, "src", "RUNNING", ["RUNNING", "RUNNING"])
            wait_until(
                lambda: (
                    {t["worker_id"] for t in herder.connector_status("src")["tasks"]} == {survivor}
                ),
                30,
            )
        assert any("is gone (no heartbeat" in r.getMessage() for r in caplog.records)
        placement.stop_worker(0)
        reader.wait_for(4000)
        keys = reader.keys()
    assert set(keys) == set(all_keys(2, 2000))


def test_a_standby_driver_forwards_writes_and_takes_over(
    driver: Driver, kafka_bootstrap: str
) -> None:
    topic = make_topic(kafka_bootstrap)
    leader = driver(rest=True, workers=1)
    standby = driver(rest=True, workers=1)
    assert leader.herder.leading
    assert not standby.herder.leading
    assert standby.rest_url is not None
    config = generator_config(topic, records=600, poll_interval_ms=20, batch_size=5)
    with httpx.Client(base_url=standby.rest_url, timeout=60) as http:
        r = http.post("/connectors", json={"name": "src", "config": config})
        assert r.status_code == 201, r.text  # forwarded to the leader
        assert "src" in leader.herder.connectors()
        wait_until(lambda: http.get("/connectors").json() == ["src"], 30)
        wait_states(standby, "src", "RUNNING", ["RUNNING"])
        with reading(kafka_bootstrap, topic) as reader:
            reader.wait_for(50)
            leader.stop()  # a clean stop leaves the group: the standby leads at once
            wait_until(lambda: standby.herder.leading, 30)
            wait_states(standby, "src", "RUNNING", ["RUNNING"])
            assert http.put("/connectors/src/pause").status_code == 202
            wait_states(standby, "src", "PAUSED", ["PAUSED"])
            assert http.put("/connectors/src/resume").status_code == 202
            reader.wait_for(600)
            keys = reader.keys()
    assert set(keys) == set(all_keys(1, 600))


def test_a_standby_driver_forwards_writes_to_an_https_leader(
    driver: Driver, props: dict[str, str], kafka_bootstrap: str, tls_files: TlsFiles
) -> None:
    """HTTPS listeners requiring client certificates: the standby presents its own to forward."""
    props.update(
        {
            "listeners": "https://127.0.0.1:0",
            "listeners.https.ssl.keystore.type": "PKCS12",
            "listeners.https.ssl.keystore.location": str(tls_files.server_p12),
            "listeners.https.ssl.keystore.password": STORE_PASSWORD,
            "listeners.https.ssl.truststore.type": "PEM",
            "listeners.https.ssl.truststore.location": str(tls_files.ca_pem),
            "listeners.https.ssl.client.auth": "required",
        }
    )
    topic = make_topic(kafka_bootstrap)
    leader = driver(rest=True, workers=1)
    standby = driver(rest=True, workers=1)
    assert not standby.herder.leading
    assert leader.rest_url is not None
    assert standby.rest_url is not None
    assert leader.rest_url.startswith("https://")
    assert standby.herder.leader_url == leader.rest_url
    config = generator_config(topic, records=20, poll_interval_ms=20, batch_size=5)
    context = tls_files.client_context(certificate=True)
    with httpx.Client(base_url=standby.rest_url, timeout=60, verify=context) as http:
        r = http.post("/connectors", json={"name": "src", "config": config})
        assert r.status_code == 201, r.text  # forwarded to the leader over HTTPS
        assert "src" in leader.herder.connectors()
        wait_states(standby, "src", "RUNNING", ["RUNNING"])
        assert http.put("/connectors/src/pause").status_code == 202
        wait_states(leader, "src", "PAUSED", ["PAUSED"])
    # a client without a certificate is refused by the standby itself
    with (
        httpx.Client(base_url=standby.rest_url, verify=tls_files.client_context()) as http,
        pytest.raises(httpx.TransportError),
    ):
        http.delete("/connectors/src")


# ------------------------------------------------------------------------------ REST and errors
def test_the_rest_api_serves_the_distributed_herder(driver: Driver, kafka_bootstrap: str) -> None:
    worker = driver(rest=True)
    assert worker.rest_url is not None
    topic = make_topic(kafka_bootstrap)
    with httpx.Client(base_url=worker.rest_url, timeout=30) as http:
        config = generator_config(
            topic, tasks_max=2, partitions=2, poll_interval_ms=200, **{"generator.secret": "s3cr3t"}
        )
        r = http.post("/connectors", json={"name": "src", "config": config})
        assert r.status_code == 201, r.text
        assert r.json()["config"]["generator.secret"] == "[hidden]"
        assert http.post("/connectors", json={"name": "src", "config": config}).status_code == 409
        wait_states(worker, "src", "RUNNING", ["RUNNING", "RUNNING"])
        assert http.get("/connectors").json() == ["src"]
        tasks = http.get("/connectors/src/tasks").json()
        assert [t["id"] for t in tasks] == [{"connector": "src", "task": i} for i in range(2)]
        assert "s3cr3t" not in http.get("/connectors/src/tasks").text
        r = http.post("/connectors/src/restart", params={"includeTasks": "true"})
        assert r.status_code == 202, r.text
        assert r.json()["tasks"][0]["state"] == "RESTARTING"
        wait_states(worker, "src", "RUNNING", ["RUNNING", "RUNNING"])
        assert http.put("/connectors/src/pause").status_code == 202
        wait_states(worker, "src", "PAUSED", ["PAUSED", "PAUSED"])
        assert http.put("/connectors/src/stop").status_code == 204
        wait_states(worker, "src", "STOPPED", [])
        assert http.get("/connectors/src/offsets").json()["offsets"]
        assert http.delete("/connectors/src").status_code == 204
        assert http.get("/connectors/src").status_code == 404


def test_distributed_config_errors_name_the_key(kafka_bootstrap: str) -> None:
    props = distributed_props(kafka_bootstrap, "g")
    del props["status.storage.topic"]
    with pytest.raises(ConfigException, match=r'"status\.storage\.topic"'):
        DistributedWorker(props, placement=ThreadPlacement())
    same = distributed_props(kafka_bootstrap, "g", **{"offset.storage.topic": "g-configs"})
    with pytest.raises(ConfigException, match="four different topics"):
        DistributedWorker(same, placement=ThreadPlacement())
    eos = distributed_props(kafka_bootstrap, "g", **{"exactly.once.source.support": "sometimes"})
    with pytest.raises(ConfigException, match=r"exactly\.once\.source\.support"):
        DistributedWorker(eos, placement=ThreadPlacement())


def test_without_a_placement_the_driver_says_how_to_get_the_spark_one(
    kafka_bootstrap: str,
) -> None:
    worker = DistributedWorker(distributed_props(kafka_bootstrap, prefix="np"), rest=False)
    with pytest.raises(ConnectException, match=r"no task placement.*spark\.distributed_worker"):
        worker.start()


def test_without_pyspark_the_spark_driver_says_what_to_install(
    kafka_bootstrap: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cdk.spark import distributed_worker

    monkeypatch.setitem(sys.modules, "pyspark", None)  # as when the spark extra is missing
    worker = distributed_worker(distributed_props(kafka_bootstrap, prefix="np"), rest=False)
    with pytest.raises(ConnectException, match=r"pip install 'connect-cdk\[spark\]'"):
        worker.start()


def test_replays_the_recorded_kafka_exchanges_in_distributed_mode(
    driver: Driver, tmp_path: Path
) -> None:
    from tests.runtime.rest.test_rest import replay

    worker = driver(rest=True, cluster_id_timeout=10)
    assert worker.rest_url is not None
    with httpx.Client(base_url=worker.rest_url, timeout=30) as client:
        replay(client, tmp_path)


def test_a_sink_created_with_its_source_gets_the_new_topic_s_records_within_seconds(
    driver: Driver, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Source and sink created together on a topic the source is about to create.

    The sink's task starts on its worker before the source's has created the topic: its
    consumer finds the topic missing, and librdkafka looked again only at its next metadata
    refresh (five minutes). The records must arrive within seconds.
    """
    worker = driver(workers=2)
    herder = worker.herder
    topic = f"new-{uuid.uuid4().hex[:10]}"
    source_file, sink_file = tmp_path / "in.txt", tmp_path / "out.txt"
    lines = [f"line {i}" for i in range(20)]
    source_file.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="cdk.runtime.sink"):
        herder.create_connector(
            "sink", {"connector.class": "FileStreamSink", "file": str(sink_file), "topics": topic}
        )
        # its consumer found the topic missing (a slow source makes it so)
        wait_until(
            lambda: f"Subscribed topic not available: {topic}" in caplog.text,
            30,
            message=lambda: "the sink's consumer to find the topic missing; log:\n" + caplog.text,
        )
    herder.create_connector(
        "src", {"connector.class": "FileStreamSource", "file": str(source_file), "topic": topic}
    )

    def written() -> list[str]:
        return sink_file.read_text(encoding="utf-8").splitlines() if sink_file.exists() else []

    wait_until(
        lambda: written() == lines,
        20,
        message=lambda: f"{len(lines)} lines in {sink_file}; written: {written()[-3:]}",
    )


def test_cluster_scope_log_levels_reach_every_driver_and_worker_through_the_config_topic(
    driver: Driver, props: dict[str, str], kafka_bootstrap: str, caplog: pytest.LogCaptureFixture
) -> None:
    """``PUT /admin/loggers/{l}?scope=cluster`` writes Kafka's record; everyone applies it."""
    from confluent_kafka import Producer

    namespace, java_namespace = "acme.cluster.levels", "acme.cluster.java"
    leader = driver(rest=True, workers=1)
    standby = driver(rest=True, workers=1)
    assert standby.rest_url is not None
    try:
        with (
            caplog.at_level(logging.INFO, logger="cdk.runtime.distributed"),
            httpx.Client(base_url=standby.rest_url, timeout=30) as http,
        ):
            response = http.put(
                f"/admin/loggers/{namespace}?scope=cluster", json={"level": "DEBUG"}
            )
            assert response.status_code == 204, response.text  # the standby writes it
            for herder in (leader.herder, standby.herder):
                wait_until(
                    lambda herder=herder: (
                        herder.all_logger_levels().get(namespace, {}).get("level") == "DEBUG"
                    ),
                    30,
                    message=lambda: f"{namespace} at DEBUG on every driver",
                )
                assert herder.all_logger_levels()[namespace]["last_modified"] is not None
            workers = {_placement(d).worker_id(0) for d in (leader, standby)}
            wait_until(
                lambda: (
                    {
                        w
                        for w in workers
                        if f"Worker {w}: setting the level of logger {namespace} to DEBUG"
                        in caplog.text
                    }
                    == workers
                ),
                30,
                message=lambda: "every worker to apply the level; log:\n" + caplog.text,
            )
            got = http.get("/admin/loggers").json()[namespace]
            assert got["level"] == "DEBUG"
            assert isinstance(got["last_modified"], int)
        # Kafka's record, exactly (a Java worker reads it; the kit reads a Java worker's)
        records = [(k, v) for _p, k, v in _records(kafka_bootstrap, props["config.storage.topic"])]
        assert (f"logger-cluster-{namespace}".encode(), b'{"level":"DEBUG"}') in records
        producer = Producer({"bootstrap.servers": kafka_bootstrap})
        producer.produce(
            props["config.storage.topic"],
            key=f"logger-cluster-{java_namespace}".encode(),
            value=b'{"level":"ERROR"}',
        )
        assert producer.flush(30) == 0
        wait_until(
            lambda: (
                logging.getLogger(java_namespace).level == logging.ERROR
                and standby.herder.all_logger_levels().get(java_namespace, {}).get("level")
                == "ERROR"
            ),
            30,
            message="a record written as a Java worker writes it to be applied",
        )
    finally:
        for name in (namespace, java_namespace):
            logging.getLogger(name).setLevel(logging.NOTSET)
