"""The fluent :class:`SchemaBuilder`."""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from typing import Any

from cdk.data._schema import Field, Schema, SchemaType, validate_value
from cdk.errors import DataException, SchemaBuilderException

__all__ = ["SchemaBuilder"]

_UNSET: Any = object()


def as_schema(schema: Schema | SchemaBuilder) -> Schema:
    """Accept a built schema or a builder wherever a schema is expected."""
    return schema.build() if isinstance(schema, SchemaBuilder) else schema


class SchemaBuilder:
    """Builds an immutable :class:`~cdk.data.Schema`, one attribute at a time.

    Example::

        schema = (
            SchemaBuilder.struct().name("com.example.User").version(1)
            .field("id", Schema.INT64_SCHEMA)
            .field("email", Schema.OPTIONAL_STRING_SCHEMA)
            .build()
        )

    Each attribute can be set once; setting it again raises :class:`SchemaBuilderException`.
    A builder is accepted wherever a schema is (``field("a", SchemaBuilder.string())``).
    """

    def __init__(self, schema_type: SchemaType) -> None:
        if not isinstance(schema_type, SchemaType):
            raise SchemaBuilderException(f"Invalid schema type: {schema_type!r}")
        self._type = schema_type
        self._optional: Any = _UNSET
        self._default: Any = _UNSET
        self._name: Any = _UNSET
        self._version: Any = _UNSET
        self._doc: Any = _UNSET
        self._parameters: dict[str, str] = {}
        self._fields: dict[str, Field] | None = {} if schema_type is SchemaType.STRUCT else None
        self._key_schema: Schema | None = None
        self._value_schema: Schema | None = None

    # -- factories -----------------------------------------------------------------------------
    @staticmethod
    def type(schema_type: SchemaType) -> SchemaBuilder:
        """A builder for any type."""
        return SchemaBuilder(schema_type)

    @staticmethod
    def int8() -> SchemaBuilder:
        """An INT8 builder."""
        return SchemaBuilder(SchemaType.INT8)

    @staticmethod
    def int16() -> SchemaBuilder:
        """An INT16 builder."""
        return SchemaBuilder(SchemaType.INT16)

    @staticmethod
    def int32() -> SchemaBuilder:
        """An INT32 builder."""
        return SchemaBuilder(SchemaType.INT32)

    @staticmethod
    def int64() -> SchemaBuilder:
        """An INT64 builder."""
        return SchemaBuilder(SchemaType.INT64)

    @staticmethod
    def float32() -> SchemaBuilder:
        """A FLOAT32 builder."""
        return SchemaBuilder(SchemaType.FLOAT32)

    @staticmethod
    def float64() -> SchemaBuilder:
        """A FLOAT64 builder."""
        return SchemaBuilder(SchemaType.FLOAT64)

    @staticmethod
    def boolean() -> SchemaBuilder:
        """A BOOLEAN builder."""
        return SchemaBuilder(SchemaType.BOOLEAN)

    @staticmethod
    def string() -> SchemaBuilder:
        """A STRING builder."""
        return SchemaBuilder(SchemaType.STRING)

    @staticmethod
    def bytes() -> SchemaBuilder:
        """A BYTES builder."""
        return SchemaBuilder(SchemaType.BYTES)

    @staticmethod
    def struct() -> SchemaBuilder:
        """A STRUCT builder; add fields with :meth:`field`."""
        return SchemaBuilder(SchemaType.STRUCT)

    @staticmethod
    def array(value_schema: Schema | SchemaBuilder) -> SchemaBuilder:
        """An ARRAY builder whose elements have ``value_schema``."""
        if value_schema is None:
            raise SchemaBuilderException("valueSchema cannot be null.")
        builder = SchemaBuilder(SchemaType.ARRAY)
        builder._value_schema = as_schema(value_schema)
        return builder

    @staticmethod
    def map(
        key_schema: Schema | SchemaBuilder, value_schema: Schema | SchemaBuilder
    ) -> SchemaBuilder:
        """A MAP builder."""
        if key_schema is None:
            raise SchemaBuilderException("keySchema cannot be null.")
        if value_schema is None:
            raise SchemaBuilderException("valueSchema cannot be null.")
        builder = SchemaBuilder(SchemaType.MAP)
        builder._key_schema = as_schema(key_schema)
        builder._value_schema = as_schema(value_schema)
        return builder

    # -- setters -------------------------------------------------------------------------------
    def _check_can_set(self, what: str, current: Any, new: Any) -> None:
        # As Kafka: setting an attribute again to the same value is allowed.
        if current is not _UNSET and current is not new and current != new:
            raise SchemaBuilderException(
                f"Invalid SchemaBuilder call: {what} has already been set."
            )

    def optional(self) -> SchemaBuilder:
        """Allow ``None`` values."""
        self._check_can_set("optional", self._optional, True)
        self._optional = True
        return self

    def required(self) -> SchemaBuilder:
        """Disallow ``None`` values (the default)."""
        self._check_can_set("optional", self._optional, False)
        self._optional = False
        return self

    def default_value(self, value: Any) -> SchemaBuilder:
        """Set the default value; it is validated against the schema at once."""
        self._check_can_set("default", self._default, value)
        try:
            validate_value(self._build(with_default=False), value)
        except DataException as exc:
            raise SchemaBuilderException(f"Invalid default value: {exc}") from exc
        self._default = value
        return self

    def name(self, name: str) -> SchemaBuilder:
        """Set the schema name."""
        self._check_can_set("name", self._name, name)
        self._name = name
        return self

    def version(self, version: int) -> SchemaBuilder:
        """Set the schema version."""
        self._check_can_set("version", self._version, version)
        self._version = version
        return self

    def doc(self, doc: str) -> SchemaBuilder:
        """Set the schema documentation."""
        self._check_can_set("doc", self._doc, doc)
        self._doc = doc
        return self

    def parameter(self, key: str, value: str) -> SchemaBuilder:
        """Add one string parameter."""
        self._parameters[key] = value
        return self

    def parameters(self, params: Mapping[str, str]) -> SchemaBuilder:
        """Add several string parameters."""
        self._parameters.update(params)
        return self

    def field(self, name: str, schema: Schema | SchemaBuilder) -> SchemaBuilder:
        """Append a field to a STRUCT schema."""
        if self._fields is None:
            raise SchemaBuilderException(f"Cannot create fields on type {self._type.name}")
        if name is None or name == "":
            raise SchemaBuilderException("fieldName cannot be null.")
        if schema is None:
            raise SchemaBuilderException(f"fieldSchema for field {name} cannot be null.")
        if name in self._fields:
            raise SchemaBuilderException(
                f"Cannot create field because of field name duplication {name}"
            )
        self._fields[name] = Field(name, len(self._fields), as_schema(schema))
        return self

    # -- build ---------------------------------------------------------------------------------
    @property
    def schema_type(self) -> SchemaType:
        """The type this builder builds."""
        return self._type

    @property
    def is_optional(self) -> builtins.bool:
        """Whether :meth:`optional` was called."""
        return self._optional is True

    def _build(self, *, with_default: builtins.bool) -> Schema:
        return Schema(
            self._type,
            optional=self._optional is True,
            default_value=self._default if with_default and self._default is not _UNSET else None,
            name=None if self._name is _UNSET else self._name,
            version=None if self._version is _UNSET else self._version,
            doc=None if self._doc is _UNSET else self._doc,
            parameters=self._parameters,
            fields=list(self._fields.values()) if self._fields is not None else None,
            key_schema=self._key_schema,
            value_schema=self._value_schema,
        )

    def build(self) -> Schema:
        """Return the immutable schema."""
        return self._build(with_default=True)

    def schema(self) -> Schema:
        """Same as :meth:`build` (Kafka's spelling)."""
        return self.build()

    def __repr__(self) -> str:
        return f"SchemaBuilder({self._type.name})"
