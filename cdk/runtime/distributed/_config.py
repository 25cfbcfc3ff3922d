"""The distributed worker configuration (Kafka's ``DistributedConfig``) and its Spark keys.

A worker properties file for ``cdk distributed`` reads as Kafka's ``connect-distributed`` one,
plus the ``spark.*`` keys of the driver's SparkSession::

    bootstrap.servers=localhost:9092
    group.id=connect-cluster
    key.converter=org.apache.kafka.connect.json.JsonConverter
    value.converter=org.apache.kafka.connect.json.JsonConverter
    config.storage.topic=connect-configs
    offset.storage.topic=connect-offsets
    status.storage.topic=connect-status
    spark.master=spark://spark-master:7077
    spark.executor.cores=2

Kafka's group-membership keys (``session.timeout.ms``, ``heartbeat.interval.ms``,
``rebalance.timeout.ms``, ``scheduled.rebalance.max.delay.ms``, ``connect.protocol``, the
``inter.worker.*`` keys) are accepted so that existing files run unchanged, and have no effect:
the driver is the only herder and Spark places the tasks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from cdk.config import ConfigDef, Importance, Type
from cdk.config.validators import (
    CaseInsensitiveValidString,
    LambdaValidator,
    Range,
    ValidString,
)
from cdk.errors import ConfigException
from cdk.runtime._worker_config import WORKER_CONFIG_DEF, WorkerConfig

__all__ = ["DISTRIBUTED_CONFIG_DEF", "DistributedConfig"]

GROUP_ID_CONFIG = "group.id"
CONFIG_TOPIC_CONFIG = "config.storage.topic"
CONFIG_STORAGE_REPLICATION_FACTOR_CONFIG = "config.storage.replication.factor"
OFFSET_STORAGE_TOPIC_CONFIG = "offset.storage.topic"
OFFSET_STORAGE_PARTITIONS_CONFIG = "offset.storage.partitions"
OFFSET_STORAGE_REPLICATION_FACTOR_CONFIG = "offset.storage.replication.factor"
STATUS_STORAGE_TOPIC_CONFIG = "status.storage.topic"
STATUS_STORAGE_PARTITIONS_CONFIG = "status.storage.partitions"
STATUS_STORAGE_REPLICATION_FACTOR_CONFIG = "status.storage.replication.factor"
ASSIGNMENT_STORAGE_TOPIC_CONFIG = "assignment.storage.topic"
EXACTLY_ONCE_SOURCE_SUPPORT_CONFIG = "exactly.once.source.support"
SPARK_PREFIX = "spark."
SPARK_MASTER_CONFIG = "spark.master"
SPARK_APP_NAME_CONFIG = "spark.app.name"
DEFAULT_SPARK_MASTER = "local[*]"

_NO_EFFECT = " Accepted for compatibility with Kafka worker files; no effect in cdk (the leading "
_NO_EFFECT += "driver assigns the tasks to the workers itself)."


def _positive_or_default(name: str, value: Any) -> None:
    if value is None or (value != -1 and value < 1):
        raise ConfigException(
            name, value, "Value must be positive, or -1 to use the broker's default"
        )


_POSITIVE_OR_DEFAULT = LambdaValidator.of(
    _positive_or_default, "Positive number, or -1 to use the broker's default"
)

_TOPIC_DOC = "The name of the Kafka topic where {what} are stored"
_PARTITIONS_DOC = (
    "The number of partitions used when creating the {what} storage topic. Use -1 for the "
    "broker's default."
)
_RF_DOC = (
    "Replication factor used when creating the {what} storage topic. Use -1 for the broker's "
    "default (cdk caps it to the number of brokers of the cluster)."
)


def _define(config_def: ConfigDef) -> ConfigDef:
    return (
        config_def.define(
            GROUP_ID_CONFIG,
            Type.STRING,
            documentation="A unique string that identifies the Connect cluster group this worker "
            "belongs to (cdk: also the default Spark application name).",
            importance=Importance.HIGH,
        )
        .define(
            CONFIG_TOPIC_CONFIG,
            Type.STRING,
            documentation=_TOPIC_DOC.format(what="connector configurations"),
            importance=Importance.HIGH,
        )
        .define(
            CONFIG_STORAGE_REPLICATION_FACTOR_CONFIG,
            Type.SHORT,
            3,
            _POSITIVE_OR_DEFAULT,
            Importance.LOW,
            _RF_DOC.format(what="configuration"),
        )
        .define(
            OFFSET_STORAGE_TOPIC_CONFIG,
            Type.STRING,
            documentation=_TOPIC_DOC.format(what="source connector offsets"),
            importance=Importance.HIGH,
        )
        .define(
            OFFSET_STORAGE_PARTITIONS_CONFIG,
            Type.INT,
            25,
            _POSITIVE_OR_DEFAULT,
            Importance.LOW,
            _PARTITIONS_DOC.format(what="offset"),
        )
        .define(
            OFFSET_STORAGE_REPLICATION_FACTOR_CONFIG,
            Type.SHORT,
            3,
            _POSITIVE_OR_DEFAULT,
            Importance.LOW,
            _RF_DOC.format(what="offset"),
        )
        .define(
            STATUS_STORAGE_TOPIC_CONFIG,
            Type.STRING,
            documentation=_TOPIC_DOC.format(what="connector and task status"),
            importance=Importance.HIGH,
        )
        .define(
            STATUS_STORAGE_PARTITIONS_CONFIG,
            Type.INT,
            5,
            _POSITIVE_OR_DEFAULT,
            Importance.LOW,
            _PARTITIONS_DOC.format(what="status"),
        )
        .define(
            STATUS_STORAGE_REPLICATION_FACTOR_CONFIG,
            Type.SHORT,
            3,
            _POSITIVE_OR_DEFAULT,
            Importance.LOW,
            _RF_DOC.format(what="status"),
        )
        .define(
            EXACTLY_ONCE_SOURCE_SUPPORT_CONFIG,
            Type.STRING,
            "disabled",
            CaseInsensitiveValidString.of("disabled", "preparing", "enabled"),
            Importance.HIGH,
            "Whether to enable exactly-once support for source connectors in the cluster by "
            "using transactions to write source records and their source offsets, and by "
            "proactively fencing out old task generations before bringing up new ones. To "
            "enable exactly-once source support on a new cluster, set this property to "
            "'enabled'. To enable support on an existing cluster, first set to 'preparing' on "
            "every worker in the cluster, then set to 'enabled'. A rolling upgrade may be used "
            "for both changes.",
        )
        .define(
            ASSIGNMENT_STORAGE_TOPIC_CONFIG,
            Type.STRING,
            "",
            None,
            Importance.LOW,
            "cdk: the topic where the drivers keep the leader, the assignment of connector "
            "tasks to workers and the workers' heartbeats (compacted, one partition; Java workers "
            "never read it). Empty: '<config.storage.topic>-assignments'.",
        )
        .define(
            "session.timeout.ms",
            Type.INT,
            10000,
            Range.at_least(1000),
            Importance.HIGH,
            "The timeout used to detect a driver's or a worker's failure. A leader whose lease "
            "(renewed every heartbeat.interval.ms) is this old is replaced by another "
            "driver, and the tasks of a worker whose heartbeats stopped this long ago are "
            "assigned to the others.",
        )
        .define(
            "heartbeat.interval.ms",
            Type.INT,
            3000,
            Range.at_least(100),
            Importance.HIGH,
            "The expected time between heartbeats of the drivers to the group coordinator and of "
            "the workers to the leader. Must be lower than session.timeout.ms, typically no more "
            "than a third of it.",
        )
        .define(
            "rebalance.timeout.ms",
            Type.INT,
            60000,
            None,
            Importance.HIGH,
            "The maximum allowed time for each worker to join the group." + _NO_EFFECT,
        )
        .define(
            "worker.sync.timeout.ms",
            Type.INT,
            3000,
            None,
            Importance.MEDIUM,
            "How long a worker waits to catch up with the config topic." + _NO_EFFECT,
        )
        .define(
            "worker.unsync.backoff.ms",
            Type.INT,
            300000,
            None,
            Importance.MEDIUM,
            "How long a worker waits before rejoining when out of sync." + _NO_EFFECT,
        )
        .define(
            "scheduled.rebalance.max.delay.ms",
            Type.INT,
            300000,
            None,
            Importance.LOW,
            "How long a departed worker's tasks wait before being reassigned." + _NO_EFFECT,
        )
        .define(
            "connect.protocol",
            Type.STRING,
            "sessioned",
            ValidString.of("eager", "compatible", "sessioned"),
            Importance.LOW,
            "The Connect group protocol." + _NO_EFFECT,
        )
        .define(
            "inter.worker.key.generation.algorithm",
            Type.STRING,
            "HmacSHA256",
            None,
            Importance.LOW,
            "The algorithm of the internal request signing key." + _NO_EFFECT,
        )
        .define(
            "inter.worker.key.size",
            Type.INT,
            None,
            None,
            Importance.LOW,
            "The size of the internal request signing key." + _NO_EFFECT,
        )
        .define(
            "inter.worker.key.ttl.ms",
            Type.INT,
            3600000,
            None,
            Importance.LOW,
            "How often the internal request signing key rotates." + _NO_EFFECT,
        )
        .define(
            "inter.worker.signature.algorithm",
            Type.STRING,
            "HmacSHA256",
            None,
            Importance.LOW,
            "The algorithm that signs internal requests." + _NO_EFFECT,
        )
        .define(
            "inter.worker.verification.algorithms",
            Type.LIST,
            "HmacSHA256",
            None,
            Importance.LOW,
            "The algorithms accepted for internal request signatures." + _NO_EFFECT,
        )
    )


DISTRIBUTED_CONFIG_DEF: ConfigDef = _define(ConfigDef(WORKER_CONFIG_DEF))
"""The distributed worker's keys: the worker's, then Kafka's ``DistributedConfig`` ones."""

