"""The framework's connector configuration (Kafka's ``ConnectorConfig`` and its source/sink kinds).

Every connector configuration holds, besides the connector's own keys, the keys the framework
reads: ``name``, ``connector.class``, ``tasks.max``, converters, ``transforms``/``predicates``,
``errors.*``; sinks add ``topics``/``topics.regex`` and the dead letter queue, sources add
``topic.creation.*`` and the exactly-once keys. :func:`enrich` adds, for each configured
transformation and predicate alias, its ``type`` key and the plugin's own keys under the alias
prefix, so that validation reports them too.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
from collections.abc import Mapping
from typing import Any, Literal

from cdk.config import (
    NO_DEFAULT,
    AbstractConfig,
    ConfigDef,
    ConfigKey,
    ConfigValue,
    Importance,
    Recommender,
    Type,
    Width,
    parse_type,
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
from cdk.runtime._plugins import Plugins, PluginType
from cdk.runtime._worker_config import (
    HEADER_CONVERTER_CLASS_DOC,
    KEY_CONVERTER_CLASS_DOC,
    VALUE_CONVERTER_CLASS_DOC,
)
from cdk.transforms import TransformationChain
from cdk.transforms._base import Predicate, Transformation
from cdk.transforms._regex_router import RegexValidator

__all__ = [
    "ConnectorConfig",
    "ConnectorKind",
    "connector_config_def",
    "enrich",
    "resolve_plugin_classes",
    "sink_connector_config_def",
    "source_connector_config_def",
    "validate_sink_topics",
]

log = logging.getLogger("cdk.runtime.config")

ConnectorKind = Literal["source", "sink"]

COMMON_GROUP = "Common"
TRANSFORMS_GROUP = "Transforms"
PREDICATES_GROUP = "Predicates"
ERROR_GROUP = "Error Handling"
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
DLQ_TOPIC_NAME_CONFIG = "errors.deadletterqueue.topic.name"
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
            raise ConfigException(name, _class_text(value), f"Not a {kind}")
        if inspect.isabstract(value):
            raise ConfigException(name, _class_text(value), f"{kind} is abstract")

    return LambdaValidator.of(check, f"A concrete subclass of {kind}")


def _class_text(value: Any) -> str:
    return f"{value.__module__}.{value.__qualname__}" if isinstance(value, type) else str(value)


def connector_config_def() -> ConfigDef:
    """The keys every connector configuration has (Kafka's ``ConnectorConfig.configDef()``)."""
    return (
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
        .define(
            "errors.retry.timeout",
            Type.LONG,
            0,
            None,
            Importance.MEDIUM,
            "The maximum duration in milliseconds that a failed operation will be reattempted. "
            "The default is 0, which means no retries will be attempted. Use -1 for infinite "
            "retries.",
            group=ERROR_GROUP,
            order_in_group=1,
            width=Width.MEDIUM,
            display_name="Retry Timeout for Errors",
        )
        .define(
            "errors.retry.delay.max.ms",
            Type.LONG,
            60000,
            None,
            Importance.MEDIUM,
            "The maximum duration in milliseconds between consecutive retry attempts. Jitter will "
            "be added to the delay once this limit is reached to prevent thundering herd issues.",
            group=ERROR_GROUP,
            order_in_group=2,
            width=Width.MEDIUM,
            display_name="Maximum Delay Between Retries for Errors",
        )
        .define(
            "errors.tolerance",
            Type.STRING,
            "none",
            ValidString.of("none", "all"),
            Importance.MEDIUM,
            "Behavior for tolerating errors during connector operation. 'none' is the default "
            "value and signals that any error will result in an immediate connector task "
            "failure; 'all' changes the behavior to skip over problematic records.",
            group=ERROR_GROUP,
            order_in_group=3,
            width=Width.SHORT,
            display_name="Error Tolerance",
        )
        .define(
            "errors.log.enable",
            Type.BOOLEAN,
            False,
            None,
            Importance.MEDIUM,
            "If true, write each error and the details of the failed operation and problematic "
            "record to the Connect application log. This is 'false' by default, so that only "
            "errors that are not tolerated are reported.",
            group=ERROR_GROUP,
            order_in_group=4,
            width=Width.SHORT,
            display_name="Log Errors",
        )
        .define(
            "errors.log.include.messages",
            Type.BOOLEAN,
            False,
            None,
            Importance.MEDIUM,
            "Whether to include in the log the Connect record that resulted in a failure. For "
            "sink records, the topic, partition, offset, and timestamp will be logged. For source "
            "records, the key and value (and their schemas), all headers, and the timestamp, "
            "Kafka topic, Kafka partition, source partition, and source offset will be logged. "
            "This is 'false' by default, which will prevent record keys, values, and headers "
            "from being written to log files.",
            group=ERROR_GROUP,
            order_in_group=5,
            width=Width.SHORT,
            display_name="Log Error Details",
        )
    )


def sink_connector_config_def() -> ConfigDef:
    """The framework keys of sink connectors (Kafka's ``SinkConnectorConfig.configDef()``)."""
    return (
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
        .define(
            DLQ_TOPIC_NAME_CONFIG,
            Type.STRING,
            "",
            None,
            Importance.MEDIUM,
            "The name of the topic to be used as the dead letter queue (DLQ) for messages that "
            "result in an error when processed by this sink connector, or its transformations or "
            "converters. The topic name is blank by default, which means that no messages are to "
            "be recorded in the DLQ.",
            group=ERROR_GROUP,
            order_in_group=6,
            width=Width.MEDIUM,
            display_name="Dead Letter Queue Topic Name",
        )
        .define(
            "errors.deadletterqueue.topic.replication.factor",
            Type.SHORT,
            3,
            None,
            Importance.MEDIUM,
            "Replication factor used to create the dead letter queue topic when it doesn't "
            "already exist.",
            group=ERROR_GROUP,
            order_in_group=7,
            width=Width.MEDIUM,
            display_name="Dead Letter Queue Topic Replication Factor",
        )
        .define(
            "errors.deadletterqueue.context.headers.enable",
            Type.BOOLEAN,
            False,
            None,
            Importance.MEDIUM,
            "If true, add headers containing error context to the messages written to the dead "
            "letter queue. To avoid clashing with headers from the original record, all error "
            "context header keys, all error context header keys will start with "
            "<code>__connect.errors.</code>",
            group=ERROR_GROUP,
            order_in_group=8,
            width=Width.MEDIUM,
            display_name="Enable Error Context Headers",
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


# ---------------------------------------------------------------------- topic creation groups
_TOPIC_CREATION_INCLUDE_DOC = (
    "A list of strings that represent regular expressions that may match topic names. This list "
    "is used to include topics that match their values and apply this group's specific "
    "configuration to the topics that match this inclusion list. $alias applies to any group "
    "defined in topic.creation.groups but not the default"
)
_TOPIC_CREATION_EXCLUDE_DOC = (
    "A list of strings that represent regular expressions that may match topic names. This list "
    "is used to exclude topics that match their values and refrain from applying this group's "
    "specific configuration to the topics that match this exclusion list. $alias applies to any "
    "group defined in topic.creation.groups but not the default. Note that exclusion rules have "
    "precedent and override any inclusion rules for topics. "
)
_TOPIC_CREATION_RF_DOC = (
    "The replication factor for new topics created for this connector. This value must not be "
    "larger than the number of brokers in the Kafka cluster, or otherwise an error will be thrown "
    "when the connector will attempt to create a topic. For the default group this configuration "
    "is required. For any other group defined in topic.creation.groups this config is optional "
    "and if it's missing it gets the value the default group"
)
_TOPIC_CREATION_PARTITIONS_DOC = (
    "The number of partitions new topics created for this connector. For the default group this "
    "configuration is required. For any other group defined in topic.creation.groups this config "
    "is optional and if it's missing it gets the value the default group"
)


def _minus_one_or_positive(name: str, value: Any) -> None:
    if value is None:
        return
    if not isinstance(value, int) or (value != -1 and value < 1):
        raise ConfigException(name, value, "Value must be -1 or at least 1")


def _topic_creation_def(group: str, replication_factor: Any, partitions: Any) -> ConfigDef:
    check = LambdaValidator.of(_minus_one_or_positive, "-1 or [1,...]")
    return (
        ConfigDef()
        .define(
            "include",
            Type.LIST,
            ".*" if group == "default" else [],
            NonNullValidator(),
            Importance.LOW,
            _TOPIC_CREATION_INCLUDE_DOC,
            group=group,
            order_in_group=1,
            width=Width.LONG,
            display_name=f"Inclusion Topic Pattern for {group}",
        )
        .define(
            "exclude",
            Type.LIST,
            [],
            NonNullValidator(),
            Importance.LOW,
            _TOPIC_CREATION_EXCLUDE_DOC,
            group=group,
            order_in_group=2,
            width=Width.LONG,
            display_name=f"Exclusion Topic Pattern for {group}",
        )
        .define(
            "replication.factor",
            Type.INT,
            replication_factor,
            check,
            Importance.LOW,
            _TOPIC_CREATION_RF_DOC,
            group=group,
            order_in_group=3,
            width=Width.LONG,
            display_name=f"Replication Factor for Topics in {group}",
        )
        .define(
            "partitions",
            Type.INT,
            partitions,
            check,
            Importance.LOW,
            _TOPIC_CREATION_PARTITIONS_DOC,
            group=group,
            order_in_group=4,
            width=Width.LONG,
            display_name=f"Partition Count for Topics in {group}",
        )
    )


def _enrich_topic_creation(definition: ConfigDef, props: Mapping[str, Any]) -> None:
    if not any(
        k.startswith(TOPIC_CREATION_PREFIX) for k in props if k != TOPIC_CREATION_GROUPS_CONFIG
    ):
        return
    definition.embed(
        f"{TOPIC_CREATION_PREFIX}default.",
        "default",
        0,
        _topic_creation_def("default", NO_DEFAULT, NO_DEFAULT),
    )
    defaults: dict[str, Any] = {}
    for key in ("replication.factor", "partitions"):
        with contextlib.suppress(ConfigException):
            raw = props.get(f"{TOPIC_CREATION_PREFIX}default.{key}")
            defaults[key] = None if raw is None else parse_type(key, raw, Type.INT)
    try:
        groups = parse_type(
            TOPIC_CREATION_GROUPS_CONFIG, props.get(TOPIC_CREATION_GROUPS_CONFIG, ""), Type.LIST
        )
    except ConfigException:
        return
    for alias in dict.fromkeys(str(g) for g in groups):
        if alias == "default":
            continue
        group = f"{TOPIC_CREATION_GROUP}: {alias}"
        definition.embed(
            f"{TOPIC_CREATION_PREFIX}{alias}.",
            group,
            0,
            _topic_creation_def(
                group, defaults.get("replication.factor"), defaults.get("partitions")
            ),
        )


# ---------------------------------------------------------------------- transforms / predicates
class _ClassRecommender(Recommender):
    """Recommends the discovered plugins of one kind for a ``type`` key."""

    def __init__(self, plugins: Plugins, kind: PluginType) -> None:
        self._plugins = plugins
        self._kind = kind

    def valid_values(self, name: str, parsed: Mapping[str, Any]) -> list[Any]:
        return [d.cls for d in self._plugins.all() if d.type is self._kind]

    def visible(self, name: str, parsed: Mapping[str, Any]) -> bool:
        return True


def _plugin_config_def(key: str, cls: Any, base: type, kind: str) -> ConfigDef:
    """The ConfigDef of the plugin class named in ``key`` (Kafka's checks and messages)."""
    if not isinstance(cls, type) or not issubclass(cls, base):
        raise ConfigException(key, _class_text(cls), f"Not a {kind}")
    if inspect.isabstract(cls):
        variants = [
            f"{_class_text(cls)}.{attr}"
            for attr, member in vars(cls).items()
            if isinstance(member, type)
            and issubclass(member, cls)
            and not inspect.isabstract(member)
        ]
        message = f"{kind} is abstract and cannot be created."
        if variants:
            message += f" Did you mean {', '.join(variants)}?"
        raise ConfigException(key, _class_text(cls), message)
    try:
        instance: Any = cls()
    except Exception as exc:
        raise ConfigException(
            key, _class_text(cls), f"Error getting config definition from {kind}: {exc}"
        ) from exc
    definition = instance.config()
    if not isinstance(definition, ConfigDef):
        raise ConfigException(key, _class_text(cls), f"{kind}.config() must return a ConfigDef")
    return definition


def _enrich_aliases(
    definition: ConfigDef,
    plugins: Plugins,
    props: Mapping[str, Any],
    require_full_config: bool,
    *,
    alias_config: str,
    group_name: str,
    base: type,
    kind: str,
    plugin_type: PluginType,
) -> None:
    try:
        aliases = parse_type(alias_config, props.get(alias_config, ""), Type.LIST)
    except ConfigException:
        return
    for alias in dict.fromkeys(str(a) for a in aliases):
        prefix = f"{alias_config}.{alias}."
        group = f"{group_name}: {alias}"
        type_key = prefix + "type"

        def check_type(name: str, value: Any, *, _prefix: str = prefix) -> None:
            if value is None:  # parsing reported it
                return
            if kind == "Transformation" and (
                _prefix + "negate" in props and _prefix + "predicate" not in props
            ):
                raise ConfigException(
                    f"Config '{_prefix}negate' was provided but there is no config "
                    f"'{_prefix}predicate' defining a predicate to be negated."
                )
            _plugin_config_def(name, value, base, kind)

        definition.define(
            ConfigKey(
                type_key,
                Type.CLASS,
                NO_DEFAULT,
                LambdaValidator.of(check_type, f"valid configs for {alias} {kind.lower()}"),
                Importance.HIGH,
                f"Class for the '{alias}' {kind.lower()}.",
                group,
                0,
                Width.LONG,
                f"{kind} type for {alias}",
                (),
                _ClassRecommender(plugins, plugin_type),
            )
        )
        child = ConfigDef()
        if kind == "Transformation":
            child.define(
                "predicate",
                Type.STRING,
                "",
                None,
                Importance.MEDIUM,
                "The alias of a predicate used to determine whether to apply this transformation.",
            ).define(
                "negate",
                Type.BOOLEAN,
                False,
                None,
                Importance.MEDIUM,
                "Whether the configured predicate should be negated.",
            )
        try:
            raw = props.get(type_key)
            cls = parse_type(type_key, raw, Type.CLASS) if raw is not None else None
            if cls is None:
                raise ConfigException(
                    f'Missing required configuration "{type_key}" which has no default value.'
                )
            for key in _plugin_config_def(type_key, cls, base, kind).config_keys().values():
                if key.name in ("predicate", "negate") and kind == "Transformation":
                    log.warning(
                        "Transformation config %s is masked by the implicit config", key.name
                    )
                    continue
                child.define(key)
        except ConfigException:
            if require_full_config:
                raise
            continue
        definition.embed(prefix, group, 1, child)


def enrich(
    plugins: Plugins,
    base: ConfigDef,
    props: Mapping[str, Any],
    require_full_config: bool,
    *,
    kind: ConnectorKind | None = None,
) -> ConfigDef:
    """``base`` plus the keys of each configured transformation, predicate and topic group.

    Args:
        plugins: resolves plugin aliases and recommends plugin classes.
        base: the framework ConfigDef (source or sink); it is not modified.
        props: the connector configuration.
        require_full_config: raise on an unknown/invalid ``type`` instead of leaving it to
            validation to report.
        kind: ``"source"`` adds the ``topic.creation.<group>.*`` keys.

    Returns:
        A new ConfigDef.
    """
    definition = ConfigDef(base)
    _enrich_aliases(
        definition,
        plugins,
        props,
        require_full_config,
        alias_config=TRANSFORMS_CONFIG,
        group_name=TRANSFORMS_GROUP,
        base=Transformation,
        kind="Transformation",
        plugin_type=PluginType.TRANSFORMATION,
    )
    _enrich_aliases(
        definition,
        plugins,
        props,
        require_full_config,
        alias_config=PREDICATES_CONFIG,
        group_name=PREDICATES_GROUP,
        base=Predicate,
        kind="Predicate",
        plugin_type=PluginType.PREDICATE,
    )
    if kind == "source":
        _enrich_topic_creation(definition, props)
    return definition


def resolve_plugin_classes(plugins: Plugins, props: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``props`` with plugin aliases of class-valued keys replaced by the classes.

    Converters and SMT/predicate ``type`` keys may name a plugin by its ``cdk.plugins`` entry
    point name or alias, where a ConfigDef CLASS key only knows class paths. Names that do not
    resolve are left for parsing to report.
    """
    resolved = dict(props)
    for key, value in props.items():
        is_class_key = key in (
            KEY_CONVERTER_CLASS_CONFIG,
            VALUE_CONVERTER_CLASS_CONFIG,
            HEADER_CONVERTER_CLASS_CONFIG,
        ) or (
            key.startswith((f"{TRANSFORMS_CONFIG}.", f"{PREDICATES_CONFIG}."))
            and key.endswith(".type")
            and key.count(".") == 2
        )
        if is_class_key and isinstance(value, str) and value.strip():
            with contextlib.suppress(ConfigException):
                resolved[key] = plugins.load(value)
    return resolved


def validate_sink_topics(props: Mapping[str, Any], values: dict[str, ConfigValue]) -> None:
    """Add Kafka's ``topics``/``topics.regex``/DLQ consistency errors to validation results."""

    def has(key: str) -> bool:
        value = props.get(key)
        return isinstance(value, str) and bool(value.strip())

    def add(key: str, message: str) -> None:
        values.setdefault(key, ConfigValue(key, props.get(key))).add_error_message(message)

    has_topics, has_regex = has(TOPICS_CONFIG), has(TOPICS_REGEX_CONFIG)
    if has_topics and has_regex:
        message = "topics and topics.regex are mutually exclusive options, but both are set."
        add(TOPICS_CONFIG, message)
        add(TOPICS_REGEX_CONFIG, message)
    elif not has_topics and not has_regex:
        message = "Must configure one of topics or topics.regex"
        add(TOPICS_CONFIG, message)
        add(TOPICS_REGEX_CONFIG, message)
    if has(DLQ_TOPIC_NAME_CONFIG):
        dlq = str(props[DLQ_TOPIC_NAME_CONFIG]).strip()
        if has_topics:
            topics = [t.strip() for t in str(props[TOPICS_CONFIG]).split(",") if t.strip()]
            if dlq in topics:
                add(
                    DLQ_TOPIC_NAME_CONFIG,
                    f"The DLQ topic '{dlq}' may not be included in the list of topics "
                    f"('topics=[{', '.join(topics)}]') consumed by the connector",
                )
        if has_regex:
            from cdk.transforms._regex_router import compile_java_regex

            regex = str(props[TOPICS_REGEX_CONFIG])
            with contextlib.suppress(Exception):
                if compile_java_regex(regex).fullmatch(dlq):
                    add(
                        DLQ_TOPIC_NAME_CONFIG,
                        f"The DLQ topic '{dlq}' may not be included in the regex matching the "
                        f"topics ('topics.regex={regex}') consumed by the connector",
                    )


class ConnectorConfig(AbstractConfig):
    """A parsed connector configuration: framework keys plus transformation/predicate keys.

    Args:
        props: the connector configuration.
        plugins: resolves plugin aliases (a new :class:`Plugins` when omitted).
        kind: ``"source"`` or ``"sink"`` for the kind's extra keys; ``None`` for common keys.

    Raises:
        ConfigException: a framework key is invalid, or a transformation or predicate is
            unknown or misconfigured; the message names the key.
    """

    def __init__(
        self,
        props: Mapping[str, Any],
        *,
        plugins: Plugins | None = None,
        kind: ConnectorKind | None = None,
    ) -> None:
        self._plugins = plugins if plugins is not None else Plugins()
        base = {
            "source": source_connector_config_def,
            "sink": sink_connector_config_def,
            None: connector_config_def,
        }[kind]()
        resolved = resolve_plugin_classes(self._plugins, props)
        definition = enrich(self._plugins, base, resolved, True, kind=kind)
        super().__init__(definition, resolved)
        self.kind = kind

    def transformation_chain(self) -> TransformationChain[Any]:
        """The configured SMT chain (with predicates), built from this configuration.

        Raises:
            ConfigException: an SMT or predicate rejects its settings; names the key.
        """
        return TransformationChain.from_config(self.originals())
