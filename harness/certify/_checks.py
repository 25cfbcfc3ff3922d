"""Checks, their registry, and the outcome of running one.

A check is a function of a :class:`~harness.certify.CheckContext` registered with :func:`check`
under a stable id (``OFF-01``), a title, the suite it belongs to, the connector kinds it applies
to, the environment it needs (``kafka``; ``spark`` for the distributed checks) and the driver
capabilities it needs. It passes by returning; it fails by raising :class:`CheckFailed` with what
was expected and what happened. It raises :class:`CheckNotVerified` when it cannot run here (the
driver lacks a capability, the environment lacks something): the connector is then not
verified, which a required check's verdict never counts as passed. It is skipped, with
:class:`CheckSkipped` and a reason, only when it does not apply to the connector at all.
"""

from __future__ import annotations

import enum
import inspect
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from harness.certify._context import CheckContext

__all__ = [
    "KINDS",
    "NOT_APPLICABLE",
    "SUITES",
    "Check",
    "CheckFailed",
    "CheckNotVerified",
    "CheckResult",
    "CheckSkipped",
    "Kind",
    "Metric",
    "Outcome",
    "Series",
    "check",
    "registered_checks",
]

Kind = Literal["source", "sink"]
#: What a check must have to itself when checks run at the same time (:attr:`Check.exclusive`).
Exclusive = bool | Literal["kafka"]
KINDS: tuple[Kind, ...] = ("source", "sink")

#: The suites, in report order, with what each proves.
SUITES: dict[str, str] = {
    "CFG": "Configuration: definition, documentation, validation, task configs, secrets",
    "SCH": "Schemas: valid records, converter round trips, schemaless data, schema migration",
    "OFF": "Offsets: resume after stop and crash, committed offsets, the offsets REST API",
    "ACK": "Acknowledgements: a queue source acknowledges only what Kafka has, and loses nothing",
    "RST": "Restart: REST restarts, failed-task recovery, pause and resume, clean stop",
    "RBL": "Rebalance: tasks.max changes, dynamic reconfiguration, sink partition rebalance",
    "ERR": "Errors: retriable and fatal errors, errors.tolerance and the dead letter queue",
    "DOC": "Documentation: generated config reference, README sections, license",
    "PKG": "Packaging: the wheel builds, declares its plugins and does not bundle the kit",
    "PRF": "Performance: throughput and latency on the broker (reported)",
}

_ID = re.compile(r"^(?P<suite>[A-Z]{3})-\d{2}$")


