"""Config providers: ``${provider:[path:]key}`` variables resolved from outside the config.

As Kafka's ``config.providers``: a configuration lists provider names in ``config.providers``,
names each one's class in ``config.providers.<name>.class`` and passes it parameters with
``config.providers.<name>.param.<key>``. :class:`ConfigTransformer` replaces every variable whose
provider is known; variables of unknown providers are left as they are.

Shipped providers: :class:`EnvVarConfigProvider` (``${env:VAR}``), :class:`FileConfigProvider`
(``${file:/path/to/file.properties:key}``) and :class:`DirectoryConfigProvider`
(``${directory:/path/to/dir:file}``). Their Kafka class names and the short names ``env``,
``file`` and ``directory`` are accepted as classes.
"""

from __future__ import annotations

import abc
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cdk.errors import ConfigException

__all__ = [
    "PROVIDER_ALIASES",
    "ConfigData",
    "ConfigProvider",
    "ConfigTransformer",
    "ConfigTransformerResult",
    "DirectoryConfigProvider",
    "EnvVarConfigProvider",
    "FileConfigProvider",
    "load_provider_class",
]

_KAFKA_PKG = "org.apache.kafka.common.config.provider"
PROVIDER_ALIASES: dict[str, str] = {
    "env": "cdk.config:EnvVarConfigProvider",
    "file": "cdk.config:FileConfigProvider",
    "directory": "cdk.config:DirectoryConfigProvider",
    f"{_KAFKA_PKG}.EnvVarConfigProvider": "cdk.config:EnvVarConfigProvider",
    f"{_KAFKA_PKG}.FileConfigProvider": "cdk.config:FileConfigProvider",
    f"{_KAFKA_PKG}.DirectoryConfigProvider": "cdk.config:DirectoryConfigProvider",
    "EnvVarConfigProvider": "cdk.config:EnvVarConfigProvider",
    "FileConfigProvider": "cdk.config:FileConfigProvider",
    "DirectoryConfigProvider": "cdk.config:DirectoryConfigProvider",
}
"""Provider class names accepted in ``config.providers.<name>.class``."""


@dataclass(frozen=True)
class ConfigData:
    """What a provider returns: values by key, and an optional time-to-live in milliseconds."""

    data: dict[str, str]
    ttl: int | None = None


@dataclass(frozen=True)
class ConfigTransformerResult:
    """The transformed configuration and the TTL (ms) of each path that had one."""

    data: dict[str, Any]
    ttls: dict[str, int] = field(default_factory=dict)


