"""Converters between Connect data and the bytes stored in Kafka.

Key/value converters implement :class:`Converter`, header converters :class:`HeaderConverter`.
Kafka's and Confluent's class names (``org.apache.kafka.connect.json.JsonConverter``,
``io.confluent.connect.avro.AvroConverter``, ``io.confluent.connect.protobuf.ProtobufConverter``,
``io.confluent.connect.json.JsonSchemaConverter``, ...) resolve to these as aliases in configs.
"""

from __future__ import annotations

from cdk.converters._api import Converter, HeaderConverter
from cdk.converters._avro import AvroConverter
from cdk.converters._header import SimpleHeaderConverter
from cdk.converters._json import JsonConverter
from cdk.converters._json_schema import JsonSchemaConverter
from cdk.converters._protobuf import ProtobufConverter
from cdk.converters._simple import (
    BooleanConverter,
    ByteArrayConverter,
    DoubleConverter,
    FloatConverter,
    IntegerConverter,
    LongConverter,
    ShortConverter,
    StringConverter,
)

__all__ = [
    "AvroConverter",
    "ProtobufConverter",
    "JsonSchemaConverter",
    "Converter",
    "HeaderConverter",
    "SimpleHeaderConverter",
    "JsonConverter",
    "StringConverter",
    "ByteArrayConverter",
    "BooleanConverter",
    "ShortConverter",
    "IntegerConverter",
    "LongConverter",
    "FloatConverter",
    "DoubleConverter",
]
