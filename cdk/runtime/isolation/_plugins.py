"""Plugin discovery and loading: connectors, converters, transformations, predicates, providers.

Plugins are registered explicitly, never found by scanning imports:

* the kit's built-ins (converters, header converters, SMTs, predicates, config providers), also
  under their Kafka class names (``org.apache.kafka.connect.json.JsonConverter``);
* the entry point group ``cdk.plugins`` of every installed distribution; the entry point name is
  an alias usable in configs (``FileStreamSource = "my_pkg.connectors:FileStreamSourceConnector"``);
* classes handed to :class:`Plugins` directly (``extra``), handy in tests.

Any importable class path (``package.module:Class`` or ``package.module.Class``) loads too. Like
Kafka, each discovered plugin is also known by its simple class name and by that name without the
suffix of its kind (``MySourceConnector`` -> ``MySource``, ``JsonConverter`` -> ``Json``).
"""

from __future__ import annotations

import builtins
import difflib
import enum
import inspect
import logging
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

from cdk._aliases import KAFKA_CLASS_ALIASES
from cdk.api import Connector, SinkConnector, SourceConnector
from cdk.api._versioned import package_version
from cdk.config import ConfigProvider, load_class
from cdk.config._providers import PROVIDER_ALIASES
from cdk.converters import Converter, HeaderConverter
from cdk.errors import ConfigException, ConnectException
from cdk.runtime.isolation._plugin_path import distribution_of_entry_point
from cdk.transforms._base import Predicate, Transformation

__all__ = ["ENTRY_POINT_GROUP", "PluginDesc", "PluginType", "Plugins"]

log = logging.getLogger("cdk.runtime.plugins")

ENTRY_POINT_GROUP = "cdk.plugins"
"""The entry point group that installed distributions register their plugins in."""


class PluginType(str, enum.Enum):
    """The kind of a plugin, with the names Kafka's REST API uses."""

    SOURCE = "source"
    SINK = "sink"
    CONVERTER = "converter"
    HEADER_CONVERTER = "header_converter"
    TRANSFORMATION = "transformation"
    PREDICATE = "predicate"
    CONFIG_PROVIDER = "config_provider"

    def __str__(self) -> str:
        return self.value


#: How similar (difflib's ratio) a known name must be to a misspelt one to be suggested.
_SUGGESTION_CUTOFF = 0.75

# the suffix Kafka prunes from a simple class name to form the short alias, by kind
_SUFFIXES = {
    PluginType.SOURCE: "Connector",
    PluginType.SINK: "Connector",
    PluginType.CONVERTER: "Converter",
    PluginType.HEADER_CONVERTER: "HeaderConverter",
    PluginType.TRANSFORMATION: "Transformation",
    PluginType.PREDICATE: "Predicate",
    PluginType.CONFIG_PROVIDER: "ConfigProvider",
}
_LOWER_SUFFIXES = sorted({s.lower() for s in _SUFFIXES.values()}, key=len, reverse=True)
_BASES: tuple[tuple[type[Any], PluginType], ...] = (
    (SourceConnector, PluginType.SOURCE),
    (SinkConnector, PluginType.SINK),
    (Converter, PluginType.CONVERTER),
    (HeaderConverter, PluginType.HEADER_CONVERTER),
    (Transformation, PluginType.TRANSFORMATION),
    (Predicate, PluginType.PREDICATE),
    (ConfigProvider, PluginType.CONFIG_PROVIDER),
)


@dataclass(frozen=True)
class PluginDesc:
    """A discovered plugin.

    Attributes:
        class_name: the name it is listed under (``package.module.Class``).
        type: its kind.
        version: what its ``version()`` returns, else its distribution's version.
        cls: the class itself.
        source: where it comes from: ``built-in``, ``<distribution>==<version>`` (an entry
            point of an installed distribution), ``...@plugin.path:<entry>`` (one found
            through ``plugin.path``) or ``code`` (registered by the program).
    """

    class_name: str
    type: PluginType
    version: str
    cls: builtins.type = field(compare=False, repr=False)
    source: str = field(default="built-in", compare=False)

    def to_json(self) -> dict[str, str]:
        """The entry of ``GET /connector-plugins``: ``{"class", "type", "version"}``."""
        return {"class": self.class_name, "type": self.type.value, "version": self.version}