class Outcome(str, enum.Enum):
    """How a check ended."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"  # the check itself (or the driver) could not run
    SKIPPED = "skipped"  # not applicable to this connector (the reason says why)
    NOT_VERIFIED = "not verified"  # applicable, but the driver or environment cannot run it

    def __str__(self) -> str:
        return self.value


class CheckFailed(Exception):
    """The connector does not do what the check expects.

    Args:
        expected: what a correct connector does, in one sentence.
        actual: what happened instead, with figures (counts, ids, states).
        details: more evidence for the report (a trace, a list of ids), or None.
    """

    def __init__(self, expected: str, actual: str, details: str | None = None) -> None:
        super().__init__(f"expected {expected}; but {actual}")
        self.expected = expected
        self.actual = actual
        self.details = details


#: Why a check may be skipped: it does not apply to the connector, for one of these reasons
#: and no other (a check that applies but cannot run is not verified). The certification
#: checklist renders this list; ``because`` of :class:`CheckSkipped` names one of its keys.
NOT_APPLICABLE: dict[str, str] = {
    "no-external-system": (
        "the driver declares ``external_system = False``: the connector talks to no external "
        "system, so nothing can fail or become unavailable (ERR-01, ERR-02)"
    ),
    "accepts-any-schema": (
        "the driver declares ``accepts_any_schema``: the sink stores any record whatever its "
        "schema, so no schema is incompatible (SCH-08), and with a value schema that is not a "
        "STRUCT there is no field to add or drop (SCH-06, SCH-07)"
    ),
    "schemaless-source": (
        "the source emits records without schemas only, and Avro needs one (SCH-04)"
    ),
    "no-invalid-config": (
        "the ConfigDef has no required key and no key a value can be invalid for, so no "
        "config is invalid (CFG-05)"
    ),
    "no-password": "the connector's ConfigDef has no PASSWORD key, so nothing can leak (CFG-08)",
    "acknowledging-source": (
        "the driver declares ``source_kind = SourceKind.ACKNOWLEDGING``: the source system (a "
        "queue) redelivers what the connector did not acknowledge and cannot be read again from "
        "a stored offset, so the checks that replay or reset a source from its offsets do not "
        "apply (OFF-02, whose crash check for such a source is ACK-02; OFF-03; OFF-04; the "
        "source side of OFF-08; OFF-10; OFF-11)"
    ),
    "replayable-source": (
        "the source is replayable (``source_kind = SourceKind.REPLAYABLE``, the default): it "
        "resumes from the offsets the worker stores and acknowledges nothing in the source "
        "system, so the acknowledgement checks do not apply (ACK-01 to ACK-04)"
    ),
    "other-runtime": (
        "the check runs the connector in another runtime than the run's: distributed mode on "
        "Spark (``--runtime distributed``: OFF-09, RST-06, RBL-05, RBL-06) or Spark pipelines "
        "(``--runtime spark``: OFF-10, OFF-11, OFF-12)"
    ),
    "no-exactly-once": (
        "the source does not declare exactly-once support (its ``exactly_once_support(config)`` "
        "does not answer ``ExactlyOnceSupport.SUPPORTED`` for the example config), so the "
        "exactly-once check does not apply (OFF-13)"
    ),
}


class CheckSkipped(Exception):
    """The check does not apply here; ``reason`` says why (always given).

    Args:
        reason: why, for this connector, in words.
        because: which of the :data:`NOT_APPLICABLE` reasons it is (a check that applies but
            cannot run raises :class:`CheckNotVerified` instead).

    Raises:
        ValueError: no reason, or ``because`` is not a key of :data:`NOT_APPLICABLE`.
    """

    def __init__(self, reason: str, *, because: str) -> None:
        if not reason:
            raise ValueError("a skipped check needs a reason")
        if because not in NOT_APPLICABLE:
            raise ValueError(
                f"a check is skipped only when it does not apply ({', '.join(NOT_APPLICABLE)}), "
                f"not for {because!r}: a check that applies but cannot run is not verified"
            )
        super().__init__(reason)
        self.reason = reason
        self.because = because


class CheckNotVerified(Exception):
    """The check applies but cannot run here; ``reason`` says what is missing (always given).

    Raised for a driver that lacks a capability the check needs (``outage()``,
    ``read_values()``, ``streams > 1``...) or an environment that lacks something. The connector
    is then not verified: a required check left not verified makes the run INCOMPLETE, unless
    the project waives it with a written reason (``[tool.cdk.certify] waive``).
    """

    def __init__(self, reason: str) -> None:
        if not reason:
            raise ValueError("a check that is not verified needs a reason")
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Check:
    """A registered check.

    Attributes:
        id: the stable id, ``SUITE-NN``.
        title: what a passing connector does, in a few words.
        kinds: the connector kinds it applies to.
        needs: what the environment must provide (``kafka``, ``spark``...).
        required: whether certification needs it: it must pass, or not apply, or be waived
            (optional checks only report).
        capabilities: what the check needs from the driver beyond the basics, as the driver
            contract names it (``outage()``, ``read_values()``, ``streams > 1``...): without
            it a required check is not verified.
        per_project: it checks the project (README, wheel), not a connector: it runs once,
            with the project's first driver.
        run: the check function.
        description: what the check proves, for the report and the docs' checklist (the
            function's docstring, dedented; its inline RST renders as markup).
        fix: how to fix a failure, in a sentence or two (inline RST, as ``description``).
        exclusive: what it must have to itself when checks run at the same time (``cdk
            certify --jobs N``): ``True``, everything (no other check runs while it does: it
            measures throughput and latency); ``"kafka"``, the broker (no other check that
            needs Kafka runs while it does: it stalls the broker); ``False``, nothing.
        source_kind: for a check of sources of one kind only (``"replayable"`` or
            ``"acknowledging"``, a :class:`harness.SourceKind` value): a source driver of the
            other kind gets it SKIPPED before it runs (it stalls and holds nothing).
    """

    id: str
    title: str
    kinds: frozenset[Kind]
    needs: frozenset[str]
    required: bool
    run: Callable[[CheckContext], None]
    description: str = ""
    per_project: bool = False
    fix: str = ""
    capabilities: tuple[str, ...] = ()
    exclusive: Exclusive = False
    source_kind: str | None = None

    @property
    def suite(self) -> str:
        """The suite the check belongs to (the id's prefix)."""
        return self.id.split("-", 1)[0]

    def matches(self, selector: str) -> bool:
        """Whether ``selector`` (an id, or a suite name such as ``OFF``) selects this check."""
        selector = selector.strip().upper()
        return selector in (self.id, self.suite)


@dataclass(frozen=True)
class Metric:
    """A measured figure reported by a check (PRF), with an optional threshold."""

    name: str
    value: float
    unit: str
    threshold: float | None = None
    higher_is_better: bool = True

    @property
    def met(self) -> bool | None:
        """Whether the threshold is met; None without a threshold."""
        if self.threshold is None:
            return None
        if self.higher_is_better:
            return self.value >= self.threshold
        return self.value <= self.threshold


@dataclass(frozen=True)
class Series:
    """Points for a plot in the report (e.g. records delivered over time)."""

    name: str
    x_label: str
    y_label: str
    points: tuple[tuple[float, float], ...]


@dataclass
class CheckResult:
    """The outcome of one check against one driver."""

    check: Check
    subject: str  # the driver's name (e.g. ``SqliteSourceDriver``)
    kind: Kind
    outcome: Outcome
    message: str = ""
    expected: str | None = None
    actual: str | None = None
    details: str | None = None
    duration_s: float = 0.0
    #: The CPU time of the check's process (and of the processes it waited for) while it ran.
    cpu_s: float = 0.0
    metrics: list[Metric] = field(default_factory=list)
    series: list[Series] = field(default_factory=list)
    waiver: str | None = None  # the project's written reason to accept it unverified
    #: What the check saw, by name (plain JSON data): see :meth:`CheckContext.evidence`.
    evidence: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        """The check's id."""
        return self.check.id

    def to_json(self) -> dict[str, Any]:
        """The result as JSON-ready data (the summary's ``checks`` entries)."""
        return {
            "id": self.check.id,
            "suite": self.check.suite,
            "title": self.check.title,
            "subject": self.subject,
            "kind": self.kind,
            "required": self.check.required,
            "capabilities": list(self.check.capabilities),
            "outcome": str(self.outcome),
            "waiver": self.waiver,
            "message": self.message,
            "expected": self.expected,
            "actual": self.actual,
            "details": self.details,
            "duration_s": round(self.duration_s, 3),
            "metrics": [
                {
                    "name": m.name,
                    "value": m.value,
                    "unit": m.unit,
                    "threshold": m.threshold,
                    "met": m.met,
                }
                for m in self.metrics
            ],
            "evidence": self.evidence,
        }


_REGISTRY: dict[str, Check] = {}


def check(
    id: str,
    title: str,
    *,
    kinds: Iterable[Kind] = KINDS,
    needs: Iterable[str] = ("kafka",),
    required: bool = True,
    per_project: bool = False,
    fix: str = "",
    capabilities: Iterable[str] = (),
    exclusive: Exclusive = False,
    source_kind: str | None = None,
) -> Callable[[Callable[[CheckContext], None]], Callable[[CheckContext], None]]:
    """Register the decorated function as check ``id``.

    The function's docstring is the check's description; ``fix`` says how to make a failing
    connector pass. Both are inline RST, rendered in the report and in the docs' checklist.
    ``capabilities`` names what the check needs from the driver (shown in the checklist and
    ``cdk certify --list``); the check raises :class:`CheckNotVerified` when one is missing.
    ``exclusive`` says what it must have to itself in a concurrent run (``cdk certify --jobs
    N``): ``True`` to run alone (a check that measures), ``"kafka"`` to run while no other
    check uses the broker (a check that stalls it), see :attr:`Check.exclusive`.
    ``source_kind`` limits a check of sources to one kind, see :attr:`Check.source_kind`.

    Raises:
        ValueError: the id is malformed, names an unknown suite, or is taken; or
            ``exclusive`` is none of ``False``, ``True`` and ``"kafka"``.
    """
    if exclusive not in (False, True, "kafka"):
        raise ValueError(f"exclusive must be False, True or 'kafka', not {exclusive!r}")
    if source_kind not in (None, "replayable", "acknowledging"):
        raise ValueError(
            f"source_kind must be None, 'replayable' or 'acknowledging', not {source_kind!r}"
        )
    match = _ID.match(id)
    if match is None or match["suite"] not in SUITES:
        raise ValueError(f"check id {id!r} is not SUITE-NN with a suite in {sorted(SUITES)}")

    def register(fn: Callable[[CheckContext], None]) -> Callable[[CheckContext], None]:
        known = _REGISTRY.get(id)
        if known is not None and _qualified(known.run) != _qualified(fn):
            raise ValueError(
                f"check id {id} is registered twice: {_qualified(known.run)} and {_qualified(fn)}"
            )
        doc = inspect.cleandoc(fn.__doc__ or "")
        _REGISTRY[id] = Check(
            id,
            title,
            frozenset(kinds),
            frozenset(needs),
            required,
            fn,
            description=doc,
            per_project=per_project,
            fix=inspect.cleandoc(fix),
            capabilities=tuple(capabilities),
            exclusive=exclusive,
            source_kind=source_kind,
        )
        return fn

    return register


def _qualified(fn: Callable[..., object]) -> str:
    # a module imported again (pytester, importlib.reload) registers the same checks again
    return f"{fn.__module__}.{fn.__qualname__}"


def registered_checks() -> list[Check]:
    """Every check registered so far, by suite (report order) then id.

    The runner's :func:`harness.certify.all_checks` imports the suites first; this module never
    does (the suites import it).
    """
    order = {suite: n for n, suite in enumerate(SUITES)}
    return sorted(_REGISTRY.values(), key=lambda c: (order[c.suite], c.id))
