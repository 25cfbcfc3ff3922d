"""Build and run a connector's SMT chain from its properties, as Kafka's ``ConnectorConfig``.

The properties follow Kafka's layout::

    transforms=dropTombstones,route
    transforms.dropTombstones.type=Filter
    transforms.dropTombstones.predicate=isTombstone
    transforms.route.type=org.apache.kafka.connect.transforms.RegexRouter
    transforms.route.regex=(.*)
    transforms.route.replacement=copy-$1
    predicates=isTombstone
    predicates.isTombstone.type=RecordIsTombstone

Every other ``transforms.<alias>.`` key is handed (prefix stripped) to that SMT's ``configure``
and every ``predicates.<alias>.`` key to the predicate's; ``transforms.<alias>.negate=true``
applies the SMT to the records the predicate does *not* match.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Generic

from cdk.config import load_class
from cdk.errors import ConfigException
from cdk.transforms._base import Predicate, R, Transformation

__all__ = ["TransformationChain", "TransformationStage"]

TRANSFORMS_CONFIG = "transforms"
PREDICATES_CONFIG = "predicates"
TYPE_CONFIG = "type"
PREDICATE_CONFIG = "predicate"
NEGATE_CONFIG = "negate"


class TransformationStage(Generic[R]):
    """One SMT of a chain, with the predicate (if any) that decides when it runs.

    Attributes:
        alias: the alias from ``transforms``.
        transformation: the configured SMT.
        predicate: the configured predicate, or ``None`` to always run.
        negate: run when the predicate does *not* match.
    """

    def __init__(
        self,
        alias: str,
        transformation: Transformation[R],
        predicate: Predicate[R] | None = None,
        negate: bool = False,
    ) -> None:
        self.alias = alias
        self.transformation = transformation
        self.predicate = predicate
        self.negate = negate

    def apply(self, record: R) -> R | None:
        """Run the SMT if the predicate allows it; otherwise return the record unchanged."""
        if self.predicate is not None and self.predicate.test(record) == self.negate:
            return record
        return self.transformation.apply(record)

    def close(self) -> None:
        """Close the SMT and its predicate."""
        try:
            self.transformation.close()
        finally:
            if self.predicate is not None:
                self.predicate.close()

    def __repr__(self) -> str:
        return (
            f"TransformationStage{{alias={self.alias}, transformation={self.transformation!r}, "
            f"predicate={self.predicate!r}, negate={'true' if self.negate else 'false'}}}"
        )


class TransformationChain(Generic[R]):
    """An ordered list of :class:`TransformationStage`; a record that one drops stops the chain.

    Example::

        chain = TransformationChain.from_config(connector_props)
        record = chain.apply(record)  # None when an SMT dropped it
    """

    def __init__(self, stages: Iterable[TransformationStage[R]] = ()) -> None:
        self.stages: list[TransformationStage[R]] = list(stages)

    @classmethod
    def from_config(cls, props: Mapping[str, Any]) -> TransformationChain[Any]:
        """Build the chain a connector's properties describe.

        Args:
            props: the connector configuration (only ``transforms*`` and ``predicates*`` keys
                are read).

        Returns:
            The configured chain, empty when ``transforms`` is unset or empty.

        Raises:
            ConfigException: naming the offending key, for duplicate aliases, a missing or
                unknown ``type``, a class that is not a Transformation/Predicate, ``negate``
                without ``predicate``, a predicate alias not listed in ``predicates``, or an SMT
                or predicate setting that its own ConfigDef rejects.
        """
        predicate_aliases = _aliases(props, PREDICATES_CONFIG)
        predicate_classes = {
            alias: _plugin_class(props, f"{PREDICATES_CONFIG}.{alias}.", Predicate, "Predicate")
            for alias in predicate_aliases
        }
        stages: list[TransformationStage[Any]] = []
        for alias in _aliases(props, TRANSFORMS_CONFIG):
            prefix = f"{TRANSFORMS_CONFIG}.{alias}."
            xform_class = _plugin_class(props, prefix, Transformation, "Transformation")
            configs = _with_prefix(props, prefix)
            predicate_alias = configs.pop(PREDICATE_CONFIG, None)
            negate_value = configs.pop(NEGATE_CONFIG, None)
            if negate_value is not None and predicate_alias is None:
                raise ConfigException(
                    f"Config '{prefix}{NEGATE_CONFIG}' was provided but there is no config "
                    f"'{prefix}{PREDICATE_CONFIG}' defining a predicate to be negated."
                )
            negate = _boolean(prefix + NEGATE_CONFIG, negate_value)
            transformation = _instantiate(xform_class, prefix, "Transformation")
            _configure(transformation, configs, prefix)
            predicate = None
            if predicate_alias is not None:
                predicate_alias = str(predicate_alias).strip()
                if predicate_alias not in predicate_classes:
                    raise ConfigException(
                        prefix + PREDICATE_CONFIG,
                        predicate_alias,
                        f"Predicate alias '{predicate_alias}' is not listed in "
                        f"'{PREDICATES_CONFIG}'",
                    )
                predicate_prefix = f"{PREDICATES_CONFIG}.{predicate_alias}."
                predicate = _instantiate(
                    predicate_classes[predicate_alias], predicate_prefix, "Predicate"
                )
                _configure(predicate, _with_prefix(props, predicate_prefix), predicate_prefix)
            stages.append(TransformationStage(alias, transformation, predicate, negate))
        return TransformationChain(stages)

    def apply(self, record: R) -> R | None:
        """Run the record through every stage; ``None`` as soon as one drops it."""
        current: R | None = record
        for stage in self.stages:
            assert current is not None
            current = stage.apply(current)
            if current is None:
                return None
        return current

    def close(self) -> None:
        """Close every stage (each SMT and predicate)."""
        for stage in self.stages:
            stage.close()

    def __len__(self) -> int:
        return len(self.stages)

    def __iter__(self) -> Iterator[TransformationStage[R]]:
        return iter(self.stages)

    def __repr__(self) -> str:
        return f"TransformationChain{self.stages!r}"


# -- building blocks -----------------------------------------------------------------------------
def _aliases(props: Mapping[str, Any], key: str) -> list[str]:
    raw = props.get(key)
    if raw is None:
        return []
    if isinstance(raw, str):
        text = raw.strip()
        aliases = [] if not text else re.split(r"\s*,\s*", text)
    elif isinstance(raw, (list, tuple)):
        aliases = [str(a).strip() for a in raw]
    else:
        raise ConfigException(key, raw, "Expected a comma-separated list")
    if len(set(aliases)) < len(aliases):
        raise ConfigException(key, aliases, "Duplicate alias provided.")
    return aliases


def _with_prefix(props: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    return {k[len(prefix) :]: v for k, v in props.items() if k.startswith(prefix)}


def _plugin_class(props: Mapping[str, Any], prefix: str, base: type[Any], kind: str) -> type[Any]:
    key = prefix + TYPE_CONFIG
    raw = props.get(key)
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        raise ConfigException(f'Missing required configuration "{key}" which has no default value.')
    if isinstance(raw, type):
        cls, name = raw, f"{raw.__module__}:{raw.__qualname__}"
    else:
        name = str(raw).strip()
        try:
            cls = load_class(name)
        except ConfigException as exc:
            raise ConfigException(key, name, str(exc)) from exc
    if not issubclass(cls, base):
        raise ConfigException(key, name, f"Not a {kind}")
    if inspect.isabstract(cls):
        variants = [
            f"{name}.{attr}"
            for attr, member in vars(cls).items()
            if isinstance(member, type)
            and issubclass(member, cls)
            and not inspect.isabstract(member)
            and not attr.startswith("_")
        ]
        message = f"{kind} is abstract and cannot be created."
        if variants:
            message += f" Did you mean {', '.join(variants)}?"
        raise ConfigException(key, name, message)
    return cls


def _instantiate(cls: type[Any], prefix: str, kind: str) -> Any:
    try:
        return cls()
    except Exception as exc:
        raise ConfigException(
            prefix + TYPE_CONFIG,
            f"{cls.__module__}:{cls.__qualname__}",
            f"Error getting config definition from {kind}: {exc}",
        ) from exc


def _boolean(key: str, value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "false"):
        return text == "true"
    raise ConfigException(key, value, "Expected value to be either true or false")


_KEY_MENTIONS = (
    re.compile(r"(for configuration )(\S+?)(:|$)"),
    re.compile(r'(configuration ")([^"]+)(")'),
)


def _configure(plugin: Any, configs: Mapping[str, Any], prefix: str) -> None:
    """Configure a plugin; its ConfigExceptions are re-raised naming the full connector key."""
    try:
        plugin.configure(configs)
    except ConfigException as exc:
        text, found = str(exc), 0
        for mention in _KEY_MENTIONS:
            text, count = mention.subn(
                lambda m: m.group(1) + prefix + m.group(2) + m.group(3), text, 1
            )
            found += count
        if not found:
            text = f"{prefix.rstrip('.')}: {text}"
        prefixed = ConfigException(text)
        prefixed.name = None if exc.name is None else prefix + exc.name
        prefixed.value = exc.value
        raise prefixed from exc
