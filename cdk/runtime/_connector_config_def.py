"""The framework keys of connector configurations (Kafka's ``ConnectorConfig`` ConfigDefs).

Every connector configuration holds, besides the connector's own keys, the keys the framework
reads: ``name``, ``connector.class``, ``tasks.max``, converters, ``transforms``/``predicates``,
``errors.*``; sinks add ``topics``/``topics.regex`` and the dead letter queue, sources add
``topic.creation.groups`` and the exactly-once keys. The ``errors.*`` keys are defined once, in
:mod:`cdk.runtime.errors._config`.
"""

from __future__ import annotations

import inspect
from typing import Any, Literal

from cdk.config import (
    NO_DEFAULT,
    ConfigDef,
    Importance,
    Type,
    Width,
)
from cdk.config.validators import (
    CaseInsensitiveValidString,
    CompositeValidator,
    LambdaValidator,
    NonEmptyString,
    NonEmptyStringWithoutControlChars,
    NonNullValidator,
    Range,
    ValidString,
)
from cdk.converters import Converter, HeaderConverter
from cdk.errors import ConfigException
from cdk.runtime._worker_config import (
    HEADER_CONVERTER_CLASS_DOC,
    KEY_CONVERTER_CLASS_DOC,
    VALUE_CONVERTER_CLASS_DOC,
)
from cdk.runtime.errors._config import define_dlq_keys, define_error_keys
from cdk.transforms._regex_router import RegexValidator

__all__ = [
    "CONNECTOR_CLASS_CONFIG",
    "ConnectorKind",
    "NAME_CONFIG",
    "class_text",
    "connector_config_def",
    "sink_connector_config_def",
    "source_connector_config_def",
]

ConnectorKind = Literal["source", "sink"]

COMMON_GROUP = "Common"
TRANSFORMS_GROUP = "Transforms"
PREDICATES_GROUP = "Predicates"
TOPIC_CREATION_GROUP = "Topic Creation"
EXACTLY_ONCE_SUPPORT_GROUP = "Exactly Once Support"

NAME_CONFIG = "name"
CONNECTOR_CLASS_CONFIG = "connector.class"
TASKS_MAX_CONFIG = "tasks.max"
TASKS_MAX_ENFORCE_CONFIG = "tasks.max.enforce"
KEY_CONVERTER_CLASS_CONFIG = "key.converter"
VALUE_CONVERTER_CLASS_CONFIG = "value.converter"
HEADER_CONVERTER_CLASS_CONFIG = "header.converter"
TRANSFORMS_CONFIG = "transforms"
PREDICATES_CONFIG = "predicates"
TOPICS_CONFIG = "topics"
TOPICS_REGEX_CONFIG = "topics.regex"
TOPIC_CREATION_PREFIX = "topic.creation."
TOPIC_CREATION_GROUPS_CONFIG = "topic.creation.groups"


def _unique_aliases(kind: str) -> CompositeValidator:
    def check(name: str, value: Any) -> None:
        if len(set(value)) < len(value):
            raise ConfigException(name, value, "Duplicate alias provided.")

    return CompositeValidator.of(NonNullValidator(), LambdaValidator.of(check, f"unique {kind}"))


def _subclass_of(base: type, kind: str) -> LambdaValidator:
    def check(name: str, value: Any) -> None:
        if value is None:
            return
        if not isinstance(value, type) or not issubclass(value, base):
            raise ConfigException(name, class_text(value), f"Not a {kind}")
        if inspect.isabstract(value):
            raise ConfigException(name, class_text(value), f"{kind} is abstract")

    return LambdaValidator.of(check, f"A concrete subclass of {kind}")


def class_text(value: Any) -> str:
    """How a class (or the value given for one) is named in configuration errors."""
    return f"{value.__module__}.{value.__qualname__}" if isinstance(value, type) else str(value)


