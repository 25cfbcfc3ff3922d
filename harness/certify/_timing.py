"""Where the time of a certification run went: per suite, and the chain that set its end.

Every check that ran has a start and an end (seconds from the start of the run), the CPU time
its process (and the processes it waited for) used, and what it waited for before it could
start: the check whose end freed its place (a job, the broker, the checks that run alone), or
nothing (it started as soon as the run did). :func:`timing` turns these into what
``cdk certify`` prints at the end of a run and ``summary.json`` keeps under ``timing``:

- per suite: how many checks ran, the wall time from the first start to the last end, the
  sum of the checks' durations, and their CPU time;
- the critical path: from the check that ended last, back through what each one waited for,
  the chain of checks that determined when the run ended (with the gaps between them, where
  a child process started or the scheduler waited for the broker);
- the run's own time: before the first check started (starting the broker, the first child
  importing the drivers) and after the last one ended.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Span", "describe", "timing"]


@dataclass(frozen=True)
class Span:
    """One check that ran: when (seconds from the run's start), its CPU time, what it awaited."""

    index: int
    check_id: str
    subject: str
    start: float
    end: float
    cpu_s: float = 0.0
    #: The index of the check whose end let this one start, or None.
    after: int | None = None
    #: Where it ran: ``shared`` (the run's broker), ``own broker``, or ``alone``.
    lane: str = "shared"


def timing(spans: Sequence[Span], total_s: float) -> dict[str, Any]:
    """The run's time as JSON-ready data (``summary.json``'s ``timing``).

    Args:
        spans: the checks that ran.
        total_s: the run's wall time (from its start, before the broker started, to its end).
    """
    suites: dict[str, dict[str, float]] = {}
    for s in sorted(spans, key=lambda s: s.start):
        suite = s.check_id.split("-", 1)[0]
        entry = suites.setdefault(
            suite, {"checks": 0, "first_start_s": s.start, "last_end_s": s.end, "busy_s": 0.0}
        )
        entry["checks"] += 1
        entry["last_end_s"] = max(entry["last_end_s"], s.end)
        entry["busy_s"] += s.end - s.start
        entry["cpu_s"] = entry.get("cpu_s", 0.0) + s.cpu_s
    for entry in suites.values():
        entry["wall_s"] = entry["last_end_s"] - entry["first_start_s"]
    first = min((s.start for s in spans), default=0.0)
    last = max((s.end for s in spans), default=0.0)
    busy = sum(s.end - s.start for s in spans)
    return {
        "total_s": _r(total_s),
        "before_first_check_s": _r(first),
        "after_last_check_s": _r(max(total_s - last, 0.0)),
        "checks_busy_s": _r(busy),
        "checks_cpu_s": _r(sum(s.cpu_s for s in spans)),
        "own_broker": sorted(
            f"{s.check_id} [{s.subject}]" for s in spans if s.lane == "own broker"
        ),
        "suites": {
            name: {k: (_r(v) if isinstance(v, float) else v) for k, v in entry.items()}
            for name, entry in suites.items()
        },
        "critical_path": [
            {
                "check": s.check_id,
                "subject": s.subject,
                "start_s": _r(s.start),
                "end_s": _r(s.end),
                "duration_s": _r(s.end - s.start),
                "cpu_s": _r(s.cpu_s),
                "waited_s": _r(wait),
                "lane": s.lane,
            }
            for s, wait in _critical_path(spans)
        ],
    }


def _critical_path(spans: Sequence[Span]) -> list[tuple[Span, float]]:
    """From the first to the last: each check of the chain, and how long it waited to start.

    The chain ends with the check that ended last; each check before it is the one the next
    waited for (its ``after``). The wait is the gap between that check's end (the run's start
    for the first) and the next one's start.
    """
    if not spans:
        return []
    by_index = {s.index: s for s in spans}
    chain: list[Span] = []
    current: Span | None = max(spans, key=lambda s: (s.end, s.index))
    seen: set[int] = set()
    while current is not None and current.index not in seen:
        seen.add(current.index)
        chain.append(current)
        current = by_index.get(current.after) if current.after is not None else None
    chain.reverse()
    out = []
    previous_end = 0.0
    for s in chain:
        out.append((s, max(s.start - previous_end, 0.0)))
        previous_end = s.end
    return out


def _r(value: float) -> float:
    return round(value, 2)


def describe(data: Mapping[str, Any]) -> list[str]:
    """The lines ``cdk certify`` prints at the end of a run about where its time went."""
    if not data or not data.get("suites"):
        return []
    lines = [
        f"Where the time went ({data['total_s']:.1f} s): {data['before_first_check_s']:.1f} s "
        f"before the first check, {data['after_last_check_s']:.1f} s after the last; the "
        f"checks ran {data['checks_busy_s']:.1f} s in all, {data['checks_cpu_s']:.1f} s of CPU",
        "  suite  checks   from     to    wall    busy     cpu",
    ]
    for name, s in data["suites"].items():
        lines.append(
            f"  {name:<5}  {s['checks']:>6}  {s['first_start_s']:>5.1f}  {s['last_end_s']:>5.1f}"
            f"  {s['wall_s']:>6.1f}  {s['busy_s']:>6.1f}  {s['cpu_s']:>6.1f}"
        )
    path = data.get("critical_path") or []
    if path:
        lines.append(
            "Critical path (the checks that set the end time, each waiting for the one before it):"
        )
        for step in path:
            where = f", {step['lane']}" if step["lane"] != "shared" else ""
            lines.append(
                f"  {step['start_s']:>5.1f}-{step['end_s']:>5.1f} s  {step['check']} "
                f"[{step['subject']}]  {step['duration_s']:.1f} s ({step['cpu_s']:.1f} s CPU"
                f"{where}), after {step['waited_s']:.1f} s waiting"
            )
    return lines
