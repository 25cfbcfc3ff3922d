"""The incremental cursor (cdk.http._cursor): offsets, ordering, and resume without skip/repeat.

The property test plays an API that answers "records with cursor >= since" in cursor order (ties
in a random order), cut into pages of random sizes, and restarts the reader at every offset it
emitted: what is emitted before the restart plus what the resumed run emits must be every record
exactly once. The same check run on a naive cursor (strict ``>`` on the cursor alone) finds a
skip, and on a naive inclusive cursor a repeat: the check can fail.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from collections import Counter
from dataclasses import dataclass
from typing import Any, Protocol

import pytest
from hypothesis import find, given
from hypothesis import strategies as st

from cdk.errors import ConfigException, DataException
from cdk.http import CursorStream, IncrementalCursor

_UTC = dt.timezone.utc
_BASE = dt.datetime(2024, 5, 1, 10, 0, 0, tzinfo=_UTC)
_PLUS2 = dt.timezone(dt.timedelta(hours=2))

Offset = dict[str, str]
Emitted = list[tuple[dict[str, Any], Offset]]


# -- the API and the readers -----------------------------------------------------------------------
def _spell(instant: dt.datetime, how: int) -> Any:
    """One of the spellings APIs use for an instant (all the same instant)."""
    if how == 0:
        return instant.strftime("%Y-%m-%dT%H:%M:%SZ")
    if how == 1:
        return instant.isoformat()  # +00:00
    if how == 2:
        return instant.astimezone(_PLUS2).isoformat()
    if how == 3:
        return instant.strftime("%Y-%m-%dT%H:%M:%S.000Z")
    if how == 4:
        return int(instant.timestamp() * 1000)  # epoch milliseconds
    return int(instant.timestamp())  # epoch seconds


def _instant(value: Any) -> dt.datetime:
    """The test's own reading of a spelling (independent of the code under test)."""
    if isinstance(value, int):
        return dt.datetime.fromtimestamp(value / 1000 if value > 10**11 else value, _UTC)
    return dt.datetime.strptime(
        value.replace("Z", "+0000").replace(".000", ""), "%Y-%m-%dT%H:%M:%S%z"
    )


@dataclass
class Scenario:
    records: list[dict[str, Any]]
    seed: int  # of the tie order and page sizes of each answer

    def __post_init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.rng = random.Random(self.seed)

    def answer(self, since: str | None, *, strict: bool) -> list[list[dict[str, Any]]]:
        """Records with cursor >= since (> when strict), in cursor order, ties shuffled, paged."""
        if since is None:
            chosen = list(self.records)
        else:
            start = _instant(int(since) if since.isdigit() else since)
            chosen = [
                r
                for r in self.records
                if _instant(r["updated_at"]) > start
                or (not strict and _instant(r["updated_at"]) == start)
            ]
        self.rng.shuffle(chosen)
        chosen.sort(key=lambda r: _instant(r["updated_at"]))  # stable: ties stay shuffled
        pages: list[list[dict[str, Any]]] = []
        while chosen:
            size = self.rng.randint(1, 4)
            pages.append(chosen[:size])
            chosen = chosen[size:]
        return pages


class Reader(Protocol):
    def run(self, offset: Offset | None, api: Scenario) -> Emitted: ...


class Ours:
    cursor = IncrementalCursor("updated_at", "id")

    def run(self, offset: Offset | None, api: Scenario) -> Emitted:
        position = self.cursor.start(offset, None)
        stream: CursorStream = self.cursor.stream(position)
        out: Emitted = []
        for page in api.answer(self.cursor.query_value(position), strict=False):
            out += [(r, self.cursor.offset_after(r)) for r in stream.push(page)]
        return out + [(r, self.cursor.offset_after(r)) for r in stream.close()]


class NaiveStrict:
    """The classic bug: store the last cursor value, ask for records strictly after it."""

    def run(self, offset: Offset | None, api: Scenario) -> Emitted:
        since = None if offset is None else offset["cursor"]
        pages = api.answer(since, strict=True)
        return [(r, {"cursor": str(r["updated_at"])}) for page in pages for r in page]


class NaiveInclusive:
    """The opposite mistake: ask for records at or after the last value, filter nothing."""

    def run(self, offset: Offset | None, api: Scenario) -> Emitted:
        since = None if offset is None else offset["cursor"]
        pages = api.answer(since, strict=False)
        return [(r, {"cursor": str(r["updated_at"])}) for page in pages for r in page]


def _ids(emitted: Emitted) -> list[int]:
    return [r["id"] for r, _ in emitted]


