"""MaskField: replace field values with an empty value or a replacement (Kafka's ``MaskField``)."""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
from collections.abc import Mapping
from typing import Any, ClassVar, Generic

from cdk.config import NO_DEFAULT, ConfigDef, Importance, Type
from cdk.config.validators import NonEmptyString
from cdk.data import Schema, SchemaType, Struct
from cdk.errors import DataException
from cdk.transforms._base import (
    KeyMixin,
    KeyOrValue,
    NonEmptyListValidator,
    R,
    Transformation,
    ValueMixin,
    attach_variants,
    require_map,
    require_struct,
    struct_get,
)

__all__ = ["MaskField"]

FIELDS_CONFIG = "fields"
REPLACEMENT_CONFIG = "replacement"
REPLACE_NULL_WITH_DEFAULT_CONFIG = "replace.null.with.default"
_PURPOSE = "mask fields"


CONFIG_DEF: ConfigDef = (
    ConfigDef()
    .define(
        FIELDS_CONFIG,
        Type.LIST,
        NO_DEFAULT,
        NonEmptyListValidator(),
        Importance.HIGH,
        "Names of the fields whose values are masked.",
    )
    .define(
        REPLACEMENT_CONFIG,
        Type.STRING,
        None,
        NonEmptyString(),
        Importance.LOW,
        "A replacement used for every masked value instead of the type's empty value; it must "
        "suit the field's type (a number for numeric fields, any text for strings).",
    )
    .define(
        REPLACE_NULL_WITH_DEFAULT_CONFIG,
        Type.BOOLEAN,
        True,
        None,
        Importance.MEDIUM,
        "When a field is null and its schema has a default value: true copies (or masks) the "
        "default, false keeps null.",
    )
)

_INT_RANGES = {
    SchemaType.INT8: 8,
    SchemaType.INT16: 16,
    SchemaType.INT32: 32,
    SchemaType.INT64: 64,
}
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def _empty(value: Any) -> Any:
    """The empty value of the value's type (Kafka's masking without a replacement)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return 0
    if isinstance(value, float):
        return 0.0
    if isinstance(value, _decimal.Decimal):
        return _decimal.Decimal(0)
    if isinstance(value, _dt.datetime):
        return _EPOCH if value.tzinfo is not None else _EPOCH.replace(tzinfo=None)
    if isinstance(value, _dt.date):
        return _dt.date(1970, 1, 1)
    if isinstance(value, _dt.time):
        return _dt.time(0)
    if isinstance(value, str):
        return ""
    if isinstance(value, (list, tuple)):
        return []
    if isinstance(value, Mapping):
        return {}
    raise DataException(f"Cannot mask value of type: class {type(value).__name__}")


def _number_error(replacement: str) -> DataException:
    return DataException(f"Unable to convert {replacement} (class str) to number")


def _parse_number(replacement: str) -> _decimal.Decimal:
    try:
        number = _decimal.Decimal(replacement.strip())
    except _decimal.InvalidOperation:
        raise _number_error(replacement) from None
    if not number.is_finite():
        raise _number_error(replacement)
    return number


def _replaced(value: Any, replacement: str, schema: Schema | None) -> Any:
    """The replacement converted to the value's type (numbers and strings only)."""
    if isinstance(value, str):
        return replacement
    if isinstance(value, bool) or not isinstance(value, (int, float, _decimal.Decimal)):
        raise DataException(
            f"Cannot mask value of type class {type(value).__name__} with custom replacement."
        )
    if isinstance(value, float):
        try:
            return float(replacement.strip())
        except ValueError:
            raise _number_error(replacement) from None
    number = _parse_number(replacement)
    if isinstance(value, _decimal.Decimal):
        return number
    bits = _INT_RANGES.get(schema.type, 64) if schema is not None else 64
    whole = int(number)
    if not -(1 << (bits - 1)) <= whole < (1 << (bits - 1)):
        raise _number_error(replacement)
    return whole


class MaskField(Transformation[R], KeyOrValue, Generic[R]):
    """Mask fields of the key (``MaskField.Key``) or value (``MaskField.Value``).

    Without ``replacement`` a masked value becomes the empty value of its type: ``False``, ``0``,
    ``0.0``, ``Decimal(0)``, the epoch for dates and times, ``""``, ``[]`` or ``{}``. With one,
    numeric and string values take the replacement (converted to the field's type); other types
    cannot be masked with a replacement. Null values stay null.

    Example::

        xform = MaskField.Value()
        xform.configure({"fields": "ssn,card", "replacement": "****"})
    """

    Key: ClassVar[type[MaskField[Any]]]
    Value: ClassVar[type[MaskField[Any]]]

    def __init__(self) -> None:
        self._fields: frozenset[str] = frozenset()
        self._replacement: str | None = None
        self._replace_null_with_default = True

    def config(self) -> ConfigDef:
        """MaskField's ConfigDef."""
        return CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        """Read ``fields``, ``replacement`` and ``replace.null.with.default``."""
        parsed = CONFIG_DEF.parse(configs)
        self._fields = frozenset(parsed[FIELDS_CONFIG])
        self._replacement = parsed[REPLACEMENT_CONFIG]
        self._replace_null_with_default = parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG]

    def apply(self, record: R) -> R:
        """The record with the configured fields masked."""
        value = self.operating_value(record)
        schema = self.operating_schema(record)
        if schema is None:
            data = require_map(value, _PURPOSE)
            updated = dict(data)
            for name in self._fields:
                updated[name] = self._masked(data.get(name), None, name)
            return self.new_record(record, None, updated)
        struct = require_struct(value, _PURPOSE)
        masked = Struct(struct.schema)
        for field in struct.schema.fields:
            original = struct_get(struct, field, self._replace_null_with_default)
            if field.name in self._fields:
                original = self._masked(original, field.schema, field.name)
            masked.put(field, original)
        return self.new_record(record, struct.schema, masked)

    def _masked(self, value: Any, schema: Schema | None, name: str) -> Any:
        if value is None:
            return None
        try:
            if self._replacement is None:
                return _empty(value)
            return _replaced(value, self._replacement, schema)
        except DataException as exc:
            raise DataException(str(exc), field=name) from None


class _Key(KeyMixin, MaskField[R]):
    """MaskField on the record key (Kafka's ``MaskField$Key``)."""


class _Value(ValueMixin, MaskField[R]):
    """MaskField on the record value (Kafka's ``MaskField$Value``)."""


attach_variants(MaskField, _Key, _Value)
