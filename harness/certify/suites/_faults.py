"""Fault-injecting transformations the checks add to a connector's config to make its task fail.

A check cannot reach inside a connector to make it fail, but every connector runs the SMT chain
the config names. These transformations are ordinary SMTs (a :class:`~cdk.transforms.Transformation`
with a ConfigDef, loadable by class path), so a check adds one to the connector's config and the
runtime fails the task, or reports the record under ``errors.tolerance=all``, exactly as it would
for a real failure in the chain:

- :class:`FailWhenFlagged` raises while a flag file exists: the task fails on demand and recovers
  once the file is removed (restart checks).
- :class:`FailOnIds` raises for the records whose id is in a list: poison records at chosen
  places in the stream (error-tolerance checks).
- :class:`DropOnIds` drops the records whose id is in a list, as a filter would (the
  acknowledgement checks: a dropped record must still be acknowledged upstream).

Both work for source and sink records. Add them with :func:`with_transform`::

    config = with_transform(config, "fail", FailWhenFlagged, {"flag.file": str(flag)})
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from cdk.api import ConnectRecord
from cdk.config import NO_DEFAULT, ConfigDef, Importance, Type
from cdk.config.validators import NonEmptyString, ValidString
from cdk.data import Struct
from cdk.errors import ConnectException, DataException, RetriableException
from cdk.transforms import Transformation

__all__ = [
    "INJECTED",
    "DropOnIds",
    "FailOnIds",
    "FailWhenFlagged",
    "class_path",
    "record_id",
    "with_transform",
]

R = TypeVar("R", bound=ConnectRecord)

#: Every injected failure's message starts with this, so checks can find it in a task's trace.
INJECTED = "Injected failure (certification harness)"

_ERRORS: dict[str, type[ConnectException]] = {
    "ConnectException": ConnectException,
    "DataException": DataException,
    "RetriableException": RetriableException,
}

FLAG_FILE = "flag.file"
IDS = "ids"
ID_FIELD = "id.field"
ID_PATTERN = "id.pattern"
EXCEPTION = "exception"

_EXCEPTION_DOC = (
    "The exception raised for a failing record: ConnectException (fails the task), "
    "DataException (a bad record: tolerated under errors.tolerance=all) or RetriableException."
)


def class_path(cls: type) -> str:
    """The class path a config names ``cls`` by (``package.module.Class``)."""
    return f"{cls.__module__}.{cls.__qualname__}"


def with_transform(
    config: Mapping[str, str], alias: str, cls: type, settings: Mapping[str, str]
) -> dict[str, str]:
    """``config`` with SMT ``cls`` appended to its ``transforms`` chain as ``alias``.

    Args:
        config: a connector config (not changed).
        alias: the transformation's alias (must not be in the chain already).
        cls: the SMT class (e.g. :class:`FailWhenFlagged`).
        settings: its settings, without the ``transforms.<alias>.`` prefix.

    Returns:
        The new config; the SMT runs after the connector's own transformations.
    """
    out = dict(config)
    chain = [a.strip() for a in out.get("transforms", "").split(",") if a.strip()]
    if alias in chain:
        raise ValueError(f"the transformation alias {alias!r} is already in the chain {chain}")
    out["transforms"] = ",".join([*chain, alias])
    out[f"transforms.{alias}.type"] = class_path(cls)
    out.update({f"transforms.{alias}.{key}": value for key, value in settings.items()})
    return out


def _error(name: str, message: str) -> ConnectException:
    return _ERRORS[name](message)


class FailWhenFlagged(Transformation[R]):
    """Raise for every record while a flag file exists; pass records through otherwise.

    Settings: ``flag.file`` (the path to watch) and ``exception`` (default ConnectException,
    which fails the task). Create the file to make the task fail, remove it before restarting
    the task.
    """

    CONFIG_DEF = (
        ConfigDef()
        .define(
            FLAG_FILE,
            Type.STRING,
            NO_DEFAULT,
            NonEmptyString(),
            Importance.HIGH,
            "While a file exists at this path, every record makes the transformation raise.",
        )
        .define(
            EXCEPTION,
            Type.STRING,
            "ConnectException",
            ValidString.of(*_ERRORS),
            Importance.LOW,
            _EXCEPTION_DOC,
        )
    )

    def __init__(self) -> None:
        self._flag = Path()
        self._exception = "ConnectException"

    def config(self) -> ConfigDef:
        """``flag.file`` and ``exception``."""
        return self.CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        """Read ``flag.file`` and ``exception``."""
        parsed = self.CONFIG_DEF.parse(configs)
        self._flag = Path(parsed[FLAG_FILE])
        self._exception = parsed[EXCEPTION]

    def apply(self, record: R) -> R:
        """The record unchanged, or the configured exception while the flag file exists."""
        if self._flag.exists():
            raise _error(
                self._exception,
                f"{INJECTED}: the flag file {self._flag} exists (record of topic {record.topic})",
            )
        return record


class FailOnIds(Transformation[R]):
    """Raise for the records whose id is in ``ids``; pass the others through.

    The id of a record is found by :func:`record_id`: the ``id.field`` field of a Struct or map
    value, else an integer key, else the last integer in a scalar value's text (``id.pattern``).
    Records without an id pass through.
    """

    CONFIG_DEF = (
        ConfigDef()
        .define(
            IDS,
            Type.LIST,
            NO_DEFAULT,
            None,
            Importance.HIGH,
            "The ids of the records that make the transformation raise (integers).",
        )
        .define(
            ID_FIELD,
            Type.STRING,
            "id",
            NonEmptyString(),
            Importance.MEDIUM,
            "The field of a Struct or map value that holds the record's id.",
        )
        .define(
            ID_PATTERN,
            Type.STRING,
            r"(\d+)\s*$",
            NonEmptyString(),
            Importance.LOW,
            "For values that are not a Struct or map (text, numbers): a regular expression whose "
            "first group, searched in the value's text, is the id.",
        )
        .define(
            EXCEPTION,
            Type.STRING,
            "DataException",
            ValidString.of(*_ERRORS),
            Importance.LOW,
            _EXCEPTION_DOC,
        )
    )

    def __init__(self) -> None:
        self._ids: frozenset[int] = frozenset()
        self._field = "id"
        self._pattern = re.compile(r"(\d+)\s*$")
        self._exception = "DataException"

    def config(self) -> ConfigDef:
        """``ids``, ``id.field``, ``id.pattern`` and ``exception``."""
        return self.CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        """Read the settings.

        Raises:
            ConnectException: an id is not an integer, or the pattern is not a valid regex.
        """
        parsed = self.CONFIG_DEF.parse(configs)
        try:
            self._ids = frozenset(int(str(i).strip()) for i in parsed[IDS])
        except ValueError as exc:
            raise ConnectException(f"{IDS} must list integers: {exc}") from None
        self._field = parsed[ID_FIELD]
        try:
            self._pattern = re.compile(parsed[ID_PATTERN])
        except re.error as exc:
            raise ConnectException(f"{ID_PATTERN} is not a regular expression: {exc}") from None
        self._exception = parsed[EXCEPTION]

    def listed(self, record: ConnectRecord) -> int | None:
        """The record's id when it is listed in ``ids``, else None."""
        found = record_id(record, self._field, self._pattern)
        return found if found is not None and found in self._ids else None

    def apply(self, record: R) -> R:
        """The record unchanged, or the configured exception when its id is listed."""
        found = self.listed(record)
        if found is not None:
            raise _error(
                self._exception,
                f"{INJECTED}: record id {found} is listed in {IDS} (topic {record.topic})",
            )
        return record


