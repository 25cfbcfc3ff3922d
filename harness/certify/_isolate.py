"""Running checks in child processes, so connector code cannot hang or kill ``cdk certify``.

:func:`run_isolated` hands the planned checks, one at a time, to child processes
(:mod:`harness.certify._child`), each in its own process group, and collects each result as it
ends. ``jobs`` children run checks at the same time, each taking the next check that may start
from one queue as it finishes (``cdk certify --jobs N``); with ``jobs=1`` one child runs them
one after another, in plan order. A check marked ``exclusive=True`` (it measures) runs alone,
once the others are done. One marked ``exclusive="kafka"`` (it stalls the shared broker) runs
next to the others and has the broker to itself only while it is stopped: the parent grants the
stall (:mod:`harness.certify._broker_grant`) once the other checks on Kafka have ended, stops
the broker, and continues it when the checks it granted are done with it; meanwhile, and while
a stall check has yet to ask, no other check on Kafka starts. A check the run gave a broker of
its own (``own``: on the embedded broker, each ``exclusive="kafka"`` check gets one) needs none
of this: it runs next to the others and stalls its broker itself. A child runs checks until
there is none left for it; a fresh one starts only after trouble:

- a check overruns its deadline: the child's threads are dumped (``faulthandler``), its whole
  process group is killed, and the check is an ERROR that says it was abandoned after N s, with
  the dump in its details;
- the child dies (``os._exit``, a signal, a segfault): the check in progress is an ERROR naming
  the exit code or the signal;
- a check leaves non-daemon threads running: the check is an ERROR naming each thread and where
  it is, and the child is retired (it ends with ``os._exit``, which no thread can prevent).

The broker, the report and the verdict stay in the parent, which always gets past the last
check within :data:`EXIT_GRACE_S` of its end. Every callback runs in the calling thread, one at
a time, in the order the events happen (results in the order the checks end).
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from harness._driver import ConnectorDriver, SourceDriver
from harness.certify._broker_grant import GRANTED
from harness.certify._checks import Check, CheckResult
from harness.certify._child import read_frame, write_frame
from harness.certify._zygote import Forked, Zygote, ZygoteGone

__all__ = [
    "DEFAULT_CHECK_TIMEOUT_S",
    "EXIT_GRACE_S",
    "STARTUP_TIMEOUT_S",
    "Abandoned",
    "ChildFailed",
    "check_timeout",
    "may_start",
    "TYPICAL_COST",
    "run_isolated",
    "run_order",
]

#: The deadline of a check unless the run sets one (checks that need Spark get three times it).
DEFAULT_CHECK_TIMEOUT_S = 300.0
#: How long a child may take to start its first check, or its next one after a result (the
#: run's check deadline when it sets one, but at least :data:`STARTUP_MIN_S`). The children
#: started after the first one started a check (which shows that the drivers import and the
#: config references are generated) get at least :data:`STARTUP_TIMEOUT_S` for their first.
STARTUP_TIMEOUT_S = 120.0
STARTUP_MIN_S = 10.0
#: How long a child has to end once told there is nothing left (then its group is killed).
EXIT_GRACE_S = 5.0
#: How long the child has to write its thread dump before it is killed.
_DUMP_WAIT_S = 2.0
_DUMP_LIMIT = 12_000

Planned = tuple[int, Check, type[ConnectorDriver], "str | None"]


@dataclass
class Abandoned:
    """What an isolated run had to give up on: the check, and why."""

    check_id: str
    subject: str
    why: str
    #: The check's position in the plan (its index).
    index: int = 0


@dataclass
class _Child:
    number: int
    proc: subprocess.Popen[bytes] | Forked
    stdin: IO[bytes]
    dump: Path
    reader: threading.Thread
    #: The check handed over and not started yet, and the check running.
    sent: Planned | None = None
    current: Planned | None = None
    #: When the child must have answered (the check's deadline, or its start's), or None.
    deadline: float | None = None
    limit: float = 0.0
    started_any: bool = False
    #: The child was told there is nothing left (its standard input is closed).
    closed: bool = False
    #: Where its broker stall check is: "before" (started, not asked yet), "wanting",
    #: "holding" (granted: the broker is stopped), or None (no stall pending).
    stall: str | None = None

    @property
    def busy(self) -> Planned | None:
        return self.current or self.sent


def check_timeout(c: Check, override: float | None) -> float:
    """The deadline of check ``c``: ``override`` when given, else the default for its needs."""
    if override is not None:
        return override
    return DEFAULT_CHECK_TIMEOUT_S * (3 if "spark" in c.needs else 1)


def run_order(
    items: Sequence[Planned],
    jobs: int,
    own: Collection[int] = (),
    cost: Mapping[int, float] | None = None,
) -> list[Planned]:
    """The order in which ``jobs`` children take the planned ``items``.

    One job runs them in plan order. More jobs start the checks that need the broker to
    themselves (``exclusive="kafka"``: they stall it, or kill their worker) first, with the
    checks that need no Kafka, so that the broker is stopped early, while little else needs
    it, and so that these long checks (or those with a broker of their own, ``own``: the
    indexes of the items) are not the last to end; then the checks on Kafka, the longest
    first: those against sinks (their consumer groups join and rebalance), then those against
    sources; then the checks that run alone (``exclusive=True``). Each group keeps plan order.
    With ``cost`` (how long each check takes, by index: the seconds of an earlier run, or
    :data:`TYPICAL_COST`), the checks on Kafka, sinks and sources together, start the longest
    first (sinks before sources when as long), and so does each other group, so that no long
    check starts last while the other jobs have nothing left.
    """
    if jobs <= 1:
        return list(items)

    def rank(item: Planned) -> int:
        _, c, driver, _ = item
        if item[0] in own and _runs(item):
            return 0
        exclusive = _exclusive(item)
        if exclusive is True:
            return 4
        if exclusive == "kafka":
            return 0
        if not _uses_kafka(item):
            return 1
        return 3 if c.per_project or issubclass(driver, SourceDriver) else 2

    if not cost:
        return sorted(items, key=rank)
    known = cost

    def by_cost(item: Planned) -> tuple[int, float, int]:
        group = rank(item)
        return (min(group, 2) if group in (2, 3) else group, -known.get(item[0], 0.0), group)

    return sorted(items, key=by_cost)


#: How long the checks that take longest typically take, relative to the others (per cent of
#: a run's time; measured on the SQL reference and the ``cdk new`` project): the order of a
#: run with several jobs when no earlier run says better (those not named count as short).
TYPICAL_COST: dict[tuple[str, str], float] = {
    ("ERR-05", "sink"): 8.0,
    ("OFF-13", "source"): 7.7,
    ("ERR-04", "source"): 6.1,
    ("OFF-07", "sink"): 4.7,
    ("PKG-01", "source"): 4.4,
    ("PKG-02", "source"): 4.4,
    ("CFG-04", "source"): 3.9,
    ("OFF-02", "source"): 3.9,
    ("CFG-08", "sink"): 3.6,
    ("SCH-09", "sink"): 3.3,
    ("CFG-04", "sink"): 3.1,
    ("RBL-04", "sink"): 2.8,
    ("RBL-01", "sink"): 2.8,
    ("RBL-02", "sink"): 2.7,
    ("SCH-09", "source"): 2.6,
    ("OFF-06", "sink"): 1.9,
    ("OFF-05", "sink"): 1.6,
    ("OFF-08", "sink"): 1.5,
    ("RST-04", "sink"): 1.5,
    ("RST-03", "sink"): 1.4,
    ("RST-02", "sink"): 1.4,
}


def _exclusive(item: Planned, own: Collection[int] = ()) -> bool | str:
    """What the check must have to itself (nothing when it is skipped: it runs nothing).

    A check in ``own`` (it has a broker of its own, or will not run: the run does not provide
    what it needs) needs nothing to itself.
    """
    if item[0] in own:
        return False
    return item[1].exclusive if _runs(item) else False


def _uses_kafka(item: Planned, own: Collection[int] = ()) -> bool:
    """Whether the check uses the run's shared broker (not one of its own)."""
    return _runs(item) and "kafka" in item[1].needs and item[0] not in own


