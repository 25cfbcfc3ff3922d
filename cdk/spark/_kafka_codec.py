"""Kafka bytes written by any Connect converter ⇄ typed Spark columns.

Data that Kafka Connect (or this kit) wrote to Kafka is bytes in a converter's format: the JSON
envelope of ``JsonConverter`` (``{"schema": ..., "payload": ...}``), Avro in Confluent's wire
format with a Schema Registry, plain strings. :func:`kafka_decoder` turns such a ``binary``
column (the ``value`` of Spark's own Kafka source, or of the kit's ``cdk-kafka`` format) into a
typed column; :func:`kafka_encoder` turns columns into the bytes that converter writes, so Kafka
Connect sinks read them back::

    decode = kafka_decoder("id BIGINT, name STRING", "json")
    typed = raw.select(decode("value").alias("v")).select("v.*")
    encode = kafka_encoder(typed.schema, "json", topic="people")
    raw_again = typed.select(encode(struct(*typed.columns)).alias("value"))
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from cdk.data import Schema
from cdk.errors import ConfigException
from cdk.spark._lazy import require
from cdk.spark._schema_map import (
    connect_to_spark,
    spark_to_connect,
    to_connect_value,
    to_spark_value,
)

__all__ = ["CONVERTER_ALIASES", "kafka_decoder", "kafka_encoder"]

#: Short names for the converters (any converter class name works too).
CONVERTER_ALIASES = {
    "json": "org.apache.kafka.connect.json.JsonConverter",
    "avro": "io.confluent.connect.avro.AvroConverter",
    "string": "org.apache.kafka.connect.storage.StringConverter",
    "bytes": "org.apache.kafka.connect.converters.ByteArrayConverter",
}

_CACHE: dict[tuple[Any, ...], Any] = {}


def _converter(name: str, config: Mapping[str, str], is_key: bool) -> Any:
    key = (name, tuple(sorted(config.items())), is_key)
    converter = _CACHE.get(key)
    if converter is None:
        from cdk.runtime import Plugins

        converter = Plugins().new_converter(CONVERTER_ALIASES.get(name, name), config, is_key)
        _CACHE[key] = converter
    return converter


def _spark_type(schema: Any) -> Any:
    if isinstance(schema, Schema):
        return connect_to_spark(schema)
    if isinstance(schema, str):
        types = require("pyspark.sql.types")
        return types._parse_datatype_string(schema)
    return schema


def _check(converter: str, config: Mapping[str, str]) -> dict[str, str]:
    if not isinstance(converter, str) or not converter.strip():
        raise ConfigException(
            f"converter must be one of {', '.join(CONVERTER_ALIASES)} or a converter class name, "
            f"not {converter!r}"
        )
    settings = {str(k): str(v) for k, v in (config or {}).items()}
    _converter(converter, settings, False)  # bad names and configs fail here, on the driver
    return settings


def kafka_decoder(
    schema: Any,
    converter: str = "json",
    *,
    topic: str = "",
    config: Mapping[str, str] | None = None,
    is_key: bool = False,
) -> Callable[[Any], Any]:
    """A function turning a binary column of converter bytes into a typed column.

    Args:
        schema: the column's type: a Spark DDL string (``"id BIGINT, name STRING"``), a Spark
            ``DataType`` or a Connect :class:`~cdk.data.Schema`.
        converter: ``json``, ``avro``, ``string``, ``bytes`` or a converter class name.
        topic: the topic the bytes came from (the Avro converter's subject uses it).
        config: the converter's config (``schemas.enable``, ``schema.registry.url``...).
        is_key: whether the column holds record keys.

    Returns:
        ``f(column) -> Column`` (a Python UDF).

    Raises:
        ConfigException: unknown converter or a bad converter config.
        DataException: the type cannot be mapped (the field is named).
    """
    functions = require("pyspark.sql.functions")
    spark_type = _spark_type(schema)
    connect_schema = spark_to_connect(spark_type, optional=True)
    settings = _check(converter, config or {})

    def decode(data: bytes | None) -> Any:
        if data is None:
            return None
        record = _converter(converter, settings, is_key).to_connect_data(topic, bytes(data))
        # By field name: the writer's schema may order (or name) its fields differently.
        return to_spark_value(connect_schema, to_connect_value(connect_schema, record.value))

    return functions.udf(decode, spark_type, useArrow=False)  # type: ignore[no-any-return]


def kafka_encoder(
    schema: Any,
    converter: str = "json",
    *,
    topic: str = "",
    config: Mapping[str, str] | None = None,
    is_key: bool = False,
) -> Callable[[Any], Any]:
    """A function turning a typed column into the bytes ``converter`` writes for Kafka.

    Args:
        schema: the column's type (as for :func:`kafka_decoder`); a struct column of all the
            DataFrame's columns is ``struct(*df.columns)`` with ``df.schema``.
        converter: ``json``, ``avro``, ``string``, ``bytes`` or a converter class name.
        topic: the topic the bytes go to (the Avro converter registers the subject for it).
        config: the converter's config.
        is_key: whether the column holds record keys.

    Returns:
        ``f(column) -> Column`` of binary (a Python UDF).
    """
    functions = require("pyspark.sql.functions")
    types = require("pyspark.sql.types")
    spark_type = _spark_type(schema)
    connect_schema = spark_to_connect(spark_type, optional=True)
    settings = _check(converter, config or {})

    def encode(value: Any) -> bytes | None:
        if value is None:
            return None
        data = to_connect_value(connect_schema, value)
        return _converter(converter, settings, is_key).from_connect_data(  # type: ignore[no-any-return]
            topic, connect_schema, data
        )

    return functions.udf(encode, types.BinaryType(), useArrow=False)  # type: ignore[no-any-return]
