"""A task placement for the distributed herder's tests: each generation on a thread.

It stands where the Spark placement runs its jobs: each generation gets an "executor" of its own
(a :class:`Worker` with its own status, offset and config-topic clients, as a Spark task has),
runs its tasks there, and ends them the way the placement contract says: by what it reads in
the config and status topics (a later ``commit-``, a connector tombstone, a
``status-connector-`` UNASSIGNED written with its generation or a later one), never by a call
from the herder. PAUSED/STARTED target
states read from the config topic pause and resume the tasks in place.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Mapping
from typing import Any

from cdk.runtime._config_secrets import resolve_variables
from cdk.runtime._config_store import KafkaConfigBackingStore
from cdk.runtime._distributed_config import DistributedConfig
from cdk.runtime._kafka_offset_store import KafkaOffsetBackingStore
from cdk.runtime._placement import PlacementListener, TaskGeneration
from cdk.runtime._plugins import Plugins
from cdk.runtime._status import State, TargetState
from cdk.runtime._status_store import KafkaStatusBackingStore
from cdk.runtime._worker import Worker

log = logging.getLogger("tests.thread_placement")

_EXECUTOR_IDS = itertools.count()


class _Run:
    def __init__(self, generation: TaskGeneration) -> None:
        self.generation = generation
        self.cancel = threading.Event()
        self.done = threading.Event()
        self.thread: threading.Thread | None = None
        self.failures: dict[int, str] = {}


class ThreadPlacement:
    """Runs generations on threads, each with executor-side clients of the three topics.

    Args:
        worker_props: the distributed worker properties (the same as the driver's).
        plugins: the plugin registry.
        slots: what :meth:`slots` answers (``None``: unknown).
    """

    def __init__(
        self,
        worker_props: Mapping[str, Any],
        plugins: Plugins | None = None,
        *,
        slots: int | None = None,
    ) -> None:
        self._props = dict(worker_props)
        self._plugins = plugins or Plugins()
        self._slots = slots
        self._listener: PlacementListener | None = None
        self._lock = threading.Lock()
        self._runs: dict[str, list[_Run]] = {}
        self.launched: list[TaskGeneration] = []

    # ------------------------------------------------------------------ TaskPlacement
    def start(self, listener: PlacementListener) -> None:
        self._listener = listener

    def launch(self, generation: TaskGeneration) -> None:
        run = _Run(generation)
        run.thread = threading.Thread(
            target=self._run, args=(run,), name=f"placement-{generation.connector}", daemon=True
        )
        with self._lock:
            self._runs.setdefault(generation.connector, []).append(run)
            self.launched.append(generation)
        run.thread.start()

    def await_end(self, connector: str, timeout_s: float) -> bool:
        with self._lock:
            runs = list(self._runs.get(connector, []))
        return self._await(runs, timeout_s)

    def slots(self) -> int | None:
        return self._slots

    def close(self, timeout_s: float) -> None:
        with self._lock:
            runs = [r for rs in self._runs.values() for r in rs]
        self._await(runs, timeout_s)

    def _await(self, runs: list[_Run], timeout_s: float) -> bool:
        ended = True
        for run in runs:
            if not run.done.wait(timeout_s):
                ended = False
                run.cancel.set()
                run.done.wait(timeout_s + 10)
        return ended

    def running(self, connector: str) -> list[TaskGeneration]:
        """The generations of ``connector`` still running."""
        with self._lock:
            return [r.generation for r in self._runs.get(connector, []) if not r.done.is_set()]

    # ------------------------------------------------------------------ the "executor"
    def _run(self, run: _Run) -> None:
        gen = run.generation
        name = gen.connector
        executor_id = f"thread-executor-{next(_EXECUTOR_IDS)}"
        config = DistributedConfig(self._props, plugins=self._plugins)
        servers = config.bootstrap_servers
        status = KafkaStatusBackingStore(config.status_topic, servers, create=False)
        offsets = KafkaOffsetBackingStore(config.offset_topic, servers)
        configs = KafkaConfigBackingStore(config.config_topic, servers, create=False)
        worker: Worker | None = None
        try:
            status.start()
            configs.start()
            status.set_generation(name, gen.generation)
            worker = Worker(config, self._plugins, offsets, status, worker_id=executor_id)
            worker.start()
            originals = config.originals()
            props = resolve_variables(originals, gen.connector_config)
            for task_id in gen.task_ids():
                task_props = resolve_variables(originals, gen.task_configs[task_id.task])
                worker.start_task(task_id, props, task_props, gen.target_state)
            target = gen.target_state
            while not run.cancel.wait(0.05):
                snapshot = configs.refresh()
                if snapshot.generations.get(name, -1) > gen.generation:
                    break
                if name not in snapshot.connector_configs:
                    break
                now = status.connector_with_generation(name)
                if (
                    now is not None
                    and now[0].state is State.UNASSIGNED
                    and now[1] >= gen.generation
                ):
                    break  # the herder shut down
                wanted = snapshot.target_state(name) or TargetState.STARTED
                if wanted is not target and wanted is not TargetState.STOPPED:
                    worker.set_tasks_target_state(name, wanted)
                    target = wanted
            if run.cancel.is_set():
                for task_id in gen.task_ids():
                    run.failures[task_id.task] = "cancelled after the graceful timeout"
                worker.stop_tasks(worker.task_ids(), timeout_s=0.0)
        except Exception as exc:
            log.exception("Generation %d of %s failed", gen.generation, name)
            for task_id in gen.task_ids():
                run.failures[task_id.task] = f"{type(exc).__name__}: {exc}"
        finally:
            if worker is not None:
                worker.stop()  # graceful: each task commits and reports UNASSIGNED
            status.stop()
            configs.stop()
            run.done.set()
            if self._listener is not None:
                self._listener.generation_ended(name, gen.generation, dict(run.failures))
