"""Which worker runs which connector task: the leader's incremental cooperative assignment.

Kafka Connect's ``IncrementalCooperativeAssignor`` is the model: a change moves as few tasks as
it can, and a task is never handed to a new worker while another one may still run it. The
leader calls :func:`assign` whenever something changes (a connector's task configs, a worker that
appears, goes quiet or reports what it runs) and publishes the result; the workers apply it and
report back (their heartbeats list what they run), and the leader calls :func:`assign` again.

The rules, per round:

- a task stays with the live worker it was assigned to while it is still wanted (sticky);
- a task that is no longer wanted as assigned (its connector was reconfigured, stopped or
  deleted, or the task is restarted) is revoked: it disappears from its worker's list;
- a task is handed out only when no live worker reports running it any more (revoke first,
  assign in a later round), and a connector's new generation only once no live worker runs a
  task of an older one, so two generations never overlap (a sink's consumer group re-forms once);
- the tasks of workers that are gone (their heartbeats stopped) go to the live ones at once;
- new tasks go to the least loaded workers, spreading each connector's tasks;
- only when every worker runs what it was given (the cluster is settled) are tasks moved from
  the most to the least loaded workers, at most the excess, to even the load out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from cdk.runtime._status import ConnectorTaskId

__all__ = ["AssignedTask", "Assignment", "assign", "is_settled"]


@dataclass(frozen=True, order=True)
class AssignedTask:
    """One connector task as the leader hands it out.

    Attributes:
        connector: the connector's name.
        task: the task's number.
        generation: the connector's task-config generation (the offset of its commit record in
            the config topic): the worker runs the task configs of that commit.
        restart: bumped by the leader to have the worker restart the task (REST restarts).
    """

    connector: str
    task: int
    generation: int
    restart: int = 0

    @property
    def id(self) -> ConnectorTaskId:
        """The task's id."""
        return ConnectorTaskId(self.connector, self.task)

    def __str__(self) -> str:
        return f"{self.connector}-{self.task}@{self.generation}" + (
            f"/r{self.restart}" if self.restart else ""
        )


#: worker id -> the tasks it is to run
Assignment = dict[str, frozenset[AssignedTask]]


def is_settled(
    assignment: Mapping[str, Iterable[AssignedTask]],
    running: Mapping[str, Iterable[AssignedTask]],
) -> bool:
    """Whether every live worker runs exactly what it was assigned."""
    return all(frozenset(assignment.get(w, ())) == frozenset(r) for w, r in running.items())


def assign(
    wanted: Iterable[AssignedTask],
    previous: Mapping[str, Iterable[AssignedTask]],
    running: Mapping[str, Iterable[AssignedTask]],
) -> Assignment:
    """The next assignment.

    Args:
        wanted: every task that should run now (one entry per task id).
        previous: the assignment published last (workers that are gone may be in it).
        running: each live worker, with what its last heartbeat says it runs (failed tasks
            included: a worker keeps a failed task until it is restarted or revoked).

    Returns:
        An entry for every live worker (an empty set when it gets nothing).
    """
    wanted_set = frozenset(wanted)
    latest: dict[str, int] = {}
    for t in wanted_set:
        latest[t.connector] = max(latest.get(t.connector, t.generation), t.generation)
    live = sorted(running)
    reported = {w: frozenset(running[w]) for w in live}
    keep: dict[str, set[AssignedTask]] = {
        w: {t for t in previous.get(w, ()) if t in wanted_set} for w in live
    }
    owned = {t.id for tasks in keep.values() for t in tasks}
    # what a live worker still runs without being assigned it: not to be handed out again yet
    busy = {t.id for w in live for t in reported[w] if t not in keep[w]}
    # a connector whose older generation still runs somewhere waits for it to end
    blocked = {
        t.connector
        for w in live
        for t in reported[w]
        if t.connector in latest and t.generation < latest[t.connector]
    }
    pool = sorted(
        t
        for t in wanted_set
        if t.id not in owned and t.id not in busy and t.connector not in blocked
    )
    if not live:
        return {}
    last_owner = {t.id: w for w, tasks in previous.items() for t in tasks}
    for task in pool:
        target = min(
            live,
            key=lambda w: (
                len(keep[w]),
                sum(1 for t in keep[w] if t.connector == task.connector),
                last_owner.get(task.id) != w,
                w,
            ),
        )
        keep[target].add(task)
    placed = {t.id for tasks in keep.values() for t in tasks}
    unplaced = [t for t in wanted_set if t.id not in placed]
    if not unplaced and not busy and is_settled(keep, reported):
        _revoke_excess(keep)
    return {w: frozenset(keep[w]) for w in live}


def _revoke_excess(keep: dict[str, set[AssignedTask]]) -> None:
    """Take tasks from workers above the balanced load; a later round places them again.

    With ``T`` tasks on ``W`` workers, ``T % W`` workers may hold ``T // W + 1`` and the others
    ``T // W``; the most loaded workers keep the larger share, so the fewest tasks move.
    """
    total = sum(len(tasks) for tasks in keep.values())
    if len(keep) < 2 or total == 0:
        return
    floor, extra = divmod(total, len(keep))
    for rank, worker in enumerate(sorted(keep, key=lambda w: (-len(keep[w]), w))):
        excess = len(keep[worker]) - (floor + 1 if rank < extra else floor)
        if excess <= 0:
            continue
        counts = Counter(t.connector for t in keep[worker])
        # revoke from the connectors with the most tasks here (spreads each connector)
        for task in sorted(keep[worker], key=lambda t: (-counts[t.connector], t))[:excess]:
            keep[worker].discard(task)