def plugin_types(cls: type) -> list[PluginType]:
    """Every kind ``cls`` is (a StringConverter is both a converter and a header converter)."""
    return [kind for base, kind in _BASES if isinstance(cls, type) and issubclass(cls, base)]


def _dotted(target: str) -> str:
    return target.replace(":", ".")


def _version_of(cls: type, kind: PluginType) -> str:
    try:
        if kind in (PluginType.SOURCE, PluginType.SINK) or callable(getattr(cls, "version", None)):
            version = cls().version()
            if isinstance(version, str) and version:
                return version
    except Exception:  # a plugin's failing version() must not break discovery
        log.debug("version() of %s failed", cls, exc_info=True)
    return package_version(cls)


@dataclass
class _Registry:
    descs: list[PluginDesc] = field(default_factory=list)
    exact: dict[str, type] = field(default_factory=dict)
    aliases: dict[str, dict[str, type]] = field(default_factory=dict)  # alias -> class_name -> cls


class Plugins:
    """Finds and loads plugins by name (discovery runs once, on first use).

    Args:
        extra: plugin classes to register in addition to the built-ins and entry points.
    """

    def __init__(self, extra: Iterable[type] = ()) -> None:
        self._extra = tuple(extra)
        self._lock = threading.Lock()
        self._registry: _Registry | None = None

    @property
    def extra(self) -> tuple[type, ...]:
        """The plugin classes registered beyond the built-ins and entry points."""
        return self._extra

    # ------------------------------------------------------------------ discovery
    def _scan(self) -> _Registry:
        with self._lock:
            if self._registry is None:
                self._registry = self._discover()
            return self._registry

    def _discover(self) -> _Registry:
        registry = _Registry()
        seen: dict[type, str] = {}

        def add(
            cls: Any, class_name: str, names: Iterable[str] = (), source: str = "built-in"
        ) -> None:
            if not isinstance(cls, type) or inspect.isabstract(cls):
                return
            kinds = plugin_types(cls)
            if not kinds:
                log.warning(
                    "Ignoring plugin %s: it is not a connector, converter, "
                    "transformation, predicate or config provider",
                    class_name,
                )
                return
            for name in names:
                registry.exact.setdefault(name, cls)
            if cls in seen:
                return
            seen[cls] = class_name
            registry.exact.setdefault(class_name, cls)
            for kind in kinds:
                registry.descs.append(
                    PluginDesc(class_name, kind, _version_of(cls, kind), cls, source)
                )
                simple = cls.__name__
                suffix = _SUFFIXES[kind]
                short = simple[: -len(suffix)] if simple.endswith(suffix) else ""
                for alias in {simple, short} - {""}:
                    registry.aliases.setdefault(alias, {})[class_name] = cls

        for target in dict.fromkeys([*KAFKA_CLASS_ALIASES.values(), *PROVIDER_ALIASES.values()]):
            try:
                add(load_class(target), _dotted(target))
            except ConfigException:  # an optional extra that is not installed
                log.debug("Built-in plugin %s is not available", target, exc_info=True)
        for entry_point in sorted(
            metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: (e.value, e.name)
        ):
            try:
                loaded = entry_point.load()
            except Exception as exc:  # noqa: BLE001 - a broken distribution must not stop the worker
                log.warning(
                    "Skipping plugin entry point %s = %s: %s: %s",
                    entry_point.name,
                    entry_point.value,
                    type(exc).__name__,
                    exc,
                )
                continue
            dist = distribution_of_entry_point(entry_point)
            source = "unknown" if dist is None else dist.source
            add(loaded, _dotted(entry_point.value), [entry_point.name], source)
        for cls in self._extra:
            add(cls, f"{cls.__module__}.{cls.__qualname__}", source="code")
        registry.descs.sort(key=lambda d: (d.class_name, d.type.value))
        return registry

    def remember(self, cls: type) -> None:
        """Make ``cls`` loadable by its class path (``package.module.Class``) from now on.

        The worker remembers the task class each connector returns, so the task starts even
        when the class is not importable by that path (defined inside a function, or made at
        run time, as the certification harness does to instrument a connector).
        """
        registry = self._scan()
        with self._lock:
            registry.exact[f"{cls.__module__}.{cls.__qualname__}"] = cls

    # ------------------------------------------------------------------ listing
    def all(self) -> list[PluginDesc]:
        """Every discovered plugin, sorted by class name (a class of two kinds appears twice)."""
        return list(self._scan().descs)

    def connectors(self) -> list[PluginDesc]:
        """The discovered source and sink connectors, sorted by class name."""
        return [d for d in self._scan().descs if d.type in (PluginType.SOURCE, PluginType.SINK)]

    def plugin_type(self, cls: type) -> PluginType:
        """The kind of a plugin class (the first, for a class of several kinds).

        Raises:
            ConfigException: ``cls`` is no kind of plugin.
        """
        kinds = plugin_types(cls)
        if not kinds:
            raise ConfigException(f"{cls.__module__}.{cls.__qualname__} is not a plugin")
        return kinds[0]

    def class_name(self, cls: type) -> str:
        """The name a plugin class is listed under (``package.module.Class``)."""
        for desc in self._scan().descs:
            if desc.cls is cls:
                return desc.class_name
        return f"{cls.__module__}.{cls.__qualname__}"

    def aliases(self, class_name: str) -> list[str]:
        """The other names that load the plugin listed as ``class_name``, shortest first.

        Kafka class names (``org.apache.kafka.connect.json.JsonConverter``), entry point names,
        and Kafka's two aliases: the simple class name and that name without the suffix of the
        plugin's kind (``JsonConverter``, ``Json``). An alias that several plugins share loads
        none of them and is left out.
        """
        registry = self._scan()
        cls = registry.exact.get(class_name)
        if cls is None:
            return []
        names = {name for name, other in registry.exact.items() if other is cls}
        names.update(
            alias
            for alias, matches in registry.aliases.items()
            if len(matches) == 1 and next(iter(matches.values())) is cls
        )
        names.update(
            alias
            for table in (KAFKA_CLASS_ALIASES, PROVIDER_ALIASES)
            for alias, target in table.items()
            if _dotted(target) == class_name
        )
        names.discard(class_name)
        return sorted(names, key=lambda name: (len(name), name))

    def suggestions(self, name: str, *, connectors_only: bool = False) -> list[str]:
        """The names of the known plugins closest to a misspelt ``name``, best first.

        Each plugin is compared by its class name and every alias (case and the kind's suffix,
        such as ``Connector``, ignored; for a dotted ``name``, its last part too) and offered
        once, by its closest name; only plugins about as close as the best one are offered (at
        most three).
        """
        registry = self._scan()
        descs = self.connectors() if connectors_only else registry.descs
        texts = {name.strip(), name.replace(":", ".").rsplit(".", 1)[-1].strip()}
        best: dict[str, tuple[float, str]] = {}
        for desc in descs:
            for candidate in (desc.class_name, *self.aliases(desc.class_name)):
                score = max(_similarity(text, candidate) for text in texts)
                if score > best.get(desc.class_name, (0.0, ""))[0]:
                    best[desc.class_name] = (score, candidate)
        ranked = sorted(best.values(), key=lambda pair: (-pair[0], pair[1]))
        if not ranked or ranked[0][0] < _SUGGESTION_CUTOFF:
            return []
        top = ranked[0][0]
        close = [c for score, c in ranked if score >= max(_SUGGESTION_CUTOFF, top - 0.05)]
        return list(dict.fromkeys(close))[:3]

    # ------------------------------------------------------------------ loading
    def load(self, name: str | type) -> type:
        """Load a plugin class by name.

        Tried in order: an entry point name or listed class name, a Kafka class name or alias
        (``org.apache.kafka.connect.json.JsonConverter``, ``InsertField$Value``), a discovered
        plugin's simple name or short alias (``MySourceConnector``, ``MySource``), an importable
        class path (``package.module:Class``, ``package.module.Class``).

        Args:
            name: the name (surrounding whitespace ignored), or a class (returned as is).

        Returns:
            The class.

        Raises:
            ConfigException: nothing of that name exists, or a short alias matches several
                plugins (the message lists them).
        """
        if isinstance(name, type):
            return name
        if not isinstance(name, str) or not name.strip():
            raise ConfigException(f"Plugin class name must be a non-empty string, not {name!r}")
        text = name.strip()
        registry = self._scan()
        if text in registry.exact:
            return registry.exact[text]
        if text in KAFKA_CLASS_ALIASES or text in PROVIDER_ALIASES:
            return load_class(PROVIDER_ALIASES.get(text, text))
        matches = registry.aliases.get(text, {})
        if len(matches) == 1:
            return next(iter(matches.values()))
        if len(matches) > 1:
            raise ConfigException(
                f"Plugin alias {text} is ambiguous: it matches {', '.join(sorted(matches))}. "
                "Use one of these class names instead."
            )
        try:
            return load_class(text)
        except ConfigException as exc:
            raise ConfigException(
                f"Class {text} could not be found. Use a plugin alias, an entry point name of the "
                f"'{ENTRY_POINT_GROUP}' group or an importable class path (package.module:Class)."
            ) from exc

    def connector_class(self, name: str | type) -> type[Connector]:
        """Load a connector class by name or alias (``FileStreamSource``, ``my.pkg:MySource``).

        Raises:
            ConfigException: unknown (the message lists the available connectors), not a
                connector, or abstract.
        """
        try:
            cls = self.load(name)
        except ConfigException as exc:
            available = ", ".join(d.class_name for d in self.connectors()) or "none"
            close = self.suggestions(name, connectors_only=True) if isinstance(name, str) else []
            hint = f" Did you mean {' or '.join(close)}?" if close else ""
            raise ConfigException(
                f"Failed to find any class that implements Connector and which name matches "
                f"{name}, available connectors are: {available}. {exc}{hint}"
            ) from exc
        if not issubclass(cls, Connector):
            raise ConfigException(
                f"Class {name} is not a connector (a subclass of cdk.SourceConnector or "
                "cdk.SinkConnector)."
            )
        if inspect.isabstract(cls):
            raise ConfigException(f"Connector class {name} is abstract and cannot be created.")
        return cls

    def new_connector(self, name: str | type) -> Connector:
        """A new instance of the connector class ``name``.

        Raises:
            ConfigException: see :meth:`connector_class`.
            ConnectException: its constructor failed.
        """
        cls = self.connector_class(name)
        try:
            return cls()
        except Exception as exc:
            raise ConnectException(
                f"Failed to create connector {cls.__module__}.{cls.__qualname__}: "
                f"{type(exc).__name__}: {exc}"
            ) from exc

    def new_plugin(self, name: str | type) -> Any:
        """A new, unconfigured instance of any plugin class."""
        cls = self.load(name)
        try:
            return cls()
        except Exception as exc:
            raise ConnectException(
                f"Failed to create plugin {cls.__module__}.{cls.__qualname__}: "
                f"{type(exc).__name__}: {exc}"
            ) from exc

    def new_converter(
        self, class_name: str | type, configs: Mapping[str, Any], is_key: bool
    ) -> Converter:
        """A configured key (``is_key``) or value converter.

        Raises:
            ConfigException: unknown class, or not a Converter, or its configuration is invalid.
        """
        cls = self.load(class_name)
        if not issubclass(cls, Converter):
            raise ConfigException(f"Class {_shown_name(class_name)} is not a Converter.")
        converter: Converter = self.new_plugin(cls)
        converter.configure(dict(configs), is_key)
        return converter

    def new_header_converter(
        self, class_name: str | type, configs: Mapping[str, Any]
    ) -> HeaderConverter:
        """A configured header converter.

        Raises:
            ConfigException: unknown class, not a HeaderConverter, or invalid configuration.
        """
        cls = self.load(class_name)
        if not issubclass(cls, HeaderConverter):
            raise ConfigException(f"Class {_shown_name(class_name)} is not a HeaderConverter.")
        converter: HeaderConverter = self.new_plugin(cls)
        converter.configure(dict(configs))
        return converter

    def __repr__(self) -> str:
        state = "not scanned" if self._registry is None else f"{len(self._registry.descs)} plugins"
        return f"Plugins({state})"


def _similarity(name: str, known: str) -> float:
    """How close a misspelt ``name`` is to a ``known`` one (0 to 1), for "did you mean".

    Case is ignored, and the names are compared without the suffix of a plugin kind (so that
    ``JdbcSourceConnector`` is not close to ``SqliteSourceConnector``); compared whole, they
    count for less (so that ``JsonConvertor`` is still close to ``JsonConverter``).
    """
    a, b = name.lower(), known.lower()
    whole = difflib.SequenceMatcher(None, a, b).ratio()
    stem = difflib.SequenceMatcher(None, _stem(a), _stem(b)).ratio()
    return max(stem, whole - 0.15) + whole / 1000  # of equal stems, the closer whole name


def _stem(name: str) -> str:
    for suffix in _LOWER_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def _shown_name(name: str | type) -> str:
    return f"{name.__module__}.{name.__qualname__}" if isinstance(name, type) else name
