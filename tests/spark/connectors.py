"""Source tasks with Spark-specific faults for the placement tests (public API + PySpark)."""

from __future__ import annotations

import os
import signal
import threading
import time

from cdk.api import SourceRecord
from tests.connectors.generator import GeneratorSourceTask

__all__ = ["KillingSourceTask", "StuckSourceTask"]

KILL_AFTER = "kill.after"
KILL_ALWAYS = "kill.always"
KILL_SIGNAL = "kill.signal"
KILL_ONCE_FILE = "kill.once.file"


def _attempt() -> int:
    from pyspark import TaskContext

    context = TaskContext.get()
    return 0 if context is None else context.attemptNumber()


class KillingSourceTask(GeneratorSourceTask):
    """A generator task whose Python worker exits (``os._exit``) on its first Spark attempt.

    It dies once it emitted ``kill.after`` records and at least 1.5 s passed since it started
    (so that some offsets were committed first, with ``offset.flush.interval.ms`` below that).
    With ``kill.always=true`` it dies at its first poll on every attempt (Spark's retries run
    out). With ``kill.signal=KILL`` the process is killed with SIGKILL (``kill -9``) instead.
    With ``kill.once.file`` it dies only while that file does not exist (it creates it first):
    once in all, whichever worker runs it (the first attempt of another worker's job too).
    """

    def start(self, props: dict[str, str]) -> None:
        super().start(props)
        self._kill_after = int(props.get(KILL_AFTER, "-1"))
        self._started_at = time.monotonic()
        self._polled = 0
        self._always = props.get(KILL_ALWAYS) == "true"
        self._sigkill = props.get(KILL_SIGNAL) == "KILL"
        self._once = props.get(KILL_ONCE_FILE)

    def poll(self) -> list[SourceRecord] | None:
        if self._always:
            os._exit(18)
        if (
            self._kill_after >= 0
            and self._polled >= self._kill_after
            and time.monotonic() - self._started_at > 1.5
            and _attempt() == 0
            and self._first_kill()
        ):
            if self._sigkill:
                os.kill(os.getpid(), signal.SIGKILL)  # kill -9 of the Python worker
            os._exit(17)  # the Python worker dies mid-stream, as when its executor is lost
        records = super().poll()
        self._polled += len(records or ())
        return records

    def _first_kill(self) -> bool:
        if self._once is None:
            return True
        try:
            with open(self._once, "x", encoding="utf-8") as marker:
                marker.write(f"{os.getpid()} {self._polled}\n")
        except FileExistsError:
            return False
        return True


class StuckSourceTask(GeneratorSourceTask):
    """A task whose ``poll`` ignores ``stop()`` for up to two minutes (overruns any timeout)."""

    def poll(self) -> list[SourceRecord] | None:
        threading.Event().wait(120)
        return None
