"""Distributed mode's workers as threads of the test process (what Spark hosts in production).

:class:`ThreadPlacement` runs a driver's :class:`~cdk.runtime.distributed.ClusterWorker`\\ s on
threads: the same workers the Spark placement runs on executors, following the same topics, so
the herder's tests need no JVM. A test can freeze a worker's heartbeats (as a machine that hangs:
its tasks go on, the leader stops hearing from it), stop one (it leaves cleanly) and start it
again.
"""

from __future__ import annotations

import socket
import threading
import time

from cdk.runtime._status import ConnectorTaskId
from cdk.runtime.distributed import ClusterWorker, WorkerSpec

__all__ = ["ThreadPlacement"]


class ThreadPlacement:
    """Hosts ``workers`` cluster workers on threads.

    Args:
        workers: how many workers this driver hosts.
    """

    def __init__(self, workers: int = 2) -> None:
        self.count = workers
        self.spec: WorkerSpec | None = None
        self.cluster_workers: list[ClusterWorker | None] = [None] * workers
        self._threads: list[threading.Thread | None] = [None] * workers
        self.ended: list[str] = []

    # -- TaskPlacement ---------------------------------------------------------------------------
    def start(self, spec: WorkerSpec) -> None:
        self.spec = spec
        for index in range(self.count):
            self.start_worker(index)

    def workers(self) -> int | None:
        return self.count

    def close(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        for thread in self._threads:
            if thread is not None:
                thread.join(max(deadline - time.monotonic(), 0.0))
        for index, thread in enumerate(self._threads):
            worker = self.cluster_workers[index]
            if thread is not None and thread.is_alive() and worker is not None:
                worker.stop()  # its driver's stop record did not reach it in time
                thread.join(30)

    # -- for tests -------------------------------------------------------------------------------
    def worker_id(self, index: int) -> str:
        assert self.spec is not None
        return f"w{index}.{self.spec.driver}@{socket.gethostname()}:driver"

    def start_worker(self, index: int) -> ClusterWorker:
        assert self.spec is not None
        worker = ClusterWorker(self.spec, self.worker_id(index))
        thread = threading.Thread(
            target=self._run, args=(worker,), name=f"cluster-worker-{index}", daemon=True
        )
        self.cluster_workers[index] = worker
        self._threads[index] = thread
        thread.start()
        return worker

    def stop_worker(self, index: int, timeout_s: float = 60.0) -> None:
        worker, thread = self.cluster_workers[index], self._threads[index]
        if worker is not None and thread is not None:
            worker.stop()
            thread.join(timeout_s)

    def freeze(self, index: int) -> None:
        worker = self.cluster_workers[index]
        assert worker is not None
        worker.heartbeats_paused.set()

    def running(self, connector: str) -> list[ConnectorTaskId]:
        """The tasks of ``connector`` the workers run now, by task number."""
        found = [
            tid
            for worker in self.cluster_workers
            if worker is not None
            for tid in worker.task_ids
            if tid.connector == connector
        ]
        return sorted(found, key=lambda t: t.task)

    def _run(self, worker: ClusterWorker) -> None:
        self.ended.append(worker.run())
