"""Connectors that fail the distributed checks (OFF-09, RST-06, RBL-05, RBL-06), and drivers.

- ``IgnoresOffsetsDriver`` (from ``off``): reads every table from the first row whatever
  offset is stored, so a task rescheduled after its Spark worker died re-sends everything
  (OFF-09) and so does a restarted driver's (RST-06).
- ``StaleLockDriver``: each task takes a lock file next to the database in ``start()`` and
  refuses to start while it exists; a task killed with its Spark worker never releases it, so
  its successor fails (RBL-05, OFF-09).
- ``OneTaskDriver`` (from ``rbl``): ignores ``max_tasks`` (RBL-06).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import ClassVar

from typing_extensions import override

from cdk import ConnectException, SourceTask
from tests.certify.broken._sqlite_base._source import SqliteSourceConnector, SqliteSourceTask
from tests.certify.broken._sqlite_base.certify import SqliteSourceDriver
from tests.certify.broken.off import IgnoresOffsetsDriver
from tests.certify.broken.rbl import OneTaskDriver

__all__ = ["IgnoresOffsetsDriver", "OneTaskDriver", "StaleLockDriver"]


class _StaleLockTask(SqliteSourceTask):
    _lock: Path | None = None

    @override
    def start(self, props: dict[str, str]) -> None:
        tables = props.get("tables", "")
        name = f"{Path(props['connection.url']).name}.{abs(hash(tables))}.lock"
        lock = Path(props["connection.url"]).parent / name
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            raise ConnectException(f"another task holds {lock}") from None
        os.close(fd)
        self._lock = lock
        super().start(props)

    @override
    def stop(self) -> None:
        super().stop()
        if self._lock is not None:
            self._lock.unlink(missing_ok=True)


class StaleLockSqliteSourceConnector(SqliteSourceConnector):
    """Each task holds a lock file while it runs: a task that dies leaves it behind."""

    @override
    def task_class(self) -> type[SourceTask]:
        return _StaleLockTask


class StaleLockDriver(SqliteSourceDriver):
    connector: ClassVar[type] = StaleLockSqliteSourceConnector
