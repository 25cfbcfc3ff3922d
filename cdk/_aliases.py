"""Kafka class names accepted in configs, mapped to the kit's implementations.

Existing Kafka Connect properties files name plugins by Java class
(``org.apache.kafka.connect.transforms.InsertField$Value``) or by simple name
(``InsertField$Value``, ``JsonConverter``). :func:`cdk.config.load_class` consults this table
before importing, so those files run unchanged. Values are ``module:qualname`` import paths,
resolved lazily.
"""

from __future__ import annotations

__all__ = ["KAFKA_CLASS_ALIASES"]

_TRANSFORMS_PKG = "org.apache.kafka.connect.transforms"
_KEY_VALUE_SMTS = (
    "Cast",
    "ExtractField",
    "Flatten",
    "HeaderFrom",
    "HoistField",
    "InsertField",
    "MaskField",
    "ReplaceField",
    "SetSchemaMetadata",
    "TimestampConverter",
)
_PLAIN_SMTS = (
    "DropHeaders",
    "Filter",
    "InsertHeader",
    "RegexRouter",
    "TimestampRouter",
    "ValueToKey",
)
_PREDICATES = ("HasHeaderKey", "RecordIsTombstone", "TopicNameMatches")
_CONVERTERS = {
    "org.apache.kafka.connect.json.JsonConverter": "JsonConverter",
    "org.apache.kafka.connect.storage.StringConverter": "StringConverter",
    "org.apache.kafka.connect.converters.ByteArrayConverter": "ByteArrayConverter",
    "org.apache.kafka.connect.storage.SimpleHeaderConverter": "SimpleHeaderConverter",
    "org.apache.kafka.connect.converters.BooleanConverter": "BooleanConverter",
    "org.apache.kafka.connect.converters.ShortConverter": "ShortConverter",
    "org.apache.kafka.connect.converters.IntegerConverter": "IntegerConverter",
    "org.apache.kafka.connect.converters.LongConverter": "LongConverter",
    "org.apache.kafka.connect.converters.FloatConverter": "FloatConverter",
    "org.apache.kafka.connect.converters.DoubleConverter": "DoubleConverter",
    "io.confluent.connect.avro.AvroConverter": "AvroConverter",
    "io.confluent.connect.protobuf.ProtobufConverter": "ProtobufConverter",
    "io.confluent.connect.json.JsonSchemaConverter": "JsonSchemaConverter",
}


def _build() -> dict[str, str]:
    table: dict[str, str] = {}
    for name in _KEY_VALUE_SMTS:
        for variant in ("Key", "Value"):
            target = f"cdk.transforms:{name}.{variant}"
            table[f"{_TRANSFORMS_PKG}.{name}${variant}"] = target
            table[f"{name}${variant}"] = target
    for name in _PLAIN_SMTS:
        table[f"{_TRANSFORMS_PKG}.{name}"] = f"cdk.transforms:{name}"
        table[name] = f"cdk.transforms:{name}"
    for name in _PREDICATES:
        table[f"{_TRANSFORMS_PKG}.predicates.{name}"] = f"cdk.transforms:{name}"
        table[name] = f"cdk.transforms:{name}"
    for java_name, name in _CONVERTERS.items():
        table[java_name] = f"cdk.converters:{name}"
        table[name] = f"cdk.converters:{name}"
    return table


KAFKA_CLASS_ALIASES: dict[str, str] = _build()
