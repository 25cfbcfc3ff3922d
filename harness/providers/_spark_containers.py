"""A Spark standalone cluster in Docker containers, through testcontainers.

A master container and N worker containers, all on the host network, each listening on a free
loopback port, so a driver on this machine reaches them as it reaches a local cluster. The
image is the official ``apache/spark:<pyspark version>`` where it is present or a registry
answers and its Python has the driver's minor version (PySpark needs the same on both sides);
otherwise ``local/spark:<version>-py<X.Y>`` is built once (kept by the engine) as
``reference/docker.md`` measured: a Debian root file system from ``debootstrap`` with Java 17
and Python, the driver's pyspark package copied in, and ``docker import``. The executors import
the kit and the connector from the driver's own site-packages and project folders, mounted
read-only at the same paths. Ryuk is not used: :meth:`TestcontainersSpark.stop` removes every
container it started.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

from typing_extensions import Self, override

from cdk.errors import ConnectException, MissingExtraError
from cdk.kafka import free_port
from harness.providers._docker import DockerEngine
from harness.providers._spark_base import SparkProvider, fetch_json, spark_home, spark_version

__all__ = ["TestcontainersSpark", "spark_image"]

_log = logging.getLogger("harness.providers.spark")

#: Where the image keeps Spark (the pyspark package) and the Python path of the executors.
_PYLIB = "/opt/pylib"
_CONTAINER_PYTHON = "/usr/bin/python3"
_DEBIAN_SUITE = "bookworm"  # its python3 is 3.11
_DEFAULT_MIRROR = "http://deb.debian.org/debian"


def spark_image() -> str:
    """The name of the locally built image: ``local/spark:<pyspark version>-py<X.Y>``."""
    return f"local/spark:{spark_version()}-py{sys.version_info[0]}.{sys.version_info[1]}"


def official_image() -> str:
    """The official image of the installed pyspark's version."""
    return f"apache/spark:{spark_version()}"


