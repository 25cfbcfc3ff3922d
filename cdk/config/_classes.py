"""Loading plugin classes by name: Kafka aliases, ``module:Class`` or ``module.Class``."""

from __future__ import annotations

import importlib
from typing import Any

from cdk.errors import ConfigException

__all__ = ["load_class"]


def _resolve(module_name: str, qualname: str) -> Any:
    module = importlib.import_module(module_name)
    obj: Any = module
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _try_dotted(name: str) -> Any:
    """Resolve ``a.b.C.D`` by importing the longest module prefix that exists."""
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        module_name = ".".join(parts[:cut])
        try:
            return _resolve(module_name, ".".join(parts[cut:]))
        except ModuleNotFoundError as exc:
            # only "this prefix is not a module" moves on; a failing import inside it is real
            if exc.name is not None and not module_name.startswith(exc.name):
                raise
            continue
        except AttributeError:
            continue
    raise LookupError(name)


def load_class(name: str) -> type[Any]:
    """Load a class by name.

    Accepted spellings, tried in order: a Kafka class name or alias from
    :data:`cdk._aliases.KAFKA_CLASS_ALIASES`
    (``org.apache.kafka.connect.transforms.InsertField$Value``,
    ``JsonConverter``), ``package.module:Qual.Name`` and ``package.module.Qual.Name``. Java's ``$``
    for nested classes is read as ``.``.

    Args:
        name: the class name; surrounding whitespace is ignored.

    Returns:
        The class.

    Raises:
        ConfigException: ``Class <name> could not be found.`` when nothing of that name exists or
            it is not a class.
    """
    from cdk._aliases import KAFKA_CLASS_ALIASES

    text = name.strip()
    target = KAFKA_CLASS_ALIASES.get(text, text)
    try:
        if ":" in target:
            module_name, _, qualname = target.partition(":")
            obj = _resolve(module_name, qualname.replace("$", "."))
        else:
            obj = _try_dotted(target.replace("$", "."))
    except (ImportError, AttributeError, LookupError, ValueError, TypeError) as exc:
        raise ConfigException(f"Class {text} could not be found.") from exc
    if not isinstance(obj, type):
        raise ConfigException(f"Class {text} could not be found.")
    return obj