class ConfigProvider(abc.ABC):
    """Supplies configuration values from outside the configuration (env, files, vaults)."""

    def configure(self, configs: Mapping[str, Any]) -> None:  # noqa: B027 - optional hook
        """Receive the provider's parameters (``config.providers.<name>.param.*``)."""

    @abc.abstractmethod
    def get(self, path: str, keys: Iterable[str] | None = None) -> ConfigData:
        """Return the values at ``path`` (all of them, or only ``keys``).

        Raises:
            ConfigException: the path or a key cannot be read; the message names it.
        """

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources."""


def load_provider_class(name: str) -> type[ConfigProvider]:
    """Load a provider class by short name, Kafka class name or Python class path."""
    from cdk.config._classes import load_class

    cls = load_class(PROVIDER_ALIASES.get(name.strip(), name))
    if not issubclass(cls, ConfigProvider):
        raise ConfigException(f"Class {name} is not a ConfigProvider.")
    return cls


class EnvVarConfigProvider(ConfigProvider):
    """Values from environment variables: ``${env:NAME}``.

    Parameter ``allowlist.pattern``: a regular expression the variable names must match.
    """

    def __init__(self) -> None:
        self._allow: re.Pattern[str] | None = None

    def configure(self, configs: Mapping[str, Any]) -> None:
        """Read ``allowlist.pattern``."""
        pattern = configs.get("allowlist.pattern")
        if pattern:
            try:
                self._allow = re.compile(str(pattern))
            except re.error as exc:
                raise ConfigException("allowlist.pattern", pattern, str(exc)) from exc

    def get(self, path: str, keys: Iterable[str] | None = None) -> ConfigData:
        """Return the requested environment variables (all allowed ones if ``keys`` is None)."""
        if path:
            raise ConfigException(
                f"Path is not supported for EnvVarConfigProvider, invalid value '{path}'"
            )
        env = {k: v for k, v in os.environ.items() if self._allowed(k)}
        if keys is None:
            return ConfigData(env)
        data: dict[str, str] = {}
        for key in keys:
            if key not in os.environ:
                raise ConfigException(f"Environment variable {key} is not set.")
            if key not in env:
                raise ConfigException(
                    f"Environment variable {key} is not allowed by allowlist.pattern."
                )
            data[key] = env[key]
        return ConfigData(data)

    def _allowed(self, name: str) -> bool:
        return self._allow is None or self._allow.fullmatch(name) is not None


class _PathsProvider(ConfigProvider):
    """Shared ``allowed.paths`` handling."""

    def __init__(self) -> None:
        self._allowed: list[Path] | None = None

    def configure(self, configs: Mapping[str, Any]) -> None:
        """Read ``allowed.paths`` (comma-separated absolute directories)."""
        text = configs.get("allowed.paths")
        if text is None or not str(text).strip():
            return
        allowed: list[Path] = []
        for item in str(text).split(","):
            path = Path(item.strip())
            if not path.is_absolute():
                raise ConfigException("allowed.paths", text, f"Path {item.strip()} is not absolute")
            allowed.append(Path(os.path.normpath(path)))
        self._allowed = allowed

    def _checked(self, path: str) -> Path:
        target = Path(os.path.normpath(Path(path).absolute()))
        if self._allowed is not None and not any(
            target == root or root in target.parents for root in self._allowed
        ):
            raise ConfigException(f"Path {path} is not allowed by allowed.paths.")
        return target


class FileConfigProvider(_PathsProvider):
    """Values from a Java ``.properties`` file: ``${file:/path/to/file.properties:key}``.

    Parameter ``allowed.paths``: comma-separated directories the files must be in.
    """

    def get(self, path: str, keys: Iterable[str] | None = None) -> ConfigData:
        """Read the file and return the requested keys (all keys if ``keys`` is None)."""
        from cdk.config._properties import parse_properties

        if not path:
            return ConfigData({})
        target = self._checked(path)
        try:
            text = target.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigException(f"Could not read properties from file {path}") from exc
        props = parse_properties(text)
        if keys is None:
            return ConfigData(props)
        data: dict[str, str] = {}
        for key in keys:
            if key not in props:
                raise ConfigException(f"Key {key} is not in properties file {path}.")
            data[key] = props[key]
        return ConfigData(data)


class DirectoryConfigProvider(_PathsProvider):
    """Values from the files of a directory, by file name: ``${directory:/run/secrets:db}``.

    Parameter ``allowed.paths``: comma-separated directories the directory must be in.
    """

    def get(self, path: str, keys: Iterable[str] | None = None) -> ConfigData:
        """Return the content of the requested files (all regular files if ``keys`` is None)."""
        if not path:
            return ConfigData({})
        directory = self._checked(path)
        if not directory.is_dir():
            raise ConfigException(f"Could not read directory {path}")
        names = [p.name for p in directory.iterdir() if p.is_file()] if keys is None else list(keys)
        data: dict[str, str] = {}
        for name in names:
            file = directory / name
            if file.parent != directory or not file.is_file():
                raise ConfigException(f"File {name} is not in directory {path}.")
            try:
                data[name] = file.read_text(encoding="utf-8")
            except OSError as exc:
                raise ConfigException(f"Could not read file {file}") from exc
        return ConfigData(data)


_VARIABLE = re.compile(r"\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}")


class ConfigTransformer:
    """Replaces ``${provider:[path:]key}`` variables in configuration values.

    Args:
        providers: provider instances by the name used in variables.
    """

    def __init__(self, providers: Mapping[str, ConfigProvider]) -> None:
        self.providers = dict(providers)

    def transform(self, configs: Mapping[str, Any]) -> ConfigTransformerResult:
        """Resolve every variable of a known provider; leave the rest untouched.

        Returns:
            The new values and the TTLs by path.

        Raises:
            ConfigException: a provider cannot supply a value (names the path or key).
        """
        wanted: dict[str, dict[str, set[str]]] = {}
        for value in configs.values():
            if not isinstance(value, str):
                continue
            for match in _VARIABLE.finditer(value):
                provider, path, key = match.group(1), match.group(3) or "", match.group(4)
                if provider in self.providers:
                    wanted.setdefault(provider, {}).setdefault(path, set()).add(key)
        lookups: dict[str, dict[str, dict[str, str]]] = {}
        ttls: dict[str, int] = {}
        for provider, paths in wanted.items():
            for path, keys in paths.items():
                result = self.providers[provider].get(path, sorted(keys))
                lookups.setdefault(provider, {})[path] = dict(result.data)
                if result.ttl is not None and result.ttl >= 0:
                    ttls[path] = result.ttl
        data: dict[str, Any] = {}
        for name, value in configs.items():
            data[name] = _replace(lookups, value) if isinstance(value, str) else value
        return ConfigTransformerResult(data, ttls)


def _replace(lookups: Mapping[str, Mapping[str, Mapping[str, str]]], value: str) -> str:
    def substitute(match: re.Match[str]) -> str:
        by_path = lookups.get(match.group(1))
        if by_path is None:
            return match.group(0)
        found = by_path.get(match.group(3) or "", {}).get(match.group(4))
        return match.group(0) if found is None else found

    return _VARIABLE.sub(substitute, value)


def instantiate_providers(
    provider_configs: Mapping[str, Any],
) -> dict[str, ConfigProvider]:
    """Create and configure the providers declared by ``config.providers`` in ``provider_configs``.

    Raises:
        ConfigException: a provider class cannot be loaded or configured (names its key).
    """
    listed = provider_configs.get("config.providers")
    if not isinstance(listed, str) or not listed.strip():
        return {}
    providers: dict[str, ConfigProvider] = {}
    for raw_name in listed.split(","):
        name = raw_name.strip()
        class_key = f"config.providers.{name}.class"
        class_name = provider_configs.get(class_key)
        if class_name is None:
            continue
        try:
            cls = (
                class_name if isinstance(class_name, type) else load_provider_class(str(class_name))
            )
        except ConfigException as exc:
            raise ConfigException(
                class_key,
                class_name,
                f"Could not load config provider class or one of its dependencies ({exc})",
            ) from exc
        prefix = f"config.providers.{name}.param."
        params = {k[len(prefix) :]: v for k, v in provider_configs.items() if k.startswith(prefix)}
        provider = cls()
        provider.configure(params)
        providers[name] = provider
    return providers
