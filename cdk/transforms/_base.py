"""The transformation and predicate interfaces, and helpers the built-in SMTs share.

Key/value variants follow one pattern: the SMT's base class implements the logic against
:meth:`KeyOrValue.operating_schema` / ``operating_value`` / ``new_record``, and two small subclasses
mix in :class:`KeyMixin` or :class:`ValueMixin`; they are attached as ``Cls.Key`` / ``Cls.Value``
after the class body, so ``InsertField.Value`` reads as Kafka's ``InsertField$Value``.
"""

from __future__ import annotations

import abc
from collections import OrderedDict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from cdk.api import ConnectRecord, SinkRecord
from cdk.data import Schema, SchemaBuilder, SchemaType, Struct
from cdk.errors import DataException

if TYPE_CHECKING:
    from cdk.config import ConfigDef

__all__ = [
    "KeyMixin",
    "KeyOrValue",
    "Predicate",
    "SchemaCache",
    "Transformation",
    "ValueMixin",
    "copy_schema_basics",
    "require_map",
    "require_schema",
    "require_sink_record",
    "require_struct",
    "require_struct_or_null",
]

R = TypeVar("R", bound=ConnectRecord)
K = TypeVar("K")
V = TypeVar("V")


class Transformation(abc.ABC, Generic[R]):
    """A single message transformation (SMT): record in, record (or ``None`` to drop it) out."""

    def configure(self, configs: Mapping[str, Any]) -> None:
        """Configure from the ``transforms.<alias>.`` settings (prefix stripped)."""

    @abc.abstractmethod
    def apply(self, record: R) -> R | None:
        """Transform one record; returning ``None`` drops it."""

    def config(self) -> ConfigDef:
        """The SMT's ConfigDef."""
        from cdk.config import ConfigDef

        return ConfigDef()

    def close(self) -> None:
        """Release resources."""


class Predicate(abc.ABC, Generic[R]):
    """A condition that decides whether a transformation applies to a record."""

    def configure(self, configs: Mapping[str, Any]) -> None:
        """Configure from the ``predicates.<alias>.`` settings (prefix stripped)."""

    @abc.abstractmethod
    def test(self, record: R) -> bool:
        """Whether the record matches."""

    def config(self) -> ConfigDef:
        """The predicate's ConfigDef."""
        from cdk.config import ConfigDef

        return ConfigDef()

    def close(self) -> None:
        """Release resources."""


class KeyOrValue(abc.ABC):
    """What a key/value SMT needs to know about the side of the record it works on."""

    @abc.abstractmethod
    def operating_schema(self, record: ConnectRecord) -> Schema | None:
        """The key or value schema."""

    @abc.abstractmethod
    def operating_value(self, record: ConnectRecord) -> Any:
        """The key or value."""

    @abc.abstractmethod
    def new_record(self, record: R, schema: Schema | None, value: Any) -> R:
        """The record with its key (or value) and schema replaced."""


class KeyMixin(KeyOrValue):
    """Works on the record key."""

    def operating_schema(self, record: ConnectRecord) -> Schema | None:
        return record.key_schema

    def operating_value(self, record: ConnectRecord) -> Any:
        return record.key

    def new_record(self, record: R, schema: Schema | None, value: Any) -> R:
        return record.new_record(key_schema=schema, key=value)


class ValueMixin(KeyOrValue):
    """Works on the record value."""

    def operating_schema(self, record: ConnectRecord) -> Schema | None:
        return record.value_schema

    def operating_value(self, record: ConnectRecord) -> Any:
        return record.value

    def new_record(self, record: R, schema: Schema | None, value: Any) -> R:
        return record.new_record(value_schema=schema, value=value)


# -- requirements (Kafka's Requirements) ----------------------------------------------------------
def _class_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def require_schema(schema: Schema | None, purpose: str) -> Schema:
    """The schema, or a DataException saying that ``purpose`` needs one."""
    if schema is None:
        raise DataException(f"Schema required for [{purpose}]")
    return schema


def require_map(value: Any, purpose: str) -> dict[Any, Any]:
    """The value as a dict, or a DataException naming ``purpose`` and what was found."""
    if not isinstance(value, dict):
        raise DataException(
            f"Only Map objects supported in absence of schema for [{purpose}], "
            f"found: {_class_name(value)}"
        )
    return value


def require_struct(value: Any, purpose: str) -> Struct:
    """The value as a Struct, or a DataException naming ``purpose`` and what was found."""
    if not isinstance(value, Struct):
        raise DataException(
            f"Only Struct objects supported for [{purpose}], found: {_class_name(value)}"
        )
    return value


def require_struct_or_null(value: Any, purpose: str) -> Struct | None:
    """Like :func:`require_struct`, but ``None`` passes."""
    return None if value is None else require_struct(value, purpose)


def require_sink_record(record: ConnectRecord, purpose: str) -> SinkRecord:
    """The record as a SinkRecord, or a DataException."""
    if not isinstance(record, SinkRecord):
        raise DataException(
            f"Only SinkRecord supported for [{purpose}], found: {_class_name(record)}"
        )
    return record


def copy_schema_basics(source: Schema, builder: SchemaBuilder | None = None) -> SchemaBuilder:
    """A builder with the name, version, doc, parameters and optionality of ``source``.

    For a STRUCT source the builder gets no fields (the caller adds them); for other types a new
    builder of the same type is made when none is given.
    """
    if builder is None:
        if source.type is SchemaType.ARRAY:
            builder = SchemaBuilder.array(source.value_schema)
        elif source.type is SchemaType.MAP:
            builder = SchemaBuilder.map(source.key_schema, source.value_schema)
        else:
            builder = SchemaBuilder(source.type)
    if source.name is not None:
        builder.name(source.name)
    if source.version is not None:
        builder.version(source.version)
    if source.doc is not None:
        builder.doc(source.doc)
    if source.parameters:
        builder.parameters(source.parameters)
    if source.optional:
        builder.optional()
    return builder


class SchemaCache(Generic[K, V]):
    """A small LRU cache (Kafka's SynchronizedCache(LRUCache(16))) for derived schemas."""

    def __init__(self, max_size: int = 16) -> None:
        self._max = max_size
        self._data: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        """The cached value, or ``None``."""
        value = self._data.get(key)
        if value is not None:
            self._data.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        """Cache a value, evicting the least recently used entry when full."""
        self._data[key] = value
        self._data.move_to_end(key)
        while len(self._data) > self._max:
            self._data.popitem(last=False)
