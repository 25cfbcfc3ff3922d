"""How source offsets are serialized, as Kafka Connect stores them, and what they may hold.

The key is the schemaless JSON array ``["<connector>",{<partition>}]`` and the value the
schemaless JSON object of the offset (``{"position":70}``), both compact UTF-8. A tombstone
(``None`` value) deletes an offset.

Partition and offset maps may contain only string keys and primitive values (``str``, ``int``,
``float``, ``bool``, ``bytes`` or ``None``), as Kafka's ``OffsetUtils.validateFormat`` demands.
Keys are serialized with sorted fields, so the same partition always maps to the same bytes
whatever the order its dict was built in (Java's ``HashMap`` gives Kafka the same property).
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Mapping
from typing import Any

from cdk.errors import DataException

__all__ = [
    "offset_key",
    "offset_value",
    "parse_offset_key",
    "parse_offset_value",
    "validate_offset_format",
]

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1


def validate_offset_format(data: Any, what: str = "Offsets") -> None:
    """Check that a partition or offset map holds only string keys and primitive values.

    Args:
        data: the map to check; ``None`` is allowed (no offset / delete).
        what: the word used in messages (Kafka says "Offsets" for both maps).

    Raises:
        DataException: naming the offending field (``field`` attribute set).
    """
    if data is None:
        return
    if not isinstance(data, Mapping):
        raise DataException(f"{what} must be specified as a Map")
    for key, value in data.items():
        if not isinstance(key, str):
            raise DataException(f"{what} may only use String keys", field=str(key))
        if value is None or isinstance(value, (str, bool, bytes, bytearray)):
            continue
        if isinstance(value, int):
            if not _INT64_MIN <= value <= _INT64_MAX:
                raise DataException(
                    f"{what} may only contain primitive types as values, but field {key} "
                    f"contains the integer {value}, outside the 64-bit range",
                    field=key,
                )
            continue
        if isinstance(value, float):
            if not math.isfinite(value):
                raise DataException(
                    f"{what} may not contain NaN or infinite numbers, but field {key} "
                    f"contains {value}",
                    field=key,
                )
            continue
        if isinstance(value, Mapping):
            kind = "MAP"
        elif isinstance(value, (list, tuple, set, frozenset)):
            kind = "ARRAY"
        else:
            kind = f"class {type(value).__module__}.{type(value).__qualname__}"
        raise DataException(
            f"{what} may only contain primitive types as values, but field {key} contains {kind}",
            field=key,
        )


def _json_default(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        # JsonConverter writes byte arrays as base64 text when schemas are off.
        return base64.b64encode(bytes(value)).decode("ascii")
    raise TypeError(f"{type(value).__qualname__} is not JSON serializable")


def _dumps(value: Any) -> bytes:
    return json.dumps(
        value,
        separators=(",", ":"),
        ensure_ascii=False,
        sort_keys=True,
        allow_nan=False,
        default=_json_default,
    ).encode("utf-8")


def offset_key(connector: str, partition: Mapping[str, Any]) -> bytes:
    """Serialize a source partition the way Kafka Connect keys its offsets.

    Args:
        connector: the connector name (Kafka's offset namespace).
        partition: the source partition map.

    Returns:
        ``["<connector>",{...}]`` as compact UTF-8 JSON (fields sorted).

    Raises:
        DataException: the partition holds a non-primitive value or a non-string key.
    """
    validate_offset_format(partition)
    return _dumps([connector, dict(partition)])


def offset_value(offset: Mapping[str, Any] | None) -> bytes | None:
    """Serialize a source offset as Kafka Connect stores it (``None`` stays ``None``: delete).

    Raises:
        DataException: the offset holds a non-primitive value or a non-string key.
    """
    if offset is None:
        return None
    validate_offset_format(offset)
    return _dumps(dict(offset))


def _loads(data: bytes, what: str) -> Any:
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise DataException(f"{what} is not valid JSON: {data[:200]!r}") from e


def parse_offset_key(key: bytes) -> tuple[str, dict[str, Any]]:
    """Read a stored offset key back into ``(connector, partition)``.

    Raises:
        DataException: the key is not ``["<connector>",{...}]``.
    """
    parsed = _loads(key, "Offset key")
    if not isinstance(parsed, list) or len(parsed) != 2:
        raise DataException(
            f"Offset key must be a JSON array of the connector name and the partition: {key!r}"
        )
    connector, partition = parsed
    if not isinstance(connector, str):
        raise DataException(f"Offset key must start with the connector name (a string): {key!r}")
    if not isinstance(partition, dict):
        raise DataException(f"Offset key must end with the partition (a JSON object): {key!r}")
    return connector, partition


def parse_offset_value(value: bytes | None) -> dict[str, Any] | None:
    """Read a stored offset value back (``None`` for a tombstone).

    Raises:
        DataException: the value is not a JSON object (or ``null``).
    """
    if value is None:
        return None
    parsed = _loads(value, "Offset value")
    if parsed is None:
        return None
    if not isinstance(parsed, dict):
        raise DataException(f"Offset value must be a JSON object: {value[:200]!r}")
    return parsed
