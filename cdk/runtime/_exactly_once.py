"""Exactly-once source support (KIP-618): the connector keys, their validation, the task's limits.

Kafka 3.9's distributed herder adds two preflight checks to the validation of a source
connector's configuration (``PUT /connector-plugins/{type}/config/validate``, and through it
``POST /connectors`` and ``PUT /connectors/{name}/config``), ported here with its texts:

- ``exactly.once.support=required``: an error on that key when the worker does not have
  ``exactly.once.source.support=enabled``, and another unless the connector's
  ``exactly_once_support(config)`` answers :attr:`~cdk.api.ExactlyOnceSupport.SUPPORTED`;
- ``transaction.boundary=connector``: an error on that key unless the connector's
  ``can_define_transaction_boundaries(config)`` answers
  :attr:`~cdk.api.ConnectorTransactionBoundaries.SUPPORTED`.

Standalone mode has no exactly-once support (Kafka's has none either): there
``exactly.once.support=required`` is an error saying so. A connector-level
``offsets.storage.topic`` (a connector's own offsets topic) is refused in both modes: the kit
keeps every connector's offsets in the worker's offsets topic (or file), and a key it would
accept and ignore could lose offsets written by a Java worker to that topic.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from cdk.api import ConnectorTransactionBoundaries, ExactlyOnceSupport, SourceConnector
from cdk.errors import ConfigException

if TYPE_CHECKING:
    from cdk.config import ConfigValue

__all__ = [
    "EXACTLY_ONCE_SUPPORT_CONFIG",
    "TRANSACTION_BOUNDARY_CONFIG",
    "TRANSACTION_BOUNDARY_INTERVAL_CONFIG",
    "TransactionBoundary",
    "transaction_boundary",
    "validate_exactly_once",
]

log = logging.getLogger("cdk.runtime.exactly_once")

EXACTLY_ONCE_SUPPORT_CONFIG = "exactly.once.support"
TRANSACTION_BOUNDARY_CONFIG = "transaction.boundary"
TRANSACTION_BOUNDARY_INTERVAL_CONFIG = "transaction.boundary.interval.ms"

WORKER_NOT_ENABLED = "This worker does not have exactly-once source support enabled."
STANDALONE_NOT_SUPPORTED = (
    "cdk standalone does not support exactly-once source connectors (neither does Kafka "
    "Connect's standalone mode): run the connector on cdk distributed with "
    'exactly.once.source.support=enabled, or set this property to "requested".'
)
NO_PREFLIGHT = (
    "The connector does not implement the API required for preflight validation of "
    "exactly-once source support. Please consult the documentation for the connector to "
    "determine whether it supports exactly-once semantics, and then consider reconfiguring the "
    'connector to use the value "requested" for this property (which will disable this '
    "preflight check and allow the connector to be created)."
)
UNSUPPORTED = (
    "The connector does not support exactly-once semantics with the provided configuration."
)
BOUNDARIES_NULL = (
    "This connector has returned a null value from its can_define_transaction_boundaries "
    "method, which is not permitted. The connector will be treated as if it cannot define its "
    "own transaction boundaries, and cannot be configured with 'transaction.boundary' set to "
    "'connector'."
)
BOUNDARIES_UNSUPPORTED = (
    "The connector does not support connector-defined transaction boundaries with the given "
    "configuration. Please reconfigure it to use a different transaction boundary definition."
)


class TransactionBoundary:
    """The values of ``transaction.boundary`` (Kafka's ``SourceTask.TransactionBoundary``)."""

    POLL = "poll"
    INTERVAL = "interval"
    CONNECTOR = "connector"


def transaction_boundary(props: Mapping[str, Any]) -> str:
    """The connector's ``transaction.boundary`` (lower case; ``poll`` when unset).

    Raises:
        ConfigException: naming the key, for a value Kafka does not know.
    """
    raw = props.get(TRANSACTION_BOUNDARY_CONFIG)
    value = str(raw).strip().lower() if raw is not None else TransactionBoundary.POLL
    if value not in (
        TransactionBoundary.POLL,
        TransactionBoundary.INTERVAL,
        TransactionBoundary.CONNECTOR,
    ):
        raise ConfigException(
            TRANSACTION_BOUNDARY_CONFIG,
            raw,
            "String must be one of (case insensitive): POLL, INTERVAL, CONNECTOR",
        )
    return value


def _unexpected(exc: BaseException) -> str:
    message = str(exc).strip()
    if message:
        return f"An unexpected error occurred during validation: {message}"
    return (
        "An unexpected error occurred during validation; please see the worker logs for more "
        "details."
    )


def validate_exactly_once(
    connector: Any,
    props: Mapping[str, str],
    validated: Mapping[str, ConfigValue],
    *,
    worker_supports: bool,
    worker_enabled: bool,
) -> None:
    """Add Kafka 3.9's exactly-once preflight errors to a source connector's validation.

    Args:
        connector: the connector instance (only a :class:`~cdk.api.SourceConnector` is checked).
        props: the connector configuration (variables resolved).
        validated: the framework keys' validation results; errors are added to them.
        worker_supports: whether the kind of worker has exactly-once support at all
            (distributed mode does, standalone does not).
        worker_enabled: whether this worker runs with ``exactly.once.source.support=enabled``.
    """
    if not isinstance(connector, SourceConnector):
        return
    config = dict(props)
    support = validated.get(EXACTLY_ONCE_SUPPORT_CONFIG)
    if (
        support is not None
        and not support.error_messages
        and str(support.value).strip().lower() == "required"
    ):
        if not worker_supports:
            support.add_error_message(STANDALONE_NOT_SUPPORTED)
        else:
            if not worker_enabled:
                support.add_error_message(WORKER_NOT_ENABLED)
            try:
                answer = connector.exactly_once_support(config)
                if answer is None:
                    support.add_error_message(NO_PREFLIGHT)
                elif answer is ExactlyOnceSupport.UNSUPPORTED:
                    support.add_error_message(UNSUPPORTED)
                elif answer is not ExactlyOnceSupport.SUPPORTED:
                    raise ConfigException(
                        "Unexpected value returned from SourceConnector.exactly_once_support: "
                        f"{answer!r}"
                    )
            except Exception as exc:
                log.error(
                    "Failed while validating connector support for exactly-once semantics",
                    exc_info=exc,
                )
                support.add_error_message(_unexpected(exc))
    boundary = validated.get(TRANSACTION_BOUNDARY_CONFIG)
    if (
        boundary is not None
        and not boundary.error_messages
        and str(boundary.value).strip().lower() == TransactionBoundary.CONNECTOR
    ):
        try:
            can: Any = connector.can_define_transaction_boundaries(config)
            if can is None:
                boundary.add_error_message(BOUNDARIES_NULL)
            elif can is not ConnectorTransactionBoundaries.SUPPORTED:
                boundary.add_error_message(BOUNDARIES_UNSUPPORTED)
        except Exception as exc:
            log.error(
                "Failed while validating connector support for defining its own transaction "
                "boundaries",
                exc_info=exc,
            )
            boundary.add_error_message(_unexpected(exc))