def runs(item: Planned) -> bool:
    """Whether the planned check runs (see :func:`_runs`)."""
    return _runs(item)


def _runs(item: Planned) -> bool:
    """Whether the check runs: not left out, and of the driver's kind of source if it says."""
    _, c, driver, reason = item
    if reason is not None:
        return False
    if c.source_kind is None or not issubclass(driver, SourceDriver):
        return True
    return str(getattr(driver, "source_kind", "replayable")) == c.source_kind


def may_start(
    item: Planned, running: Sequence[Planned], broker: str = "free", own: Collection[int] = ()
) -> bool:
    """Whether ``item`` may start while the checks ``running`` run.

    Args:
        item: the check that would start.
        running: the checks running.
        broker: ``"free"``; ``"pending"`` while a check that stalls the broker has not been
            granted the stall yet (only other such checks may start on Kafka, to share it);
            ``"held"`` while the broker is stopped (no check on Kafka starts).
        own: the indexes of the checks that need nothing of the shared broker nor the other
            checks: those with a broker of their own, and those that will not run (the run
            does not provide what they need).
    """
    if _exclusive(item, own) is True:
        return not running
    if any(_exclusive(r, own) is True for r in running):
        return False
    if not _uses_kafka(item, own) or broker == "free":
        return True
    return broker == "pending" and _exclusive(item, own) == "kafka"


