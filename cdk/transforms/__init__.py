"""Single message transformations (SMTs) and predicates: Kafka's set, configured with Kafka's keys.

Key/value SMTs expose their variants as nested classes (``InsertField.Value``); Kafka's class names
(``org.apache.kafka.connect.transforms.InsertField$Value``) resolve to them as aliases in configs.
"""

from __future__ import annotations

from cdk.transforms._base import Predicate, Transformation

__all__ = [
    "Predicate",
    "Transformation",
]