def _problems(reader: Reader, scenario: Scenario) -> list[str]:
    """What goes wrong when the reader restarts at each offset it emitted (empty: nothing)."""
    scenario.reset()
    everything = {r["id"] for r in scenario.records}
    full = reader.run(None, scenario)
    problems = []
    if sorted(_ids(full)) != sorted(everything):
        problems.append(f"one run emitted {_ids(full)} of {sorted(everything)}")
    for k in range(len(full)):
        combined = _ids(full[: k + 1]) + _ids(reader.run(full[k][1], scenario))
        missing = everything - set(combined)
        repeated = sorted(i for i, n in Counter(combined).items() if n > 1)
        if missing or repeated:
            problems.append(
                f"restart at {full[k][1]}: missing {sorted(missing)}, repeated {repeated}"
            )
    return problems


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    n = draw(st.integers(0, 24))
    ids = draw(st.lists(st.integers(0, 500), min_size=n, max_size=n, unique=True))
    records = [
        {
            "id": i,
            "updated_at": _spell(
                _BASE + dt.timedelta(seconds=draw(st.integers(0, 4))), draw(st.integers(0, 5))
            ),
        }
        for i in ids
    ]
    return Scenario(records, draw(st.integers(0, 2**32)))


# -- the properties --------------------------------------------------------------------------------
@given(scenarios())
def test_restart_at_every_emitted_offset_emits_each_record_exactly_once(scenario: Scenario) -> None:
    assert _problems(Ours(), scenario) == []


@given(scenarios(), st.lists(st.integers(0, 6), max_size=6))
def test_repeated_crashes_emit_each_record_exactly_once(
    scenario: Scenario, crashes: list[int]
) -> None:
    reader, offset, emitted = Ours(), None, []
    for crash_after in crashes:  # a crash after some records: their offsets were committed
        run = reader.run(offset, scenario)[:crash_after]
        emitted += run
        if run:
            offset = run[-1][1]
    emitted += reader.run(offset, scenario)
    assert sorted(_ids(emitted)) == sorted(r["id"] for r in scenario.records)


@given(scenarios())
def test_one_run_emits_in_cursor_then_tie_order(scenario: Scenario) -> None:
    emitted = Ours().run(None, scenario)
    keys = [(_instant(r["updated_at"]), r["id"]) for r, _ in emitted]
    assert keys == sorted(keys)


def test_naive_strict_cursor_skips_and_the_check_sees_it() -> None:
    counterexample = find(scenarios(), lambda s: bool(_problems(NaiveStrict(), s)))
    assert any(
        "missing [" in p and "missing []" not in p for p in _problems(NaiveStrict(), counterexample)
    )
    assert _problems(Ours(), counterexample) == []


def test_naive_inclusive_cursor_repeats_and_the_check_sees_it() -> None:
    counterexample = find(scenarios(), lambda s: bool(_problems(NaiveInclusive(), s)))
    assert any(
        "repeated [" in p and "repeated []" not in p
        for p in _problems(NaiveInclusive(), counterexample)
    )


def test_the_classic_scenario_two_records_sharing_the_last_timestamp() -> None:
    # A page boundary and a restart between two records of the same second.
    records = [
        {"id": 1, "updated_at": "2024-05-01T10:00:00Z"},
        {"id": 2, "updated_at": "2024-05-01T10:00:00Z"},
    ]
    naive = NaiveStrict().run(None, Scenario(records, 1))
    resumed = NaiveStrict().run(naive[0][1], Scenario(records, 1))
    assert resumed == []  # the naive reader never reads the second record again
    assert _problems(NaiveStrict(), Scenario(records, 1))
    assert _problems(Ours(), Scenario(records, 1)) == []


# -- offsets ---------------------------------------------------------------------------------------
def test_offset_format_is_cursor_and_tie_text() -> None:
    cursor = IncrementalCursor("meta.updated", "id")
    offset = cursor.offset_after({"id": 7, "meta": {"updated": "2024-05-01T10:00:00Z"}})
    assert offset == {"cursor": "2024-05-01T10:00:00Z", "tie": "7"}
    assert json.loads(json.dumps(offset)) == offset
    assert cursor.query_value(offset) == "2024-05-01T10:00:00Z"
    assert cursor.query_value(None) is None
    millis = IncrementalCursor("ts", "key").offset_after({"ts": 1714557600000, "key": "a-1"})
    assert millis == {"cursor": "1714557600000", "tie": "a-1"}


def test_start_prefers_the_stored_offset_then_the_initial_value() -> None:
    cursor = IncrementalCursor("updated_at", "id")
    stored = {"cursor": "2024-05-01T10:00:00Z", "tie": "7"}
    assert cursor.start(stored, "2020-01-01T00:00:00Z") == stored
    assert cursor.start(None, "2020-01-01T00:00:00Z") == {"cursor": "2020-01-01T00:00:00Z"}
    assert cursor.start(None, None) is None


@pytest.mark.parametrize("stored", [{"cursor": 5}, {"position": "x"}, {"cursor": "x", "tie": 3}])
def test_start_rejects_an_offset_it_did_not_write(stored: dict[str, Any]) -> None:
    with pytest.raises(DataException, match="is not a cursor offset"):
        IncrementalCursor("updated_at", "id").start(stored)


