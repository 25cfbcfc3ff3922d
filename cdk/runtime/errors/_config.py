"""A connector's ``errors.*`` settings: their definitions, once, and the parsed form.

The keys are defined here with Kafka's documentation and groups; the connector ConfigDefs
(:mod:`cdk.runtime._connector_config_def`) embed them and :class:`ErrorHandlingConfig` parses
them for the task runners.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cdk.config import ConfigDef, Importance, Type, Width
from cdk.config.validators import ValidString

__all__ = [
    "DLQ_CONTEXT_HEADERS_ENABLE_CONFIG",
    "DLQ_TOPIC_NAME_CONFIG",
    "DLQ_TOPIC_REPLICATION_FACTOR_CONFIG",
    "ERROR_GROUP",
    "ErrorHandlingConfig",
    "LOG_ENABLE_CONFIG",
    "LOG_INCLUDE_MESSAGES_CONFIG",
    "RETRY_DELAY_MAX_CONFIG",
    "RETRY_TIMEOUT_CONFIG",
    "TOLERANCE_CONFIG",
    "define_dlq_keys",
    "define_error_keys",
]

ERROR_GROUP = "Error Handling"

RETRY_TIMEOUT_CONFIG = "errors.retry.timeout"
RETRY_DELAY_MAX_CONFIG = "errors.retry.delay.max.ms"
TOLERANCE_CONFIG = "errors.tolerance"
LOG_ENABLE_CONFIG = "errors.log.enable"
LOG_INCLUDE_MESSAGES_CONFIG = "errors.log.include.messages"
DLQ_TOPIC_NAME_CONFIG = "errors.deadletterqueue.topic.name"
DLQ_TOPIC_REPLICATION_FACTOR_CONFIG = "errors.deadletterqueue.topic.replication.factor"
DLQ_CONTEXT_HEADERS_ENABLE_CONFIG = "errors.deadletterqueue.context.headers.enable"


def define_error_keys(definition: ConfigDef) -> ConfigDef:
    """Define the ``errors.*`` keys every connector has in ``definition``; return it.

    Kafka's ``ConnectorConfig`` keys: retry timeout and maximum delay, tolerance, error log.
    """
    return (
        definition.define(
            RETRY_TIMEOUT_CONFIG,
            Type.LONG,
            0,
            None,
            Importance.MEDIUM,
            "The maximum duration in milliseconds that a failed operation will be reattempted. "
            "The default is 0, which means no retries will be attempted. Use -1 for infinite "
            "retries.",
            group=ERROR_GROUP,
            order_in_group=1,
            width=Width.MEDIUM,
            display_name="Retry Timeout for Errors",
        )
        .define(
            RETRY_DELAY_MAX_CONFIG,
            Type.LONG,
            60000,
            None,
            Importance.MEDIUM,
            "The maximum duration in milliseconds between consecutive retry attempts. Jitter will "
            "be added to the delay once this limit is reached to prevent thundering herd issues.",
            group=ERROR_GROUP,
            order_in_group=2,
            width=Width.MEDIUM,
            display_name="Maximum Delay Between Retries for Errors",
        )
        .define(
            TOLERANCE_CONFIG,
            Type.STRING,
            "none",
            ValidString.of("none", "all"),
            Importance.MEDIUM,
            "Behavior for tolerating errors during connector operation. 'none' is the default "
            "value and signals that any error will result in an immediate connector task "
            "failure; 'all' changes the behavior to skip over problematic records.",
            group=ERROR_GROUP,
            order_in_group=3,
            width=Width.SHORT,
            display_name="Error Tolerance",
        )
        .define(
            LOG_ENABLE_CONFIG,
            Type.BOOLEAN,
            False,
            None,
            Importance.MEDIUM,
            "If true, write each error and the details of the failed operation and problematic "
            "record to the Connect application log. This is 'false' by default, so that only "
            "errors that are not tolerated are reported.",
            group=ERROR_GROUP,
            order_in_group=4,
            width=Width.SHORT,
            display_name="Log Errors",
        )
        .define(
            LOG_INCLUDE_MESSAGES_CONFIG,
            Type.BOOLEAN,
            False,
            None,
            Importance.MEDIUM,
            "Whether to include in the log the Connect record that resulted in a failure. For "
            "sink records, the topic, partition, offset, and timestamp will be logged. For source "
            "records, the key and value (and their schemas), all headers, and the timestamp, "
            "Kafka topic, Kafka partition, source partition, and source offset will be logged. "
            "This is 'false' by default, which will prevent record keys, values, and headers "
            "from being written to log files.",
            group=ERROR_GROUP,
            order_in_group=5,
            width=Width.SHORT,
            display_name="Log Error Details",
        )
    )


def define_dlq_keys(definition: ConfigDef) -> ConfigDef:
    """Define the dead letter queue keys of sink connectors in ``definition``; return it."""
    return (
        definition.define(
            DLQ_TOPIC_NAME_CONFIG,
            Type.STRING,
            "",
            None,
            Importance.MEDIUM,
            "The name of the topic to be used as the dead letter queue (DLQ) for messages that "
            "result in an error when processed by this sink connector, or its transformations or "
            "converters. The topic name is blank by default, which means that no messages are to "
            "be recorded in the DLQ.",
            group=ERROR_GROUP,
            order_in_group=6,
            width=Width.MEDIUM,
            display_name="Dead Letter Queue Topic Name",
        )
        .define(
            DLQ_TOPIC_REPLICATION_FACTOR_CONFIG,
            Type.SHORT,
            3,
            None,
            Importance.MEDIUM,
            "Replication factor used to create the dead letter queue topic when it doesn't "
            "already exist.",
            group=ERROR_GROUP,
            order_in_group=7,
            width=Width.MEDIUM,
            display_name="Dead Letter Queue Topic Replication Factor",
        )
        .define(
            DLQ_CONTEXT_HEADERS_ENABLE_CONFIG,
            Type.BOOLEAN,
            False,
            None,
            Importance.MEDIUM,
            "If true, add headers containing error context to the messages written to the dead "
            "letter queue. To avoid clashing with headers from the original record, all error "
            "context header keys, all error context header keys will start with "
            "<code>__connect.errors.</code>",
            group=ERROR_GROUP,
            order_in_group=8,
            width=Width.MEDIUM,
            display_name="Enable Error Context Headers",
        )
    )


@functools.lru_cache(maxsize=1)
def _config_def() -> ConfigDef:
    return define_dlq_keys(define_error_keys(ConfigDef()))


@dataclass(frozen=True)
class ErrorHandlingConfig:
    """A connector's ``errors.*`` settings, with Kafka's defaults.

    Attributes:
        tolerance_all: ``errors.tolerance=all`` (default ``none``).
        retry_timeout_ms: ``errors.retry.timeout`` (default 0: no retries; -1: forever).
        retry_delay_max_ms: ``errors.retry.delay.max.ms`` (default 60000).
        log_enable: ``errors.log.enable`` (default false).
        log_include_messages: ``errors.log.include.messages`` (default false).
        dlq_topic: ``errors.deadletterqueue.topic.name`` (default empty: no DLQ; sinks only).
        dlq_replication_factor: ``errors.deadletterqueue.topic.replication.factor`` (default 3).
        dlq_context_headers: ``errors.deadletterqueue.context.headers.enable`` (default false).
    """

    tolerance_all: bool = False
    retry_timeout_ms: int = 0
    retry_delay_max_ms: int = 60000
    log_enable: bool = False
    log_include_messages: bool = False
    dlq_topic: str = ""
    dlq_replication_factor: int = 3
    dlq_context_headers: bool = False

    @classmethod
    def from_props(cls, props: Mapping[str, Any]) -> ErrorHandlingConfig:
        """Parse the ``errors.*`` keys of a connector configuration (other keys are ignored).

        Raises:
            ConfigException: a value is invalid (Kafka's message, naming the key).
        """
        parsed = _config_def().parse({k: v for k, v in props.items() if k.startswith("errors.")})
        return cls(
            tolerance_all=parsed[TOLERANCE_CONFIG] == "all",
            retry_timeout_ms=int(parsed[RETRY_TIMEOUT_CONFIG]),
            retry_delay_max_ms=int(parsed[RETRY_DELAY_MAX_CONFIG]),
            log_enable=bool(parsed[LOG_ENABLE_CONFIG]),
            log_include_messages=bool(parsed[LOG_INCLUDE_MESSAGES_CONFIG]),
            dlq_topic=str(parsed[DLQ_TOPIC_NAME_CONFIG]).strip(),
            dlq_replication_factor=int(parsed[DLQ_TOPIC_REPLICATION_FACTOR_CONFIG]),
            dlq_context_headers=bool(parsed[DLQ_CONTEXT_HEADERS_ENABLE_CONFIG]),
        )

    @property
    def enable_errant_record_reporter(self) -> bool:
        """Whether sink tasks get an errant record reporter (a DLQ topic or the error log)."""
        return bool(self.dlq_topic) or self.log_enable
