"""Kafka's ``ConfigInfos`` JSON: validating connector configurations and describing plugins.

What ``PUT /connector-plugins/{type}/config/validate`` and ``GET /connector-plugins`` answer:
every key's definition (``ConfigKeyInfo``) and validated value (``ConfigValueInfo``, PASSWORD
values hidden), grouped, with the number of errors.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from cdk.api import Connector, SinkConnector, SourceConnector
from cdk.config import ConfigDef, ConfigKey, ConfigValue, Password, Type, convert_to_string
from cdk.errors import ConfigException, NotFoundException
from cdk.runtime._config_enrich import enrich, resolve_plugin_classes
from cdk.runtime._config_secrets import HIDDEN, SECRET_CLIENT_KEY
from cdk.runtime._connector_config import validate_sink_topics
from cdk.runtime._connector_config_def import (
    CONNECTOR_CLASS_CONFIG,
    sink_connector_config_def,
    source_connector_config_def,
)
from cdk.runtime._exactly_once import validate_exactly_once
from cdk.runtime._key_notes import CONNECTOR_KEY_NOTES, no_effect_message
from cdk.runtime._worker_config import CLIENT_OVERRIDE_PREFIXES, WorkerConfig, check_client_override
from cdk.runtime.isolation._plugins import Plugins, PluginType, plugin_types
from cdk.runtime.rest._requests import BadRequestException

__all__ = [
    "UNKNOWN_KEY_MESSAGE",
    "config_infos",
    "config_key_info",
    "config_value_info",
    "connector_plugins",
    "plugin_config_infos",
    "known_keys",
    "unknown_keys",
]

#: Kafka's warning (``AbstractConfig.logUnused``) for a supplied key that no ConfigDef defines,
#: after the connector context that Kafka Connect puts before its log lines (``[name|worker]``);
#: :func:`cdk.runtime._key_notes.unknown_key_message` adds the closest known key.
UNKNOWN_KEY_MESSAGE = "[%s|worker] The configuration '%s' was supplied but isn't a known config."

# Keys under these prefixes go to plugins whose own keys are not all declared (converters,
# transformations and predicates configure themselves; client overrides are checked against
# the override policy and the client library): they are never reported as unknown.
_PASS_THROUGH_PREFIXES = (
    "key.converter.",
    "value.converter.",
    "header.converter.",
    "transforms.",
    "predicates.",
    "topic.creation.",
    *CLIENT_OVERRIDE_PREFIXES.values(),
)


def config_key_info(key: ConfigKey, prefix: str = "") -> dict[str, Any]:
    """Kafka's ``ConfigKeyInfo`` JSON for one key."""
    required = not key.has_default()
    return {
        "name": prefix + key.name,
        "type": key.type.name,
        "required": required,
        "default_value": None if required else convert_to_string(key.default_value, key.type),
        "importance": None if key.importance is None else key.importance.name,
        "documentation": key.documentation,
        "group": key.group,
        "order": key.order_in_group,
        "width": key.width.name,
        "display_name": key.display_name,
        "dependents": list(key.dependents),
    }


def config_value_info(value: ConfigValue, type_: Type | None) -> dict[str, Any]:
    """Kafka's ``ConfigValueInfo`` JSON for one validated value (passwords hidden)."""
    shown: Any = value.value
    if type_ is Type.PASSWORD or isinstance(shown, Password):
        shown = None if shown is None else HIDDEN
    recommended_type = Type.STRING if type_ is Type.LIST else type_
    return {
        "name": value.name,
        "value": convert_to_string(shown, type_) if shown is not None else None,
        "recommended_values": [
            convert_to_string(v, recommended_type) for v in value.recommended_values
        ],
        "errors": list(value.error_messages),
        "visible": value.visible,
    }


