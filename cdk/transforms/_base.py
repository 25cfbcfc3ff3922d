"""The transformation and predicate interfaces, and helpers the built-in SMTs share.

Key/value variants follow one pattern: the SMT's base class implements the logic against
:meth:`KeyOrValue.operating_schema` / ``operating_value`` / ``new_record``, and two small subclasses
mix in :class:`KeyMixin` or :class:`ValueMixin`; :func:`attach_variants` attaches them as
``Cls.Key`` / ``Cls.Value`` after the class body, so ``InsertField.Value`` reads as Kafka's
``InsertField$Value``.
"""

from __future__ import annotations

import abc
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from cdk.api import ConnectRecord, SinkRecord
from cdk.config.validators import Validator
from cdk.data import Field, Schema, SchemaBuilder, SchemaType, Struct
from cdk.errors import ConfigException, DataException

if TYPE_CHECKING:
    from cdk.config import ConfigDef

__all__ = [
    "KeyMixin",
    "KeyOrValue",
    "NonEmptyListValidator",
    "Predicate",
    "SchemaCache",
    "Transformation",
    "ValueMixin",
    "attach_variants",
    "copy_schema_basics",
    "copy_schema_metadata",
    "require_map",
    "require_schema",
    "require_sink_record",
    "require_struct",
    "require_struct_or_null",
    "struct_get",
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


def attach_variants(owner: type[Any], key_cls: type[Any], value_cls: type[Any]) -> None:
    """Attach the key/value subclasses of a key/value SMT as ``owner.Key`` / ``owner.Value``.

    The subclasses are renamed (``__name__`` ``Key``/``Value``, ``__qualname__``
    ``Owner.Key``/``Owner.Value``), so that they pickle and load by those names.
    """
    for attr, cls in (("Key", key_cls), ("Value", value_cls)):
        cls.__name__ = attr
        cls.__qualname__ = f"{owner.__qualname__}.{attr}"
        setattr(owner, attr, cls)


class NonEmptyListValidator(Validator):
    """Rejects an empty list (Kafka's ``NonEmptyListValidator``)."""

    def ensure_valid(self, name: str, value: Any) -> None:
        """Raise for ``None`` or an empty list."""
        if not value:
            raise ConfigException(name, value, "Empty list")

    def __str__(self) -> str:
        return "non-empty list"


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
    copy_schema_metadata(source, builder)
    if source.optional:
        builder.optional()
    return builder


def copy_schema_metadata(source: Schema, builder: SchemaBuilder) -> SchemaBuilder:
    """Copy the name, version, doc and parameters of ``source`` (Kafka's ``copySchemaBasics``).

    Unlike :func:`copy_schema_basics`, optionality is not copied. Returns ``builder``.
    """
    if source.name is not None:
        builder.name(source.name)
    if source.version is not None:
        builder.version(source.version)
    if source.doc is not None:
        builder.doc(source.doc)
    if source.parameters:
        builder.parameters(source.parameters)
    return builder


def struct_get(struct: Struct, field: Field | str, with_default: bool) -> Any:
    """A field's value, read as its schema's default when null if ``with_default``.

    This is how SMTs honour ``replace.null.with.default``.
    """
    return struct.get(field) if with_default else struct.get_without_default(field)


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

    def get_or_compute(self, key: K, compute: Callable[[K], V]) -> V:
        """The cached value, or ``compute(key)``, cached."""
        value = self.get(key)
        if value is None:
            value = compute(key)
            self.put(key, value)
        return value

    def put(self, key: K, value: V) -> None:
        """Cache a value, evicting the least recently used entry when full."""
        self._data[key] = value
        self._data.move_to_end(key)
        while len(self._data) > self._max:
            self._data.popitem(last=False)
