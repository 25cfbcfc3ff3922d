"""The configuration definition: :class:`ConfigDef`, :class:`ConfigKey` and :class:`Recommender`."""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from cdk.config._types import NO_DEFAULT, Importance, Password, Type, Width, parse_type
from cdk.config._value import ConfigValue
from cdk.config.validators import Validator
from cdk.errors import ConfigException

__all__ = ["ConfigDef", "ConfigKey", "Recommender"]


class Recommender(abc.ABC):
    """Recommends values and visibility of a key from the values of the other keys.

    Used by :meth:`ConfigDef.validate` for keys whose valid values depend on other keys (their
    "parents", which list them in ``dependents``).
    """

    @abc.abstractmethod
    def valid_values(self, name: str, parsed: Mapping[str, Any]) -> list[Any]:
        """The values ``name`` may take given the parsed values of the configuration."""

    @abc.abstractmethod
    def visible(self, name: str, parsed: Mapping[str, Any]) -> bool:
        """Whether ``name`` is relevant given the parsed values of the configuration."""


def _shown(value: Any, type_: Type) -> Any:
    return Password.HIDDEN if type_ is Type.PASSWORD and value is not None else value


def _run_validator(key: ConfigKey, value: Any) -> None:
    """Run the key's validator; any failure becomes a ConfigException naming the key."""
    if key.validator is None:
        return
    try:
        key.validator.ensure_valid(key.name, value)
    except ConfigException:
        raise
    except Exception as exc:
        raise ConfigException(
            key.name, _shown(value, key.type), f"{type(exc).__name__}: {exc}"
        ) from exc


class ConfigKey:
    """The definition of one configuration key.

    The default is parsed with the key's type and checked with its validator when the key is
    created, so a bad default fails at definition time with a
    :class:`~cdk.errors.ConfigException`.

    Attributes:
        name: the key.
        type: its :class:`Type`.
        default_value: the parsed default, or :data:`NO_DEFAULT` for a required key.
        validator: checks parsed values, or ``None``.
        importance: its :class:`Importance`, or ``None`` (Kafka accepts a key without one, as in
            its ``testNullDefault``; docs then show an empty importance and sort it last).
        documentation: its description (may be ``None``).
        group: the group it belongs to, or ``None``.
        order_in_group: its position within the group (``-1`` when unordered).
        width: a :class:`Width` hint for user interfaces.
        display_name: a name for user interfaces (defaults to ``name``).
        dependents: the keys whose valid values depend on this one.
        recommender: a :class:`Recommender`, or ``None``.
        internal_config: internal keys are left out of generated documentation.
        alternative_string: shown instead of the default in :meth:`ConfigDef.to_html`.
    """

    __slots__ = (
        "alternative_string",
        "default_value",
        "dependents",
        "display_name",
        "documentation",
        "group",
        "importance",
        "internal_config",
        "name",
        "order_in_group",
        "recommender",
        "type",
        "validator",
        "width",
    )

    def __init__(
        self,
        name: str,
        type: Type,
        default_value: Any = NO_DEFAULT,
        validator: Validator | None = None,
        importance: Importance | None = Importance.MEDIUM,
        documentation: str | None = None,
        group: str | None = None,
        order_in_group: int = -1,
        width: Width = Width.NONE,
        display_name: str | None = None,
        dependents: Iterable[str] = (),
        recommender: Recommender | None = None,
        internal_config: bool = False,
        alternative_string: str | None = None,
    ) -> None:
        if not isinstance(name, str):
            raise ConfigException(f"Configuration name must be a string, not {name!r}.")
        if not isinstance(type, Type):
            raise ConfigException(name, type, "Expected a cdk.config.Type")
        if importance is not None and not isinstance(importance, Importance):
            raise ConfigException(name, importance, "Expected a cdk.config.Importance")
        if validator is not None and not callable(getattr(validator, "ensure_valid", None)):
            raise ConfigException(name, validator, "Expected a validator with ensure_valid()")
        self.name = name
        self.type = type
        self.validator = validator
        self.importance = importance
        has_default = default_value is not NO_DEFAULT
        self.default_value: Any = (
            parse_type(name, default_value, type) if has_default else NO_DEFAULT
        )
        if has_default:
            _run_validator(self, self.default_value)
        self.documentation = documentation
        self.group = group
        self.order_in_group = order_in_group
        self.width = width
        self.display_name = name if display_name is None else display_name
        self.dependents: tuple[str, ...] = tuple(dependents or ())
        self.recommender = recommender
        self.internal_config = internal_config
        self.alternative_string = alternative_string

    def has_default(self) -> bool:
        """Whether the key has a default (is not required)."""
        return self.default_value is not NO_DEFAULT

    def __repr__(self) -> str:
        default = _shown(self.default_value, self.type)
        return f"ConfigKey(name={self.name!r}, type={self.type.name}, default={default!r})"


