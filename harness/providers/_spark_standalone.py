"""A Spark standalone cluster on loopback, from the pyspark wheel's ``spark-class``.

One master and N workers, each a JVM process in a session of its own, on free ports. A worker's
executor and the executor's Python workers are its descendants, in its session, so
:meth:`StandaloneSpark.kill_worker` takes the whole worker down with one SIGKILL, as a machine
that dies would; :meth:`StandaloneSpark.start_worker` starts it again. The harness waits on the
master's JSON status (``http://127.0.0.1:<web UI port>/json/``) with deadlines, never sleeps.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from typing_extensions import Self, override

from cdk.errors import ConnectException
from cdk.kafka import free_port
from harness.providers._spark_base import SparkProvider, fetch_json, spark_home

__all__ = ["StandaloneSpark", "WorkerProcess", "session_members"]

_log = logging.getLogger("harness.providers.spark")

#: The heap of the master and worker daemons (not the executors): they do little here.
DAEMON_MEMORY = "256m"
#: How long the master waits for a silent worker before it drops it (Spark's default is 60 s;
#: workers heartbeat every quarter of it, so master and workers get the same value). A killed
#: worker is dropped at once, when its connection closes.
WORKER_TIMEOUT_S = 20
#: Workers started by attached clusters in this process (reaped by :func:`_reap`).
_DETACHED: list[subprocess.Popen[bytes]] = []
#: The cluster's state file in its workdir (see :meth:`StandaloneSpark.attach`).
_STATE = "cluster.json"


@dataclass
class WorkerProcess:
    """One worker of a :class:`StandaloneSpark` cluster.

    Attributes:
        index: its number in the cluster (0-based).
        port: the RPC port of its current (or last) run: the master lists it by ``host:port``.
        log_path: its output, every run appended.
        pid: the process id of its JVM (the leader of its session), 0 when it does not run.
        starts: how many times it was started.
        proc: the JVM when this process started it (to reap it), else None.
    """

    index: int
    port: int = 0
    log_path: Path = field(default_factory=Path)
    pid: int = 0
    starts: int = 0
    proc: subprocess.Popen[bytes] | None = None

    @property
    def alive(self) -> bool:
        """Whether its JVM runs."""
        if self.proc is not None and self.proc.pid == self.pid:
            return self.proc.poll() is None
        return bool(self.pid) and self.pid in session_members(self.pid)

    def state(self) -> dict[str, int]:
        """What another process needs to control it (saved next to its log)."""
        return {"pid": self.pid, "port": self.port, "starts": self.starts}

    @property
    def address(self) -> str:
        """``127.0.0.1:<port>``, as the master's worker list shows it."""
        return f"127.0.0.1:{self.port}"