class DropOnIds(Transformation[R]):
    """Drop (return None for) the records whose id is in ``ids``; pass the others through.

    The settings are :class:`FailOnIds`'s (``exception`` is not used): a filter at chosen
    places in the stream.
    """

    def __init__(self) -> None:
        self._match: FailOnIds[R] = FailOnIds()

    def config(self) -> ConfigDef:
        """``ids``, ``id.field``, ``id.pattern`` (and the unused ``exception``)."""
        return FailOnIds.CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        """Read the settings, as :class:`FailOnIds` does."""
        self._match.configure(configs)

    def apply(self, record: R) -> R | None:
        """None when the record's id is listed, else the record unchanged."""
        return None if self._match.listed(record) is not None else record


def record_id(
    record: ConnectRecord, field: str = "id", pattern: re.Pattern[str] | None = None
) -> int | None:
    """The integer id of a record, or None when it has none.

    Looked for in order: field ``field`` of a Struct or map value; an integer key, or a key
    that is an integer's text (a message id); the first group of ``pattern`` (default: the
    last integer) in the text of a scalar value.
    """
    value = record.value
    candidate: Any = None
    if isinstance(value, Struct):
        if any(f.name == field for f in value.schema.fields):
            candidate = value.get(field)
    elif isinstance(value, Mapping):
        candidate = value.get(field)
    key = record.key
    if candidate is None and isinstance(key, int) and not isinstance(key, bool):
        candidate = key
    if candidate is None and isinstance(key, str) and key.strip().lstrip("-").isdigit():
        candidate = key
    if candidate is None and isinstance(value, (str, int, bytes)) and not isinstance(value, bool):
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
        match = (pattern or re.compile(r"(\d+)\s*$")).search(text)
        candidate = match.group(1) if match else None
    if isinstance(candidate, bool):
        return None
    if isinstance(candidate, int):
        return candidate
    if isinstance(candidate, str) and candidate.strip().lstrip("-").isdigit():
        return int(candidate.strip())
    return None
