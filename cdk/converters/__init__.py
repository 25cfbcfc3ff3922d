"""Converters between Connect data and the bytes stored in Kafka.

Key/value converters implement :class:`Converter`, header converters :class:`HeaderConverter`.
Kafka's class names (``org.apache.kafka.connect.json.JsonConverter``, ...) resolve to these as
aliases in configs.
"""

from __future__ import annotations

from cdk.converters._api import Converter, HeaderConverter

__all__ = [
    "Converter",
    "HeaderConverter",
]
