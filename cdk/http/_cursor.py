"""An incremental cursor: the source offset of an API read by "records changed since".

Incremental sources ask an API for the records whose cursor field (``updated_at``, a sequence
number) is at or after the last value read, and store that value as the source offset. Done
naively (store the last cursor value, ask for records *strictly after* it) this skips records:
when several records share the last value and a page boundary, a restart or a crash falls
between them, the ones not yet emitted are never asked for again. Asking *at or after* instead
repeats the records already emitted.

:class:`IncrementalCursor` does neither: each record's offset holds its cursor value *and* its
tie-breaker (a unique field such as ``id``), records are emitted in (cursor, tie-breaker) order,
the API is asked for records with cursor >= the stored value, and those at or before the stored
(cursor, tie-breaker) are dropped. A resume never skips a record sharing the last value and never
repeats one already emitted.

The source offset of each record (:meth:`IncrementalCursor.offset_after`) is::

    {"cursor": "<the record's cursor value as text>", "tie": "<its tie-breaker as text>"}

The texts are those of the JSON values (numbers in decimal), so the offset is JSON-able and the
cursor text can be sent back to the API as its ``since`` parameter (:meth:`query_value`).

What the API must do: return *every* record with cursor >= the value asked for, in cursor order
across pages (records sharing a value, and the records inside one page, may come in any order).
:class:`CursorStream` sorts each page and holds back the records of a page's last cursor value
until the next page shows whether more records share it.

Cursor kinds: ``"timestamp"`` compares instants (ISO-8601 with ``Z`` or an offset, or epoch
numbers: seconds, or milliseconds from 1e11 on), ``"sequence"`` integers, ``"string"`` text
(code point order, which must be the API's). Tie-breakers compare as integers when both are
integers (an ``int``, or text without leading zeros), else as text (integers first).
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from cdk.errors import ConfigException, DataException
from cdk.http._paginators import _path_value
from cdk.http._schema import epoch_nanos, parse_timestamp

__all__ = ["CursorStream", "IncrementalCursor"]

#: The kinds of cursor field.
CursorKind = Literal["timestamp", "sequence", "string"]

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_INTEGER = re.compile(r"[+-]?\d+")
_CANONICAL_INT = re.compile(r"-?(?:0|[1-9]\d*)")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")

_CursorKey = int | str
_TieKey = tuple[int, int | str]
#: (cursor key, tie key); a tie key of None sorts before every tie (an offset with no "tie").
_Key = tuple[_CursorKey, _TieKey | None]


class IncrementalCursor:
    """Source offsets, query value and record order of an incremental ("since") API.

    Example::

        cursor = IncrementalCursor("updated_at", "id")
        stored = context.offset_storage_reader.offset(partition)
        offset = cursor.start(stored, initial_value="2024-01-01T00:00:00Z")
        stream = cursor.stream(offset)
        page = paginator.first(url, {"updated_since": cursor.query_value(offset) or ""})
        while page is not None:
            response = client.get(page.url, params=page.params)
            records = records_at(response.json(), "data")
            emit(stream.push(records))  # each with source_offset=cursor.offset_after(record)
            page = paginator.next(page, response, records)
        emit(stream.close())  # the records held back by the last page

    Args:
        field: dotted path of the cursor field in a record.
        tie_breaker: dotted path of a field unique among records sharing a cursor value.
        kind: how cursor values compare: ``"timestamp"``, ``"sequence"`` or ``"string"``.
    """

    def __init__(self, field: str, tie_breaker: str, *, kind: CursorKind = "timestamp") -> None:
        if kind not in ("timestamp", "sequence", "string"):
            raise ConfigException("kind", kind, "must be timestamp, sequence or string")
        self.field = field
        self.tie_breaker = tie_breaker
        self.kind: CursorKind = kind

    def start(
        self, stored_offset: Mapping[str, Any] | None, initial_value: Any = None
    ) -> dict[str, str] | None:
        """The position to resume from: the stored offset, else the initial value, else None.

        An initial value makes every record at that value or after it read; ``None`` means
        reading from the beginning (no ``since`` parameter).

        Raises:
            DataException: the stored offset is not one this cursor writes, or a value does not
                parse as the cursor's kind.
        """
        if stored_offset is not None:
            cursor, tie = stored_offset.get("cursor"), stored_offset.get("tie")
            if not isinstance(cursor, str) or not isinstance(tie, (str, type(None))):
                raise DataException(
                    f"Stored source offset {dict(stored_offset)!r} is not a cursor offset "
                    f'{{"cursor": <text>, "tie": <text>}}',
                    field="cursor",
                )
            offset = {"cursor": cursor} if tie is None else {"cursor": cursor, "tie": tie}
        elif initial_value is not None:
            offset = {"cursor": _text(initial_value, self.field)}
        else:
            return None
        self._offset_key(offset)  # validates
        return offset

    def query_value(self, offset: Mapping[str, str] | None) -> str | None:
        """The value to ask the API for records at or after (inclusive), or None: everything."""
        return None if offset is None else offset["cursor"]

    def offset_after(self, record: Any) -> dict[str, str]:
        """The source offset to put on the SourceRecord of ``record``."""
        cursor, tie = self._texts(record)
        return {"cursor": cursor, "tie": tie}

    def sort(self, records: Iterable[Any]) -> list[Any]:
        """The records in (cursor, tie-breaker) order."""
        return [record for _, record in sorted(self._keyed(records), key=_first)]

    def filter(self, records: Iterable[Any], offset: Mapping[str, str] | None) -> list[Any]:
        """The records after ``offset`` in (cursor, tie-breaker) order (for one full response).

        Drops those at or before (offset cursor, offset tie), which a previous run emitted.
        """
        position = None if offset is None else self._offset_key(offset)
        keyed = self._keyed(records)
        return [r for k, r in sorted(keyed, key=_first) if position is None or _after(k, position)]

    def stream(self, offset: Mapping[str, str] | None) -> CursorStream:
        """A :class:`CursorStream` releasing the records of a paged response after ``offset``."""
        return CursorStream(self, None if offset is None else self._offset_key(offset))

    # -- keys -----------------------------------------------------------------------------------
    def _texts(self, record: Any) -> tuple[str, str]:
        cursor, tie = _path_value(record, self.field), _path_value(record, self.tie_breaker)
        if cursor is None:
            raise DataException(
                f"Record with {self.tie_breaker}={tie!r} has no value for the cursor field "
                f'"{self.field}"',
                field=self.field,
            )
        if tie is None:
            raise DataException(
                f"Record with {self.field}={cursor!r} has no value for the tie-breaker field "
                f'"{self.tie_breaker}"',
                field=self.tie_breaker,
            )
        return _text(cursor, self.field), _text(tie, self.tie_breaker)

    def _key(self, record: Any) -> _Key:
        cursor, tie = self._texts(record)
        return self._cursor_key(cursor, record), _tie_key(tie)

    def _keyed(self, records: Iterable[Any]) -> list[tuple[_Key, Any]]:
        return [(self._key(record), record) for record in records]

    def _offset_key(self, offset: Mapping[str, str]) -> _Key:
        tie = offset.get("tie")
        return self._cursor_key(offset["cursor"], offset), None if tie is None else _tie_key(tie)

    def _cursor_key(self, text: str, where: Any) -> _CursorKey:
        if self.kind == "string":
            return text
        if self.kind == "sequence":
            if _INTEGER.fullmatch(text):
                return int(text)
        else:
            parsed = parse_timestamp(text)
            if parsed is not None:
                moment, nanos = parsed
                whole = moment.replace(microsecond=0) - _EPOCH
                return (whole.days * 86_400 + whole.seconds) * 10**9 + nanos
            if _NUMBER.fullmatch(text):
                return epoch_nanos(_decimal.Decimal(text))
        raise DataException(
            f'Cursor field "{self.field}" value {text!r} is not a {self.kind} (in {where!r})',
            field=self.field,
        )

    def __repr__(self) -> str:
        return (
            f"IncrementalCursor(field={self.field!r}, tie_breaker={self.tie_breaker!r}, "
            f"kind={self.kind!r})"
        )


class CursorStream:
    """Releases the records of a paged response in (cursor, tie-breaker) order, after an offset.

    :meth:`push` takes each page in turn and returns the records that can be emitted now: those
    after the stream's position, sorted, except the ones sharing the page's highest cursor value,
    which are held back (the next page may hold more records with that value, in any order).
    :meth:`close` releases them after the last page. A record already released or held (the
    same cursor and tie-breaker, e.g. from overlapping pages) is dropped; the newest copy of a
    held record is kept.

    A task that stops between pages loses nothing: the records held back were never emitted,
    and the next run asks for them again.
    """

    def __init__(self, cursor: IncrementalCursor, position: _Key | None) -> None:
        self._cursor = cursor
        self._position = position
        self._held: dict[_Key, Any] = {}

    def push(self, records: Iterable[Any]) -> list[Any]:
        """The records of this page (and those held back) that can be emitted now, in order."""
        for key, record in self._cursor._keyed(records):
            if self._position is None or _after(key, self._position):
                self._held[key] = record
        if not self._held:
            return []
        ordered = sorted(self._held.items(), key=_first)
        top = ordered[-1][0][0]
        split = next(i for i, (key, _) in enumerate(ordered) if key[0] == top)
        return self._release(ordered[:split], ordered[split:])

    def close(self) -> list[Any]:
        """The records held back, in order (call after the last page)."""
        return self._release(sorted(self._held.items(), key=_first), [])

    def _release(self, out: list[tuple[_Key, Any]], kept: list[tuple[_Key, Any]]) -> list[Any]:
        self._held = dict(kept)
        if out:
            self._position = out[-1][0]
        return [record for _, record in out]

    @property
    def held(self) -> int:
        """How many records are held back."""
        return len(self._held)


def _text(value: Any, field: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value)
    raise DataException(f'Field "{field}" holds {value!r}, not a JSON scalar', field=field)


def _tie_key(text: str) -> _TieKey:
    return (0, int(text)) if _CANONICAL_INT.fullmatch(text) else (1, text)


def _first(item: tuple[_Key, Any]) -> Any:
    key = item[0]
    return key[0], (-1, 0) if key[1] is None else key[1]


def _after(key: _Key, position: _Key) -> bool:
    if key[0] != position[0]:
        return key[0] > position[0]  # type: ignore[operator]  # one kind per cursor
    if position[1] is None:  # an initial value: every record at it is after it
        return True
    return key[1] is not None and key[1] > position[1]
