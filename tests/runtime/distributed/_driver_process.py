"""A distributed driver in a process of its own, its workers on threads (kill -9 and SIGSTOP).

Usage: ``python -m tests.runtime.distributed._driver_process <properties.json> [workers]``

Prints ``READY <rest url> <driver id>`` once started and a leader is known, then runs until SIGTERM
or SIGINT (a clean stop). Its log goes to stderr.
"""

from __future__ import annotations

import json
import logging
import signal
import sys
import threading
from pathlib import Path

from cdk.runtime import DistributedWorker
from tests.runtime.distributed._thread_placement import ThreadPlacement


def main(properties: str, workers: int) -> None:
    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s %(message)s",
    )
    props = json.loads(Path(properties).read_text(encoding="utf-8"))
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    driver = DistributedWorker(props, placement=ThreadPlacement(workers), cluster_id_timeout=0)
    driver.start()
    driver.await_leader(60)  # this one or another: writes can be answered from here on
    print(f"READY {driver.rest_url} {driver.driver_id}", flush=True)
    try:
        while not stop.wait(0.5):
            pass
    finally:
        driver.stop()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1)