def connector_config_def() -> ConfigDef:
    """The keys every connector configuration has (Kafka's ``ConnectorConfig.configDef()``)."""
    return define_error_keys(
        ConfigDef()
        .define(
            NAME_CONFIG,
            Type.STRING,
            NO_DEFAULT,
            NonEmptyStringWithoutControlChars(),
            Importance.HIGH,
            "Globally unique name to use for this connector.",
            group=COMMON_GROUP,
            order_in_group=1,
            width=Width.MEDIUM,
            display_name="Connector name",
        )
        .define(
            CONNECTOR_CLASS_CONFIG,
            Type.STRING,
            NO_DEFAULT,
            None,
            Importance.HIGH,
            "Name or alias of the class for this connector. Must be a subclass of "
            "cdk.SourceConnector or cdk.SinkConnector. A connector registered in the "
            "'cdk.plugins' entry point group can be named by its entry point name, its class "
            'name or that name without the "Connector" suffix (for FileStreamSinkConnector: '
            '"FileStreamSinkConnector" or "FileStreamSink"); any class can be named by its '
            "import path (package.module:Class).",
            group=COMMON_GROUP,
            order_in_group=2,
            width=Width.LONG,
            display_name="Connector class",
        )
        .define(
            TASKS_MAX_CONFIG,
            Type.INT,
            1,
            Range.at_least(1),
            Importance.HIGH,
            "Maximum number of tasks to use for this connector.",
            group=COMMON_GROUP,
            order_in_group=3,
            width=Width.SHORT,
            display_name="Tasks max",
        )
        .define(
            TASKS_MAX_ENFORCE_CONFIG,
            Type.BOOLEAN,
            True,
            None,
            Importance.LOW,
            "(Deprecated) Whether to enforce that the tasks.max property is respected by the "
            "connector. By default, connectors that generate too many tasks will fail, and "
            "existing sets of tasks that exceed the tasks.max property will also be failed. If "
            "this property is set to false, then connectors will be allowed to generate more "
            "than the maximum number of tasks, and existing sets of tasks that exceed the "
            "tasks.max property will be allowed to run. This property is deprecated and will be "
            "removed in an upcoming major release.",
            group=COMMON_GROUP,
            order_in_group=4,
            width=Width.SHORT,
            display_name="Enforce tasks max",
        )
        .define(
            KEY_CONVERTER_CLASS_CONFIG,
            Type.CLASS,
            None,
            _subclass_of(Converter, "Converter"),
            Importance.LOW,
            KEY_CONVERTER_CLASS_DOC,
            group=COMMON_GROUP,
            order_in_group=5,
            width=Width.SHORT,
            display_name="Key converter class",
        )
        .define(
            VALUE_CONVERTER_CLASS_CONFIG,
            Type.CLASS,
            None,
            _subclass_of(Converter, "Converter"),
            Importance.LOW,
            VALUE_CONVERTER_CLASS_DOC,
            group=COMMON_GROUP,
            order_in_group=6,
            width=Width.SHORT,
            display_name="Value converter class",
        )
        .define(
            HEADER_CONVERTER_CLASS_CONFIG,
            Type.CLASS,
            None,
            _subclass_of(HeaderConverter, "HeaderConverter"),
            Importance.LOW,
            HEADER_CONVERTER_CLASS_DOC,
            group=COMMON_GROUP,
            order_in_group=7,
            width=Width.SHORT,
            display_name="Header converter class",
        )
        .define(
            TRANSFORMS_CONFIG,
            Type.LIST,
            [],
            _unique_aliases("transformation aliases"),
            Importance.LOW,
            "Aliases for the transformations to be applied to records.",
            group=TRANSFORMS_GROUP,
            order_in_group=8,
            width=Width.LONG,
            display_name="Transforms",
        )
        .define(
            PREDICATES_CONFIG,
            Type.LIST,
            [],
            _unique_aliases("predicate aliases"),
            Importance.LOW,
            "Aliases for the predicates used by transformations.",
            group=PREDICATES_GROUP,
            order_in_group=9,
            width=Width.LONG,
            display_name="Predicates",
        )
        .define(
            "config.action.reload",
            Type.STRING,
            "restart",
            ValidString.of("none", "restart"),
            Importance.LOW,
            "The action that Connect should take on the connector when changes in external "
            "configuration providers result in a change in the connector's configuration "
            "properties. A value of 'none' indicates that Connect will do nothing. A value of "
            "'restart' indicates that Connect should restart/reload the connector with the "
            "updated configuration properties.The restart may actually be scheduled in the "
            "future if the external configuration provider indicates that a configuration value "
            "will expire in the future.",
            group=COMMON_GROUP,
            order_in_group=10,
            width=Width.MEDIUM,
            display_name="Reload Action",
        )
    )


