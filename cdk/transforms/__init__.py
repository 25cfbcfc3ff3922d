"""Single message transformations (SMTs) and predicates: Kafka's set, configured with Kafka's keys.

Key/value SMTs expose their variants as nested classes (``InsertField.Value``); Kafka's class names
(``org.apache.kafka.connect.transforms.InsertField$Value``) resolve to them as aliases in configs.
"""

from __future__ import annotations

from cdk.transforms._base import Predicate, Transformation
from cdk.transforms._cast import Cast
from cdk.transforms._chain import TransformationChain, TransformationStage
from cdk.transforms._drop_headers import DropHeaders
from cdk.transforms._extract_field import ExtractField
from cdk.transforms._filter import Filter
from cdk.transforms._flatten import Flatten
from cdk.transforms._header_from import HeaderFrom
from cdk.transforms._hoist_field import HoistField
from cdk.transforms._insert_field import InsertField
from cdk.transforms._insert_header import InsertHeader
from cdk.transforms._mask_field import MaskField
from cdk.transforms._predicates import HasHeaderKey, RecordIsTombstone, TopicNameMatches
from cdk.transforms._regex_router import RegexRouter
from cdk.transforms._replace_field import ReplaceField
from cdk.transforms._set_schema_metadata import SetSchemaMetadata
from cdk.transforms._timestamp_converter import TimestampConverter
from cdk.transforms._timestamp_router import TimestampRouter
from cdk.transforms._value_to_key import ValueToKey

__all__ = [
    "Cast",
    "DropHeaders",
    "ExtractField",
    "Filter",
    "Flatten",
    "HasHeaderKey",
    "HeaderFrom",
    "HoistField",
    "InsertField",
    "InsertHeader",
    "MaskField",
    "Predicate",
    "RecordIsTombstone",
    "RegexRouter",
    "ReplaceField",
    "SetSchemaMetadata",
    "TimestampConverter",
    "TimestampRouter",
    "TopicNameMatches",
    "Transformation",
    "TransformationChain",
    "TransformationStage",
    "ValueToKey",
]
