"""A task placement for the distributed herder's tests: each task of a generation on a thread.

It stands where the Spark placement runs its jobs, and runs each task with the same
executor-side runner a Spark task runs (:func:`cdk.spark._executor.run_task`: the standalone
runner with the offset and status topics, following the config and status topics to know when
its generation ends or pauses). Only Spark itself is left out, so the herder's tests stay fast;
the Spark placement has its own tests (tests/spark).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from cdk.runtime.distributed._placement import PlacementListener, TaskGeneration
from cdk.runtime.isolation._plugins import Plugins
from cdk.spark._executor import run_task
from cdk.spark._spec import TaskSpec, extra_plugin_paths, worker_props_without_spark

log = logging.getLogger("tests.thread_placement")


class _Run:
    def __init__(self, generation: TaskGeneration) -> None:
        self.generation = generation
        self.threads: list[threading.Thread] = []
        self.failures: dict[int, str] = {}
        self.lock = threading.Lock()
        self.left = 0

    def ended(self) -> bool:
        return all(not t.is_alive() for t in self.threads)


class ThreadPlacement:
    """Runs each task of a generation on a thread with the executor-side runner.

    Args:
        worker_props: the distributed worker properties (the same as the driver's).
        plugins: the driver's plugin registry.
        slots: what :meth:`slots` answers (``None``: unknown).
    """

    def __init__(
        self,
        worker_props: Mapping[str, Any],
        plugins: Plugins | None = None,
        *,
        slots: int | None = None,
    ) -> None:
        self._props = worker_props_without_spark(worker_props)
        self._extra = extra_plugin_paths(plugins.extra if plugins is not None else ())
        self._slots = slots
        self._listener: PlacementListener | None = None
        self._lock = threading.Lock()
        self._runs: dict[str, list[_Run]] = {}
        self.launched: list[TaskGeneration] = []

    # ------------------------------------------------------------------ TaskPlacement
    def start(self, listener: PlacementListener) -> None:
        self._listener = listener

    def launch(self, generation: TaskGeneration) -> None:
        numbers = [t.task for t in generation.task_ids()]
        spec = TaskSpec(
            connector=generation.connector,
            generation=generation.generation,
            connector_config=dict(generation.connector_config),
            task_configs={n: dict(generation.task_configs[n]) for n in numbers},
            target_state=generation.target_state.value,
            worker_props=self._props,
            extra_plugins=self._extra,
            status_offsets=self._status_end_offsets(),
            graceful_timeout_ms=int(self._props.get("task.shutdown.graceful.timeout.ms", 5000)),
        )
        run = _Run(generation)
        run.left = len(numbers)
        run.threads = [
            threading.Thread(
                target=self._run,
                args=(run, spec, n),
                name=f"placement-{generation.connector}-{n}",
                daemon=True,
            )
            for n in numbers
        ]
        with self._lock:
            self._runs.setdefault(generation.connector, []).append(run)
            self.launched.append(generation)
        for thread in run.threads:
            thread.start()

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

    @staticmethod
    def _await(runs: list[_Run], timeout_s: float) -> bool:
        ended = True
        for run in runs:
            for thread in run.threads:
                thread.join(timeout_s)
                ended = ended and not thread.is_alive()
        return ended  # a thread cannot be cancelled: it goes on as a daemon

    def running(self, connector: str) -> list[TaskGeneration]:
        """The generations of ``connector`` with a task still running."""
        with self._lock:
            return [r.generation for r in self._runs.get(connector, []) if not r.ended()]

    # ------------------------------------------------------------------ the "executor"
    def _run(self, run: _Run, spec: TaskSpec, number: int) -> None:
        try:
            run_task(spec, number)
        except Exception as exc:
            log.exception("Task %s-%d failed on its thread", spec.connector, number)
            with run.lock:
                run.failures[number] = f"{type(exc).__name__}: {exc}"
        finally:
            with run.lock:
                run.left -= 1
                last = run.left == 0
            if last and self._listener is not None:
                gen = run.generation
                self._listener.generation_ended(gen.connector, gen.generation, run.failures)

    def _status_end_offsets(self) -> dict[int, int]:
        from confluent_kafka import Consumer, TopicPartition

        topic = str(self._props["status.storage.topic"])
        consumer = Consumer(
            {"bootstrap.servers": self._props["bootstrap.servers"], "group.id": "thread-placement"}
        )
        try:
            metadata = consumer.list_topics(topic, timeout=30).topics[topic]
            return {
                p: max(consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1], 0)
                for p in metadata.partitions
            }
        finally:
            consumer.close()
