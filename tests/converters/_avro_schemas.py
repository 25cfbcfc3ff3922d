"""Schemas shared by the Avro test modules."""

from __future__ import annotations

from cdk.data import Schema, SchemaBuilder


def complex_builder() -> SchemaBuilder:
    """A builder of the all-types struct of Confluent's AvroDataTest.testFromConnectComplex."""
    return (
        SchemaBuilder.struct()
        .field("int8", SchemaBuilder.int8().default_value(2).doc("int8 field").build())
        .field("int16", Schema.INT16_SCHEMA)
        .field("int32", Schema.INT32_SCHEMA)
        .field("int64", Schema.INT64_SCHEMA)
        .field("float32", Schema.FLOAT32_SCHEMA)
        .field("float64", Schema.FLOAT64_SCHEMA)
        .field("boolean", Schema.BOOLEAN_SCHEMA)
        .field("string", Schema.STRING_SCHEMA)
        .field("bytes", Schema.BYTES_SCHEMA)
        .field("array", SchemaBuilder.array(Schema.STRING_SCHEMA).build())
        .field("map", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build())
        .field(
            "mapNonStringKeys", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.INT32_SCHEMA).build()
        )
    )
