"""Plugin discovery and loading (Kafka Connect's ``runtime/isolation`` package).

:class:`Plugins` finds the connectors, converters, transformations, predicates and config
providers that are registered explicitly (the kit's own, Kafka's class names as aliases, and the
``cdk.plugins`` entry points of installed distributions), loads them by class name or alias, and
describes them (:class:`PluginDesc`, :class:`PluginType`) for ``GET /connector-plugins`` and
``cdk plugins``. Python has no class loaders to isolate plugins with; the package keeps Kafka's
name so it is found where a Kafka Connect engineer looks.
"""

from __future__ import annotations

from cdk.runtime.isolation._plugins import (
    ENTRY_POINT_GROUP,
    PluginDesc,
    Plugins,
    PluginType,
    plugin_types,
)

__all__ = ["ENTRY_POINT_GROUP", "PluginDesc", "PluginType", "Plugins", "plugin_types"]