def test_start_rejects_values_of_the_wrong_kind() -> None:
    with pytest.raises(DataException, match=r'"updated_at" value \'yesterday\' is not a timestamp'):
        IncrementalCursor("updated_at", "id").start(None, "yesterday")
    with pytest.raises(DataException, match="is not a sequence"):
        IncrementalCursor("seq", "id", kind="sequence").start({"cursor": "1.5", "tie": "1"})
    with pytest.raises(ConfigException, match="Invalid value hour for configuration kind"):
        IncrementalCursor("a", "b", kind="hour")  # type: ignore[arg-type]


def test_filter_drops_what_the_offset_covers_and_keeps_the_rest_of_its_value() -> None:
    cursor = IncrementalCursor("t", "id", kind="sequence")
    records = [
        {"t": 5, "id": 10},
        {"t": 4, "id": 1},
        {"t": 5, "id": 9},
        {"t": 5, "id": 11},
        {"t": 6, "id": 0},
    ]
    kept = cursor.filter(records, {"cursor": "5", "tie": "10"})
    assert [(r["t"], r["id"]) for r in kept] == [(5, 11), (6, 0)]
    from_initial = cursor.filter(records, cursor.start(None, 5))
    assert [(r["t"], r["id"]) for r in from_initial] == [(5, 9), (5, 10), (5, 11), (6, 0)]
    assert len(cursor.filter(records, None)) == 5


# -- ordering --------------------------------------------------------------------------------------
def test_timestamps_compare_as_instants() -> None:
    cursor = IncrementalCursor("t", "id")
    records = [
        {"t": "2024-05-01T10:30:00Z", "id": 1},
        {"t": "2024-05-01T12:00:00+02:00", "id": 2},  # 10:00Z
        {"t": "2024-05-01T10:00:00.5Z", "id": 3},
        {"t": "2024-05-01T10:00:00.25Z", "id": 4},
        {"t": 1714557600, "id": 5},  # 10:00:00Z in epoch seconds
        {"t": 1714557599999, "id": 6},  # 09:59:59.999Z in epoch milliseconds
        {"t": "2024-05-01T05:00:00-05:00", "id": 7},  # 10:00Z
        {"t": "2024-05-01T10:00:00.000000001Z", "id": 8},
    ]
    assert [r["id"] for r in cursor.sort(records)] == [6, 2, 5, 7, 8, 4, 3, 1]


def test_sequences_and_ties_compare_as_integers_when_both_are() -> None:
    cursor = IncrementalCursor("seq", "id", kind="sequence")
    records = [
        {"seq": "10", "id": 1},
        {"seq": 9, "id": 10},
        {"seq": 9, "id": 9},
        {"seq": 9, "id": "b"},
    ]
    assert [(r["seq"], r["id"]) for r in cursor.sort(records)] == [
        (9, 9),
        (9, 10),
        (9, "b"),
        ("10", 1),
    ]
    # a stored tie "10" reads back as the integer 10, so 9 < 10 < 11 holds after a restart
    assert [
        r["id"]
        for r in cursor.filter(
            [{"seq": 9, "id": 11}, {"seq": 9, "id": 9}], {"cursor": "9", "tie": "10"}
        )
    ] == [11]


def test_string_cursors_compare_as_text() -> None:
    cursor = IncrementalCursor("v", "id", kind="string")
    assert [
        r["v"] for r in cursor.sort([{"v": "b", "id": 1}, {"v": "B", "id": 1}, {"v": "a", "id": 1}])
    ] == ["B", "a", "b"]


def test_missing_cursor_or_tie_names_the_field_and_the_record() -> None:
    cursor = IncrementalCursor("updated_at", "id")
    with pytest.raises(
        DataException, match=r'id=42 has no value for the cursor field "updated_at"'
    ) as info:
        cursor.sort([{"id": 42, "updated_at": None}])
    assert info.value.field == "updated_at"
    with pytest.raises(DataException, match=r'has no value for the tie-breaker field "id"') as info:
        cursor.offset_after({"updated_at": "2024-05-01T10:00:00Z"})
    assert info.value.field == "id"
    with pytest.raises(DataException, match=r"'soon' is not a timestamp"):
        cursor.sort([{"id": 1, "updated_at": "soon"}])


# -- the stream ------------------------------------------------------------------------------------
def test_stream_holds_back_the_last_value_of_a_page_until_the_next_one() -> None:
    cursor = IncrementalCursor("t", "id", kind="sequence")
    stream = cursor.stream(None)
    assert [r["id"] for r in stream.push([{"t": 1, "id": 1}, {"t": 2, "id": 5}])] == [1]
    assert stream.held == 1
    # the next page brings another record of t=2 with a smaller tie, and a copy of id 5
    out = stream.push([{"t": 2, "id": 3}, {"t": 2, "id": 5}, {"t": 3, "id": 0}])
    assert [r["id"] for r in out] == [3, 5]
    assert [r["id"] for r in stream.close()] == [0]
    assert stream.close() == []
    assert stream.push([{"t": 2, "id": 4}]) == []  # before the position: already past it
