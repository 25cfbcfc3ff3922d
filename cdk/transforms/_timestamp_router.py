"""TimestampRouter: route records to time-bucketed topics (Kafka's ``TimestampRouter``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cdk.config import ConfigDef, Importance, Type
from cdk.data._logical import millis_to_datetime
from cdk.errors import ConfigException, DataException
from cdk.transforms._base import R, Transformation
from cdk.transforms._date_format import SimpleDateFormat

__all__ = ["TimestampRouter"]

TOPIC_FORMAT_CONFIG = "topic.format"
TIMESTAMP_FORMAT_CONFIG = "timestamp.format"

CONFIG_DEF: ConfigDef = (
    ConfigDef()
    .define(
        TOPIC_FORMAT_CONFIG,
        Type.STRING,
        "${topic}-${timestamp}",
        None,
        Importance.HIGH,
        "The new topic name, in which ${topic} stands for the original topic and ${timestamp} "
        "for the formatted record timestamp.",
    )
    .define(
        TIMESTAMP_FORMAT_CONFIG,
        Type.STRING,
        "yyyyMMdd",
        None,
        Importance.HIGH,
        "How ${timestamp} is written: a java.text.SimpleDateFormat pattern, applied in UTC.",
    )
)


class TimestampRouter(Transformation[R]):
    """Set the topic from the original topic and the record timestamp.

    Mostly for sink connectors, where the topic often names the destination table or index:
    with the defaults a record of topic ``orders`` stamped 2017-01-03 goes to
    ``orders-20170103``. Records without a timestamp are an error.
    """

    def __init__(self) -> None:
        self._topic_format = "${topic}-${timestamp}"
        self._timestamp_format = SimpleDateFormat("yyyyMMdd")

    def config(self) -> ConfigDef:
        """TimestampRouter's ConfigDef."""
        return CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        """Read ``topic.format`` and compile ``timestamp.format``.

        Raises:
            ConfigException: ``timestamp.format`` is not a usable SimpleDateFormat pattern.
        """
        parsed = CONFIG_DEF.parse(configs)
        self._topic_format = parsed[TOPIC_FORMAT_CONFIG]
        pattern = parsed[TIMESTAMP_FORMAT_CONFIG]
        try:
            self._timestamp_format = SimpleDateFormat(pattern)
        except ValueError as exc:
            raise ConfigException(TIMESTAMP_FORMAT_CONFIG, pattern, str(exc)) from exc

    def apply(self, record: R) -> R | None:
        """The record with its topic rewritten.

        Raises:
            DataException: the record has no timestamp.
        """
        if record.timestamp is None:
            raise DataException(f"Timestamp missing on record: {record!r}")
        stamp = self._timestamp_format.format(millis_to_datetime(record.timestamp))
        # the same order as Kafka: ${topic} first, then ${timestamp} in the result
        topic = self._topic_format.replace("${topic}", record.topic).replace("${timestamp}", stamp)
        return record.new_record(topic=topic)