def config_infos(
    plugins: Plugins,
    worker_config: WorkerConfig,
    props: Mapping[str, Any],
    resolve: Callable[[Mapping[str, str]], dict[str, str]],
) -> dict[str, Any]:
    """Validate a connector configuration: Kafka's ``ConfigInfos`` JSON.

    The framework keys (with the configured transformations', predicates' and topic
    creation groups' keys) and the connector's own ``validate`` are merged; client overrides
    are checked against the worker's override policy. PASSWORD values are hidden.

    Args:
        plugins: finds the connector and plugin classes.
        worker_config: the worker configuration (its client override policy).
        props: the configuration to validate (``None`` values are errors).
        resolve: resolves ``${provider:path:key}`` variables.

    Raises:
        BadRequestException: ``connector.class`` is missing.
        ConfigException: the connector class is unknown.
    """
    props = dict(props)
    connector_class = props.get(CONNECTOR_CLASS_CONFIG)
    if not connector_class:
        raise BadRequestException(
            f"Connector config with keys [{', '.join(sorted(props))}] contains no connector type"
        )
    try:
        resolved: dict[str, Any] = resolve({k: v for k, v in props.items() if v is not None})
    except ConfigException as exc:
        raise BadRequestException(str(exc)) from exc
    resolved.update({k: v for k, v in props.items() if v is None})
    connector = plugins.new_connector(connector_class)
    is_source = isinstance(connector, SourceConnector)
    base = source_connector_config_def() if is_source else sink_connector_config_def()
    with_classes = resolve_plugin_classes(plugins, resolved)
    definition = enrich(plugins, base, with_classes, False, kind="source" if is_source else "sink")
    validated = definition.validate_all(with_classes)
    mode = str(getattr(worker_config, "MODE", "standalone"))
    for key, note in CONNECTOR_KEY_NOTES.items():
        if note.refused and mode in note.modes and str(props.get(key) or "").strip():
            message = no_effect_message(key, note, mode)
            validated.setdefault(key, ConfigValue(key)).add_error_message(message)
    if not is_source:
        validate_sink_topics(resolved, validated)
    else:
        validate_exactly_once(
            connector,
            {k: str(v) for k, v in resolved.items() if v is not None},
            validated,
            worker_supports=worker_config.exactly_once_source_supported,
            worker_enabled=worker_config.exactly_once_source_enabled,
        )
    for key, value in props.items():
        if value is None:
            validated.setdefault(key, ConfigValue(key)).add_error_message(
                "Null value can not be supplied as the configuration value."
            )
    keys: dict[str, ConfigKey] = dict(definition.config_keys())
    groups: list[str] = list(definition.groups())
    own = connector.config()
    if not isinstance(own, ConfigDef):
        raise BadRequestException(
            f"{type(connector).__module__}.{type(connector).__qualname__}.config() must "
            "return a ConfigDef that is not null."
        )
    connector_props = {k: v for k, v in resolved.items() if v is not None}
    try:
        result = connector.validate(connector_props)
    except Exception as exc:
        raise BadRequestException(
            f"{type(connector).__qualname__}.validate() failed: {type(exc).__name__}: {exc}"
        ) from exc
    keys.update(own.config_keys())
    groups.extend(g for g in own.groups() if g not in groups)
    values: dict[str, ConfigValue] = dict(validated)
    for value in result.config_values:
        values[value.name] = value
    configs: list[dict[str, Any]] = []
    error_count = 0
    for name, value in values.items():
        if name not in keys:
            configs.append({"definition": None, "value": config_value_info(value, None)})
            error_count += len(value.error_messages)
    for name, config_key in keys.items():
        value_info = None
        if name in values:
            value_info = config_value_info(values[name], config_key.type)
            error_count += len(values[name].error_messages)
        configs.append({"definition": config_key_info(config_key), "value": value_info})
    for kind in _client_kinds(connector, resolved):
        count, entries = _validate_overrides(worker_config, resolved, kind)
        error_count += count
        configs.extend(entries)
    return {
        "name": plugins.class_name(type(connector)),
        "error_count": error_count,
        "groups": groups,
        "configs": configs,
    }


def known_keys(infos: Mapping[str, Any]) -> set[str]:
    """The keys that a validated configuration's ConfigDefs define (or its validate reported)."""
    known: set[str] = set()
    for entry in infos.get("configs", ()):
        for part in ("definition", "value"):
            if entry.get(part):
                known.add(entry[part]["name"])
    return known


