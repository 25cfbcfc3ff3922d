"""Connect schemas: :class:`SchemaType`, the immutable :class:`Schema`, :class:`Field`."""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
import enum
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

from cdk.errors import DataException

if TYPE_CHECKING:
    from cdk.data._struct import Struct

__all__ = ["Field", "Schema", "SchemaType", "validate_value"]


class SchemaType(enum.Enum):
    """The twelve Connect schema types; the value is Kafka's lower-case type name."""

    INT8 = "int8"
    INT16 = "int16"
    INT32 = "int32"
    INT64 = "int64"
    FLOAT32 = "float32"
    FLOAT64 = "float64"
    BOOLEAN = "boolean"
    STRING = "string"
    BYTES = "bytes"
    ARRAY = "array"
    MAP = "map"
    STRUCT = "struct"

    @property
    def is_primitive(self) -> bool:
        """True for every type but ARRAY, MAP and STRUCT."""
        return self not in (SchemaType.ARRAY, SchemaType.MAP, SchemaType.STRUCT)

    def __str__(self) -> str:
        return self.name


class Field:
    """A named, positioned field of a STRUCT schema."""

    __slots__ = ("index", "name", "schema")

    def __init__(self, name: str, index: int, schema: Schema) -> None:
        self.name = name
        self.index = index
        self.schema = schema

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Field):
            return NotImplemented
        return self.name == other.name and self.index == other.index and self.schema == other.schema

    def __hash__(self) -> int:
        return hash((self.name, self.index, self.schema))

    def __repr__(self) -> str:
        return f"Field{{name={self.name}, index={self.index}, schema={self.schema!r}}}"


class Schema:
    """An immutable Connect schema (Kafka's ``ConnectSchema``).

    Build one with :class:`~cdk.data.SchemaBuilder` or use a predefined constant such as
    ``Schema.STRING_SCHEMA`` / ``Schema.OPTIONAL_INT64_SCHEMA``.

    Attributes:
        type: the :class:`SchemaType`.
        optional: whether ``None`` is a valid value.
        default_value: the default (already validated), or ``None``.
        name: the schema name (logical types use it), or ``None``.
        version: the schema version, or ``None``.
        doc: documentation, or ``None``.
        parameters: read-only string parameters (e.g. a Decimal's ``scale``), possibly empty.
    """

    __slots__ = (
        "_by_name",
        "_check",
        "_fields",
        "_fields_check",
        "_hash",
        "_key_schema",
        "_value_schema",
        "_values_check",
        "default_value",
        "doc",
        "name",
        "optional",
        "parameters",
        "type",
        "version",
    )

    INT8_SCHEMA: ClassVar[Schema]
    INT16_SCHEMA: ClassVar[Schema]
    INT32_SCHEMA: ClassVar[Schema]
    INT64_SCHEMA: ClassVar[Schema]
    FLOAT32_SCHEMA: ClassVar[Schema]
    FLOAT64_SCHEMA: ClassVar[Schema]
    BOOLEAN_SCHEMA: ClassVar[Schema]
    STRING_SCHEMA: ClassVar[Schema]
    BYTES_SCHEMA: ClassVar[Schema]
    OPTIONAL_INT8_SCHEMA: ClassVar[Schema]
    OPTIONAL_INT16_SCHEMA: ClassVar[Schema]
    OPTIONAL_INT32_SCHEMA: ClassVar[Schema]
    OPTIONAL_INT64_SCHEMA: ClassVar[Schema]
    OPTIONAL_FLOAT32_SCHEMA: ClassVar[Schema]
    OPTIONAL_FLOAT64_SCHEMA: ClassVar[Schema]
    OPTIONAL_BOOLEAN_SCHEMA: ClassVar[Schema]
    OPTIONAL_STRING_SCHEMA: ClassVar[Schema]
    OPTIONAL_BYTES_SCHEMA: ClassVar[Schema]

    def __init__(
        self,
        type: SchemaType,
        optional: bool = False,
        default_value: Any = None,
        name: str | None = None,
        version: int | None = None,
        doc: str | None = None,
        parameters: Mapping[str, str] | None = None,
        fields: Sequence[Field] | None = None,
        key_schema: Schema | None = None,
        value_schema: Schema | None = None,
    ) -> None:
        self.type = type
        self.optional = optional
        self.default_value = None
        self.name = name
        self.version = version
        self.doc = doc
        self.parameters: Mapping[str, str] = MappingProxyType(dict(parameters or {}))
        self._fields: tuple[Field, ...] | None = (
            tuple(fields or ()) if type is SchemaType.STRUCT else None
        )
        self._by_name: dict[str, Field] = {f.name: f for f in self._fields or ()}
        self._key_schema = key_schema
        self._value_schema = value_schema
        self._hash: int | None = None
        # Validation compiled on first use (cdk.data._checks)
        self._check: Callable[[Any], bool] | None = None
        self._fields_check: Callable[[list[Any]], bool] | None = None
        self._values_check: Callable[[list[Any]], bool] | None = None
        if default_value is not None:
            validate_value(self, default_value)
            self.default_value = default_value

    # -- structure -----------------------------------------------------------------------------
    @property
    def fields(self) -> tuple[Field, ...]:
        """The fields of a STRUCT schema, in order.

        Raises:
            DataException: the schema is not a STRUCT.
        """
        if self._fields is None:
            raise DataException("Cannot list fields on non-struct type")
        return self._fields

    def field(self, name: str) -> Field | None:
        """The field called ``name``, or ``None``.

        Raises:
            DataException: the schema is not a STRUCT.
        """
        if self._fields is None:
            raise DataException("Cannot look up fields on non-struct type")
        return self._by_name.get(name)

    @property
    def key_schema(self) -> Schema:
        """The key schema of a MAP schema."""
        if self.type is not SchemaType.MAP:
            raise DataException("Cannot look up key schema on non-map type")
        if self._key_schema is None:
            raise DataException("No schema defined for the keys of this MAP schema")
        return self._key_schema

    @property
    def value_schema(self) -> Schema:
        """The element schema of an ARRAY, or the value schema of a MAP."""
        if self.type not in (SchemaType.MAP, SchemaType.ARRAY):
            raise DataException("Cannot look up value schema on non-array and non-map type")
        if self._value_schema is None:
            raise DataException(f"No schema defined for the values of this {self.type} schema")
        return self._value_schema

    def validate_value(self, value: Any) -> None:
        """Check that ``value`` is valid for this schema; raise :class:`DataException` if not."""
        validate_value(self, value)

    # -- identity -------------------------------------------------------------------------------
    def _key(self) -> tuple[Any, ...]:
        return (
            self.type,
            self.optional,
            self.name,
            self.version,
            self.doc,
            tuple(sorted(self.parameters.items())),
            self._fields,
            self._key_schema,
            self._value_schema,
        )

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Schema):
            return NotImplemented
        return self._key() == other._key() and _deep_equals(self.default_value, other.default_value)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(self._key())
        return self._hash

    def __repr__(self) -> str:
        if self.name is not None:
            return f"Schema{{{self.name}:{self.type.name}}}"
        return f"Schema{{{self.type.name}}}"


