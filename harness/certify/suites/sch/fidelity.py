"""SCH-09: every value comes back exactly, hostile ones included (within declared limits).

The values come from :mod:`harness.strategies` (``hostile_values_for``, ``corner_values_for``),
inside the driver's :class:`~harness.Limit` declarations; the sink flow is in
:mod:`._hostile_sink`, the source flow in :mod:`._hostile_source`.
"""

from __future__ import annotations

from harness.certify._checks import check
from harness.certify._context import CheckContext
from harness.certify.suites.sch._hostile_sink import sink_fidelity
from harness.certify.suites.sch._hostile_source import source_fidelity

__all__: list[str] = []


@check(
    "SCH-09",
    "Every value comes back exactly, edge values included",
    capabilities=("read_values() (sink)", "value_schema() and write_values() (source)"),
    fix=(
        "Store each value in a type that holds all of it (``TEXT``/``LONGTEXT`` and a UTF-8 "
        "character set for strings, ``BIGINT`` or ``NUMERIC`` for INT64, a timestamp in UTC "
        "with milliseconds), escape what your format needs escaped, and never trim, cut or "
        "re-encode. A limit the system truly has goes in the driver's ``value_limits`` with "
        "its reason (``Limit.max_length('name', 255, 'VARCHAR(255)')``). Reproduce a failure "
        "with ``cdk certify --only SCH-09 --seed N`` (the seed is in the evidence)."
    ),
)
def hostile_round_trip(ctx: CheckContext) -> None:
    r"""Values from the hard corners of every Connect type come back exactly.

    The values are drawn from the driver's value schema (``value_schema()``), field by field:
    strings empty, blank and padded, in 1-to-4-byte UTF-8 (accents, CJK, emoji, combining
    marks, right-to-left text), with control characters (``\\n``, ``\\r``, ``\\t``, NUL),
    quotes, backslashes and the metacharacters of JSON, CSV and SQL, and 64 KiB long;
    integers at the bounds of their width and past 2^53; floats at ``-0.0``, their extremes
    and subnormals; decimals with every digit of their scale, negative and zero; dates and
    timestamps from year 1 to 9999 with milliseconds; bytes with NUL and high bytes; null for
    optional fields. Every corner value is sent, then values hypothesis draws with the run's
    seed (``cdk certify --seed N`` draws the same ones again). A sink gets them from Kafka
    (JsonConverter) and every stored field must equal what was sent (``read_values()``); a
    source driver writes them into the external system (``write_values()``) and every emitted
    field must equal what was written. The limits the driver declares (``value_limits``) keep
    the values inside what the system can hold, and are listed with their reasons. A failure
    names the record, the field, the value sent and the value that came back, and the
    smallest failing value the harness found by trying smaller ones. Not verified without
    ``read_values()`` (sinks) or ``value_schema()`` and ``write_values()`` (sources).
    """
    if ctx.kind == "sink":
        sink_fidelity(ctx)
    else:
        source_fidelity(ctx)