class TestcontainersSpark(SparkProvider):
    """A standalone master and ``workers`` worker containers on a Docker engine.

    Args:
        workers: how many worker containers.
        cores: cores per worker.
        memory: memory per worker for its executors.
        image: the image; chosen as the module docstring says when ``None``.
        engine: the Docker engine; one is found or started (and stopped on :meth:`stop`)
            when ``None``.
        mounts: host folders the executors import from (mounted read-only at the same path and
            put on their ``PYTHONPATH``); the driver's site-packages and the folders of ``cdk``
            and ``harness`` when ``None``.
        startup_timeout: seconds to wait for the master, then the workers.
    """

    __test__ = False  # not a pytest test class despite its name
    name = "testcontainers"

    def __init__(
        self,
        workers: int = 2,
        *,
        cores: int = 1,
        memory: str = "1g",
        image: str | None = None,
        engine: DockerEngine | None = None,
        mounts: list[str] | None = None,
        startup_timeout: float = 180.0,
    ) -> None:
        if workers < 1 or cores < 1:
            raise ValueError(f"a cluster needs workers >= 1 and cores >= 1 ({workers}, {cores})")
        self._count = workers
        self.worker_cores = cores
        self.worker_memory = memory
        self._image = image
        self._engine = engine
        self._own_engine = engine is None
        self._mounts = mounts
        self.startup_timeout = startup_timeout
        self.image: str | None = None
        self._master: Any = None
        self._workers: list[Any] = []
        self._master_port = 0
        self._webui_port = 0
        self._started = False

    @property
    @override
    def master_url(self) -> str:
        if not self._master_port:
            raise self._not_started()
        return f"spark://127.0.0.1:{self._master_port}"

    @property
    @override
    def cores(self) -> int:
        return self._count * self.worker_cores

    @property
    @override
    def running(self) -> bool:
        return self._started

    @override
    def executor_python(self) -> str:
        return _CONTAINER_PYTHON

    @override
    def executor_environment(self) -> dict[str, str]:
        return {"PYTHONPATH": os.pathsep.join(self.mounts())}

    def mounts(self) -> list[str]:
        """The host folders the executors import from."""
        if self._mounts is not None:
            return list(self._mounts)
        import cdk
        import harness

        folders = [p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir()]
        for package in (cdk, harness):
            folders.append(str(Path(package.__file__ or "").resolve().parent.parent))
        return list(dict.fromkeys(folders))

    @override
    def start(self) -> Self:
        if self._started:
            return self
        try:
            from testcontainers.core.container import DockerContainer  # noqa: F401
        except ImportError as exc:
            raise MissingExtraError(
                "The testcontainers Spark provider", "testcontainers", "testcontainers"
            ) from exc
        if self._engine is None:
            self._engine = DockerEngine()
        try:
            self._engine.start()
            self.image = self._image or self._choose_image()
            self._master_port, self._webui_port = free_port(), free_port()
            self._master = self._run(
                [
                    "org.apache.spark.deploy.master.Master",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(self._master_port),
                    "--webui-port",
                    str(self._webui_port),
                ]
            )
            self._wait(lambda: self.master_state().get("status") == "ALIVE", "the master")
            self._workers = [None] * self._count
            for index in range(self._count):
                self.start_worker(index, wait=False)
            self._wait(lambda: len(self.alive_workers()) >= self._count, "the workers")
            self._started = True
        except BaseException:
            self.stop()
            raise
        _log.info("Spark containers (%s): %s", self.image, self.master_url)
        return self

    @override
    def stop(self) -> None:
        for container in [*self._workers, self._master]:
            if container is not None:
                with contextlib.suppress(Exception):  # already gone
                    container.stop()
        self._workers = []
        self._master = None
        self._started = False
        self._master_port = self._webui_port = 0
        if self._own_engine and self._engine is not None:
            self._engine.stop()
            self._engine = None

    def kill_worker(self, index: int, *, wait: bool = True, timeout: float = 60.0) -> None:
        """SIGKILL worker container ``index`` (everything in it) and remove it."""
        container = self._workers[index]
        if container is None:
            return
        self._workers[index] = None
        before = self.alive_workers()
        with contextlib.suppress(Exception):
            container.get_wrapped_container().kill()
        with contextlib.suppress(Exception):
            container.stop()
        if wait:
            self._wait(
                lambda: len(self.alive_workers()) < len(before), "a worker to leave", timeout
            )

    def start_worker(self, index: int, *, wait: bool = True, timeout: float = 120.0) -> None:
        """Start worker container ``index`` (a no-op when it runs); with ``wait``, until ALIVE."""
        if self._workers[index] is not None:
            return
        before = len(self.alive_workers())
        self._workers[index] = self._run(
            [
                "org.apache.spark.deploy.worker.Worker",
                self.master_url,
                "--host",
                "127.0.0.1",
                "--port",
                str(free_port()),
                "--webui-port",
                str(free_port()),
                "--cores",
                str(self.worker_cores),
                "--memory",
                self.worker_memory,
                "--work-dir",
                "/tmp/spark-work",
            ]
        )
        if wait:
            self._wait(lambda: len(self.alive_workers()) > before, "the worker", timeout)

    def master_state(self) -> dict[str, Any]:
        """The master's JSON status; empty when it is silent."""
        answer = fetch_json(f"http://127.0.0.1:{self._webui_port}/json/")
        return answer if isinstance(answer, dict) else {}

    def alive_workers(self) -> set[str]:
        """The ``host:port`` of every worker the master lists as ALIVE."""
        return {
            f"{w.get('host')}:{w.get('port')}"
            for w in self.master_state().get("workers", [])
            if w.get("state") == "ALIVE"
        }

    # ------------------------------------------------------------------ internals
    def _run(self, arguments: list[str]) -> Any:
        from testcontainers.core.config import testcontainers_config
        from testcontainers.core.container import DockerContainer

        assert self._engine is not None
        assert self.image is not None
        home = self._container_spark_home()
        container = DockerContainer(
            self.image,
            docker_client_kw={"environment": self._engine.environment()},
            network_mode="host",
            entrypoint=[f"{home}/bin/spark-class"],
        )
        container.with_command(arguments)
        env = {
            "SPARK_HOME": home,
            "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_NO_DAEMONIZE": "1",
            "SPARK_DAEMON_MEMORY": "256m",
            "SPARK_DAEMON_JAVA_OPTS": "-Dspark.worker.timeout=20",
            "PYSPARK_PYTHON": _CONTAINER_PYTHON,
            "PYTHONPATH": os.pathsep.join(self.mounts()),
        }
        for key, value in env.items():
            container.with_env(key, value)
        for folder in self.mounts():
            container.with_volume_mapping(folder, folder, "ro")
        previous = testcontainers_config.ryuk_disabled
        testcontainers_config.ryuk_disabled = True  # the reaper image cannot be pulled
        try:
            container.start()
        finally:
            testcontainers_config.ryuk_disabled = previous
        return container

    def _container_spark_home(self) -> str:
        if self.image is not None and self.image.startswith("apache/spark"):
            return "/opt/spark"
        return f"{_PYLIB}/pyspark"

    def _wait(self, condition: Any, what: str, timeout: float | None = None) -> None:
        limit = self.startup_timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        while not condition():
            for container in [self._master, *self._workers]:
                if container is not None and _status(container) in ("exited", "dead"):
                    raise ConnectException(
                        f"A Spark container ({self.image}) exited while waiting for {what}; "
                        f"its output:\n{_logs(container)}"
                    )
            if time.monotonic() > deadline:
                raise ConnectException(
                    f"Timed out after {limit:g}s waiting for {what} of the Spark containers "
                    f"({self.image}); the master's output:\n{_logs(self._master)}"
                )
            time.sleep(0.2)

    def _choose_image(self) -> str:
        assert self._engine is not None
        client = self._engine.client()
        try:
            official = official_image()
            if _usable_official(client, official):
                return official
            return _build_image(client)
        finally:
            client.close()

    def __repr__(self) -> str:
        where = self.master_url if self._master_port else "not started"
        return f"TestcontainersSpark({self.image or self._image or 'auto'}, {where})"