class StandaloneSpark(SparkProvider):
    """A standalone master and ``workers`` workers started from ``$SPARK_HOME/bin/spark-class``.

    Args:
        workers: how many workers.
        cores: cores per worker (task slots each).
        memory: memory per worker for its executors (``1g``).
        workdir: where logs and the workers' scratch folders go (a temporary folder, removed
            on :meth:`stop`, when ``None``).
        startup_timeout: seconds to wait for the master, then for the workers to register.

    The cluster's ports and its workers' process ids are kept in ``workdir``, so another
    process (a ``cdk certify`` check in a child process) can :meth:`attach` to it and kill and
    start workers; the process that started the cluster stops it all, workers started by
    others included.
    """

    name = "standalone"

    def __init__(
        self,
        workers: int = 2,
        *,
        cores: int = 1,
        memory: str = "1g",
        workdir: str | os.PathLike[str] | None = None,
        startup_timeout: float = 90.0,
    ) -> None:
        if workers < 1 or cores < 1:
            raise ValueError(f"a cluster needs workers >= 1 and cores >= 1 ({workers}, {cores})")
        self._count = workers
        self.worker_cores = cores
        self.worker_memory = memory
        self._own_workdir = workdir is None
        self.workdir = Path(workdir) if workdir is not None else Path()
        self.startup_timeout = startup_timeout
        self.workers: list[WorkerProcess] = []
        self._master: subprocess.Popen[bytes] | None = None
        self._master_log: IO[bytes] | None = None
        self._master_port = 0
        self._webui_port = 0
        self._started = False
        self._attached = False

    @classmethod
    def attach(cls, workdir: str | os.PathLike[str]) -> StandaloneSpark:
        _reap()
        """Control the running cluster whose ``workdir`` this is (started by another process).

        :meth:`stop` of the attached object stops nothing: the cluster's owner does.

        Raises:
            ConnectException: no cluster state is in ``workdir``.
        """
        folder = Path(workdir)
        try:
            state = json.loads((folder / _STATE).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConnectException(f"No running Spark cluster in {folder}: {exc}") from exc
        cluster = cls(
            int(state["workers"]),
            cores=int(state["cores"]),
            memory=str(state["memory"]),
            workdir=folder,
        )
        cluster._master_port, cluster._webui_port = state["master_port"], state["webui_port"]
        cluster.workers = [
            WorkerProcess(i, log_path=folder / f"worker-{i}.log") for i in range(cluster._count)
        ]
        for worker in cluster.workers:
            cluster._load(worker)
        cluster._attached = cluster._started = True
        return cluster

    # ------------------------------------------------------------------ the interface
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

    @property
    def webui_url(self) -> str:
        """The master's web UI (its JSON status is at ``/json/``)."""
        if not self._webui_port:
            raise self._not_started()
        return f"http://127.0.0.1:{self._webui_port}"

    @property
    def master_log(self) -> Path:
        """The master's output."""
        return self.workdir / "master.log"

    @override
    def start(self) -> Self:
        if self._started:
            return self
        home = spark_home()
        if self._own_workdir:
            self.workdir = Path(tempfile.mkdtemp(prefix="cdk-spark-"))
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.workers = [
            WorkerProcess(i, log_path=self.workdir / f"worker-{i}.log") for i in range(self._count)
        ]
        try:
            self._start_master(home)
            state = {
                "master_port": self._master_port,
                "webui_port": self._webui_port,
                "workers": self._count,
                "cores": self.worker_cores,
                "memory": self.worker_memory,
            }
            (self.workdir / _STATE).write_text(json.dumps(state), encoding="utf-8")
            for worker in self.workers:
                self._launch_worker(worker)
            self.wait_workers(self._count, timeout=self.startup_timeout)
        except BaseException:
            self.stop()
            raise
        self._started = True
        _log.info("Spark standalone cluster %s with %d workers", self.master_url, self._count)
        return self

    @override
    def stop(self) -> None:
        for worker in self.workers:
            if not self._attached:
                self._load(worker)
                self._kill_session(worker.pid, worker.proc)
                worker.pid, worker.proc = 0, None
        if self._master is not None:
            self._kill_session(self._master.pid, self._master, signal.SIGTERM)
            self._master = None
        if self._attached:
            self._started = False
            return
        _close(self._master_log)
        self._master_log = None
        self._started = False
        self._master_port = self._webui_port = 0
        if self._own_workdir and self.workdir != Path():
            shutil.rmtree(self.workdir, ignore_errors=True)

    # ------------------------------------------------------------------ workers
    def kill_worker(self, index: int, *, wait: bool = True, timeout: float = 60.0) -> None:
        """SIGKILL worker ``index`` with its executor and Python workers (its session).

        With ``wait``, return once the master no longer lists it as ALIVE.
        """
        worker = self._worker(index)
        self._load(worker)
        if not worker.pid:
            return
        self._kill_session(worker.pid, worker.proc)
        worker.pid, worker.proc = 0, None
        self._save(worker)
        _log.info("killed Spark worker %d (%s)", index, worker.address)
        if wait:
            self._wait(
                lambda: worker.address not in self.alive_workers(),
                timeout,
                f"the master to see worker {index} ({worker.address}) gone",
            )

    def start_worker(self, index: int, *, wait: bool = True, timeout: float = 90.0) -> None:
        """Start worker ``index`` again (a no-op when it runs); with ``wait``, until ALIVE."""
        worker = self._worker(index)
        self._load(worker)
        if worker.alive:
            return
        self._launch_worker(worker)
        if wait:
            self._wait(
                lambda: worker.address in self.alive_workers(),
                timeout,
                f"worker {index} ({worker.address}) to register with the master",
                worker,
            )

    def master_state(self) -> dict[str, Any]:
        """The master's JSON status (``workers``, ``activeapps``...); empty when it is silent."""
        answer = fetch_json(f"{self.webui_url}/json/")
        return answer if isinstance(answer, dict) else {}

    def alive_workers(self) -> set[str]:
        """The ``host:port`` of every worker the master lists as ALIVE."""
        return {
            f"{w.get('host')}:{w.get('port')}"
            for w in self.master_state().get("workers", [])
            if w.get("state") == "ALIVE"
        }

    def wait_workers(self, count: int, *, timeout: float = 90.0) -> None:
        """Wait until ``count`` of this cluster's workers are ALIVE on the master."""
        ours = {w.address for w in self.workers}
        self._wait(
            lambda: len(self.alive_workers() & ours) >= count,
            timeout,
            f"{count} workers to register with the master",
        )

    def worker_of_executor(self, executor: str) -> int | None:
        """The index of the worker that runs executor ``executor`` of a running application.

        ``executor`` is Spark's executor id, or a task's ``worker_id`` as the Spark placement
        reports it (``<host>:<executor id>``). A worker runs each executor in
        ``<its work dir>/<app id>/<executor id>``; executor ids restart at 0 in each
        application, so the applications the master lists as running are looked at first,
        the newest first.
        """
        number = executor.rpartition(":")[2]
        if not number.isdigit():
            return None
        active = {app.get("id") for app in self.master_state().get("activeapps", [])}
        found: list[tuple[bool, str, int]] = []
        for worker in self.workers:
            for folder in (self.workdir / f"worker-{worker.index}").glob(f"app-*/{number}"):
                app = folder.parent.name
                found.append((app in active, app, worker.index))
        if not found:
            return None
        return max(found)[2]

    def log_tail(self, lines: int = 30) -> str:
        """The end of the master's and each worker's log, for failure messages."""
        parts = [_tail("master", self.master_log, lines)]
        parts += [_tail(f"worker {w.index}", w.log_path, lines) for w in self.workers]
        return "\n".join(parts)

    # ------------------------------------------------------------------ internals
    def _worker(self, index: int) -> WorkerProcess:
        if not self.workers:
            raise self._not_started()
        if not 0 <= index < len(self.workers):
            raise IndexError(f"no worker {index}: the cluster has {len(self.workers)} workers")
        return self.workers[index]

    def _environment(self, home: Path) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            SPARK_HOME=str(home),
            SPARK_LOCAL_IP="127.0.0.1",
            SPARK_DAEMON_MEMORY=DAEMON_MEMORY,
            SPARK_LOG_DIR=str(self.workdir),
            SPARK_NO_DAEMONIZE="1",
            PYSPARK_PYTHON=self.executor_python(),
            SPARK_DAEMON_JAVA_OPTS=f"-Dspark.worker.timeout={WORKER_TIMEOUT_S}",
        )
        for inherited in ("SPARK_CONF_DIR", "SPARK_MASTER_OPTS", "SPARK_WORKER_OPTS"):
            env.pop(inherited, None)
        return env

    def _start_master(self, home: Path) -> None:
        self._master_port, self._webui_port = free_port(), free_port()
        env = self._environment(home)
        command = [
            str(home / "bin" / "spark-class"),
            "org.apache.spark.deploy.master.Master",
            "--host",
            "127.0.0.1",
            "--port",
            str(self._master_port),
            "--webui-port",
            str(self._webui_port),
        ]
        self._master_log = open(self.master_log, "ab")  # noqa: SIM115 - closed in stop()
        self._master = _spawn(command, self._master_log, env)

        def answers() -> bool:
            if self._master is not None and self._master.poll() is not None:
                raise ConnectException(
                    f"The Spark master exited with code {self._master.returncode}:\n"
                    + _tail("master", self.master_log, 30)
                )
            return self.master_state().get("status") == "ALIVE"

        self._wait(answers, self.startup_timeout, "the Spark master to answer")

    def _launch_worker(self, worker: WorkerProcess) -> None:
        home = spark_home()
        worker.port = free_port()
        scratch = self.workdir / f"worker-{worker.index}"
        scratch.mkdir(exist_ok=True)
        command = [
            str(home / "bin" / "spark-class"),
            "org.apache.spark.deploy.worker.Worker",
            self.master_url,
            "--host",
            "127.0.0.1",
            "--port",
            str(worker.port),
            "--webui-port",
            str(free_port()),
            "--cores",
            str(self.worker_cores),
            "--memory",
            self.worker_memory,
            "--work-dir",
            str(scratch),
        ]
        worker.starts += 1
        with open(worker.log_path, "ab") as log:  # the worker keeps its own descriptor
            log.write(f"--- start {worker.starts} on port {worker.port}\n".encode())
            log.flush()
            worker.proc = _spawn(command, log, self._environment(home))
        if self._attached:
            # the owner stops it; keep the Popen (and reap it when it ends) so that it is
            # never collected while the worker runs
            _DETACHED.append(worker.proc)
        worker.pid = worker.proc.pid
        self._save(worker)

    def _save(self, worker: WorkerProcess) -> None:
        path = self.workdir / f"worker-{worker.index}.json"
        path.write_text(json.dumps(worker.state()), encoding="utf-8")

    def _load(self, worker: WorkerProcess) -> None:
        try:
            state = json.loads(
                (self.workdir / f"worker-{worker.index}.json").read_text(encoding="utf-8")
            )
        except (OSError, ValueError):
            return
        worker.pid, worker.port, worker.starts = state["pid"], state["port"], state["starts"]
        if worker.proc is not None and worker.proc.pid != worker.pid:
            # another process killed it (it is gone: reap it) and started a new one since
            with contextlib.suppress(subprocess.TimeoutExpired):
                worker.proc.wait(timeout=10)
            worker.proc = None

    def _kill_session(
        self, session: int, proc: subprocess.Popen[bytes] | None, sig: int = signal.SIGKILL
    ) -> None:
        """Signal process ``session`` and every process of its session, wait until all are gone.

        PySpark's daemon puts its Python workers in a process group of their own, but they
        stay in the worker's session (started with a session of its own), so the session is
        what is killed: a task must not keep running as an orphan after its worker died.
        """
        if not session:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(session, sig)
        if proc is not None:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(session, signal.SIGKILL)
                proc.wait(timeout=30)
        deadline = time.monotonic() + 30
        while True:
            members = session_members(session)
            if not members:
                return
            if time.monotonic() > deadline:
                _log.warning("processes %s of session %d outlived SIGKILL", members, session)
                return
            for pid in members:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.05)

    def _wait(
        self,
        condition: Any,
        timeout: float,
        what: str,
        worker: WorkerProcess | None = None,
    ) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if worker is not None and worker.proc is not None and worker.proc.poll() is not None:
                raise ConnectException(
                    f"Spark worker {worker.index} exited with code {worker.proc.returncode} "
                    f"while waiting for {what}:\n{_tail('worker', worker.log_path, 30)}"
                )
            if time.monotonic() > deadline:
                raise ConnectException(
                    f"Timed out after {timeout:g}s waiting for {what}; the logs:\n"
                    + self.log_tail(15)
                )
            time.sleep(0.2)

    def __repr__(self) -> str:
        where = self.master_url if self._master_port else "not started"
        return f"StandaloneSpark({where}, {self._count} workers x {self.worker_cores} cores)"


def _reap() -> None:
    """Forget the workers started by attached clusters that have ended (reaping them)."""
    _DETACHED[:] = [proc for proc in _DETACHED if proc.poll() is None]


def session_members(session: int) -> list[int]:
    """The live (not zombie) processes of session ``session`` (Linux ``/proc``; empty elsewhere)."""
    found = []
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else []:
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 3 and fields[0] != "Z" and int(fields[3]) == session:
            found.append(int(entry.name))
    return found


def _spawn(command: list[str], output: IO[bytes], env: dict[str, str]) -> subprocess.Popen[bytes]:
    """Start a daemon in a session (and process group) of its own."""
    return subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=output,
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
    )


def _close(file: IO[bytes] | None) -> None:
    if file is not None:
        with contextlib.suppress(OSError):
            file.close()


def _tail(label: str, path: Path, lines: int) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return f"[{label}: no log]"
    return f"[{label}: {path}]\n" + "\n".join(text.rstrip().splitlines()[-lines:])
