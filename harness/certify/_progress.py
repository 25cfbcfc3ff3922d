"""Live progress of a certification run on a terminal (what ``cdk certify`` prints).

A header with the number of planned checks, then one line per check as it ends (outcome, id,
subject, duration and, for a failure, error or skip, the reason on the next lines, then up to
three lines of what the check saw, such as ``100 sent, 100 stored, 0 duplicates``), then a table
of counts per suite and the verdict with the exit status. Checks that run at the same time
(``cdk certify --jobs N``) print their lines whole, one after another, in the order they end,
each numbered with how many have ended so far; the reports list them in plan order. On a TTY
the outcome is coloured and a ``running ...`` line at the bottom names the checks in progress
(redrawn as they start and end); elsewhere (CI logs, pipes) the output is plain text.
``NO_COLOR`` turns colours off.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import textwrap
from typing import TextIO

from harness.certify._checks import Check, CheckResult, Outcome
from harness.certify._evidence import compact_lines
from harness.certify._report_common import (
    CERTIFIABLE,
    FAILED,
    OUTCOME_ORDER,
    clean,
    counts,
    format_duration,
    suite_counts,
    verdict,
    verdict_reason,
)
from harness.certify._runner import CertificationRun
from harness.certify._timing import describe

__all__ = ["TerminalProgress"]

_LABELS = {
    Outcome.PASSED: "PASS",
    Outcome.FAILED: "FAIL",
    Outcome.ERROR: "ERROR",
    Outcome.SKIPPED: "SKIP",
    Outcome.NOT_VERIFIED: "NOTV",
}
_COLOURS = {
    Outcome.PASSED: "32",  # green
    Outcome.FAILED: "31",  # red
    Outcome.ERROR: "35",  # magenta
    Outcome.SKIPPED: "33",  # yellow
    Outcome.NOT_VERIFIED: "1;33",  # bold yellow
    CERTIFIABLE: "1;32",
    FAILED: "1;31",
    "INCOMPLETE": "1;33",
}
_REASON_LIMIT = 600
#: At most this many lines of evidence per check (the report has all of it).
_EVIDENCE_LINES = 3


class TerminalProgress:
    """A :class:`~harness.certify.ProgressListener` that prints to a terminal or a log.

    Args:
        stream: where to print (standard output by default).
        tty: whether ``stream`` is an interactive terminal (detected when None): colours and
            ``running`` lines are only used on one.
        colour: force colours on or off (default: on a TTY unless ``NO_COLOR`` is set).
    """

    def __init__(
        self, stream: TextIO | None = None, *, tty: bool | None = None, colour: bool | None = None
    ) -> None:
        self.stream = stream if stream is not None else sys.stdout
        if tty is None:
            isatty = getattr(self.stream, "isatty", None)
            tty = bool(isatty()) if callable(isatty) else False
        self.tty = tty
        self.colour = tty and "NO_COLOR" not in os.environ if colour is None else colour
        self.planned = 0
        self.done = 0
        self._running = False
        #: The checks in progress, in the order they started: (id, subject).
        self._in_progress: list[tuple[str, str]] = []

    def _paint(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.colour else text

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()

    def _clear_running(self) -> None:
        if self._running:
            self._write("\r\x1b[2K")
            self._running = False

    def started(self, run: CertificationRun, planned: int) -> None:
        """Print the header: the project, the planned checks, the Kafka in use and the seed."""
        self.planned = planned
        selection = []
        if run.only:
            selection.append(f"only {', '.join(run.only)}")
        if run.skip:
            selection.append(f"skipping {', '.join(run.skip)}")
        drivers = ", ".join(d.__name__ for d in run.project.drivers)
        self._write(
            f"cdk certify: {run.project.name} {run.project.version} ({drivers})\n"
            f"{planned} check{'s' if planned != 1 else ''} planned on Kafka {run.kafka}, "
            f"seed {run.seed}" + (f" ({'; '.join(selection)})" if selection else "") + "\n\n"
        )

    def check_started(self, check: Check, subject: str) -> None:
        """On a TTY, show which checks run (the line is replaced by the next result)."""
        self._in_progress.append((check.id, subject))
        if self.tty:
            self._show_running(check.title if len(self._in_progress) == 1 else None)

    def _show_running(self, title: str | None = None) -> None:
        """Redraw the ``running`` line: the checks in progress (``title`` when one runs)."""
        self._clear_running()
        if not self._in_progress:
            return
        width = len(str(self.planned))
        position = f"[{self.done + 1:>{width}}/{self.planned}]" if self.planned else ""
        names = ", ".join(f"{cid} [{subject}]" for cid, subject in self._in_progress)
        if len(self._in_progress) == 1 and title is not None:
            cid, subject = self._in_progress[0]
            names = f"{cid} {title} [{subject}]"
        line = f"{position} running {names} ..."
        columns = shutil.get_terminal_size((100, 20)).columns
        self._write(clean(line)[: max(columns - 1, 20)])
        self._running = True

    def check_finished(self, result: CheckResult) -> None:
        """Print the check's line: outcome, id, subject, duration, then its reason if any."""
        self._clear_running()
        with contextlib.suppress(ValueError):
            self._in_progress.remove((result.id, result.subject))
        self.done += 1
        label = _LABELS[result.outcome]
        outcome = self._paint(f"{label:<5}", _COLOURS[result.outcome])
        width = len(str(self.planned))
        position = f"[{self.done:>{width}}/{self.planned}]" if self.planned else ""
        self._write(
            f"{position} {outcome} {result.id}  {clean(result.check.title)} [{result.subject}]"
            f"  ({format_duration(result.duration_s)})\n"
        )
        reasons = [result.message] if result.message else []
        if result.waiver:
            reasons.append(f"waived in [tool.cdk.certify] waive: {result.waiver}")
        for text in reasons:
            reason = clean(text)
            if len(reason) > _REASON_LIMIT:
                reason = reason[:_REASON_LIMIT] + " ... (full text in the report)"
            columns = max(shutil.get_terminal_size((100, 20)).columns - 1, 40)
            for line in reason.splitlines() or [""]:
                self._write(
                    textwrap.fill(
                        line,
                        width=columns,
                        initial_indent="        ",
                        subsequent_indent="        ",
                        break_long_words=True,
                    )
                    + "\n"
                )
        evidence = compact_lines(result.evidence)
        for line in evidence[:_EVIDENCE_LINES]:
            line = clean(line)
            if len(line) > 200:
                line = line[:197] + "..."
            self._write(f"        {line}\n")
        if len(evidence) > _EVIDENCE_LINES:
            self._write(f"        ... ({len(evidence) - _EVIDENCE_LINES} more in the report)\n")
        if self.tty:
            self._show_running()

    def finished(self, run: CertificationRun) -> None:
        """Print counts per suite, the verdict and the exit status."""
        self._clear_running()
        by_suite = suite_counts(run.results)
        times: dict[str, float] = {}
        for r in run.results:
            times[r.check.suite] = times.get(r.check.suite, 0.0) + r.duration_s
        heads = ["suite", *(o.value.replace(" ", "-") for o in OUTCOME_ORDER), "total", "time"]
        rows = [
            [
                suite,
                *(str(n[o.value]) for o in OUTCOME_ORDER),
                str(n["total"]),
                format_duration(times.get(suite, 0.0)),
            ]
            for suite, n in by_suite.items()
        ]
        total = counts(run.results)
        rows.append(
            [
                "all",
                *(str(total[o.value]) for o in OUTCOME_ORDER),
                str(total["total"]),
                format_duration(run.duration_s),
            ]
        )
        widths = [max(len(row[i]) for row in [heads, *rows]) for i in range(len(heads))]

        def line(cells: list[str]) -> str:
            first = cells[0].ljust(widths[0])
            rest = "  ".join(c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True))
            return f"  {first}  {rest}\n"

        rule = "  " + "-" * (sum(widths) + 2 * (len(widths) - 1)) + "\n"
        found = verdict(run)
        where = describe(run.timing)
        if where:
            self._write("\n" + "".join(f"{clean(line)}\n" for line in where))
        abandoned = run.abandoned
        if abandoned:
            self._write(
                f"\nAbandoned ({len(abandoned)}):\n"
                + "".join(f"  {clean(line)[:_REASON_LIMIT]}\n" for line in abandoned)
            )
        self._write(
            "\n"
            + line(heads)
            + rule
            + "".join(line(row) for row in rows[:-1])
            + rule
            + line(rows[-1])
            + "\n"
            + f"Verdict: {self._paint(found, _COLOURS[found])}. {clean(verdict_reason(run))}\n"
            + "".join(
                f"Waived: {r.id} [{r.subject}] ({r.outcome}): {clean(r.waiver)}\n"
                for r in run.results
                if r.waiver
            )
            + f"Exit status: {run.exit_code}\n"
        )
