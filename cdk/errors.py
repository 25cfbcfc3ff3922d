"""The exception tree of connect-cdk.

Every exception the kit raises on purpose derives from one root, :class:`ConnectException`, as in
Kafka Connect. The branches say what the runtime should do about the problem::

    ConnectException                 fail the task / operation (the root)
    ├── RetriableException           transient: retry the same operation later
    ├── DataException                a record, schema or value is wrong
    │   ├── SchemaBuilderException   an invalid SchemaBuilder call
    │   └── SchemaProjectorException a value cannot be projected onto a target schema
    ├── ConfigException              a configuration is wrong (names the key and value)
    ├── NotFoundException            a named connector, task or plugin does not exist
    ├── AlreadyExistsException       a named object exists already
    ├── IllegalWorkerStateException  an operation that the worker's state does not allow
    └── MissingExtraError            an optional dependency is not installed (also an ImportError)

Exceptions carry the context they are about as attributes (a config key and value, a field name),
so callers can react without parsing messages.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AlreadyExistsException",
    "ConfigException",
    "ConnectException",
    "DataException",
    "IllegalWorkerStateException",
    "MissingExtraError",
    "NotFoundException",
    "RetriableException",
    "SchemaBuilderException",
    "SchemaProjectorException",
]


class ConnectException(Exception):
    """The root of every exception raised by connect-cdk and by connectors built on it."""


class RetriableException(ConnectException):
    """A transient failure: the framework retries the operation (e.g. redelivers a sink batch)."""


class DataException(ConnectException):
    """A record, schema or value is invalid.

    Attributes:
        field: the name of the field concerned, when one is known.
    """

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class SchemaBuilderException(DataException):
    """An invalid call on a :class:`~cdk.data.SchemaBuilder`."""


class SchemaProjectorException(DataException):
    """A value cannot be projected from its schema onto the target schema."""


class ConfigException(ConnectException):
    """A configuration is invalid.

    Raised either with one message, or as ``ConfigException(name, value, message)``, which formats
    Kafka's text ``Invalid value <value> for configuration <name>: <message>``.

    Attributes:
        name: the configuration key concerned, when one is known.
        value: the offending value (already masked for passwords), when one is known.
    """

    def __init__(self, name_or_message: str, value: Any = ..., message: str | None = None) -> None:
        if value is ...:
            text = name_or_message
            self.name: str | None = None
            self.value: Any = None
        else:
            self.name = name_or_message
            self.value = value
            text = f"Invalid value {_display(value)} for configuration {name_or_message}"
            if message is not None:
                text += f": {message}"
        super().__init__(text)
        self.message = text


class NotFoundException(ConnectException):
    """A named connector, task or plugin does not exist."""


class AlreadyExistsException(ConnectException):
    """An object with this name exists already."""


class IllegalWorkerStateException(ConnectException):
    """The operation is not allowed in the worker's or task's current state."""


class MissingExtraError(ConnectException, ImportError):
    """An optional dependency is missing; the message names the extra that provides it."""

    def __init__(self, feature: str, extra: str, module: str) -> None:
        text = (
            f"{feature} needs the optional dependency '{module}', which is not installed. "
            f"Install it with: pip install 'connect-cdk[{extra}]'"
        )
        super().__init__(text)
        self.extra = extra
        self.module = module


def _display(value: Any) -> str:
    """Render a value the way Kafka's messages show it (Java's toString conventions)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_display(v) for v in value) + "]"
    return str(value)
