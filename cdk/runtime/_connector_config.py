"""A connector's configuration, parsed: :class:`ConnectorConfig`, and sink topic checks.

The framework keys are defined in :mod:`cdk.runtime._connector_config_def` (the ``errors.*``
keys in :mod:`cdk.runtime.errors._config`); :func:`~cdk.runtime._config_enrich.enrich` adds the
keys of the configured transformations, predicates and topic creation groups.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from cdk.config import (
    AbstractConfig,
    ConfigValue,
)
from cdk.runtime._config_enrich import enrich, resolve_plugin_classes
from cdk.runtime._connector_config_def import (
    TOPICS_CONFIG,
    TOPICS_REGEX_CONFIG,
    ConnectorKind,
    connector_config_def,
    sink_connector_config_def,
    source_connector_config_def,
)
from cdk.runtime.errors._config import DLQ_TOPIC_NAME_CONFIG
from cdk.runtime.isolation._plugins import Plugins
from cdk.transforms import TransformationChain

__all__ = ["ConnectorConfig", "validate_sink_topics"]


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