def run_isolated(
    items: Sequence[Planned],
    job: dict[str, Any],
    *,
    base: Path,
    timeout: float | None,
    make_result: Callable[[Planned, dict[str, Any]], CheckResult],
    error_result: Callable[[Planned, str, str | None], CheckResult],
    on_started: Callable[[Planned], None],
    on_result: Callable[[Planned, CheckResult, list[str]], None],
    on_config_docs: Callable[[dict[str, dict[str, str]]], None],
    after_child: Callable[[], None],
    jobs: int = 1,
    stall: Callable[[bool], None] | None = None,
    own: Collection[int] = (),
    after: dict[int, int | None] | None = None,
    cost: Mapping[int, float] | None = None,
) -> list[Abandoned]:
    """Run ``items`` in child processes; report each result through ``on_result``.

    Args:
        items: (index, check, driver, skip reason) in plan order.
        job: what every child needs besides the items (project, bootstrap, kafka...).
        base: the run's working directory (each check's is ``base/NNN``).
        timeout: the deadline of every check in seconds (None: the default per check).
        make_result: builds a result from a child's fields.
        error_result: builds the ERROR result of an abandoned check (message, details).
        on_started: a check starts.
        on_result: a check ended (with the leaked threads the child saw, if any).
        on_config_docs: the connectors' config references (sent once, by the first child).
        after_child: called after a child ended while no exclusive check runs in another (the
            broker is resumed there: a child killed in the middle of a stall leaves it stopped).
        jobs: how many checks run at the same time (each in its own child).
        stall: stops (``True``) or continues (``False``) the broker, for the checks that stall
            it; None when it cannot be stalled (those checks then run like any other).
        own: the indexes of the checks that run on a broker of their own (the job tells their
            child which), and of those that will not run (the run does not provide what they
            need): they run next to the others, and the shared broker is never stopped or held
            for them.
        after: filled with what each check waited for before it was handed to a child: the
            index of the check whose end (or release of the broker) let it start, or None
            (it started with the run).
        cost: how long each check (by index) took in an earlier run: the longest start first.

    Returns:
        What was abandoned, in the order it happened.

    Raises:
        ChildFailed: the first child could not start a check (the drivers do not import, a
            connector's ``config()`` does not return...).
        ValueError: ``jobs`` is less than 1.
    """
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, not {jobs}")
    scheduler = _Scheduler(
        run_order(items, jobs, own, cost),
        job,
        base,
        timeout,
        jobs,
        make_result,
        error_result,
        on_started,
        on_result,
        on_config_docs,
        after_child,
        stall,
        frozenset(own),
        after if after is not None else {},
    )
    return scheduler.run()


