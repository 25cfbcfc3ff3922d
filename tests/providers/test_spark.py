"""The Spark providers of the harness on real Spark: local[N], a standalone cluster, containers."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition

from cdk.errors import ConfigException
from cdk.spark import distributed_worker
from harness.providers._docker import dockerd_installed, ping
from harness.providers._spark_standalone import session_members
from harness.providers.spark import (
    ExternalSpark,
    LocalSpark,
    SparkProvider,
    StandaloneSpark,
    TestcontainersSpark,
    spark_provider,
)
from tests._wait import wait_until
from tests.integration._support import (
    all_keys,
    generator_config,
    make_topic,
    reading,
    recording_config,
    unique,
)
from tests.spark.test_distributed_e2e import SPARK_TIMEOUT, driver_props, wait_states

pyspark = pytest.importorskip("pyspark", reason="pyspark is not installed (the spark extra)")

#: every test here starts Spark (tests/conftest.py marks only tests/spark by its folder)
pytestmark = pytest.mark.spark


def _square_sum(provider: SparkProvider, app: str) -> int:
    """Run a 2-partition job on ``provider`` (a new session, stopped after) and return its sum."""
    session = provider.session(app)
    try:
        rdd = session.sparkContext.parallelize(range(100), 2)
        return int(rdd.map(lambda x: x * x).sum())
    finally:
        session.stop()


@pytest.mark.parametrize(
    ("spec", "kind", "master"),
    [
        ("local", LocalSpark, "local[2]"),
        ("local[3]", LocalSpark, "local[3]"),
        ("spark://10.0.0.1:7077", ExternalSpark, "spark://10.0.0.1:7077"),
        ("yarn", ExternalSpark, "yarn"),
    ],
)
def test_spark_provider_by_name(spec: str, kind: type[SparkProvider], master: str) -> None:
    provider = spark_provider(spec)
    assert isinstance(provider, kind)
    assert provider.master_url == master


def test_spark_provider_names_the_cluster_kinds() -> None:
    standalone = spark_provider("standalone[3]")
    assert isinstance(standalone, StandaloneSpark)
    assert standalone.cores == 3
    containers = spark_provider("testcontainers")
    assert isinstance(containers, TestcontainersSpark)
    assert containers.cores == 2


@pytest.mark.parametrize("spec", ["", "locall", "standalone[0]", "spark:/x", "local[x]"])
def test_spark_provider_rejects_unknown_specs(spec: str) -> None:
    with pytest.raises(ConfigException, match="spark provider") as caught:
        spark_provider(spec)
    assert "local[N], standalone[N], testcontainers[N]" in str(caught.value) or "[" in spec


def test_a_cluster_not_started_says_so() -> None:
    with pytest.raises(Exception, match="not started: call start"):
        _ = StandaloneSpark(2).master_url


def test_driver_properties_point_at_the_cluster(spark_local: LocalSpark) -> None:
    props = spark_local.spark_properties()
    assert props["spark.master"] == "local[2]"
    assert props["spark.pyspark.python"] == sys.executable
    assert props["spark.driver.host"] == "127.0.0.1"


def test_local_runs_a_job(spark_local: LocalSpark) -> None:
    assert _square_sum(spark_local, "local-job") == sum(x * x for x in range(100))


def _group_alive(session: int) -> bool:
    return bool(session_members(session))


def test_cluster_runs_a_job_and_a_killed_worker_rejoins(spark_cluster: StandaloneSpark) -> None:
    assert spark_cluster.master_url.startswith("spark://127.0.0.1:")
    assert len(spark_cluster.alive_workers()) == 2
    expected = sum(x * x for x in range(100))
    assert _square_sum(spark_cluster, "cluster-job") == expected

    worker = spark_cluster.workers[0]
    assert worker.proc is not None
    pgid = worker.proc.pid
    gone = worker.address
    spark_cluster.kill_worker(0)
    # the worker JVM and everything it started (executors, Python workers) are gone
    assert not _group_alive(pgid)
    assert gone not in spark_cluster.alive_workers()
    assert len(spark_cluster.alive_workers()) == 1

    spark_cluster.start_worker(0)
    assert spark_cluster.workers[0].starts == 2
    assert spark_cluster.workers[0].address in spark_cluster.alive_workers()
    assert len(spark_cluster.alive_workers()) == 2
    assert _square_sum(spark_cluster, "cluster-job-again") == expected
    assert "--- start 2" in spark_cluster.workers[0].log_path.read_text()


def test_cluster_stop_takes_every_process(tmp_path_factory: pytest.TempPathFactory) -> None:
    cluster = StandaloneSpark(1, workdir=tmp_path_factory.mktemp("spark-stop"))
    with cluster:
        assert cluster.master_state()["status"] == "ALIVE"
        worker = cluster.workers[0]
        assert worker.proc is not None
        groups = [worker.proc.pid]
    assert not any(_group_alive(g) for g in groups)
    assert not cluster.running


ENGINE_ANSWERS = any(
    ping(host)
    for host in filter(None, [os.environ.get("DOCKER_HOST"), "unix:///var/run/docker.sock"])
)


@pytest.fixture(scope="module")
def spark_containers() -> Iterator[TestcontainersSpark]:
    """A master and 2 workers of 2 task slots each in containers, shared by the module's tests
    (the distributed pipeline's 2 source tasks and its sink need 3 slots)."""
    with TestcontainersSpark(2, cores=2) as cluster:
        yield cluster


@pytest.mark.docker
@pytest.mark.xdist_group("exclusive")
# the first run builds the image (debootstrap, ~2 min); each container copies it (vfs storage)
@pytest.mark.timeout(900)
@pytest.mark.skipif(
    not dockerd_installed() and not ENGINE_ANSWERS,
    reason="no Docker engine answers and dockerd is not installed (apt-get install docker.io)",
)
def test_containers_run_a_job_and_a_killed_worker_rejoins(
    spark_containers: TestcontainersSpark,
) -> None:
    assert spark_containers.image is not None
    assert _square_sum(spark_containers, "containers-job") == sum(x * x for x in range(100))
    spark_containers.kill_worker(0)
    assert len(spark_containers.alive_workers()) == 1
    spark_containers.start_worker(0)
    assert len(spark_containers.alive_workers()) == 2


@pytest.mark.docker
@pytest.mark.xdist_group("exclusive")
@pytest.mark.timeout(1200)
@pytest.mark.skipif(
    not dockerd_installed() and not ENGINE_ANSWERS,
    reason="no Docker engine answers and dockerd is not installed (apt-get install docker.io)",
)
def test_the_pipeline_runs_on_spark_containers(
    spark_containers: TestcontainersSpark, kafka_bootstrap: str, tmp_path: Path
) -> None:
    """Source -> topic -> sink with every task in a Spark container (the sink writes inside its
    container, so what it consumed is read from its consumer group's committed offsets)."""
    topic = make_topic(kafka_bootstrap, partitions=2)
    spark = spark_containers
    props = driver_props(kafka_bootstrap, spark)
    with distributed_worker(props, rest=False, cluster_id_timeout=0) as worker:
        # the containers' executors register one by one: a worker per core of both
        wait_until(
            lambda: len(worker.herder.workers()) >= spark.cores,
            SPARK_TIMEOUT,
            0.5,
            lambda: f"{spark.cores} workers, have {sorted(worker.herder.workers())}",
        )
        # names of their own: the session's broker keeps the groups of earlier tests' sinks
        source, sink = unique("src"), unique("sink")
        group = f"connect-{sink}"
        worker.herder.create_connector(
            source, generator_config(topic, records=500, partitions=2, tasks_max=2)
        )
        worker.herder.create_connector(sink, recording_config(topic, tmp_path / "store"))
        status = wait_states(worker, source, "RUNNING", ["RUNNING", "RUNNING"])
        assert all(t["worker_id"].rpartition(":")[2].isdigit() for t in status["tasks"])
        with reading(kafka_bootstrap, topic) as reader:
            keys = reader.wait_for_keys(all_keys(2, 500), timeout=SPARK_TIMEOUT)
        wait_until(
            lambda: _committed(kafka_bootstrap, group, topic) >= 1000,
            SPARK_TIMEOUT,
            0.5,
            lambda: (
                f"the sink's commits, have {_committed(kafka_bootstrap, group, topic)}; "
                f"its status: {worker.herder.connector_status(sink)}"
            ),
        )
    assert set(keys) == set(all_keys(2, 500))


def _committed(bootstrap: str, group: str, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        offsets = consumer.committed([TopicPartition(topic, p) for p in (0, 1)], timeout=10)
    finally:
        consumer.close()
    return sum(max(0, tp.offset) for tp in offsets)


def test_another_process_attaches_and_restarts_a_worker(spark_cluster: StandaloneSpark) -> None:
    before = spark_cluster.workers[1].pid
    script = (
        "import sys; from harness.providers.spark import StandaloneSpark\n"
        "cluster = StandaloneSpark.attach(sys.argv[1])\n"
        "cluster.kill_worker(1)\n"
        "assert len(cluster.alive_workers()) == 1\n"
        "cluster.start_worker(1)\n"
        "cluster.stop()\n"  # an attached cluster's stop stops nothing
    )
    subprocess.run(
        [sys.executable, "-c", script, str(spark_cluster.workdir)], check=True, timeout=180
    )
    assert not _group_alive(before)
    assert len(spark_cluster.alive_workers()) == 2
    spark_cluster.kill_worker(1)  # the owner controls the worker another process started
    assert len(spark_cluster.alive_workers()) == 1
    spark_cluster.start_worker(1)
    assert spark_cluster.workers[1].alive
