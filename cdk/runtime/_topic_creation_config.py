"""The ``topic.creation.<group>.*`` keys of source connectors (Kafka's topic creation groups).

They are added to a source connector's ConfigDef only when a ``topic.creation.*`` key is set:
the ``default`` group (whose replication factor and partitions are required) and each group
listed in ``topic.creation.groups`` (which inherit the default group's values).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from cdk.config import (
    NO_DEFAULT,
    ConfigDef,
    Importance,
    Type,
    Width,
    parse_type,
)
from cdk.config.validators import (
    LambdaValidator,
    NonNullValidator,
)
from cdk.errors import ConfigException
from cdk.runtime._connector_config_def import (
    TOPIC_CREATION_GROUP,
    TOPIC_CREATION_GROUPS_CONFIG,
    TOPIC_CREATION_PREFIX,
)

__all__ = ["enrich_topic_creation"]

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


def enrich_topic_creation(definition: ConfigDef, props: Mapping[str, Any]) -> None:
    """Embed the keys of the topic creation groups ``props`` configures into ``definition``."""
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
