"""The Connect data API: schemas, structs, logical types, projection and schemaless values.

Python spelling of ``org.apache.kafka.connect.data``. Values are plain Python objects; see
:func:`validate_value` for the type of each schema type.
"""

from __future__ import annotations

from cdk.data._builder import SchemaBuilder
from cdk.data._logical import Date, Decimal, Time, Timestamp
from cdk.data._projector import SchemaProjector
from cdk.data._schema import Field, Schema, SchemaType, validate_value
from cdk.data._struct import SchemaAndValue, Struct
from cdk.data._values import Values

__all__ = [
    "Date",
    "Decimal",
    "Field",
    "Schema",
    "SchemaAndValue",
    "SchemaBuilder",
    "SchemaProjector",
    "SchemaType",
    "Struct",
    "Time",
    "Timestamp",
    "Values",
    "validate_value",
]