def _status(container: Any) -> str:
    with contextlib.suppress(Exception):
        wrapped = container.get_wrapped_container()
        wrapped.reload()
        return str(wrapped.status)
    return "unknown"


def _logs(container: Any) -> str:
    if container is None:
        return "(no container)"
    try:
        out, err = container.get_logs()
    except Exception as exc:  # noqa: BLE001 - diagnostics only
        return f"(no logs: {exc})"
    text = (out or b"").decode("utf-8", "replace") + (err or b"").decode("utf-8", "replace")
    return "\n".join(text.rstrip().splitlines()[-30:]) or "(no output)"


def _usable_official(client: Any, image: str) -> bool:
    """Whether the official image is here (or pulled) and runs the driver's Python minor."""
    from docker.errors import DockerException, ImageNotFound

    from harness.providers.kafka import registry_answers

    try:
        client.images.get(image)
    except ImageNotFound:
        if not registry_answers():
            return False
        try:
            repository, tag = image.rsplit(":", 1)
            client.images.pull(repository, tag=tag)
        except DockerException as exc:
            _log.info("could not pull %s (%s); building an image here", image, exc)
            return False
    want = f"{sys.version_info[0]}.{sys.version_info[1]}"
    try:
        out = client.containers.run(
            image,
            ["python3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            entrypoint=[],
            remove=True,
        )
    except DockerException as exc:
        _log.info("%s has no usable python3 (%s); building an image here", image, exc)
        return False
    found = out.decode().strip()
    if found != want:
        _log.info("%s runs Python %s, the driver %s; building an image here", image, found, want)
        return False
    return True


def _build_image(client: Any) -> str:
    """Build :func:`spark_image` unless the engine has it: Debian, Java 17, the driver's pyspark."""
    from docker.errors import ImageNotFound

    name = spark_image()
    with contextlib.suppress(ImageNotFound):
        client.images.get(name)
        return name
    debootstrap = shutil.which("debootstrap") or "/usr/sbin/debootstrap"
    if not os.access(debootstrap, os.X_OK):
        raise ConnectException(
            f"The Spark image {name} must be built here (no registry answers) and debootstrap "
            "is missing: apt-get install -y debootstrap"
        )
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="cdk-spark-image-") as tmp:
        rootfs = Path(tmp) / "rootfs"
        _run(
            [
                debootstrap,
                "--variant=minbase",
                "--include=openjdk-17-jre-headless,python3,procps",
                _DEBIAN_SUITE,
                str(rootfs),
                _debian_mirror(),
            ],
            "debootstrap",
        )
        pylib = rootfs / _PYLIB.lstrip("/")
        pylib.mkdir(parents=True)
        home = spark_home()
        shutil.copytree(home, pylib / "pyspark", symlinks=True)
        import py4j  # type: ignore[import-untyped]

        shutil.copytree(Path(py4j.__file__).resolve().parent, pylib / "py4j", symlinks=True)
        archive = Path(tmp) / "rootfs.tar"
        with tarfile.open(archive, "w") as tar:
            tar.add(str(rootfs), arcname=".")
        shutil.rmtree(rootfs, ignore_errors=True)
        repository, tag = name.rsplit(":", 1)
        client.api.import_image_from_file(
            str(archive),
            repository=repository,
            tag=tag,
            changes=[f"ENV PYTHONPATH={_PYLIB}", f"ENV SPARK_HOME={_PYLIB}/pyspark"],
        )
    _log.info("built %s in %.0fs", name, time.monotonic() - started)
    return name


def _debian_mirror() -> str:
    """The Debian mirror of this machine's apt sources (deb.debian.org when none is found)."""
    sources = [Path("/etc/apt/sources.list"), *Path("/etc/apt/sources.list.d").glob("*")]
    for path in sources:
        with contextlib.suppress(OSError):
            for line in path.read_text().splitlines():
                words = line.split()
                for word in words:
                    if word.startswith("http") and word.rstrip("/").endswith("/debian"):
                        return word.rstrip("/")
    return _DEFAULT_MIRROR


def _run(command: list[str], what: str) -> None:
    result = subprocess.run(command, capture_output=True, check=False, timeout=1200)
    if result.returncode != 0:
        output = (result.stdout + result.stderr).decode("utf-8", "replace")
        tail = "\n".join(output.rstrip().splitlines()[-20:])
        raise ConnectException(f"{what} failed with code {result.returncode}:\n{tail}")