def unknown_keys(infos: Mapping[str, Any], props: Mapping[str, Any]) -> list[str]:
    """The keys of ``props`` that no ConfigDef of a validated configuration defines, sorted.

    Known are the framework's keys, the connector's own (its ``config()`` and what its
    ``validate()`` reported), and anything under a converter, transformation, predicate,
    topic creation or client override prefix.

    Args:
        infos: what :func:`config_infos` answered for ``props``.
        props: the configuration as supplied.
    """
    known = known_keys(infos)
    return sorted(
        key for key in props if key not in known and not key.startswith(_PASS_THROUGH_PREFIXES)
    )


def _client_kinds(connector: Connector, props: Mapping[str, Any]) -> list[str]:
    has_dlq = bool(str(props.get("errors.deadletterqueue.topic.name") or "").strip())
    if isinstance(connector, SourceConnector):
        uses_admin = any(str(k).startswith("topic.creation.") for k in props)
        return ["producer", *(["admin"] if uses_admin else [])]
    return [*(["producer", "admin"] if has_dlq else []), "consumer"]


def _validate_overrides(
    worker_config: WorkerConfig, props: Mapping[str, Any], kind: str
) -> tuple[int, list[dict[str, Any]]]:
    from cdk.kafka._clients import check_client_config

    prefix = CLIENT_OVERRIDE_PREFIXES[kind]
    overrides = {
        key[len(prefix) :]: value
        for key, value in props.items()
        if key.startswith(prefix) and len(key) > len(prefix)
    }
    messages: dict[str, str | None] = {
        bare: check_client_override(worker_config.override_policy, kind, bare) for bare in overrides
    }
    allowed = {bare: v for bare, v in overrides.items() if messages[bare] is None and v is not None}
    # what the client library would still reject (Java-only settings are translated or ignored)
    for bare, reason in check_client_config(kind, allowed).items():
        messages[bare] = reason
    errors = 0
    entries: list[dict[str, Any]] = []
    for bare, value in overrides.items():
        key = prefix + bare
        message = messages[bare]
        shown = HIDDEN if SECRET_CLIENT_KEY.search(key) else value
        config_value = ConfigValue(key, shown, (), [message] if message else [])
        errors += 1 if message else 0
        entries.append({"definition": None, "value": config_value_info(config_value, None)})
    return errors, entries


def connector_plugins(plugins: Plugins, connectors_only: bool = True) -> list[dict[str, str]]:
    """``GET /connector-plugins``: ``[{"class", "type", "version"}]``."""
    descs = plugins.connectors() if connectors_only else plugins.all()
    return [d.to_json() for d in descs if d.type is not PluginType.CONFIG_PROVIDER]


def plugin_config_infos(plugins: Plugins, plugin_name: str) -> list[dict[str, Any]]:
    """``GET /connector-plugins/{name}/config``: the plugin's keys (then framework keys).

    Raises:
        NotFoundException: ``Unknown plugin <name>.``
        BadRequestException: the class is a config provider or no plugin.
    """
    try:
        cls = plugins.load(plugin_name)
    except ConfigException as exc:
        raise NotFoundException(f"Unknown plugin {plugin_name}.") from exc
    kinds = plugin_types(cls)
    if not kinds or kinds == [PluginType.CONFIG_PROVIDER]:
        raise BadRequestException(
            f"Invalid plugin class {plugin_name}. Valid types are sink, source, converter, "
            "header_converter, transformation, predicate."
        )
    plugin = plugins.new_plugin(cls)
    base: ConfigDef | None = None
    if isinstance(plugin, SinkConnector):
        base = sink_connector_config_def()
    elif isinstance(plugin, SourceConnector):
        base = source_connector_config_def()
    own = plugin.config()
    keys: dict[str, ConfigKey] = dict(own.config_keys()) if isinstance(own, ConfigDef) else {}
    if base is not None:
        for name, key in base.config_keys().items():
            keys.setdefault(name, key)
    return [config_key_info(k) for k in keys.values()]