def _deep_equals(a: Any, b: Any) -> bool:
    if type(a) is not type(b) and not (isinstance(a, (int, float)) and isinstance(b, (int, float))):
        return False
    return bool(a == b)


# -- validation ----------------------------------------------------------------------------------
_INT_RANGES = {
    SchemaType.INT8: (-(2**7), 2**7 - 1),
    SchemaType.INT16: (-(2**15), 2**15 - 1),
    SchemaType.INT32: (-(2**31), 2**31 - 1),
    SchemaType.INT64: (-(2**63), 2**63 - 1),
}

_LOGICAL_CLASSES: dict[str, tuple[type, ...]] = {
    "org.apache.kafka.connect.data.Decimal": (_decimal.Decimal,),
    "org.apache.kafka.connect.data.Date": (_dt.date,),
    "org.apache.kafka.connect.data.Time": (_dt.time,),
    "org.apache.kafka.connect.data.Timestamp": (_dt.datetime,),
}


def _type_error(
    schema: Schema, value: Any, location: str, field: str | None, detail: str = ""
) -> None:
    named = f' "{schema.name}"' if schema.name is not None else ""
    text = (
        f"Invalid Python object for schema{named} with type {schema.type.name}: "
        f"class {type(value).__name__}"
    )
    if detail:
        text += f" ({detail})"
    text += f" for {location}"
    raise DataException(text, field=field)


def validate_value(schema: Schema, value: Any, field: str | None = None) -> None:
    """Check ``value`` against ``schema`` recursively, as Kafka's ``ConnectSchema.validateValue``.

    Python value types: ``int`` for INT8..INT64 (range-checked), ``float`` (or ``int``) for
    FLOAT32/FLOAT64, ``bool``, ``str``, ``bytes``/``bytearray``/``memoryview`` for BYTES, ``list``
    (or ``tuple``) for ARRAY, a mapping for MAP, :class:`~cdk.data.Struct` for STRUCT; logical
    types take ``decimal.Decimal``, ``datetime.date`` (not a ``datetime``), ``datetime.time`` and
    ``datetime.datetime``.

    Error texts follow Kafka's, locating the problem as ``field: "name"`` (when ``field`` is given)
    or ``value``, and ``element of array ...``/``key of map ...``/``value of map ...`` inside
    containers.

    The checks are compiled once per schema (``cdk.data._checks``); a value they do not
    recognise as valid takes the full validation, which raises the error.

    Raises:
        DataException: naming the field (when given) and what is wrong.
    """
    check = schema._check
    if check is None:
        check = _compiled_check(schema)
    if not check(value):
        _validate(schema, value, "value" if field is None else f'field: "{field}"', field)


