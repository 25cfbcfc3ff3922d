"""``config.action.reload``: restart a connector when a config provider's values expire.

As Kafka's ``WorkerConfigTransformer``: when a connector's configuration is resolved and a
provider gave a path a time-to-live, a connector whose ``config.action.reload`` is
``restart`` (the default) is restarted that many milliseconds later, so that it reads the
new values (and regenerates its task configs, which restarts the tasks whose configs changed).
``none`` leaves it running with the old values.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping

__all__ = ["CONFIG_RELOAD_ACTION_CONFIG", "ConfigReloads"]

log = logging.getLogger("cdk.runtime.herder")

CONFIG_RELOAD_ACTION_CONFIG = "config.action.reload"


class ConfigReloads:
    """The scheduled reloads of a herder's connectors, one timer per connector and path.

    Args:
        restart: restarts a connector by name (runs on the timer's thread).
    """

    def __init__(self, restart: Callable[[str], None]) -> None:
        self._restart = restart
        self._lock = threading.Lock()
        self._timers: dict[tuple[str, str], threading.Timer] = {}
        self._closed = False

    def schedule(self, name: str, config: Mapping[str, str], ttls: Mapping[str, int]) -> None:
        """Schedule the restart of connector ``name`` for each path of ``ttls`` (in ms).

        Nothing is scheduled when the connector's ``config.action.reload`` is ``none``; a path
        already scheduled for this connector is scheduled again with its new TTL.
        """
        action = str(config.get(CONFIG_RELOAD_ACTION_CONFIG, "restart")).strip().lower()
        if action != "restart" or not ttls:
            return
        with self._lock:
            if self._closed:
                return
            for path, ttl in ttls.items():
                previous = self._timers.pop((name, path), None)
                if previous is not None:
                    previous.cancel()
                timer = threading.Timer(ttl / 1000.0, self._fire, (name, path))
                timer.name = f"cdk-config-reload-{name}"
                timer.daemon = True
                self._timers[(name, path)] = timer
                timer.start()
                log.info(
                    "[%s|worker] Scheduled a restart of connector %s in %d ms: the values of "
                    "path '%s' expire (config.action.reload=restart)",
                    name,
                    name,
                    ttl,
                    path,
                )

    def _fire(self, name: str, path: str) -> None:
        with self._lock:
            timer = self._timers.get((name, path))
            if self._closed or timer is None or timer is not threading.current_thread():
                return
            del self._timers[(name, path)]
        log.info(
            "[%s|worker] Restarting connector %s: the config provider's values of path '%s' "
            "expired (config.action.reload=restart)",
            name,
            name,
            path,
        )
        try:
            self._restart(name)
        except Exception as exc:  # noqa: BLE001 - deleted, herder stopping: logged, never raised
            log.warning("[%s|worker] Could not restart connector %s: %s", name, name, exc)

    def cancel(self, name: str) -> None:
        """Cancel the reloads scheduled for connector ``name`` (deleted or stopped)."""
        with self._lock:
            for key in [k for k in self._timers if k[0] == name]:
                self._timers.pop(key).cancel()

    def close(self) -> None:
        """Cancel every scheduled reload; none is scheduled afterwards."""
        with self._lock:
            self._closed = True
            timers, self._timers = list(self._timers.values()), {}
        for timer in timers:
            timer.cancel()
