"""Secrets in connector configurations: masking PASSWORD values and config provider variables.

Every configuration the herder hands back has the values of its PASSWORD keys (the
connector's, its transformations' and client overrides that look secret) shown as
``[hidden]``, unless the value is a ``${provider:path:key}`` reference. Such references are
resolved with the worker's config providers only when a connector or task is started.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Mapping
from typing import Any

from cdk.api import SourceConnector
from cdk.config import ConfigTransformer, Password, Type
from cdk.config._providers import instantiate_providers
from cdk.runtime._config_enrich import enrich, resolve_plugin_classes
from cdk.runtime._connector_config_def import (
    CONNECTOR_CLASS_CONFIG,
    sink_connector_config_def,
    source_connector_config_def,
)
from cdk.runtime._worker_config import CLIENT_OVERRIDE_PREFIXES
from cdk.runtime.isolation._plugins import Plugins

__all__ = [
    "HIDDEN",
    "SECRET_CLIENT_KEY",
    "mask",
    "resolve_variables",
    "resolve_variables_with_ttls",
    "restore_variables",
    "secret_keys",
]

log = logging.getLogger("cdk.runtime.herder")

HIDDEN = Password.HIDDEN
_VARIABLE = re.compile(r"\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}")
SECRET_CLIENT_KEY = re.compile(r"(password|secret|sasl\.jaas\.config|credentials)", re.IGNORECASE)


def resolve_variables(worker_props: Mapping[str, Any], config: Mapping[str, str]) -> dict[str, str]:
    """``config`` with ``${provider:path:key}`` variables resolved by the worker's providers.

    Args:
        worker_props: the worker configuration (its ``config.providers`` settings).
        config: the connector or task configuration.
    """
    return resolve_variables_with_ttls(worker_props, config)[0]


def resolve_variables_with_ttls(
    worker_props: Mapping[str, Any], config: Mapping[str, str]
) -> tuple[dict[str, str], dict[str, int]]:
    """Like :func:`resolve_variables`, with the TTL (ms) of each provider path that had one."""
    if not any(isinstance(v, str) and "${" in v for v in config.values()):
        return dict(config), {}
    providers = instantiate_providers(worker_props)
    if not providers:
        return dict(config), {}
    try:
        result = ConfigTransformer(providers).transform(config)
    finally:
        for provider in providers.values():
            with contextlib.suppress(Exception):
                provider.close()
    return {k: str(v) for k, v in result.data.items()}, dict(result.ttls)


def restore_variables(
    raw: Mapping[str, str], configs: list[dict[str, str]]
) -> list[dict[str, str]]:
    """Put the raw ``${...}`` references of ``raw`` back in task configs (as Kafka stores them)."""
    with_variables = {k: v for k, v in raw.items() if isinstance(v, str) and _VARIABLE.search(v)}
    return [{k: with_variables.get(k, v) for k, v in c.items()} for c in configs]


def secret_keys(plugins: Plugins, config: Mapping[str, str]) -> frozenset[str]:
    """The keys of ``config`` whose values are secret.

    The PASSWORD keys of the connector's and the framework's ConfigDefs (with the configured
    transformations and predicates), and client overrides whose names look secret.
    """
    keys: set[str] = set()
    try:
        connector = plugins.new_connector(config[CONNECTOR_CLASS_CONFIG])
        definitions = [connector.config()]
        kind = "source" if isinstance(connector, SourceConnector) else "sink"
        base = source_connector_config_def() if kind == "source" else sink_connector_config_def()
        definitions.append(enrich(plugins, base, resolve_plugin_classes(plugins, config), False))
        for definition in definitions:
            keys.update(
                k.name for k in definition.config_keys().values() if k.type is Type.PASSWORD
            )
    except Exception:  # noqa: BLE001 - masking falls back to the name heuristics below
        log.debug("Could not read the ConfigDef of %s", config.get(CONNECTOR_CLASS_CONFIG))
    for key in config:
        if key.startswith(tuple(CLIENT_OVERRIDE_PREFIXES.values())) and SECRET_CLIENT_KEY.search(
            key
        ):
            keys.add(key)
    return frozenset(keys)


def mask(config: Mapping[str, str], secrets: frozenset[str]) -> dict[str, str]:
    """``config`` with the values of ``secrets`` hidden (``${...}`` references are shown)."""
    return {
        k: (HIDDEN if k in secrets and v is not None and not _VARIABLE.fullmatch(str(v)) else v)
        for k, v in config.items()
    }
