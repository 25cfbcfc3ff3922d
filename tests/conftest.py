"""Shared test configuration.

Hypothesis: no per-example deadline (timing on a loaded 2-core CI machine is not what the
properties test); in CI (``CI=true``) the examples are derandomized so every run checks the same
cases, while local runs keep exploring new ones.
"""

from __future__ import annotations

import importlib.util
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from cdk.kafka import EmbeddedKafka
from harness.providers._spark_cds import ARCHIVE_TIMEOUT_S, archive_options, class_data_archive
from harness.providers.spark import LocalSpark, StandaloneSpark
from harness.providers.tls import TlsKafka
from tests._tls import TlsFiles, make_tls_files

settings.register_profile(
    "ci",
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.register_profile("dev", deadline=None, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


#: The seed of every certification run of the kit's own tests (CI sees the same values each
#: time); a test that wants another passes --seed.
CERTIFY_SEED = "20261128"


@pytest.fixture(autouse=True, scope="session")
def _fixed_certify_seed() -> Iterator[None]:
    """``CDK_CERTIFY_SEED`` for the session (and the ``cdk certify`` subprocesses it starts)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CDK_CERTIFY_SEED", CERTIFY_SEED)
        yield


#: The JVMs the tests start (Spark drivers, masters, workers, executors) compile with the client
#: compiler only and collect with one thread: they live seconds to minutes, where the server
#: compiler's work never pays back. Measured on 2 cores (tests/spark/test_ds_cluster.py and
#: test_placement.py): 81 s of CPU and 76 s wall without, 55 s and 66 s with. Set for the whole
#: session (subprocesses inherit it); a value already in the environment is kept.
TEST_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
os.environ.setdefault("JAVA_TOOL_OPTIONS", TEST_JVM_OPTIONS)

#: The class-data archive of Spark's classes (harness/providers/_spark_cds.py) is made once per
#: machine (~20 s of CPU), in the background of the first test session; a session with Spark
#: tests waits for it before the first one and gives it to every JVM (JAVA_TOOL_OPTIONS).
_archive_maker: threading.Thread | None = None


#: The pytest-xdist group of the tests that need something only one test at a time may use.
EXCLUSIVE_GROUP = "exclusive"


#: Why a test must not run as collected (it would share what only one test may use at a time).
_MISPLACED = pytest.StashKey[str]()


@pytest.hookimpl(trylast=True)  # after pytest-xdist's own, which appends the groups to node ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests that would share what only one test may use at a time: they fail at setup.

    - A test marked ``docker`` must be in the exclusive xdist group: the machine has one Docker
      engine (harness/providers/_docker.py starts and stops it), so its tests run one after another
      on one worker (``@pytest.mark.xdist_group("exclusive")``).
    - On an xdist worker with ``--dist loadgroup``, every grouped test's node id must end with
      ``@group``, which is how pytest-xdist tells its scheduler. On pytest 9.2 that no longer
      takes (pytest-xdist issue 1386) and the groups would be silently ignored;
      .ci/constraints.txt keeps pytest below 9.2.

    (They fail at setup rather than stopping the collection: an error raised while a worker
    collects reaches the terminal as a bare pytest-xdist crash, without its message.)
    """
    loadgroup = getattr(config.option, "loadgroup", False)
    for item in items:
        groups = _xdist_groups(item)
        if item.get_closest_marker("docker") is not None and EXCLUSIVE_GROUP not in groups:
            item.stash[_MISPLACED] = (
                f'a test marked docker needs @pytest.mark.xdist_group("{EXCLUSIVE_GROUP}") too'
            )
        elif loadgroup and groups and not item.nodeid.endswith("@" + "_".join(sorted(groups))):
            item.stash[_MISPLACED] = (
                f"--dist loadgroup does not group on pytest {pytest.__version__} with this "
                "pytest-xdist (pytest-xdist issue 1386), so this test would run next to others "
                "of its group: install what .ci/constraints.txt allows (make venv), or run "
                "with PYTEST_WORKERS=0"
            )

    _slowest_first(items)


#: What each scheduling unit of the suite took (seconds, on 2 cores with make test's workers):
#: an xdist group by its name, an ungrouped test by its node id. Written by
#: ``make test-durations``; a unit it does not list counts as quick.
DURATIONS_FILE = Path(__file__).with_name("durations.json")
#: Units that took less than this keep their place in the collection order.
_SLOW_UNIT_S = 5.0


def _scope(nodeid: str) -> str:
    """The unit pytest-xdist's ``--dist loadgroup`` schedules a test in (its own split)."""
    if nodeid.rfind("@") > nodeid.rfind("]"):
        return nodeid.split("@")[-1]
    return nodeid


def _slowest_first(items: list[pytest.Item]) -> None:
    """Put the slowest scheduling units first, each unit's tests together, the rest as collected.

    ``make test`` runs with ``--no-loadscope-reorder``: pytest-xdist would otherwise order the
    units by how many tests they hold, and a unit of one long test (a full certification on a
    Spark cluster, 5 minutes) would start last and end the phase alone. Longest first, the
    workers finish together (measured on the Spark phase: see the note of the change).
    """
    try:
        costs: dict[str, float] = json.loads(DURATIONS_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    first_seen: dict[str, int] = {}
    for index, item in enumerate(items):
        first_seen.setdefault(_scope(item.nodeid), index)

    def order(indexed: tuple[int, pytest.Item]) -> tuple[float, int, int]:
        index, item = indexed
        scope = _scope(item.nodeid)
        cost = costs.get(scope, 0.0)
        slow = cost if cost >= _SLOW_UNIT_S else 0.0
        return (-slow, first_seen[scope] if slow else index, index)

    items[:] = [item for _, item in sorted(enumerate(items), key=order)]


class _Durations:
    """Adds up each scheduling unit's setup, call and teardown times (``--store-durations``)."""

    def __init__(self) -> None:
        self.units: dict[str, float] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        scope = _scope(report.nodeid)
        self.units[scope] = self.units.get(scope, 0.0) + report.duration

    def pytest_sessionfinish(self) -> None:
        try:
            known: dict[str, float] = json.loads(DURATIONS_FILE.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            known = {}
        known.update({k: round(v, 1) for k, v in self.units.items() if v >= _SLOW_UNIT_S / 5})
        DURATIONS_FILE.write_text(json.dumps(known, indent=1, sort_keys=True) + "\n")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--store-durations",
        action="store_true",
        help=f"write what each xdist scheduling unit took to {DURATIONS_FILE.name}",
    )


def pytest_configure(config: pytest.Config) -> None:
    global _archive_maker
    if hasattr(config, "workerinput"):
        return
    # on the controller only: it gets every worker's reports
    if config.getoption("store_durations"):
        config.pluginmanager.register(_Durations(), "cdk-durations")
    if _jvm_options_are_ours() and importlib.util.find_spec("pyspark") is not None:
        _archive_maker = threading.Thread(
            target=class_data_archive,
            args=(TEST_JVM_OPTIONS,),
            name="spark-class-data-archive",
            daemon=True,
        )
        _archive_maker.start()


def pytest_unconfigure(config: pytest.Config) -> None:
    """The archive's job ends before the session does (it starts no process that outlives it)."""
    if _archive_maker is not None:
        _archive_maker.join(ARCHIVE_TIMEOUT_S + 10)


def _jvm_options_are_ours() -> bool:
    return os.environ.get("JAVA_TOOL_OPTIONS") == TEST_JVM_OPTIONS


@pytest.fixture(scope="session", autouse=True)
def _spark_class_archive(request: pytest.FixtureRequest) -> None:
    """Give the session's JVMs the class-data archive of Spark's classes, when it has Spark tests.

    Measured on 2 cores: a standalone cluster running a job and a killed worker rejoining
    (tests/providers/test_spark.py) 31.3 s of CPU and 21.6 s wall without, 21.9 s and 16.0 s
    with. Not when JAVA_TOOL_OPTIONS came from outside the tests (it is kept as it is).
    """
    if not _jvm_options_are_ours():
        return
    if not any(item.get_closest_marker("spark") for item in request.session.items):
        return
    archive = class_data_archive(TEST_JVM_OPTIONS)  # waits while the controller makes it
    if archive is not None:
        os.environ["JAVA_TOOL_OPTIONS"] = f"{TEST_JVM_OPTIONS} {archive_options(archive)}"


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Fail a test that :func:`pytest_collection_modifyitems` found misplaced."""
    reason = item.stash.get(_MISPLACED, None)
    if reason is not None:
        pytest.fail(reason, pytrace=False)


def pytest_itemcollected(item: pytest.Item) -> None:
    """Mark ``spark`` the tests that start Spark (a JVM, a standalone cluster, a pipeline).

    ``make test`` runs them after the others, on 2 xdist workers (``-m "spark and not docker"``;
    those that need Docker run with the others): a dozen Spark JVMs next to the Kafka tests on
    6 workers starve each other on 2 cores. Here rather than in
    :func:`pytest_collection_modifyitems`, which runs after ``-m`` has selected.
    """
    if _starts_spark(item, _xdist_groups(item)):
        item.add_marker(pytest.mark.spark)


#: Modules of tests/spark that need no JVM (the Connect <-> Spark type mapping, the names).
_SPARK_WITHOUT_JVM = {
    "test_ds_schema_map.py",
    "test_ds_spark_api.py",
    "test_ds_options.py",
    "test_ds_arrow.py",
    "test_ds_arrow_write.py",
}


def _starts_spark(item: pytest.Item, groups: set[str]) -> bool:
    """Every test in tests/spark but the JVM-free modules, and any in an xdist group spark*."""
    path = item.path
    if path.parent.name == "spark" and path.parent.parent.name == "tests":
        return path.name not in _SPARK_WITHOUT_JVM
    return any(g.startswith("spark") for g in groups)


def _xdist_groups(item: pytest.Item) -> set[str]:
    return {
        str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
        for mark in item.iter_markers("xdist_group")
    }


@pytest.fixture(scope="session")
def kafka() -> Iterator[EmbeddedKafka]:
    """The session's embedded Tansu broker, started on first use and stopped at the end.

    Its storage is memory only and shared by every test: give each test its own topics.
    """
    with EmbeddedKafka() as broker:
        yield broker


@pytest.fixture(scope="session")
def kafka_bootstrap(kafka: EmbeddedKafka) -> str:
    """The bootstrap servers of the session's embedded broker."""
    return kafka.bootstrap_servers


@pytest.fixture(scope="session")
def tls_kafka() -> Iterator[TlsKafka]:
    """The embedded broker reached over TLS only (``security.protocol=SSL``), once per session."""
    with TlsKafka() as broker:
        yield broker


@pytest.fixture(scope="session")
def mtls_kafka() -> Iterator[TlsKafka]:
    """The embedded broker over TLS requiring client certificates (mutual TLS)."""
    with TlsKafka(client_auth=True) as broker:
        yield broker


@pytest.fixture(scope="session")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> TlsFiles:
    """A throw-away authority with server and client certificates (made once per session)."""
    return make_tls_files(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="session")
def spark_local() -> Iterator[LocalSpark]:
    """Spark in the driver's JVM, ``local[2]`` (skipped when pyspark is not installed)."""
    pytest.importorskip("pyspark", reason="pyspark is not installed (the spark extra)")
    with LocalSpark(2) as spark:
        yield spark


@pytest.fixture(scope="module")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneSpark]:
    """A standalone Spark cluster of 2 one-core workers on loopback, shared by a test module.

    Its workers can be killed and started again (``kill_worker(i)``, ``start_worker(i)``); a
    test that kills one starts it again before it ends, so the next test finds 2 workers. The
    logs stay under the module's temporary folder.
    """
    pytest.importorskip("pyspark", reason="pyspark is not installed (the spark extra)")
    workdir = tmp_path_factory.mktemp("spark-cluster")
    with StandaloneSpark(2, cores=1, memory="1g", workdir=workdir) as cluster:
        yield cluster
