"""Avro names in schema JSON: valid names, full names, namespaces and references.

Reading, :func:`resolve_avro_schema` gives every named type its full name and replaces each
reference by the definition it names. Writing, :func:`java_layout` does the reverse for a schema
built from a Connect schema: namespaces inherited from the enclosing type are left out and a
named type written once is referenced by name afterwards, as Avro's Java ``Schema.toString``
lays it out.
"""

from __future__ import annotations

import re
from typing import Any

from cdk.converters._avro_common import NAMED_TYPES, PRIMITIVE_TYPES
from cdk.errors import DataException

__all__ = ["NameRef", "full_name_of", "java_layout", "resolve_avro_schema", "scrub_name"]

NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def scrub_name(name: str) -> str:
    """Turn any string into a valid Avro name, as Confluent's ``scrub.invalid.names`` does.

    A valid name is returned unchanged. Otherwise the name is URL-encoded (``application/
    x-www-form-urlencoded``, UTF-8), prefixed with ``x`` if it starts with a digit, and every
    character other than ``[A-Za-z0-9_]`` becomes ``_``.
    """
    if not name or NAME_RE.fullmatch(name):
        return name
    encoded = _url_encode(name)
    if encoded[0].isdigit():
        encoded = "x" + encoded
    return "".join(ch if (ch.isascii() and (ch.isalnum() or ch == "_")) else "_" for ch in encoded)


def _url_encode(text: str) -> str:
    out: list[str] = []
    for ch in text:
        if ch.isascii() and (ch.isalnum() or ch in ".-*_"):
            out.append(ch)
        elif ch == " ":
            out.append("+")
        else:
            out.extend(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
    return "".join(out)


def full_name_of(node: Any) -> str | None:
    """The full name of a named Avro schema node (record, enum, fixed), else ``None``."""
    if isinstance(node, dict) and node.get("type") in NAMED_TYPES:
        return str(node["name"])
    return None


# -- resolving Avro schema JSON (names, namespaces, references) ----------------------------------
class _Resolver:
    """Normalizes Avro schema JSON: full names everywhere, references replaced by definitions."""

    def __init__(self) -> None:
        self.names: dict[str, dict[str, Any]] = {}
        self._in_progress: set[str] = set()

    def resolve(self, node: Any, namespace: str | None = None) -> Any:
        if isinstance(node, str):
            if node in PRIMITIVE_TYPES:
                return node
            full = node if "." in node or not namespace else f"{namespace}.{node}"
            for candidate in (full, node):
                if candidate in self._in_progress:
                    raise DataException(
                        f"Avro schema is recursive through '{candidate}'; Connect schemas cannot "
                        f"express recursive types"
                    )
                if candidate in self.names:
                    return self.names[candidate]
            raise DataException(f"Avro schema refers to an undefined type '{node}'")
        if isinstance(node, list):
            return [self.resolve(n, namespace) for n in node]
        if not isinstance(node, dict) or "type" not in node:
            raise DataException(f"Invalid Avro schema: {node!r}")
        t = node["type"]
        if isinstance(t, (dict, list)) or (
            isinstance(t, str)
            and t not in PRIMITIVE_TYPES | NAMED_TYPES
            and t not in ("array", "map")
        ):
            # {"type": {...}} or {"type": "SomeNamedType"}: a wrapped schema
            return self.resolve(t, namespace)
        if t in NAMED_TYPES:
            name = str(node.get("name", ""))
            if "." in name:
                full = name
            else:
                space = node.get("namespace", namespace)
                full = f"{space}.{name}" if space else name
            own_space = full.rpartition(".")[0] or None
            out = {k: v for k, v in node.items() if k != "namespace"}
            out["name"] = full
            if full in self.names:
                raise DataException(f"Invalid Avro schema: type '{full}' is defined twice")
            self.names[full] = out
            if t in ("record", "error"):
                self._in_progress.add(full)
                fields = []
                for f in node.get("fields", []):
                    fcopy = dict(f)
                    fcopy["type"] = self.resolve(f["type"], own_space)
                    fields.append(fcopy)
                out["fields"] = fields
                self._in_progress.discard(full)
            return out
        if t == "array":
            out = dict(node)
            out["items"] = self.resolve(node["items"], namespace)
            return out
        if t == "map":
            out = dict(node)
            out["values"] = self.resolve(node["values"], namespace)
            return out
        return node


def resolve_avro_schema(avro_schema: Any) -> Any:
    """Normalize Avro schema JSON (full names, references inlined as shared objects)."""
    return _Resolver().resolve(avro_schema)


# -- Java's Schema.toString layout ---------------------------------------------------------------
class NameRef(str):
    """A reference to a named type already written (its full name)."""

    __slots__ = ()


def java_layout(node: Any, space: str | None) -> Any:
    """Lay out a built schema as Java's Avro writes it: inherited namespaces left out."""
    if isinstance(node, NameRef):
        own_space, _, short = str(node).rpartition(".")
        if (own_space or None) == space:
            return short
        return str(node)
    if isinstance(node, list):
        return [java_layout(n, space) for n in node]
    if not isinstance(node, dict):
        return node
    t = node.get("type")
    out: dict[str, Any] = {}
    if t in NAMED_TYPES:
        own = node.get("namespace")
        out["type"] = t
        out["name"] = node["name"]
        if own is not None:
            if own != space:
                out["namespace"] = own
        elif space is not None:
            out["namespace"] = ""
        inner_space = own
        for k, v in node.items():
            if k in ("type", "name", "namespace"):
                continue
            if k == "fields":
                out[k] = [
                    {
                        fk: (java_layout(fv, inner_space) if fk == "type" else fv)
                        for fk, fv in f.items()
                    }
                    for f in v
                ]
            else:
                out[k] = v
        return out
    for k, v in node.items():
        out[k] = java_layout(v, space) if k in ("items", "values") else v
    if len(out) == 1 and t in PRIMITIVE_TYPES:
        return t
    return out
