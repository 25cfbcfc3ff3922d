"""Connector ConfigDefs enriched with the keys of the configured plugins.

:func:`enrich` adds, for each configured transformation and predicate alias, its ``type`` key
and the plugin's own keys under the alias prefix (and, for sources, the topic creation groups'
keys), so that validation reports them too. :func:`resolve_plugin_classes` turns plugin
aliases in class-valued keys into classes before parsing.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
from collections.abc import Mapping
from typing import Any

from cdk.config import (
    NO_DEFAULT,
    ConfigDef,
    ConfigKey,
    Importance,
    Recommender,
    Type,
    Width,
    parse_type,
)
from cdk.config.validators import (
    LambdaValidator,
)
from cdk.errors import ConfigException
from cdk.runtime._connector_config_def import (
    HEADER_CONVERTER_CLASS_CONFIG,
    KEY_CONVERTER_CLASS_CONFIG,
    PREDICATES_CONFIG,
    PREDICATES_GROUP,
    TRANSFORMS_CONFIG,
    TRANSFORMS_GROUP,
    VALUE_CONVERTER_CLASS_CONFIG,
    ConnectorKind,
    class_text,
)
from cdk.runtime._topic_creation_config import enrich_topic_creation
from cdk.runtime.isolation._plugins import Plugins, PluginType
from cdk.transforms._base import Predicate, Transformation

__all__ = ["enrich", "resolve_plugin_classes"]

log = logging.getLogger("cdk.runtime.config")


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
        raise ConfigException(key, class_text(cls), f"Not a {kind}")
    if inspect.isabstract(cls):
        variants = [
            f"{class_text(cls)}.{attr}"
            for attr, member in vars(cls).items()
            if isinstance(member, type)
            and issubclass(member, cls)
            and not inspect.isabstract(member)
        ]
        message = f"{kind} is abstract and cannot be created."
        if variants:
            message += f" Did you mean {', '.join(variants)}?"
        raise ConfigException(key, class_text(cls), message)
    try:
        instance: Any = cls()
    except Exception as exc:
        raise ConfigException(
            key, class_text(cls), f"Error getting config definition from {kind}: {exc}"
        ) from exc
    definition = instance.config()
    if not isinstance(definition, ConfigDef):
        raise ConfigException(key, class_text(cls), f"{kind}.config() must return a ConfigDef")
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
        enrich_topic_creation(definition, props)
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
