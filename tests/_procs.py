"""Processes seen from the tests: whether one still runs, and what a process started (Linux)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["descendants", "process_alive"]


def process_alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")  # a zombie still "exists" for kill(): read its state
    return not (status.exists() and "zombie" in status.read_text())


def descendants(pid: int) -> set[int]:
    """The live processes below ``pid``, children in sessions of their own included (``/proc``)."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            parents[int(stat.parent.name)] = int(fields[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found