class _EmbeddedValidator(Validator):
    def __init__(self, prefix: str, base: Any) -> None:
        self.prefix = prefix
        self.base = base

    def ensure_valid(self, name: str, value: Any) -> None:
        self.base.ensure_valid(name[len(self.prefix) :], value)

    def __str__(self) -> str:
        return str(self.base)


class _EmbeddedRecommender(Recommender):
    def __init__(self, prefix: str, base: Recommender) -> None:
        self.prefix = prefix
        self.base = base

    def _unprefixed(self, parsed: Mapping[str, Any]) -> dict[str, Any]:
        n = len(self.prefix)
        return {k[n:]: v for k, v in parsed.items() if k.startswith(self.prefix)}

    def valid_values(self, name: str, parsed: Mapping[str, Any]) -> list[Any]:
        return self.base.valid_values(name[len(self.prefix) :], self._unprefixed(parsed))

    def visible(self, name: str, parsed: Mapping[str, Any]) -> bool:
        return self.base.visible(name[len(self.prefix) :], self._unprefixed(parsed))


class ConfigDef:
    """The definition of a configuration: its keys, types, defaults, validators and docs.

    Define keys with the fluent :meth:`define`; then :meth:`parse` a configuration (fail-fast),
    :meth:`validate` it (collecting every error), or render its reference documentation
    (:meth:`to_rst`, :meth:`to_enriched_rst`, :meth:`to_html`, :meth:`to_html_table`,
    :meth:`to_markdown`). Behaviour, error texts and output formats are Kafka's ``ConfigDef``.

    Example::

        CONFIG = (ConfigDef()
            .define("field", Type.STRING, NO_DEFAULT, validators.NonEmptyString(),
                    Importance.MEDIUM, "Field name to extract."))
        parsed = CONFIG.parse({"field": "id"})
    """

    def __init__(self, base: ConfigDef | None = None) -> None:
        self._keys: dict[str, ConfigKey] = dict(base._keys) if base is not None else {}
        self._groups: list[str] = list(base._groups) if base is not None else []

    # ---------------------------------------------------------------- definition
    def define(
        self,
        name: str | ConfigKey,
        type: Type | None = None,
        default: Any = NO_DEFAULT,
        validator: Validator | None = None,
        importance: Importance | None = None,
        documentation: str | None = None,
        *,
        group: str | None = None,
        order_in_group: int = -1,
        width: Width = Width.NONE,
        display_name: str | None = None,
        dependents: Iterable[str] = (),
        recommender: Recommender | None = None,
        alternative_string: str | None = None,
    ) -> ConfigDef:
        """Define a key and return this ConfigDef (so calls chain).

        Args:
            name: the key, or a complete :class:`ConfigKey` (then the other arguments are unused).
            type: its :class:`Type`.
            default: its default value (parsed and validated now); :data:`NO_DEFAULT` makes the
                key required.
            validator: checks values (see :mod:`cdk.config.validators`).
            importance: its :class:`Importance`.
            documentation: its description.
            group: the group it belongs to; groups keep the order they are first seen in.
            order_in_group: its position within the group.
            width: a :class:`Width` hint for user interfaces.
            display_name: a name for user interfaces (defaults to ``name``).
            dependents: keys whose valid values depend on this one.
            recommender: recommends valid values and visibility during :meth:`validate`.
            alternative_string: shown instead of the default in :meth:`to_html`.

        Returns:
            This ConfigDef.

        Raises:
            ConfigException: the key is defined twice, or its default is invalid.
        """
        if isinstance(name, ConfigKey):
            key = name
        else:
            if type is None:
                raise ConfigException(f"Configuration {name} needs a type.")
            if name in self._keys:
                raise ConfigException(f"Configuration {name} is defined twice.")
            key = ConfigKey(
                name,
                type,
                default,
                validator,
                importance,
                documentation,
                group,
                order_in_group,
                width,
                display_name,
                dependents,
                recommender,
                False,
                alternative_string,
            )
        if key.name in self._keys:
            raise ConfigException(f"Configuration {key.name} is defined twice.")
        if key.group is not None and key.group not in self._groups:
            self._groups.append(key.group)
        self._keys[key.name] = key
        return self

    def define_internal(
        self,
        name: str,
        type: Type,
        default: Any,
        validator: Validator | None = None,
        importance: Importance = Importance.LOW,
        documentation: str | None = None,
    ) -> ConfigDef:
        """Define an internal key: parsed like any other, but left out of generated docs.

        Returns:
            This ConfigDef.
        """
        return self.define(
            ConfigKey(
                name,
                type,
                default,
                validator,
                importance,
                "" if documentation is None else documentation,
                "",
                -1,
                Width.NONE,
                name,
                (),
                None,
                True,
                None,
            )
        )

    def embed(
        self, key_prefix: str, group_prefix: str, starting_ord: int, child: ConfigDef
    ) -> None:
        """Copy every key of ``child`` into this definition under ``key_prefix``.

        Groups become ``group_prefix`` (or ``group_prefix: child group``), orders count up from
        ``starting_ord`` in the child's documentation order, and validators, recommenders and
        dependents are wrapped so that they keep seeing the child's own (unprefixed) names.
        """
        order = starting_ord
        for key in child.sorted_keys():
            self.define(
                ConfigKey(
                    key_prefix + key.name,
                    key.type,
                    key.default_value,
                    _EmbeddedValidator(key_prefix, key.validator)
                    if key.validator is not None
                    else None,
                    key.importance,
                    key.documentation,
                    group_prefix + ("" if key.group is None else ": " + key.group),
                    order,
                    key.width,
                    key.display_name,
                    [key_prefix + d for d in key.dependents],
                    _EmbeddedRecommender(key_prefix, key.recommender)
                    if key.recommender is not None
                    else None,
                    key.internal_config,
                    key.alternative_string,
                )
            )
            order += 1

    # ---------------------------------------------------------------- introspection
    def names(self) -> frozenset[str]:
        """The names of the defined keys."""
        return frozenset(self._keys)

    def config_keys(self) -> dict[str, ConfigKey]:
        """The defined keys by name, in definition order (a copy)."""
        return dict(self._keys)

    def groups(self) -> list[str]:
        """The groups, in the order they were first defined (a copy)."""
        return list(self._groups)

    def default_values(self) -> dict[str, Any]:
        """The defaults of the keys that have one."""
        return {k.name: k.default_value for k in self._keys.values() if k.has_default()}

    def find(self, name: str) -> ConfigKey | None:
        """The key named ``name``, or ``None``."""
        return self._keys.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._keys

    def __len__(self) -> int:
        return len(self._keys)

    def __repr__(self) -> str:
        return f"ConfigDef({list(self._keys)!r})"

    def sorted_keys(self) -> list[ConfigKey]:
        """The keys in Kafka's documentation order.

        Ungrouped keys first, then by group definition order, ``order_in_group``, required keys
        before keys with a default, importance (HIGH first) and name.
        """
        group_ord = {g: i for i, g in enumerate(self._groups)}

        def sort_key(key: ConfigKey) -> tuple[int, int, int, int, int, str]:
            grouped = 0 if key.group is None else 1
            return (
                grouped,
                group_ord.get(key.group, 0) if key.group is not None else 0,
                key.order_in_group,
                1 if key.has_default() else 0,
                len(Importance) if key.importance is None else key.importance.value,
                key.name,
            )

        return sorted(self._keys.values(), key=sort_key)

    # ---------------------------------------------------------------- parsing
    def _undefined_dependents(self) -> list[str]:
        seen: dict[str, None] = {}
        for key in self._keys.values():
            for dependent in key.dependents:
                if dependent not in self._keys:
                    seen.setdefault(dependent)
        return list(seen)

    def parse(self, props: Mapping[str, Any]) -> dict[str, Any]:
        """Parse and validate a configuration, failing on the first error.

        Values may be strings (as in a properties file) or already of the key's Python type.
        Keys that are not defined are ignored.

        Args:
            props: the configuration.

        Returns:
            Every defined key mapped to its parsed value (or default).

        Raises:
            ConfigException: with Kafka's text, e.g. ``Missing required configuration "x" which
                has no default value.`` or ``Invalid value y for configuration x: ...``.
        """
        undefined = self._undefined_dependents()
        if undefined:
            raise ConfigException(
                "Some configurations in are referred in the dependents, but not defined: "
                + ",".join(undefined)
            )
        if not isinstance(props, Mapping):
            raise ConfigException(f"Expected a mapping of configurations, not {props!r}")
        values: dict[str, Any] = {}
        for key in self._keys.values():
            values[key.name] = self._parse_value(key, props)
        return values

    def _parse_value(self, key: ConfigKey, props: Mapping[str, Any]) -> Any:
        if key.name in props:
            value = parse_type(key.name, props[key.name], key.type)
        elif not key.has_default():
            raise ConfigException(
                f'Missing required configuration "{key.name}" which has no default value.'
            )
        else:
            value = key.default_value
        _run_validator(key, value)
        return value

    # ---------------------------------------------------------------- validation
    def validate(self, props: Mapping[str, Any]) -> list[ConfigValue]:
        """Validate a configuration, collecting every problem; never raises.

        Returns:
            One :class:`ConfigValue` per key (and per undefined dependent).
        """
        return list(self.validate_all(props).values())

    def validate_all(self, props: Mapping[str, Any]) -> dict[str, ConfigValue]:
        """Validate a configuration, collecting every problem; never raises.

        Keys are parsed starting from those that are nobody's dependent and recursing into
        ``dependents`` (a key with two parents is visited, and reports its errors, twice, as in
        Kafka); then recommenders set recommended values and visibility.

        Returns:
            A :class:`ConfigValue` by key name, in definition order, then undefined dependents.
        """
        props = props if isinstance(props, Mapping) else {}
        values: dict[str, ConfigValue] = {name: ConfigValue(name) for name in self._keys}
        for undefined in self._undefined_dependents():
            value = ConfigValue(undefined, visible=False)
            value.add_error_message(f"{undefined} is referred in the dependents, but not defined.")
            values[undefined] = value
        roots = self._no_parent()
        parsed: dict[str, Any] = {}
        for name in roots:
            self._parse_for_validate(name, props, parsed, values, 0)
        for name in roots:
            self._recommend(name, parsed, values, 0)
        return values

    def _no_parent(self) -> list[str]:
        with_parent = {d for key in self._keys.values() for d in key.dependents}
        return [name for name in self._keys if name not in with_parent]

    def _parse_for_validate(
        self,
        name: str,
        props: Mapping[str, Any],
        parsed: dict[str, Any],
        values: dict[str, ConfigValue],
        depth: int,
    ) -> None:
        key = self._keys.get(name)
        if key is None or depth > len(self._keys):
            return
        config = values[name]
        value: Any = None
        if name in props:
            try:
                value = parse_type(name, props[name], key.type)
            except ConfigException as exc:
                config.add_error_message(str(exc))
            except Exception as exc:  # noqa: BLE001 - validate() reports, never raises
                config.add_error_message(_error_text(key, props[name], exc))
        elif not key.has_default():
            config.add_error_message(
                f'Missing required configuration "{name}" which has no default value.'
            )
        else:
            value = key.default_value
        if key.validator is not None:
            try:
                _run_validator(key, value)
            except ConfigException as exc:
                config.add_error_message(str(exc))
        config.value = value
        parsed[name] = value
        for dependent in key.dependents:
            self._parse_for_validate(dependent, props, parsed, values, depth + 1)

    def _recommend(
        self, name: str, parsed: dict[str, Any], values: dict[str, ConfigValue], depth: int
    ) -> None:
        key = self._keys.get(name)
        if key is None or depth > len(self._keys):
            return
        config = values[name]
        if key.recommender is not None:
            try:
                recommended = list(key.recommender.valid_values(name, parsed))
                if config.recommended_values:
                    before = config.recommended_values
                    recommended = [v for v in recommended if v in before]
                config.recommended_values = recommended
                config.visible = bool(key.recommender.visible(name, parsed))
            except ConfigException as exc:
                config.add_error_message(str(exc))
            except Exception as exc:  # noqa: BLE001 - validate() reports, never raises
                config.add_error_message(
                    f"Recommender of configuration {name} failed: {type(exc).__name__}: {exc}"
                )
        for dependent in key.dependents:
            self._recommend(dependent, parsed, values, depth + 1)

    # ---------------------------------------------------------------- documentation
    def to_rst(self) -> str:
        """The reference as reStructuredText, exactly as Kafka's ``toRst``."""
        from cdk.config._docs import to_rst

        return to_rst(self)

    def to_enriched_rst(self) -> str:
        """The reference as reStructuredText with group headings and dependents (Kafka's)."""
        from cdk.config._docs import to_enriched_rst

        return to_enriched_rst(self)

    def to_html(
        self,
        header_depth: int = 4,
        id_generator: Callable[[str], str] | None = None,
        dynamic_update_modes: Mapping[str, str] | None = None,
    ) -> str:
        """The reference as an HTML list, exactly as Kafka's ``toHtml``.

        Args:
            header_depth: the level of each key's heading (``<h4>`` by default).
            id_generator: maps a key name to its HTML anchor id (identity by default).
            dynamic_update_modes: key -> update mode; when given, an ``Update Mode`` row is added
                (``read-only`` for keys not listed).
        """
        from cdk.config._docs import to_html

        return to_html(self, header_depth, id_generator, dynamic_update_modes)

    def to_html_table(self, dynamic_update_modes: Mapping[str, str] | None = None) -> str:
        """The reference as an HTML table, exactly as Kafka's ``toHtmlTable``."""
        from cdk.config._docs import to_html_table

        return to_html_table(self, dynamic_update_modes)

    def to_markdown(self) -> str:
        """The reference as Markdown tables, one per group (connect-cdk's own format)."""
        from cdk.config._docs import to_markdown

        return to_markdown(self)


def _error_text(key: ConfigKey, value: Any, exc: Exception) -> str:
    return str(ConfigException(key.name, _shown(value, key.type), f"{type(exc).__name__}: {exc}"))
