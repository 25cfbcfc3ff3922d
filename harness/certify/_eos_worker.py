"""A distributed worker without Spark, in a process of its own, for the exactly-once check.

Usage: ``python -m harness.certify._eos_worker <properties.json> <connector class path> [--hold]``

It runs a ``cdk distributed`` driver (the herder, the REST API, the state in the Kafka topics)
whose one worker runs on a thread of the same process, as Spark would run it on an executor:
the exactly-once machinery (transactional producers, fencing) is the driver's and the worker's,
not Spark's, so OFF-13 needs no Spark cluster and a ``kill -9`` of this process kills the
driver and its tasks at once. Prints ``READY <rest url>`` once a driver leads; runs until
SIGTERM (a clean stop).
"""

from __future__ import annotations

import json
import logging
import signal
import socket
import sys
import threading
from pathlib import Path

from cdk.config import load_class
from cdk.runtime import DistributedWorker
from cdk.runtime.distributed import ClusterWorker, WorkerSpec

__all__ = ["ThreadPlacement", "main"]


class ThreadPlacement:
    """Hosts one :class:`~cdk.runtime.distributed.ClusterWorker` on a thread."""

    def __init__(self) -> None:
        self._worker: ClusterWorker | None = None
        self._thread: threading.Thread | None = None

    def start(self, spec: WorkerSpec) -> None:
        """Start the worker (the driver's :class:`~cdk.runtime.distributed.TaskPlacement`)."""
        self._worker = ClusterWorker(spec, f"w0.{spec.driver}@{socket.gethostname()}:certify")
        self._thread = threading.Thread(
            target=self._worker.run, name="certify-cluster-worker", daemon=True
        )
        self._thread.start()

    def workers(self) -> int | None:
        """One worker."""
        return 1

    def close(self, timeout_s: float) -> None:
        """Wait for the worker to end (its driver wrote its stop), then stop it."""
        if self._thread is None or self._worker is None:
            return
        self._thread.join(timeout_s)
        if self._thread.is_alive():
            self._worker.stop()
            self._thread.join(30)


def main(properties: str, connector_class: str, *, hold: bool = False) -> None:
    """Run the driver until SIGTERM.

    With ``hold``, the process imports the kit and the connector and makes the driver (none
    of which touches Kafka), prints ``HELD``, and starts it only once a ``go`` line comes on
    its standard input (it ends at once on anything else): a check starts the next worker
    this way while the one before still runs, and the next one's start-up costs no time.
    """
    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s %(message)s",
    )
    props = json.loads(Path(properties).read_text(encoding="utf-8"))
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    loaded = load_class(connector_class)
    plugins = [loaded] if isinstance(loaded, type) else []
    driver = DistributedWorker(
        props, placement=ThreadPlacement(), extra_plugins=plugins, cluster_id_timeout=0
    )
    if hold:
        print("HELD", flush=True)
        if sys.stdin.readline().strip() != "go":
            return
    driver.start()
    try:
        if not driver.await_leader(60):
            print("NO-LEADER", flush=True)
            return
        print(f"READY {driver.rest_url}", flush=True)
        while not stop.wait(0.5):
            pass
    finally:
        driver.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], hold="--hold" in sys.argv[3:])
