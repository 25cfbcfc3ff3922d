"""Evidence: what a check saw, as plain data, and how every report format words it.

A check records figures and texts with :meth:`CheckContext.evidence
<harness.certify.CheckContext.evidence>` (``"sent": 100``, ``"stored": 100``,
``"resumed from offset": 42``, the config it used). They travel on
:attr:`CheckResult.evidence <harness.certify.CheckResult.evidence>` as plain JSON data
(:func:`plain`), so they cross a process boundary and land unchanged in ``summary.json``.

The reports word them the same way (:func:`compact_lines`): an integer under a one-word,
lowercase name reads as a count (``100 sent``), anything else as ``name: value``, and a group
of figures (a mapping of numbers, such as one comparison's counts) as one line
(``the records after the restart: 100 sent, 100 stored, 0 duplicates, 0 lost``). Mappings with
texts (a config) and long lists are tables (:func:`tables`), shown folded in the HTML report.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "HIDDEN",
    "SECRET_NAME",
    "compact_lines",
    "flatten",
    "format_value",
    "mask_config",
    "plain",
    "redact_value",
    "tables",
]

HIDDEN = "[hidden]"
#: Config keys whose values are hidden even when no ConfigDef says PASSWORD (client overrides).
SECRET_NAME = re.compile(
    r"(password|secret|sasl\.jaas\.config|credentials|token|user\.info)", re.IGNORECASE
)
#: A name that reads as what a count counts (``sent``, ``duplicates``): one lowercase word.
_COUNT_NAME = re.compile(r"^[a-z][a-z-]*$")
#: Lists longer than this are a table, not a line.
_LINE_ITEMS = 10


def plain(value: Any, *, depth: int = 0) -> Any:
    """``value`` as plain JSON data: mappings with text keys, lists, text, numbers, None.

    Floats are rounded to 6 significant digits (a whole float stays a float: ``100.0``
    prints as ``100``); NaN and infinities, bytes, paths, dates and other objects become their
    text. Nesting deeper than 4 levels is kept as text.
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        return float(f"{value:.6g}")
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if depth >= 4:
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): plain(v, depth=depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=str) if isinstance(value, (set, frozenset)) else value
        return [plain(v, depth=depth + 1) for v in items]
    return str(value)


def redact_value(value: Any, secrets: Iterable[str]) -> Any:
    """``value`` (plain data) with every secret in its texts and keys replaced by ``[hidden]``."""
    values = sorted((s for s in secrets if s), key=len, reverse=True)
    if not values:
        return value

    def text(raw: str) -> str:
        for secret in values:
            raw = raw.replace(secret, HIDDEN)
        return raw

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            return text(item)
        if isinstance(item, dict):
            return {text(k): walk(v) for k, v in item.items()}
        if isinstance(item, list):
            return [walk(v) for v in item]
        return item

    return walk(value)


def mask_config(config: Mapping[str, Any], secret_keys: Iterable[str] = ()) -> dict[str, Any]:
    """``config`` with the values of ``secret_keys`` and of secret-looking keys hidden."""
    keys = set(secret_keys)
    return {
        str(k): (HIDDEN if (k in keys or SECRET_NAME.search(str(k))) and v else plain(v))
        for k, v in config.items()
    }


def format_value(value: Any) -> str:
    """One value as text: whole numbers without ``.0``, lists and mappings on one line."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if value.is_integer():
            return str(int(value))
        return f"{value:.6g}"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Mapping):
        return ", ".join(_item(str(k), v) for k, v in value.items()) or "none"
    if isinstance(value, list):
        shown = ", ".join(format_value(v) for v in value[:_LINE_ITEMS])
        more = len(value) - _LINE_ITEMS
        return (shown + (f", … ({more} more)" if more > 0 else "")) or "none"
    return str(value)


def _item(name: str, value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and _COUNT_NAME.match(name):
        return f"{value} {name}"
    return f"{name}: {format_value(value)}"


def _is_table(value: Any) -> bool:
    if isinstance(value, Mapping):
        return any(isinstance(v, (str, Mapping, list)) or v is None for v in value.values())
    return isinstance(value, list) and (
        len(value) > _LINE_ITEMS or any(isinstance(v, (Mapping, list)) for v in value)
    )


def compact_lines(evidence: Mapping[str, Any]) -> list[str]:
    """The evidence that reads as lines: figures and short texts, one line per group.

    Consecutive single figures share a line (``100 sent, 100 stored, 0 duplicates``); a
    mapping of figures is a line of its own, named. Tables (:func:`tables`) are left out.
    """
    lines: list[str] = []
    run: list[str] = []
    for name, value in evidence.items():
        if _is_table(value):
            continue
        if isinstance(value, (Mapping, list)):
            if run:
                lines.append(", ".join(run))
                run = []
            lines.append(f"{name}: {format_value(value)}")
        else:
            run.append(_item(name, value))
    if run:
        lines.append(", ".join(run))
    return lines


def tables(evidence: Mapping[str, Any]) -> dict[str, list[tuple[str, str]]]:
    """The evidence that reads as tables (a config, long lists), as (key, text) rows by name."""
    out: dict[str, list[tuple[str, str]]] = {}
    for name, value in evidence.items():
        if not _is_table(value):
            continue
        if isinstance(value, Mapping):
            out[name] = [(str(k), format_value(v)) for k, v in value.items()]
        else:
            out[name] = [(str(n), format_value(v)) for n, v in enumerate(value, start=1)]
    return out


def flatten(evidence: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Every piece of evidence as a (name, text) pair; a mapping's entries as ``name.key``."""
    out: list[tuple[str, str]] = []
    for name, value in evidence.items():
        if isinstance(value, Mapping) and value:
            out.extend((f"{name}.{k}", format_value(v)) for k, v in value.items())
        else:
            out.append((name, format_value(value)))
    return out
