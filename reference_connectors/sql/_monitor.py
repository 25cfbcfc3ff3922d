"""The table monitor: a thread of the source connector that notices created and dropped tables."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from cdk import ConnectException, RetriableException
from reference_connectors.sql._connection import ConnectionSettings, translate_error
from reference_connectors.sql._reflect import list_tables

__all__ = ["TableFilter", "TableMonitor", "find_tables"]

log = logging.getLogger(__name__)


class TableFilter:
    """Which tables are copied: ``table.whitelist`` / ``table.blacklist`` (exact names)."""

    def __init__(self, whitelist: list[str], blacklist: list[str]) -> None:
        self.whitelist = {t.strip() for t in whitelist if t.strip()}
        self.blacklist = {t.strip() for t in blacklist if t.strip()}

    def __call__(self, table: str) -> bool:
        if self.whitelist:
            return table in self.whitelist
        return table not in self.blacklist


def find_tables(
    settings: ConnectionSettings, schema: str | None, types: list[str], keep: TableFilter
) -> list[str]:
    """The tables to copy, sorted.

    Raises:
        RetriableException: the database is unreachable for now.
        ConnectException: any other problem (named).
    """
    if settings.missing_database_file():
        raise ConnectException(f"Listing tables: {settings.missing_database_file()}")
    with settings.connect("listing tables") as connection:
        try:
            names = list_tables(connection, schema, types)
        except ConnectException:
            raise
        except Exception as exc:  # noqa: BLE001 - every driver error is translated
            raise translate_error(exc, "listing tables", settings) from None
    return [name for name in names if keep(name)]


class TableMonitor:
    """Lists the tables every ``interval_s`` and calls ``on_change`` when the list changes.

    Args:
        lister: returns the current tables (raises Retriable/ConnectException).
        tables: the tables known at start.
        interval_s: seconds between two lists.
        on_change: called (on the monitor thread) after the list changed.
        on_error: called with a fatal error (the monitor stops).
        name: the thread's name.
    """

    def __init__(
        self,
        lister: Callable[[], list[str]],
        tables: list[str],
        interval_s: float,
        on_change: Callable[[], None],
        on_error: Callable[[ConnectException], None],
        name: str,
    ) -> None:
        self._lister = lister
        self._tables = list(tables)
        self._interval_s = interval_s
        self._on_change = on_change
        self._on_error = on_error
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    @property
    def tables(self) -> list[str]:
        with self._lock:
            return list(self._tables)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout_s: float = 5.0) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout_s)

    def _run(self) -> None:
        while not self._stop.wait(self._interval_s):
            try:
                tables = self._lister()
            except RetriableException as exc:
                log.info("Table monitor: %s (trying again)", exc)
                continue
            except ConnectException as exc:
                if not self._stop.is_set():
                    log.error("Table monitor failed: %s", exc)
                    self._on_error(exc)
                return
            with self._lock:
                before, self._tables = self._tables, tables
            if tables != before and not self._stop.is_set():
                added = sorted(set(tables) - set(before))
                removed = sorted(set(before) - set(tables))
                log.info(
                    "Tables changed (added %s, removed %s): reconfiguring the tasks",
                    added,
                    removed,
                )
                self._on_change()