class _Scheduler:
    """Hands checks to up to ``jobs`` children and follows them until every check ended."""

    def __init__(
        self,
        order: list[Planned],
        job: dict[str, Any],
        base: Path,
        timeout: float | None,
        jobs: int,
        make_result: Callable[[Planned, dict[str, Any]], CheckResult],
        error_result: Callable[[Planned, str, str | None], CheckResult],
        on_started: Callable[[Planned], None],
        on_result: Callable[[Planned, CheckResult, list[str]], None],
        on_config_docs: Callable[[dict[str, dict[str, str]]], None],
        after_child: Callable[[], None],
        stall: Callable[[bool], None] | None = None,
        own: frozenset[int] = frozenset(),
        after: dict[int, int | None] | None = None,
    ) -> None:
        self.waiting: deque[Planned] = deque(order)
        self.own = own
        self.after: dict[int, int | None] = {} if after is None else after
        #: The check whose end (or first start, or release of the broker) was handled last.
        self.cause: int | None = None
        self.stall = stall
        self.job = job
        self.base = base
        self.timeout = timeout
        self.jobs = jobs
        self.make_result = make_result
        self.error_result = error_result
        self.on_started = on_started
        self.on_result = on_result
        self.on_config_docs = on_config_docs
        self.after_child = after_child
        self.children: dict[int, _Child] = {}
        self.events: queue.Queue[tuple[int, Any]] = queue.Queue()
        self.abandoned: list[Abandoned] = []
        self.spawned = 0
        #: Forks the children with the harness imported (None: each starts a fresh interpreter).
        self.zygote: Zygote | None = None
        self.started_any = False
        self.startup = STARTUP_TIMEOUT_S if timeout is None else max(timeout, STARTUP_MIN_S)

    # ------------------------------------------------------------------ the loop
    def run(self) -> list[Abandoned]:
        self.zygote = Zygote.start(_child_env())
        try:
            while self.waiting or self.children:
                self._dispatch()
                try:
                    number, message = self.events.get(timeout=self._wait())
                except queue.Empty:
                    self._expire()
                    continue
                child = self.children.get(number)
                if child is not None:  # else: the last words of a child already gone
                    self._handle(child, message)
        except BaseException:
            for child in list(self.children.values()):
                _kill_group(child.proc)  # interrupted (Ctrl-C) or failed: no grace period
            raise
        finally:
            for child in list(self.children.values()):
                self._end(child)
            if self.zygote is not None:
                self.zygote.close()
                self.zygote = None
        return self.abandoned

    def _wait(self) -> float:
        deadlines = [c.deadline for c in self.children.values() if c.deadline is not None]
        if not deadlines:
            return 1.0
        return max(min(deadlines) - time.monotonic(), 0.0)

    def _running_exclusive(self, besides: _Child | None = None) -> bool:
        """Whether another child runs a check alone or holds the stopped broker."""
        return any(
            c.stall == "holding" or (c.busy is not None and _exclusive(c.busy, self.own) is True)
            for c in self.children.values()
            if c is not besides
        )

    # ------------------------------------------------------------------ the broker stall
    def _broker(self) -> str:
        """``held``, ``pending`` (a stall check has yet to be granted) or ``free``."""
        states = {c.stall for c in self.children.values()}
        if "holding" in states:
            return "held"
        if "before" in states or "wanting" in states:
            return "pending"
        return "free"

    def _grant(self) -> None:
        """Stop the broker for the checks that want it, once no other check on Kafka runs."""
        if self.stall is None:
            return
        children = list(self.children.values())
        wanting = [c for c in children if c.stall == "wanting"]
        if not wanting or any(c.stall == "holding" for c in children):
            return
        for c in children:
            busy = c.busy
            if busy is not None and _uses_kafka(busy, self.own) and c.stall != "wanting":
                return  # still running on Kafka (a stall check not ready yet, or another)
        self.stall(True)
        for c in wanting:
            c.stall = "holding"
            with contextlib.suppress(OSError):  # the child died: its reader reports it
                write_frame(c.stdin, GRANTED)

    def _released(self, child: _Child) -> None:
        """``child`` is done with the broker stall (or gone): continue it if nobody holds it."""
        held = child.stall == "holding"
        child.stall = None
        if held and self.stall is not None and self._broker() != "held":
            self.stall(False)

    # ------------------------------------------------------------------ handing out checks
    def _dispatch(self) -> None:
        self._grant()
        while self.waiting:
            running = [c.busy for c in self.children.values() if c.busy is not None]
            if len(running) >= self.jobs:
                break
            broker = self._broker()
            item = next((i for i in self.waiting if may_start(i, running, broker, self.own)), None)
            if item is None:
                break
            if running and not self.started_any:
                break  # the others start once the first child shows the drivers import
            idle = [c for c in self.children.values() if c.busy is None and not c.closed]
            child = idle[0] if idle else self._spawn()
            self.waiting.remove(item)
            self._send(child, item)
        if not self.started_any and self.children:
            # start the other children meanwhile: they import while the first one starts, and
            # get checks once it has shown that the drivers import
            wanted = min(self.jobs, len(self.waiting) + len(self.children))
            while len(self.children) < wanted:
                self._spawn()
        # an idle child is told to end once nothing is left for it (one child is kept while
        # only exclusive checks wait: they run one at a time)
        if not self.waiting:
            keep = 0
        elif all(_exclusive(i, self.own) is True for i in self.waiting):
            keep = 1
        else:
            return
        open_children = [c for c in self.children.values() if not c.closed]
        surplus = len(open_children) - keep
        for child in open_children:
            if surplus <= 0:
                break
            if child.busy is None:
                self._close(child)
                surplus -= 1

    def _send(self, child: _Child, item: Planned) -> None:
        self.after[item[0]] = self.cause
        child.sent = item
        child.deadline = time.monotonic() + self._patience(child)
        with contextlib.suppress(OSError):  # the child died: its reader reports it
            write_frame(child.stdin, item)

    def _close(self, child: _Child) -> None:
        child.closed = True
        child.deadline = time.monotonic() + EXIT_GRACE_S
        with contextlib.suppress(OSError):
            child.stdin.close()

    def _spawn(self) -> _Child:
        self.spawned += 1
        number = self.spawned
        read_end, write_end = os.pipe()
        dump = self.base / f"threads-{number}-{time.monotonic_ns()}.txt"
        try:
            proc, stdin = self._start_child(write_end)
        finally:
            os.close(write_end)
        reader = threading.Thread(
            target=_read,
            args=(os.fdopen(read_end, "rb"), number, self.events),
            name=f"cdk-certify-child-reader-{number}",
        )
        reader.daemon = True
        reader.start()
        child = _Child(number, proc, stdin, dump, reader)
        self.children[number] = child
        try:
            write_frame(stdin, list(sys.path))
            write_frame(
                stdin,
                {
                    **self.job,
                    "workdir": str(self.base),
                    "dump_file": str(dump),
                    "config_docs": number == 1,
                },
            )
        except (BrokenPipeError, OSError):
            pass  # the child died at once: its reader reports it
        return child

    def _start_child(self, answers: int) -> tuple[subprocess.Popen[bytes] | Forked, IO[bytes]]:
        """A child answering on ``answers``, forked by the zygote or else a fresh interpreter.

        Either way it leads a process group of its own (killed whole when abandoned).
        """
        if self.zygote is not None:
            commands, stdin = os.pipe()
            try:
                forked = self.zygote.fork(commands, answers)
            except ZygoteGone:
                os.close(stdin)
                self.zygote.close()
                self.zygote = None
            else:
                return forked, os.fdopen(stdin, "wb")
            finally:
                os.close(commands)
        proc = subprocess.Popen(
            [sys.executable, "-m", "harness.certify._child", str(answers)],
            stdin=subprocess.PIPE,
            pass_fds=(answers,),
            start_new_session=True,
            env=_child_env(),
        )
        assert proc.stdin is not None
        return proc, proc.stdin

    # ------------------------------------------------------------------ what children say
    def _handle(self, child: _Child, message: Any) -> None:
        if message is None or message[0] in ("failed", "garbled"):
            self._died(child, message[1] if message is not None else None)
            return
        kind = message[0]
        if kind == "config_docs":
            self.on_config_docs(message[1])
        elif kind == "started":
            item = child.sent
            if item is None or item[0] != message[1]:
                self._died(child, f"started check #{message[1]}, which it was not given")
                return
            child.sent, child.current = None, item
            if not self.started_any:
                self.cause = None  # the others waited for the first to start: the run's start
            child.started_any = self.started_any = True
            child.limit = check_timeout(item[1], self.timeout)
            child.deadline = time.monotonic() + child.limit
            if (
                self.stall is not None
                and _exclusive(item, self.own) == "kafka"
                and _uses_kafka(item, self.own)
            ):
                child.stall = "before"  # it will ask for the broker
            self.on_started(item)
        elif kind == "result":
            _, index, fields, secrets, leaked = message
            item = child.current
            if item is None or item[0] != index:
                self._died(child, f"sent the result of check #{index}, which it did not start")
                return
            child.current, child.deadline = None, None
            self.cause = index
            self._released(child)
            result = self.make_result(item, {**fields, "_secrets": secrets})
            self.on_result(item, result, leaked)
        elif kind == "broker":
            if message[1] == "want" and child.stall in ("before", "wanting"):
                child.stall = "wanting"
            elif message[1] == "released":
                if child.current is not None:
                    self.cause = child.current[0]
                self._released(child)
            else:
                self._died(child, f"sent {message!r} while its broker stall was {child.stall}")
        elif kind == "retire":
            self._requeue(child)
            self._end(child)
        elif kind == "done":
            self._end(child)

    def _died(self, child: _Child, cause: str | None) -> None:
        """The child's pipe ended (it exited, was killed, or sent garbage)."""
        code = _exit_status(child.proc)
        item = child.current
        if item is None:
            if not child.started_any and not child.closed:
                self._end(child)
                raise ChildFailed(
                    "the process that runs the checks could not start ("
                    + (cause or _describe_exit(code))
                    + ")"
                )
            self._requeue(child)
            self._end(child)
            return
        why = f"its process {cause or _describe_exit(code)}"
        self._abandon(
            child,
            item,
            why,
            f"abandoned: the check could not finish: {why}; the next checks run in a fresh process",
            None,
        )

    def _expire(self) -> None:
        """Deal with every child that overran its deadline."""
        now = time.monotonic()
        for child in list(self.children.values()):
            if child.deadline is None or child.deadline > now:
                continue
            if child.current is not None:
                item = child.current
                details = _dump_threads(child)
                _kill_group(child.proc)
                why = f"overran its deadline of {child.limit:g}s"
                self._abandon(
                    child,
                    item,
                    why,
                    f"abandoned: the check {why}; its process was killed (--check-timeout "
                    "sets the deadline)",
                    details,
                )
                continue
            _kill_group(child.proc)
            if child.sent is not None and not child.started_any:
                self._end(child)
                # importing the drivers or generating the config references does not end
                raise ChildFailed(
                    "the process that runs the checks did not start a check within "
                    f"{self._patience(child):g}s (importing the drivers, or a connector's "
                    "config(), does not return)"
                )
            # stuck between two checks, or not ending once told to: the rest go to a fresh one
            self._requeue(child)
            self._end(child)

    def _patience(self, child: _Child) -> float:
        """How long ``child`` may take to start the check it was handed."""
        if child.number > 1 and not child.started_any:
            return max(self.startup, STARTUP_TIMEOUT_S)  # the first child started a check
        return self.startup

    def _abandon(
        self, child: _Child, item: Planned, why: str, message: str, details: str | None
    ) -> None:
        result = self.error_result(item, message, details)
        self.cause = item[0]
        child.current = None
        self._released(child)
        self._requeue(child)
        self._end(child)
        self.on_result(item, result, [])
        self.abandoned.append(Abandoned(item[1].id, result.subject, why, item[0]))

    def _requeue(self, child: _Child) -> None:
        """Put the check handed to ``child`` but not started back first in line."""
        if child.sent is not None:
            self.waiting.appendleft(child.sent)
            child.sent = None

    def _end(self, child: _Child) -> None:
        """Let the child end, kill what is left of its group, and forget it."""
        if self.children.pop(child.number, None) is None:
            return
        self._released(child)
        with contextlib.suppress(OSError):
            child.stdin.close()
        _finish(child)
        if not self._running_exclusive(besides=child):
            self.after_child()