_REQUIRED = (
    GROUP_ID_CONFIG,
    CONFIG_TOPIC_CONFIG,
    OFFSET_STORAGE_TOPIC_CONFIG,
    STATUS_STORAGE_TOPIC_CONFIG,
)


class DistributedConfig(WorkerConfig):
    """A parsed distributed worker configuration (``cdk distributed worker.properties``).

    Args:
        props: the worker properties.
        plugins: resolves converter aliases registered as plugins (optional).

    Raises:
        ConfigException: a value is invalid, or a required key (``group.id``,
            ``config.storage.topic``, ``offset.storage.topic``, ``status.storage.topic``,
            the converters) is missing; the message names the key.
    """

    CONFIG_DEF: ClassVar[ConfigDef] = DISTRIBUTED_CONFIG_DEF
    MODE: ClassVar[str] = "distributed"
    PASS_THROUGH_PREFIXES: ClassVar[tuple[str, ...]] = (
        *WorkerConfig.PASS_THROUGH_PREFIXES,
        SPARK_PREFIX,
    )

    def __init__(self, props: Mapping[str, Any], *, plugins: Any = None) -> None:
        missing = [k for k in _REQUIRED if str(props.get(k) or "").strip() == ""]
        if missing:
            raise ConfigException(
                f'Missing required configuration "{missing[0]}" which has no default value. '
                "A distributed worker needs "
                + ", ".join(_REQUIRED)
                + " (see Kafka's connect-distributed.properties)."
            )
        super().__init__(props, plugins=plugins)
        topics = {k: self.get_string(k) for k in _REQUIRED[1:]}
        topics[ASSIGNMENT_STORAGE_TOPIC_CONFIG] = self.assignment_topic
        if len(set(topics.values())) < len(topics):
            raise ConfigException(
                "config.storage.topic, offset.storage.topic, status.storage.topic and "
                f"assignment.storage.topic must be four different topics, got {topics}"
            )
        if self.heartbeat_interval_ms >= self.session_timeout_ms:
            raise ConfigException(
                "heartbeat.interval.ms",
                self.heartbeat_interval_ms,
                f"Must be lower than session.timeout.ms ({self.session_timeout_ms})",
            )

    @property
    def exactly_once_source_supported(self) -> bool:
        """Distributed mode can run exactly-once sources."""
        return True

    @property
    def exactly_once_source_enabled(self) -> bool:
        """Whether ``exactly.once.source.support`` is ``enabled``."""
        return str(self.get_string(EXACTLY_ONCE_SOURCE_SUPPORT_CONFIG)).lower() == "enabled"

    def source_transactional_id(self, connector: str, task: int) -> str | None:
        """``<group.id>-<connector>-<task>`` when exactly-once is enabled (Kafka's id)."""
        if not self.exactly_once_source_enabled:
            return None
        return f"{self.group_id}-{connector}-{task}"

    @property
    def group_id(self) -> str:
        """``group.id``."""
        return str(self.get_string(GROUP_ID_CONFIG))

    @property
    def config_topic(self) -> str:
        """``config.storage.topic``."""
        return str(self.get_string(CONFIG_TOPIC_CONFIG))

    @property
    def offset_topic(self) -> str:
        """``offset.storage.topic``."""
        return str(self.get_string(OFFSET_STORAGE_TOPIC_CONFIG))

    @property
    def status_topic(self) -> str:
        """``status.storage.topic``."""
        return str(self.get_string(STATUS_STORAGE_TOPIC_CONFIG))

    @property
    def assignment_topic(self) -> str:
        """``assignment.storage.topic`` (``<config.storage.topic>-assignments`` when empty)."""
        return str(
            self.get_string(ASSIGNMENT_STORAGE_TOPIC_CONFIG) or f"{self.config_topic}-assignments"
        )

    @property
    def session_timeout_ms(self) -> int:
        """``session.timeout.ms``."""
        return int(self.get_int("session.timeout.ms"))

    @property
    def heartbeat_interval_ms(self) -> int:
        """``heartbeat.interval.ms``."""
        return int(self.get_int("heartbeat.interval.ms"))

    @property
    def transactional_id(self) -> str:
        """The leader's ``transactional.id``: ``connect-cluster-<group.id>``, as Kafka's."""
        return f"connect-cluster-{self.group_id}"

    def storage_settings(self, which: str) -> tuple[int, int]:
        """``(partitions, replication factor)`` of the ``config``/``offset``/``status`` topic."""
        partitions = 1 if which == "config" else self.get_int(f"{which}.storage.partitions")
        return partitions, self.get_int(f"{which}.storage.replication.factor")

    def storage_client_overrides(self) -> dict[str, Any]:
        """The stores' client settings: the worker's ``admin.*`` ones (security and the like)."""
        props = self.admin_props()
        props.pop("bootstrap.servers", None)
        return props

    def spark_conf(self) -> dict[str, str]:
        """The ``spark.*`` keys for the SparkSession.

        ``spark.master`` defaults to ``local[*]`` and ``spark.app.name`` to ``cdk-<group.id>``.
        """
        conf = {k: str(v) for k, v in self.originals().items() if k.startswith(SPARK_PREFIX)}
        conf.setdefault(SPARK_MASTER_CONFIG, DEFAULT_SPARK_MASTER)
        conf.setdefault(SPARK_APP_NAME_CONFIG, f"cdk-{self.group_id}")
        return conf

    @property
    def spark_master(self) -> str:
        """``spark.master`` (``local[*]`` by default)."""
        return self.spark_conf()[SPARK_MASTER_CONFIG]
