"""The leader's assignment: sticky, revoke before assign, balanced once settled.

The workers are simulated: after each round every live worker runs exactly what it was given
(the heartbeat that follows an applied assignment), or only stops what it lost (a slow worker).
"""

from __future__ import annotations

from collections.abc import Mapping

from hypothesis import given, settings
from hypothesis import strategies as st

from cdk.runtime.distributed._assignor import AssignedTask, Assignment, assign, is_settled


def _tasks(connector: str, count: int, generation: int = 1, restart: int = 0) -> set[AssignedTask]:
    return {AssignedTask(connector, n, generation, restart) for n in range(count)}


def _converge(
    wanted: set[AssignedTask],
    workers: list[str],
    previous: Mapping[str, frozenset[AssignedTask]] | None = None,
    running: Mapping[str, frozenset[AssignedTask]] | None = None,
    rounds: int = 10,
) -> tuple[Assignment, int]:
    """Rounds of assign + apply until a fixed point; returns it and how many tasks moved."""
    current: Assignment = dict(previous or {})
    now = {w: frozenset((running or current).get(w, frozenset())) for w in workers}
    moved = 0
    for _ in range(rounds):
        nxt = assign(wanted, current, now)
        _check_no_overlap(nxt, now)
        for w in workers:
            moved += len(now[w] - nxt[w])
        if nxt == current and is_settled(nxt, now):
            return nxt, moved
        current = nxt
        now = {w: nxt[w] for w in workers}
    raise AssertionError(f"no fixed point after {rounds} rounds: {current}")


def _check_no_overlap(
    assignment: Assignment, running: Mapping[str, frozenset[AssignedTask]]
) -> None:
    owners: dict[object, str] = {}
    for worker, tasks in assignment.items():
        for task in tasks:
            assert task.id not in owners, f"{task.id} assigned to {owners[task.id]} and {worker}"
            owners[task.id] = worker
            for other, runs in running.items():
                if other != worker and task not in assignment.get(other, ()):
                    assert task.id not in {t.id for t in runs}, (
                        f"{task.id} given to {worker} while {other} still runs it"
                    )


def _loads(assignment: Assignment) -> list[int]:
    return sorted(len(t) for t in assignment.values())


def test_tasks_are_spread_and_every_one_runs() -> None:
    wanted = _tasks("src", 2) | _tasks("sink", 1)
    result, _ = _converge(wanted, ["w1", "w2"])
    assert set().union(*result.values()) == wanted
    assert _loads(result) == [1, 2]
    # each connector's tasks are spread over the workers
    assert {len({t for t in ts if t.connector == "src"}) for ts in result.values()} == {1}


def test_twenty_tasks_on_two_workers_balance() -> None:
    wanted = set().union(*(_tasks(f"c{i}", 4) for i in range(5)))
    result, _ = _converge(wanted, ["a", "b"])
    assert _loads(result) == [10, 10]


def test_a_lost_worker_s_tasks_move_at_once_and_the_others_stay() -> None:
    wanted = _tasks("c", 6)
    before, _ = _converge(wanted, ["a", "b", "c"])
    after = assign(wanted, before, {"a": before["a"], "b": before["b"]})
    assert set().union(*after.values()) == wanted
    assert before["a"] <= after["a"]
    assert before["b"] <= after["b"]
    assert _loads(after) == [3, 3]


def test_a_new_worker_gets_tasks_only_after_they_were_revoked_elsewhere() -> None:
    wanted = _tasks("c", 6)
    before, _ = _converge(wanted, ["a"])
    first = assign(wanted, before, {"a": before["a"], "b": frozenset()})
    # round 1 revokes from a; b gets nothing while a still runs them
    assert first["b"] == frozenset()
    assert len(first["a"]) == 3
    second = assign(wanted, first, {"a": first["a"], "b": frozenset()})
    assert len(second["b"]) == 3
    assert second["a"] == first["a"]


def test_a_slow_worker_keeps_its_revoked_task_unassigned() -> None:
    wanted = _tasks("c", 2)
    before, _ = _converge(wanted, ["a", "b"])
    gone = next(iter(before["a"]))
    restarted = AssignedTask(gone.connector, gone.task, gone.generation, restart=1)
    wanted2 = (wanted - {gone}) | {restarted}
    # a still reports the old instance: the restarted one waits
    first = assign(wanted2, before, {"a": before["a"], "b": before["b"]})
    assert restarted not in set().union(*first.values())
    second = assign(wanted2, first, {"a": first["a"], "b": first["b"]})
    assert restarted in second["a"], "a restarted task stays with its worker"


def test_a_new_generation_starts_only_when_the_old_one_ended_everywhere() -> None:
    wanted = _tasks("sink", 2, generation=5)
    before, _ = _converge(wanted, ["a", "b"])
    wanted2 = _tasks("sink", 3, generation=9)
    first = assign(wanted2, before, before)
    assert set().union(*first.values()) == set(), "the old generation runs on both workers"
    half = {"a": frozenset(), "b": before["b"]}
    assert set().union(*assign(wanted2, first, half).values()) == set()
    result, _ = _converge(wanted2, ["a", "b"], first, {"a": frozenset(), "b": frozenset()})
    assert set().union(*result.values()) == wanted2


def test_no_worker_no_assignment() -> None:
    assert assign(_tasks("c", 3), {"gone": frozenset(_tasks("c", 3))}, {}) == {}


@settings(max_examples=60, deadline=None)
@given(
    counts=st.lists(st.integers(0, 6), min_size=1, max_size=5),
    workers=st.integers(1, 5),
    changes=st.lists(
        st.tuples(st.sampled_from(["add", "drop", "reconfigure", "restart"]), st.integers(0, 9)),
        max_size=6,
    ),
)
def test_any_sequence_of_changes_converges_balanced_without_overlap(
    counts: list[int], workers: int, changes: list[tuple[str, int]]
) -> None:
    names = [f"w{i}" for i in range(workers)]
    added = workers  # new workers get names never used before
    tasks = {f"c{i}": (n, 1, 0) for i, n in enumerate(counts)}

    def wanted() -> set[AssignedTask]:
        return set().union(*(_tasks(c, n, g, r) for c, (n, g, r) in tasks.items()))

    current, _ = _converge(wanted(), names)
    for change, pick in changes:
        if change == "add":
            names = [*names, f"w{added}"]
            added += 1
        elif change == "drop" and len(names) > 1:
            gone = names[pick % len(names)]
            names = [n for n in names if n != gone]
            current = {w: t for w, t in current.items() if w != gone}
        elif change == "reconfigure" and tasks:
            c = sorted(tasks)[pick % len(tasks)]
            n, g, r = tasks[c]
            tasks[c] = ((n + pick) % 5, g + 1, r)
        elif change == "restart" and tasks:
            c = sorted(tasks)[pick % len(tasks)]
            n, g, r = tasks[c]
            tasks[c] = (n, g, r + 1)
        current, _ = _converge(wanted(), names, current)
        assert set().union(*current.values()) == wanted()
        assert sorted(current) == sorted(names)
        loads = _loads(current)
        assert loads[-1] - loads[0] <= 1, current