def _child_env() -> dict[str, str]:
    """The environment of a child: the parent's, with its ``sys.path`` as ``PYTHONPATH``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return env


def _read(stream: Any, number: int, events: queue.Queue[tuple[int, Any]]) -> None:
    with stream:
        while True:
            try:
                events.put((number, read_frame(stream)))
            except EOFError:
                break
            except Exception as exc:  # noqa: BLE001 - a garbled frame ends the conversation
                events.put((number, ("garbled", f"{type(exc).__name__}: {exc}")))
                break
    events.put((number, None))


class ChildFailed(Exception):
    """The child ended before it could run any check."""


def _dump_threads(child: _Child) -> str | None:
    """Ask the child for a dump of its threads (SIGUSR1); return it, trimmed, or None."""
    if child.proc.poll() is not None:
        return None
    with contextlib.suppress(OSError):
        child.proc.send_signal(signal.SIGUSR1)
    deadline = time.monotonic() + _DUMP_WAIT_S
    size, steady_since = -1, time.monotonic()
    while time.monotonic() < deadline:
        try:
            now_size = child.dump.stat().st_size
        except OSError:
            now_size = 0
        if now_size != size:
            size, steady_since = now_size, time.monotonic()
        elif size > 0 and time.monotonic() - steady_since >= 0.3:
            break  # the dump stopped growing: faulthandler is done
        time.sleep(0.05)
    try:
        text = child.dump.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if not text.strip():
        return None
    if len(text) > _DUMP_LIMIT:
        text = text[:_DUMP_LIMIT] + "\n... (the rest of the dump is cut)"
    return "The threads of the check's process when it was abandoned:\n" + text


def _kill_group(proc: subprocess.Popen[bytes] | Forked) -> None:
    """SIGKILL the child's whole process group (it leads its own session) and reap it.

    A child of this process is killed before it is reaped, so its group's id cannot have been
    reused. One the zygote forked is reaped there at once, so its group (what it left
    running) is killed after its exit too: a group's id is not reused while a process of the
    group lives.
    """
    if proc.returncode is None or isinstance(proc, Forked):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(EXIT_GRACE_S)


def _exited(proc: subprocess.Popen[bytes] | Forked, timeout: float) -> bool:
    """Wait up to ``timeout`` for the child to exit, without reaping it (it stays a zombie)."""
    if isinstance(proc, Forked):
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        return True
    deadline = time.monotonic() + timeout
    while True:
        if proc.returncode is not None:
            return True
        try:
            info = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return True
        if info is not None:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)


def _finish(child: _Child) -> None:
    """Let the child end (os._exit) within the grace period, then kill what is left of its group.

    Whatever the child started and left (a ``cdk standalone``, a server) is in its process
    group and goes with it.
    """
    _exited(child.proc, EXIT_GRACE_S)
    _kill_group(child.proc)
    child.reader.join(EXIT_GRACE_S)
    with contextlib.suppress(OSError):
        child.dump.unlink()


def _exit_status(proc: subprocess.Popen[bytes] | Forked) -> int | None:
    """The child's exit status once it ended (None if it had to be killed)."""
    ended = _exited(proc, EXIT_GRACE_S)
    _kill_group(proc)
    return proc.returncode if ended else None


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "closed its pipe but did not exit (it was killed)"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"was killed by {name} (signal {-code})"
    return f"exited with code {code}"