def sink_connector_config_def() -> ConfigDef:
    """The framework keys of sink connectors (Kafka's ``SinkConnectorConfig.configDef()``)."""
    return define_dlq_keys(
        connector_config_def()
        .define(
            TOPICS_CONFIG,
            Type.LIST,
            "",
            None,
            Importance.HIGH,
            "List of topics to consume, separated by commas",
            group=COMMON_GROUP,
            order_in_group=4,
            width=Width.LONG,
            display_name="Topics",
        )
        .define(
            TOPICS_REGEX_CONFIG,
            Type.STRING,
            "",
            RegexValidator(),
            Importance.HIGH,
            "Regular expression giving topics to consume. Under the hood, the regex is compiled "
            "to a Python <code>re.Pattern</code> (Java's named groups are accepted). Only one of "
            "topics or topics.regex should be specified.",
            group=COMMON_GROUP,
            order_in_group=4,
            width=Width.LONG,
            display_name="Topics regex",
        )
    )


def _at_least_zero_or_null(name: str, value: Any) -> None:
    if value is not None:
        Range.at_least(0).ensure_valid(name, value)


def source_connector_config_def() -> ConfigDef:
    """The framework keys of source connectors (Kafka's ``SourceConnectorConfig.configDef()``)."""
    return (
        connector_config_def()
        .define(
            TOPIC_CREATION_GROUPS_CONFIG,
            Type.LIST,
            [],
            _unique_aliases("topic creation groups"),
            Importance.LOW,
            "Groups of configurations for topics created by source connectors",
            group=TOPIC_CREATION_GROUP,
            order_in_group=1,
            width=Width.LONG,
            display_name="Topic Creation Groups",
        )
        .define(
            "exactly.once.support",
            Type.STRING,
            "requested",
            CaseInsensitiveValidString.of("requested", "required"),
            Importance.MEDIUM,
            'Permitted values are requested, required. If set to "required", forces a preflight '
            "check for the connector to ensure that it can provide exactly-once semantics with "
            "the given configuration. Some connectors may be capable of providing exactly-once "
            "semantics but not signal to Connect that they support this; in that case, "
            "documentation for the connector should be consulted carefully before creating it, "
            'and the value for this property should be set to "requested". Additionally, if the '
            'value is set to "required" but the worker that performs preflight validation does '
            "not have exactly-once support enabled for source connectors, requests to create or "
            "validate the connector will fail.",
            group=EXACTLY_ONCE_SUPPORT_GROUP,
            order_in_group=2,
            width=Width.SHORT,
            display_name="Exactly once support",
        )
        .define(
            "transaction.boundary",
            Type.STRING,
            "poll",
            CaseInsensitiveValidString.of("poll", "interval", "connector"),
            Importance.MEDIUM,
            "Permitted values are: poll, interval, connector. If set to 'poll', a new producer "
            "transaction will be started and committed for every batch of records that each task "
            "from this connector provides to Connect. If set to 'connector', relies on "
            "connector-defined transaction boundaries; note that not all connectors are capable "
            "of defining their own transaction boundaries, and in that case, attempts to "
            "instantiate a connector with this value will fail. Finally, if set to 'interval', "
            "commits transactions only after a user-defined time interval has passed.",
            group=EXACTLY_ONCE_SUPPORT_GROUP,
            order_in_group=3,
            width=Width.SHORT,
            display_name="Transaction Boundary",
        )
        .define(
            "transaction.boundary.interval.ms",
            Type.LONG,
            None,
            LambdaValidator.of(_at_least_zero_or_null, "[0,...]"),
            Importance.LOW,
            "If 'transaction.boundary' is set to 'interval', determines the interval for "
            "producer transaction commits by connector tasks. If unset, defaults to the value of "
            "the worker-level 'offset.flush.interval.ms' property. It has no effect if a "
            "different transaction.boundary is specified.",
            group=EXACTLY_ONCE_SUPPORT_GROUP,
            order_in_group=4,
            width=Width.SHORT,
            display_name="Transaction boundary interval",
        )
        .define(
            "offsets.storage.topic",
            Type.STRING,
            None,
            NonEmptyString(),
            Importance.LOW,
            "The name of a separate offsets topic to use for this connector. If empty or not "
            "specified, the worker's global offsets topic name will be used. If specified, the "
            "offsets topic will be created if it does not already exist on the Kafka cluster "
            "targeted by this connector. Only applicable in distributed mode; in standalone "
            "mode, setting this property will have no effect.",
            group="offsets.topic",
            order_in_group=1,
            width=Width.LONG,
            display_name="Offsets topic",
        )
    )