def _compiled_check(schema: Schema) -> Callable[[Any], bool]:
    """The schema's compiled check, built and kept on first use."""
    from cdk.data._checks import compile_check

    check = compile_check(schema)
    schema._check = check
    return check


def _compiled_fields_check(schema: Schema) -> Callable[[list[Any]], bool]:
    """A STRUCT schema's compiled check of a struct's values, built and kept on first use."""
    from cdk.data._checks import compile_fields_check

    check = compile_fields_check(schema)
    schema._fields_check = check
    return check


def _compiled_values_check(schema: Schema) -> Callable[[list[Any]], bool]:
    """A STRUCT schema's compiled check of values to put, built and kept on first use."""
    from cdk.data._checks import compile_fields_check

    check = compile_fields_check(schema, defaults=False)
    schema._values_check = check
    return check


def _validate(schema: Schema, value: Any, location: str, field: str | None) -> None:
    if value is None:
        if not schema.optional:
            raise DataException(
                f"Invalid value: null used for required {location}, "
                f"schema type: {schema.type.name}",
                field=field,
            )
        return
    stype = schema.type
    if schema.name is not None:
        expected = _LOGICAL_CLASSES.get(schema.name)
        if expected is not None:
            if not isinstance(value, expected):
                _type_error(schema, value, location, field)
            if expected[0] is _dt.date and isinstance(value, _dt.datetime):
                _type_error(schema, value, location, field, "a Date value must be a datetime.date")
            return
    if stype in _INT_RANGES:
        if not isinstance(value, int) or isinstance(value, bool):
            _type_error(schema, value, location, field)
        lo, hi = _INT_RANGES[stype]
        if not lo <= value <= hi:
            _type_error(schema, value, location, field, f"{value} is out of range [{lo}, {hi}]")
    elif stype is SchemaType.STRING:
        if not isinstance(value, str):
            _type_error(schema, value, location, field)
    elif stype is SchemaType.BOOLEAN:
        if not isinstance(value, bool):
            _type_error(schema, value, location, field)
    elif stype is SchemaType.FLOAT64 or stype is SchemaType.FLOAT32:
        if not isinstance(value, (float, int)) or isinstance(value, bool):
            _type_error(schema, value, location, field)
    elif stype is SchemaType.BYTES:
        if not isinstance(value, (bytes, bytearray, memoryview)):
            _type_error(schema, value, location, field)
    elif stype is SchemaType.STRUCT:
        from cdk.data._struct import Struct

        if not isinstance(value, Struct):
            _type_error(schema, value, location, field)
        struct: Struct = value
        # A struct default is built against the schema before the default was set, so the
        # struct's schema may differ from this one by its default value only.
        if struct.schema != schema and struct.schema._key() != schema._key():
            raise DataException("Struct schemas do not match.", field=field)
        struct.validate()
    elif stype is SchemaType.ARRAY:
        if not isinstance(value, (list, tuple)):
            _type_error(schema, value, location, field)
        entry_location = f"element of array {location}"
        element = _require_schema(schema._value_schema, entry_location, field)
        for item in value:
            _validate(element, item, entry_location, field)
    elif stype is SchemaType.MAP:
        if not isinstance(value, Mapping):
            _type_error(schema, value, location, field)
        key_location = f"key of map {location}"
        value_location = f"value of map {location}"
        kschema = _require_schema(schema._key_schema, key_location, field)
        vschema = _require_schema(schema._value_schema, value_location, field)
        for k, v in value.items():
            _validate(kschema, k, key_location, field)
            _validate(vschema, v, value_location, field)


def _require_schema(schema: Schema | None, location: str, field: str | None) -> Schema:
    if schema is None:
        raise DataException(f"No schema defined for {location}", field=field)
    return schema


def _predefined(stype: SchemaType, optional: bool) -> Schema:
    return Schema(stype, optional=optional)


for _t in (
    SchemaType.INT8,
    SchemaType.INT16,
    SchemaType.INT32,
    SchemaType.INT64,
    SchemaType.FLOAT32,
    SchemaType.FLOAT64,
    SchemaType.BOOLEAN,
    SchemaType.STRING,
    SchemaType.BYTES,
):
    setattr(Schema, f"{_t.name}_SCHEMA", _predefined(_t, False))
    setattr(Schema, f"OPTIONAL_{_t.name}_SCHEMA", _predefined(_t, True))
del _t
