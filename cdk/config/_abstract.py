"""Parsed configurations with typed getters and used-key tracking (Kafka's ``AbstractConfig``)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from cdk.config._def import ConfigDef
from cdk.config._providers import ConfigTransformer, instantiate_providers
from cdk.config._types import Password, Type, java_string, parse_type
from cdk.errors import ConfigException

__all__ = ["AbstractConfig"]

log = logging.getLogger("cdk.config")

T = TypeVar("T")


class _RecordingDict(dict[str, Any]):
    """A dict copy whose reads mark keys as used on the owning config."""

    def __init__(
        self,
        owner: AbstractConfig,
        data: Mapping[str, Any],
        prefix: str = "",
        fallback: bool = False,
    ) -> None:
        super().__init__(data)
        self._owner = owner
        self._prefix = prefix
        self._fallback = fallback

    def _record(self, key: object) -> None:
        if isinstance(key, str):
            self._owner.ignore(self._prefix + key)
            if self._fallback:
                self._owner.ignore(key)

    def __getitem__(self, key: str) -> Any:
        self._record(key)
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        self._record(key)
        return super().get(key, default)


class AbstractConfig:
    """A configuration parsed against a :class:`ConfigDef`, with typed getters.

    On construction it resolves ``${provider:[path:]key}`` variables through the providers
    declared in ``config.providers`` (of ``config_provider_props`` when given, else of the
    originals), parses the result with ``definition`` (raising
    :class:`~cdk.errors.ConfigException` on the first error), applies
    :meth:`post_process_parsed_config`, and optionally logs every value.

    Args:
        definition: the configuration definition.
        originals: the raw configuration (string keys; values usually strings).
        do_log: log all values at INFO (passwords hidden) on the ``cdk.config`` logger.
        config_provider_props: where to read ``config.providers*`` from instead of ``originals``.
    """

    def __init__(
        self,
        definition: ConfigDef,
        originals: Mapping[str, Any],
        *,
        do_log: bool = False,
        config_provider_props: Mapping[str, Any] | None = None,
    ) -> None:
        if not isinstance(originals, Mapping):
            raise ConfigException(f"Expected a mapping of configurations, not {originals!r}")
        for key, value in originals.items():
            if not isinstance(key, str):
                raise ConfigException(str(key), value, "Key must be a string.")
        self._definition = definition
        self._used: set[str] = set()
        self._originals: dict[str, Any] = self._resolve(dict(originals), config_provider_props)
        self._values: dict[str, Any] = definition.parse(self._originals)
        updates = self.post_process_parsed_config(dict(self._values))
        if updates:
            self._values.update(updates)
            definition.parse(self._values)
        if do_log:
            self.log_all()

    @staticmethod
    def _resolve(
        originals: dict[str, Any], provider_props: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        source = provider_props if provider_props else originals
        providers = instantiate_providers(source)
        if not providers:
            return originals
        try:
            strings = {k: v for k, v in originals.items() if isinstance(v, str)}
            result = ConfigTransformer(providers).transform(strings)
        finally:
            for provider in providers.values():
                try:
                    provider.close()
                except Exception:
                    log.warning("Failed to close config provider %s", provider, exc_info=True)
        resolved = dict(originals)
        resolved.update(result.data)
        return resolved

    def post_process_parsed_config(self, parsed: Mapping[str, Any]) -> Mapping[str, Any]:
        """Hook for subclasses: return values to change after parsing (default: none)."""
        return {}

    # ------------------------------------------------------------------ access
    @property
    def definition(self) -> ConfigDef:
        """The configuration definition."""
        return self._definition

    def get(self, key: str) -> Any:
        """The parsed value of ``key``; marks it as used.

        Raises:
            ConfigException: ``Unknown configuration 'key'`` when it is not defined.
        """
        if key not in self._values:
            raise ConfigException(f"Unknown configuration '{key}'")
        self._used.add(key)
        return self._values[key]

    def _typed(self, key: str, kinds: tuple[type, ...], type_: Type) -> Any:
        """``get(key)`` checked against the Python types of ``type_``.

        The typed getters are annotated with the key's value type for convenience; like Kafka's,
        they return ``None`` for a key whose value (or default) is ``None``.
        """
        value = self.get(key)
        if value is not None and (
            not isinstance(value, kinds) or (bool not in kinds and isinstance(value, bool))
        ):
            raise ConfigException(
                f"Configuration '{key}' is not of type {type_.name}: "
                f"it holds a {type(value).__name__}"
            )
        return value

    def get_string(self, key: str) -> str:
        """The STRING value of ``key``."""
        value: str = self._typed(key, (str,), Type.STRING)
        return value

    def get_int(self, key: str) -> int:
        """The INT value of ``key``."""
        value: int = self._typed(key, (int,), Type.INT)
        return value

    def get_short(self, key: str) -> int:
        """The SHORT value of ``key``."""
        value: int = self._typed(key, (int,), Type.SHORT)
        return value

    def get_long(self, key: str) -> int:
        """The LONG value of ``key``."""
        value: int = self._typed(key, (int,), Type.LONG)
        return value

    def get_double(self, key: str) -> float:
        """The DOUBLE value of ``key``."""
        value: Any = self._typed(key, (int, float), Type.DOUBLE)
        return cast(float, value) if value is None else float(value)

    def get_boolean(self, key: str) -> bool:
        """The BOOLEAN value of ``key``."""
        value: bool = self._typed(key, (bool,), Type.BOOLEAN)
        return value

    def get_list(self, key: str) -> list[Any]:
        """The LIST value of ``key``."""
        value: list[Any] = self._typed(key, (list,), Type.LIST)
        return value

    def get_password(self, key: str) -> Password:
        """The PASSWORD value of ``key``; call ``.value()`` for the secret."""
        value: Password = self._typed(key, (Password,), Type.PASSWORD)
        return value

    def get_class(self, key: str) -> type[Any]:
        """The CLASS value of ``key``."""
        value: type[Any] = self._typed(key, (type,), Type.CLASS)
        return value

    def type_of(self, key: str) -> Type | None:
        """The type of ``key``, or ``None`` when it is not defined."""
        found = self._definition.find(key)
        return None if found is None else found.type

    def documentation_of(self, key: str) -> str | None:
        """The documentation of ``key``, or ``None`` when it is not defined."""
        found = self._definition.find(key)
        return None if found is None else found.documentation

    # ------------------------------------------------------------------ instances
    def _instantiate(
        self, key: str, klass: Any, base_class: type[T], configs: Mapping[str, Any]
    ) -> T:
        if isinstance(klass, str):
            from cdk.config._classes import load_class

            klass = load_class(klass)
        if not isinstance(klass, type):
            raise ConfigException(key, klass, "Expected a class or class name")
        try:
            instance = klass()
        except Exception as exc:
            raise ConfigException(
                key, klass.__qualname__, f"Could not instantiate class: {exc}"
            ) from exc
        if not isinstance(instance, base_class):
            raise ConfigException(
                key,
                klass.__qualname__,
                f"{klass.__qualname__} is not an instance of {base_class.__qualname__}",
            )
        configure = getattr(instance, "configure", None)
        if callable(configure):
            configure(dict(configs))
        return instance

    def get_configured_instance(
        self, key: str, base_class: type[T], overrides: Mapping[str, Any] | None = None
    ) -> T | None:
        """Instantiate the CLASS value of ``key`` and ``configure`` it with the originals.

        Args:
            key: a CLASS key.
            base_class: the class the instance must be an instance of.
            overrides: values that replace originals in what ``configure`` receives.

        Returns:
            The configured instance, or ``None`` when the value is ``None``.

        Raises:
            ConfigException: the class cannot be instantiated or is not a ``base_class``.
        """
        klass = self.get(key)
        if klass is None:
            return None
        return self._instantiate(key, klass, base_class, {**self.originals(), **(overrides or {})})

    def get_configured_instances(
        self, key: str, base_class: type[T], overrides: Mapping[str, Any] | None = None
    ) -> list[T]:
        """Instantiate and configure each class of the LIST value of ``key``."""
        classes = self.get_list(key) or []
        configs = {**self.originals(), **(overrides or {})}
        return [self._instantiate(key, c, base_class, configs) for c in classes]

    # ------------------------------------------------------------------ used keys
    def ignore(self, key: str) -> None:
        """Mark ``key`` as used."""
        self._used.add(key)

    def unused(self) -> set[str]:
        """The original keys that nothing has read."""
        return set(self._originals) - self._used

    def log_unused(self) -> None:
        """Log, at INFO, the supplied keys that nothing has read."""
        unused = sorted(self.unused())
        if unused:
            log.info(
                "These configurations '%s' were supplied but are not used yet.",
                "[" + ", ".join(unused) + "]",
            )

    # ------------------------------------------------------------------ maps
    def originals(self, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """A copy of the original (variable-resolved) values; reading it marks keys as used."""
        return _RecordingDict(self, {**self._originals, **(overrides or {})})

    def originals_strings(self) -> dict[str, str]:
        """The originals, which must all be strings.

        Raises:
            ConfigException: a value is not a string.
        """
        result: dict[str, str] = {}
        for key, value in self._originals.items():
            if not isinstance(value, str):
                shown = Password.HIDDEN if isinstance(value, Password) else value
                raise ConfigException(key, shown, "Expected a string value")
            result[key] = value
        return _RecordingDict(self, result)

    def originals_with_prefix(self, prefix: str, strip: bool = True) -> dict[str, Any]:
        """The originals whose key starts with ``prefix`` (stripped of it by default).

        Keys equal to the prefix itself are left out when stripping.
        """
        result: dict[str, Any] = {}
        for key, value in self._originals.items():
            if key.startswith(prefix) and len(key) > len(prefix):
                result[key[len(prefix) :] if strip else key] = value
        return _RecordingDict(self, result, prefix if strip else "")

    def values_with_prefix_override(self, prefix: str) -> dict[str, Any]:
        """The parsed values, with ``prefix``-ed originals overriding the keys they name."""
        result = _RecordingDict(self, self._values, prefix, True)
        keys = self._definition.config_keys()
        for key, value in self._originals.items():
            if key.startswith(prefix) and len(key) > len(prefix):
                bare = key[len(prefix) :]
                config_key = keys.get(bare)
                if config_key is not None:
                    parsed = parse_type(bare, value, config_key.type)
                    if config_key.validator is not None:
                        config_key.validator.ensure_valid(bare, parsed)
                    dict.__setitem__(result, bare, parsed)
        return result

    def values_with_prefix_all_or_nothing(self, prefix: str) -> dict[str, Any]:
        """The prefixed originals parsed on their own if any exist, else the parsed values."""
        with_prefix = dict(self.originals_with_prefix(prefix, strip=True))
        if not with_prefix:
            return _RecordingDict(self, self._values, "", True)
        return _RecordingDict(self, self._definition.parse(with_prefix), prefix, True)

    def values(self) -> dict[str, Any]:
        """A copy of the parsed values; reading it marks keys as used."""
        return _RecordingDict(self, self._values)

    def non_internal_values(self) -> dict[str, Any]:
        """The parsed values of the keys that are not internal."""
        keys = self._definition.config_keys()
        return _RecordingDict(
            self,
            {k: v for k, v in self._values.items() if not (k in keys and keys[k].internal_config)},
        )

    # ------------------------------------------------------------------ logging
    def log_all(self) -> None:
        """Log every parsed value at INFO, sorted by key, passwords as ``[hidden]``."""
        lines = [f"{type(self).__name__} values: \n"]
        for key in sorted(self._values):
            lines.append(f"\t{key} = {java_string(self._values[key])}\n")
        log.info("%s", "".join(lines))

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, AbstractConfig)
        return self._originals == other._originals

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._originals)))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({sorted(self._values)!r})"
