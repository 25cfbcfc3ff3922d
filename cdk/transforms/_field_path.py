"""KIP-821 field paths: how an SMT's ``field`` setting names a (possibly nested) field.

``field.syntax.version=V1`` (the default) reads the setting as one top-level field name, dots
included. ``V2`` splits it at dots into nested steps; a step holding dots is wrapped in backticks
(```foo.bar`.baz`` is field ``baz`` inside field ``foo.bar``), and a backtick that must stay
literal before a dot is escaped with a backslash. Kafka applies this to ExtractField.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

from cdk.config import ConfigDef, Importance, Type, validators
from cdk.data import Field, Schema, Struct
from cdk.errors import ConfigException
from cdk.transforms._base import require_map, require_struct, struct_get

__all__ = ["FIELD_SYNTAX_VERSION_CONFIG", "FieldSyntaxVersion", "SingleFieldPath"]

FIELD_SYNTAX_VERSION_CONFIG = "field.syntax.version"

_DOC = (
    "How field paths are read. <code>V1</code>: the path names one field at the top level of "
    "the struct or map, dots and all. <code>V2</code>: dots separate the steps into nested "
    "structs or maps; wrap a field name that contains dots in backticks, e.g. "
    '"<code>`foo.bar`.baz</code>" is the field <code>baz</code> inside the field "foo.bar".'
)

_NESTED = "nested field access"


class FieldSyntaxVersion(enum.Enum):
    """Field path syntax versions (Kafka's ``FieldSyntaxVersion``)."""

    V1 = "V1"
    V2 = "V2"

    @staticmethod
    def append_config_to(config_def: ConfigDef) -> ConfigDef:
        """Add the ``field.syntax.version`` key to ``config_def`` and return it."""
        return config_def.define(
            FIELD_SYNTAX_VERSION_CONFIG,
            Type.STRING,
            FieldSyntaxVersion.V1.name,
            validators.CaseInsensitiveValidString.of(*(v.name for v in FieldSyntaxVersion)),
            Importance.HIGH,
            _DOC,
        )

    @staticmethod
    def from_config(parsed: Mapping[str, Any]) -> FieldSyntaxVersion:
        """The version in a parsed config (the key defined by :meth:`append_config_to`)."""
        raw = parsed.get(FIELD_SYNTAX_VERSION_CONFIG) or FieldSyntaxVersion.V1.name
        try:
            return FieldSyntaxVersion[str(raw).upper()]
        except KeyError:
            raise ConfigException(
                FIELD_SYNTAX_VERSION_CONFIG, raw, "Unrecognized field syntax version"
            ) from None


def _parse_v2(path: str) -> list[str]:
    steps: list[str] = []
    n = len(path)
    i = 0
    while i < n:
        if path[i] != "`":
            dot = path.find(".", i)
            if dot < 0:
                steps.append(path[i:])
                i = n
            else:
                steps.append(path[i:dot])
                i = dot + 1
            continue
        opened_at = i
        i += 1
        start = i
        parts: list[str] = []
        while True:
            i = path.find("`", i)
            if i < 0:
                _incomplete(path, opened_at)
            escaped = path[i - 1] == "\\"
            if i >= n - 1:  # closing backtick ends the path
                if escaped:
                    _incomplete(path, opened_at)
                parts.append(path[start:i])
                steps.append("".join(parts))
                i += 1
                break
            if path[i + 1] != ".":  # a backtick inside the name
                i += 1
                continue
            if escaped:  # \` before a dot: a literal backtick, keep looking
                parts.append(path[start : i - 1])
                parts.append("`")
                i += 1
                start = i
                continue
            parts.append(path[start:i])
            steps.append("".join(parts))
            i += 2  # past the backtick and the dot
            break
    if not path or path.endswith("."):
        steps.append("")
    return steps


def _incomplete(path: str, position: int) -> None:
    raise ConfigException(
        f"Incomplete backtick pair in path: [{path}], consider adding a backslash before "
        f"backtick at position {position} to escape it"
    )


class SingleFieldPath:
    """A path of one or more field names (steps) into a Struct or a map.

    Args:
        path: the configured path text.
        version: how to read it.

    Raises:
        ConfigException: a V2 path with an unmatched backtick.
    """

    __slots__ = ("path", "steps", "version")

    def __init__(self, path: str, version: FieldSyntaxVersion) -> None:
        self.path = path
        self.version = version
        self.steps: tuple[str, ...] = (
            (path,) if version is FieldSyntaxVersion.V1 else tuple(_parse_v2(path))
        )

    def field_from(self, schema: Schema | None) -> Field | None:
        """The field the path names in a STRUCT schema, or ``None`` when a step is missing."""
        if schema is None:
            return None
        current = schema
        for step in self.steps[:-1]:
            if current.type.name != "STRUCT":
                return None
            found = current.field(step)
            if found is None:
                return None
            current = found.schema
        if current.type.name != "STRUCT":
            return None
        return current.field(self.steps[-1])

    def value_from_struct(self, struct: Struct | None, *, with_default: bool = True) -> Any:
        """The value at the path in a Struct, or ``None`` when the path is missing.

        Args:
            struct: the value to read.
            with_default: whether a null field reads as its schema's default value.
        """
        current = struct
        for step in self.steps[:-1]:
            if current is None or current.schema.field(step) is None:
                return None
            sub = struct_get(current, step, with_default)
            current = None if sub is None else require_struct(sub, _NESTED)
        if current is None or current.schema.field(self.steps[-1]) is None:
            return None
        return struct_get(current, self.steps[-1], with_default)

    def value_from_map(self, value: Mapping[str, Any] | None) -> Any:
        """The value at the path in a (schemaless) map, or ``None`` when the path is missing."""
        current: Mapping[str, Any] | None = value
        for step in self.steps[:-1]:
            if current is None:
                return None
            sub = current.get(step)
            current = None if sub is None else require_map(sub, _NESTED)
        return None if current is None else current.get(self.steps[-1])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SingleFieldPath):
            return NotImplemented
        return self.version is other.version and self.steps == other.steps

    def __hash__(self) -> int:
        return hash((self.version, self.steps))

    def __repr__(self) -> str:
        return f"SingleFieldPath{{version={self.version.name}, path={'.'.join(self.steps)}}}"
