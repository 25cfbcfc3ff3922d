"""The worker configuration (Kafka's ``WorkerConfig`` + ``StandaloneConfig``) and client settings.

A worker properties file for ``cdk standalone`` reads as Kafka's ``connect-standalone`` one::

    bootstrap.servers=localhost:9092
    key.converter=org.apache.kafka.connect.json.JsonConverter
    value.converter=org.apache.kafka.connect.json.JsonConverter
    offset.storage.file.filename=/tmp/connect.offsets
    offset.flush.interval.ms=10000
    producer.linger.ms=5
    consumer.max.poll.interval.ms=600000

``producer.``, ``consumer.`` and ``admin.`` prefixed keys configure the worker's clients (prefix
stripped, as Kafka does); a connector may override them with ``producer.override.`` (etc.) keys
when ``connector.client.config.override.policy`` allows it.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from typing import Any, ClassVar, Literal, NamedTuple
from urllib.parse import urlsplit

from cdk.config import AbstractConfig, ConfigDef, Importance, Password, Type
from cdk.config.validators import CaseInsensitiveValidString, LambdaValidator, Range
from cdk.converters import SimpleHeaderConverter
from cdk.errors import ConfigException
from cdk.runtime._key_notes import WORKER_KEY_NOTES, no_effect_message, unknown_key_message
from cdk.runtime._ssl_config import (
    CLIENT_SECURITY_PREFIXES,
    LISTENERS_HTTPS_PREFIX,
    add_security_configs,
    client_security_settings,
    rest_ssl_settings,
)

__all__ = [
    "CLIENT_OVERRIDE_PREFIXES",
    "OVERRIDE_POLICIES",
    "WORKER_CONFIG_DEF",
    "ClientKind",
    "Listener",
    "WorkerConfig",
    "check_client_override",
]

log = logging.getLogger("cdk.runtime.config")

ClientKind = Literal["producer", "consumer", "admin"]
CLIENT_OVERRIDE_PREFIXES: dict[str, str] = {
    "producer": "producer.override.",
    "consumer": "consumer.override.",
    "admin": "admin.override.",
}

BOOTSTRAP_SERVERS_CONFIG = "bootstrap.servers"
KEY_CONVERTER_CLASS_CONFIG = "key.converter"
VALUE_CONVERTER_CLASS_CONFIG = "value.converter"
HEADER_CONVERTER_CLASS_CONFIG = "header.converter"
TASK_SHUTDOWN_GRACEFUL_TIMEOUT_MS_CONFIG = "task.shutdown.graceful.timeout.ms"
OFFSET_COMMIT_INTERVAL_MS_CONFIG = "offset.flush.interval.ms"
OFFSET_COMMIT_TIMEOUT_MS_CONFIG = "offset.flush.timeout.ms"
OFFSET_STORAGE_FILE_FILENAME_CONFIG = "offset.storage.file.filename"
LISTENERS_CONFIG = "listeners"
REST_ADVERTISED_HOST_NAME_CONFIG = "rest.advertised.host.name"
REST_ADVERTISED_PORT_CONFIG = "rest.advertised.port"
REST_ADVERTISED_LISTENER_CONFIG = "rest.advertised.listener"
REST_BASIC_AUTH_USER_CONFIG = "rest.basic.auth.user"
REST_BASIC_AUTH_PASSWORD_CONFIG = "rest.basic.auth.password"
PLUGIN_PATH_CONFIG = "plugin.path"
ADMIN_LISTENERS_CONFIG = "admin.listeners"
ADMIN_LISTENERS_HTTPS_PREFIX = "admin.listeners.https."
ACCESS_CONTROL_ALLOW_ORIGIN_CONFIG = "access.control.allow.origin"
ACCESS_CONTROL_ALLOW_METHODS_CONFIG = "access.control.allow.methods"
RESPONSE_HTTP_HEADERS_CONFIG = "response.http.headers.config"
CONFIG_PROVIDERS_CONFIG = "config.providers"
CONNECTOR_CLIENT_POLICY_CLASS_CONFIG = "connector.client.config.override.policy"
TOPIC_CREATION_ENABLE_CONFIG = "topic.creation.enable"
TOPIC_TRACKING_ENABLE_CONFIG = "topic.tracking.enable"
TOPIC_TRACKING_ALLOW_RESET_CONFIG = "topic.tracking.allow.reset"
SINK_TASKS_LEAVE_MODE_CONFIG = "sink.tasks.leave.mode"
METRICS_SAMPLE_WINDOW_MS_CONFIG = "metrics.sample.window.ms"
METRICS_NUM_SAMPLES_CONFIG = "metrics.num.samples"

DEFAULT_LISTENER = "http://127.0.0.1:8083"

_CONVERTER_DOC = (
    "Converter class used to convert between Kafka Connect format and the serialized form that "
    "is written to Kafka. This controls the format of the {what} in messages written to or read "
    "from Kafka, and since this is independent of connectors it allows any connector to work with "
    "any serialization format. Examples of common formats include JSON and Avro."
)
HEADER_CONVERTER_CLASS_DOC = (
    "HeaderConverter class used to convert between Kafka Connect format and the serialized form "
    "that is written to Kafka. This controls the format of the header values in messages written "
    "to or read from Kafka, and since this is independent of connectors it allows any connector "
    "to work with any serialization format. Examples of common formats include JSON and Avro. By "
    "default, the SimpleHeaderConverter is used to serialize header values to strings and "
    "deserialize them by inferring the schemas."
)
KEY_CONVERTER_CLASS_DOC = _CONVERTER_DOC.format(what="keys")
VALUE_CONVERTER_CLASS_DOC = _CONVERTER_DOC.format(what="values")

# The policies Kafka ships, by alias and by class name.
_POLICY_CLASSES = {
    "org.apache.kafka.connect.connector.policy.NoneConnectorClientConfigOverridePolicy": "None",
    "org.apache.kafka.connect.connector.policy.PrincipalConnectorClientConfigOverridePolicy": (
        "Principal"
    ),
    "org.apache.kafka.connect.connector.policy.AllConnectorClientConfigOverridePolicy": "All",
}
OVERRIDE_POLICIES = ("None", "Principal", "All")
_PRINCIPAL_KEYS = frozenset({"sasl.jaas.config", "sasl.mechanism", "security.protocol"})


def _policy_name(value: str) -> str:
    text = value.strip()
    return _POLICY_CLASSES.get(text, text)


def _check_response_headers(name: str, value: Any) -> None:
    from cdk.runtime._http_headers import parse_header_rules

    parse_header_rules(name, "" if value is None else str(value))


def _check_policy(name: str, value: Any) -> None:
    if value is None or _policy_name(str(value)) not in OVERRIDE_POLICIES:
        raise ConfigException(
            name, value, "Must be one of None, Principal, All (or their Kafka class names)"
        )


class Listener(NamedTuple):
    """One REST listener: ``scheme`` (``http``/``https``), ``host`` and ``port`` (0: any free)."""

    scheme: str
    host: str
    port: int

    @property
    def url(self) -> str:
        """``scheme://host:port`` (IPv6 hosts in brackets)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"


def _parse_listener(text: str, key: str = LISTENERS_CONFIG) -> Listener:
    try:
        parts = urlsplit(text.strip())
        scheme, port = parts.scheme.lower(), parts.port
    except ValueError:
        scheme, port = "", None
    if scheme not in ("http", "https") or parts.path not in ("", "/"):
        raise ConfigException(
            key,
            text,
            "Expected URIs such as http://127.0.0.1:8083 or https://0.0.0.0:8443 (HTTP or HTTPS)",
        )
    return Listener(scheme, parts.hostname or "127.0.0.1", 8083 if port is None else port)


def _check_listeners(name: str, value: Any) -> None:
    if not value:
        raise ConfigException(name, value, "at least one URI, e.g. http://127.0.0.1:8083")
    seen: set[tuple[str, int]] = set()
    for listener in value:
        parsed = _parse_listener(str(listener))
        where = (parsed.host, parsed.port)
        if parsed.port and where in seen:
            raise ConfigException(name, value, f"two listeners on {parsed.host}:{parsed.port}")
        seen.add(where)


def _check_admin_listeners(name: str, value: Any) -> None:
    for listener in value or ():
        if str(listener).strip():
            _parse_listener(str(listener), name)


def _check_advertised_listener(name: str, value: Any) -> None:
    if value is not None and str(value).strip().lower() not in ("http", "https"):
        raise ConfigException(name, value, "String must be one of: http, https")


WORKER_CONFIG_DEF: ConfigDef = (
    ConfigDef()
    .define(
        BOOTSTRAP_SERVERS_CONFIG,
        Type.LIST,
        "localhost:9092",
        None,
        Importance.HIGH,
        "A list of host/port pairs used to establish the initial connection to the Kafka "
        "cluster. Clients use this list to bootstrap and discover the full set of Kafka brokers. "
        "While the order of servers in the list does not matter, we recommend including more "
        "than one server to ensure resilience if any servers are down. This list does not need "
        "to contain the entire set of brokers, as Kafka clients automatically manage and update "
        "connections to the cluster efficiently. This list must be in the form "
        "<code>host1:port1,host2:port2,...</code>.",
    )
    .define(
        KEY_CONVERTER_CLASS_CONFIG, Type.CLASS, None, None, Importance.HIGH, KEY_CONVERTER_CLASS_DOC
    )
    .define(
        VALUE_CONVERTER_CLASS_CONFIG,
        Type.CLASS,
        None,
        None,
        Importance.HIGH,
        VALUE_CONVERTER_CLASS_DOC,
    )
    .define(
        HEADER_CONVERTER_CLASS_CONFIG,
        Type.CLASS,
        SimpleHeaderConverter,
        None,
        Importance.LOW,
        HEADER_CONVERTER_CLASS_DOC,
    )
    .define(
        TASK_SHUTDOWN_GRACEFUL_TIMEOUT_MS_CONFIG,
        Type.LONG,
        5000,
        None,
        Importance.LOW,
        "Amount of time to wait for tasks to shutdown gracefully. This is the total amount of "
        "time, not per task. All task have shutdown triggered, then they are waited on "
        "sequentially.",
    )
    .define(
        OFFSET_COMMIT_INTERVAL_MS_CONFIG,
        Type.LONG,
        60000,
        None,
        Importance.LOW,
        "Interval at which to try committing offsets for tasks.",
    )
    .define(
        OFFSET_COMMIT_TIMEOUT_MS_CONFIG,
        Type.LONG,
        5000,
        None,
        Importance.LOW,
        "Maximum number of milliseconds to wait for records to flush and partition offset data "
        "to be committed to offset storage before cancelling the process and restoring the "
        "offset data to be committed in a future attempt. This property has no effect for source "
        "connectors running with exactly-once support.",
    )
    .define(
        OFFSET_STORAGE_FILE_FILENAME_CONFIG,
        Type.STRING,
        None,
        None,
        Importance.HIGH,
        "File to store offset data in. When unset, offsets are kept in memory only and are "
        "lost when the worker stops.",
    )
    .define(
        LISTENERS_CONFIG,
        Type.LIST,
        DEFAULT_LISTENER,
        LambdaValidator.of(_check_listeners, "HTTP or HTTPS URIs"),
        Importance.LOW,
        "List of comma-separated URIs the REST API will listen on. The supported protocols are "
        "HTTP and HTTPS.\n Specify hostname as 0.0.0.0 to bind to all interfaces.\n Port 0 picks "
        "a free port.\n Examples of legal listener lists: HTTP://myhost:8083,HTTPS://myhost:8084. "
        "HTTPS listeners take their key and certificate from the listeners.https.ssl.* keys, or "
        "the ssl.* keys when none is prefixed.",
    )
    .define(
        REST_ADVERTISED_HOST_NAME_CONFIG,
        Type.STRING,
        None,
        None,
        Importance.LOW,
        "If this is set, this is the hostname that will be given out to other workers to "
        "connect to.",
    )
    .define(
        REST_ADVERTISED_PORT_CONFIG,
        Type.INT,
        None,
        None,
        Importance.LOW,
        "If this is set, this is the port that will be given out to other workers to connect to.",
    )
    .define(
        REST_ADVERTISED_LISTENER_CONFIG,
        Type.STRING,
        None,
        LambdaValidator.of(_check_advertised_listener, "[http, https]"),
        Importance.LOW,
        "Sets the advertised listener (HTTP or HTTPS) which will be given to other workers to use.",
    )
    .define(
        REST_BASIC_AUTH_USER_CONFIG,
        Type.STRING,
        None,
        None,
        Importance.MEDIUM,
        "When set (with rest.basic.auth.password), every REST request must authenticate with "
        "HTTP basic authentication as this user.",
    )
    .define(
        REST_BASIC_AUTH_PASSWORD_CONFIG,
        Type.PASSWORD,
        None,
        None,
        Importance.MEDIUM,
        "The password of rest.basic.auth.user.",
    )
    .define(
        ADMIN_LISTENERS_CONFIG,
        Type.LIST,
        None,
        LambdaValidator.of(_check_admin_listeners, "List of comma-separated URIs, or empty"),
        Importance.LOW,
        "List of comma-separated URIs the Admin REST API will listen on. The supported protocols "
        "are HTTP and HTTPS. An empty or blank string will disable this feature. The default "
        "behavior is to use the regular listener (specified by the 'listeners' property).",
    )
    .define(
        ACCESS_CONTROL_ALLOW_ORIGIN_CONFIG,
        Type.STRING,
        "",
        None,
        Importance.LOW,
        "Value to set the Access-Control-Allow-Origin header to for REST API requests.To enable "
        "cross origin access, set this to the domain of the application that should be permitted "
        "to access the API, or '*' to allow access from any domain. The default value only "
        "allows access from the domain of the REST API.",
    )
    .define(
        ACCESS_CONTROL_ALLOW_METHODS_CONFIG,
        Type.STRING,
        "",
        None,
        Importance.LOW,
        "Sets the methods supported for cross origin requests by setting the "
        "Access-Control-Allow-Methods header. The default value of the "
        "Access-Control-Allow-Methods header allows cross origin requests for GET, POST and HEAD.",
    )
    .define(
        RESPONSE_HTTP_HEADERS_CONFIG,
        Type.STRING,
        "",
        LambdaValidator.of(
            lambda name, value: _check_response_headers(name, value),
            "Comma-separated header rules, where each header rule is of the form "
            "'[action] [header name]:[header value]' and optionally surrounded by double quotes "
            "if any part of a header rule contains a comma",
        ),
        Importance.LOW,
        "Rules for REST API HTTP response headers",
    )
    .define(
        PLUGIN_PATH_CONFIG,
        Type.LIST,
        None,
        None,
        Importance.LOW,
        "List of paths separated by commas (,) that contain plugins (connectors, converters, "
        "transformations). Each is a directory of connector distributions: wheels (*.whl, "
        "unpacked into a cache folder) or installed trees (folders with *.dist-info, as `pip "
        "install --target DIR` makes); their 'cdk.plugins' entry points are registered as "
        "those of installed distributions. All plugins share the worker's Python environment "
        "(no class-loader isolation); their declared requirements are checked at start.",
    )
    .define(
        CONFIG_PROVIDERS_CONFIG,
        Type.LIST,
        [],
        None,
        Importance.LOW,
        "Comma-separated names of <code>ConfigProvider</code> classes, loaded and used in the "
        "order specified. Implementing the interface  <code>ConfigProvider</code> allows you to "
        "replace variable references in connector configurations, such as for externalized "
        "secrets. ",
    )
    .define(
        CONNECTOR_CLIENT_POLICY_CLASS_CONFIG,
        Type.STRING,
        "All",
        LambdaValidator.of(_check_policy, "[None, Principal, All]"),
        Importance.MEDIUM,
        "Class name or alias of implementation of "
        "<code>ConnectorClientConfigOverridePolicy</code>. Defines what client configurations "
        "can be overridden by the connector. The default implementation is `All`, meaning "
        "connector configurations can override all client properties. The other possible "
        "policies in the framework include `None` to disallow connectors from overriding client "
        "properties, and `Principal` to allow connectors to override only client principals.",
    )
    .define(
        TOPIC_CREATION_ENABLE_CONFIG,
        Type.BOOLEAN,
        True,
        None,
        Importance.LOW,
        "Whether to allow automatic creation of topics used by source connectors, when source "
        "connectors are configured with `topic.creation.` properties. Each task will use an "
        "admin client to create its topics and will not depend on the Kafka brokers to create "
        "topics automatically.",
    )
    .define(
        TOPIC_TRACKING_ENABLE_CONFIG,
        Type.BOOLEAN,
        True,
        None,
        Importance.LOW,
        "Enable tracking the set of active topics per connector during runtime.",
    )
    .define(
        TOPIC_TRACKING_ALLOW_RESET_CONFIG,
        Type.BOOLEAN,
        True,
        None,
        Importance.LOW,
        "If set to true, it allows user requests to reset the set of active topics per connector.",
    )
    .define(
        SINK_TASKS_LEAVE_MODE_CONFIG,
        Type.STRING,
        "auto",
        CaseInsensitiveValidString.of("auto", "sequential", "concurrent"),
        Importance.LOW,
        "How the tasks of one sink connector leave their consumer group when several stop "
        "together (a lower tasks.max, a delete, a worker shutdown); not a Kafka Connect key. "
        "<code>concurrent</code>: all at once, as Kafka Connect does; a Kafka cluster's group "
        "coordinator handles a departing leader in any state. <code>sequential</code>: one at "
        "a time, each after the tasks that stay have finished the rebalance it caused (a "
        "rebalance per task); needed by brokers that keep a departed leader in a re-forming "
        "group, as the embedded Tansu does. <code>auto</code>: concurrent when the cluster's "
        "broker describes Kafka's group coordinator settings "
        "(<code>group.initial.rebalance.delay.ms</code>), else sequential (also when its "
        "configs cannot be read, e.g. without DESCRIBE_CONFIGS permission).",
    )
    .define(
        METRICS_SAMPLE_WINDOW_MS_CONFIG,
        Type.LONG,
        30000,
        Range.at_least(1),
        Importance.LOW,
        "The length in milliseconds of one sample of the worker's metrics: rates, averages and "
        "maxima are computed over the last metrics.num.samples samples.",
    )
    .define(
        METRICS_NUM_SAMPLES_CONFIG,
        Type.INT,
        2,
        Range.at_least(1),
        Importance.LOW,
        "How many samples the worker's rates, averages and maxima are computed over.",
    )
)
add_security_configs(WORKER_CONFIG_DEF)
"""The worker's configuration keys, with Kafka's defaults and documentation."""

_NON_NEGATIVE = Range.at_least(0)


def check_client_override(policy: str, kind: str, key: str) -> str | None:
    """The error text when ``policy`` forbids overriding client setting ``key``, else ``None``."""
    name = _policy_name(policy)
    if name == "All" or (name == "Principal" and key in _PRINCIPAL_KEYS):
        return None
    return (
        f"The '{name}' policy does not allow '{key}' to be overridden in the connector "
        "configuration."
    )


class WorkerConfig(AbstractConfig):
    """A parsed worker configuration.

    Args:
        props: the worker properties (strings, as read from a properties file).
        plugins: resolves converter aliases registered as plugins (optional).

    Raises:
        ConfigException: a value is invalid or a required key (``key.converter``,
            ``value.converter``) is missing; the message names the key.
    """

    #: The keys this kind of worker accepts (:class:`DistributedConfig` adds its own).
    CONFIG_DEF: ClassVar[ConfigDef] = WORKER_CONFIG_DEF
    #: The mode named in messages about keys that have no effect in it.
    MODE: ClassVar[str] = "standalone"
    #: Prefixes of keys handed on to clients or plugins, never reported as unknown.
    PASS_THROUGH_PREFIXES: ClassVar[tuple[str, ...]] = (
        "producer.",
        "consumer.",
        "admin.",
        "config.providers.",
        *CLIENT_SECURITY_PREFIXES,
    )

    def __init__(self, props: Mapping[str, Any], *, plugins: Any = None) -> None:
        props = dict(props)
        for key in (KEY_CONVERTER_CLASS_CONFIG, VALUE_CONVERTER_CLASS_CONFIG):
            if props.get(key) in (None, ""):
                raise ConfigException(
                    f'Missing required configuration "{key}" which has no default value.'
                )
        if plugins is not None:
            _resolve_classes(props, plugins)
        self._check_keys(props)
        super().__init__(type(self).CONFIG_DEF, props)
        for key in (
            TASK_SHUTDOWN_GRACEFUL_TIMEOUT_MS_CONFIG,
            OFFSET_COMMIT_INTERVAL_MS_CONFIG,
            OFFSET_COMMIT_TIMEOUT_MS_CONFIG,
        ):
            _NON_NEGATIVE.ensure_valid(key, self.get_long(key))

    @classmethod
    def known_keys(cls) -> set[str]:
        """Every key this worker knows by name (prefixed client keys aside)."""
        names = set(cls.CONFIG_DEF.names())
        names |= {k for k, note in WORKER_KEY_NOTES.items() if cls.MODE in note.modes}
        ssl_keys = {n for n in cls.CONFIG_DEF.names() if n.startswith("ssl.")}
        return names | {LISTENERS_HTTPS_PREFIX + k for k in ssl_keys}

    def _check_keys(self, props: Mapping[str, Any]) -> None:
        """Warn about (or refuse) keys without effect here, and warn about unknown keys.

        Raises:
            ConfigException: a key that cdk refuses (ignoring it would be unsafe) is set.
        """
        mode = type(self).MODE
        known = type(self).known_keys()
        for key in sorted(props):
            bare = (
                key[len(LISTENERS_HTTPS_PREFIX) :]
                if key.startswith(LISTENERS_HTTPS_PREFIX)
                else key
            )
            note = WORKER_KEY_NOTES.get(bare)
            if note is not None and mode in note.modes:
                message = no_effect_message(key, note, mode)
                if note.refused:
                    raise ConfigException(message)
                log.warning(message)
            elif key not in known and (
                key.startswith(LISTENERS_HTTPS_PREFIX)
                or not key.startswith(type(self).PASS_THROUGH_PREFIXES)
            ):
                log.warning(unknown_key_message(key, known))

    # ------------------------------------------------------------------ simple accessors
    @property
    def exactly_once_source_supported(self) -> bool:
        """Whether this kind of worker can run exactly-once sources (standalone: no, as Kafka)."""
        return False

    @property
    def exactly_once_source_enabled(self) -> bool:
        """Whether this worker runs source tasks exactly once (``exactly.once.source.support``)."""
        return False

    def source_transactional_id(self, connector: str, task: int) -> str | None:
        """A source task's ``transactional.id`` when it runs exactly once, else None."""
        return None

    @property
    def bootstrap_servers(self) -> str:
        """``bootstrap.servers`` as the comma-separated string clients expect."""
        return ",".join(self.get_list(BOOTSTRAP_SERVERS_CONFIG))

    @property
    def offset_flush_interval_ms(self) -> int:
        """``offset.flush.interval.ms``."""
        return self.get_long(OFFSET_COMMIT_INTERVAL_MS_CONFIG)

    @property
    def offset_flush_timeout_ms(self) -> int:
        """``offset.flush.timeout.ms``."""
        return self.get_long(OFFSET_COMMIT_TIMEOUT_MS_CONFIG)

    @property
    def task_shutdown_timeout_ms(self) -> int:
        """``task.shutdown.graceful.timeout.ms``."""
        return self.get_long(TASK_SHUTDOWN_GRACEFUL_TIMEOUT_MS_CONFIG)

    @property
    def offset_file(self) -> str | None:
        """``offset.storage.file.filename``, ``None`` for in-memory offsets."""
        value: str | None = self.get(OFFSET_STORAGE_FILE_FILENAME_CONFIG)
        return value or None

    @property
    def sink_tasks_leave_mode(self) -> str:
        """``sink.tasks.leave.mode``: ``auto``, ``sequential`` or ``concurrent`` (lower case)."""
        return str(self.get_string(SINK_TASKS_LEAVE_MODE_CONFIG)).lower()

    @property
    def metrics_window_ms(self) -> int:
        """``metrics.sample.window.ms``: the length of one metrics sample."""
        return self.get_long(METRICS_SAMPLE_WINDOW_MS_CONFIG)

    @property
    def metrics_num_samples(self) -> int:
        """``metrics.num.samples``: how many samples windowed metrics cover."""
        return self.get_int(METRICS_NUM_SAMPLES_CONFIG)

    @property
    def topic_tracking_enabled(self) -> bool:
        """``topic.tracking.enable``: whether tasks record the topics they use (KIP-558)."""
        return bool(self.get_boolean(TOPIC_TRACKING_ENABLE_CONFIG))

    @property
    def topic_tracking_reset_allowed(self) -> bool:
        """``topic.tracking.allow.reset``: whether the REST API may reset active topics."""
        return bool(self.get_boolean(TOPIC_TRACKING_ALLOW_RESET_CONFIG))

    @property
    def override_policy(self) -> str:
        """The client override policy's alias: ``None``, ``Principal`` or ``All``."""
        return _policy_name(self.get_string(CONNECTOR_CLIENT_POLICY_CLASS_CONFIG))

    def listeners(self) -> list[Listener]:
        """The REST listeners, in the order given (port 0: pick a free one)."""
        listeners = self.get_list(LISTENERS_CONFIG) or [DEFAULT_LISTENER]
        return [_parse_listener(str(listener)) for listener in listeners]

    def admin_listeners(self) -> list[Listener] | None:
        """``admin.listeners``: ``None`` when unset, else the listeners that alone serve it.

        Unset, the admin endpoints are served on ``listeners``; an empty list disables them.
        """
        value = self.get(ADMIN_LISTENERS_CONFIG)
        if value is None:
            return None
        return [_parse_listener(str(x), ADMIN_LISTENERS_CONFIG) for x in value if str(x).strip()]

    def admin_ssl_settings(self) -> tuple[dict[str, Any], str]:
        """The admin HTTPS listeners' TLS settings and their prefix.

        Kafka's rule: the ``admin.listeners.https.`` keys when any is given, else the REST
        listeners' ones.
        """
        originals = self.originals()
        if any(k.startswith(ADMIN_LISTENERS_HTTPS_PREFIX) for k in originals):
            return (
                rest_ssl_settings(originals, self.values(), ADMIN_LISTENERS_HTTPS_PREFIX),
                ADMIN_LISTENERS_HTTPS_PREFIX,
            )
        return self.rest_ssl_settings()

    def cors(self) -> tuple[str, str]:
        """``(access.control.allow.origin, access.control.allow.methods)``, stripped."""
        return (
            str(self.get(ACCESS_CONTROL_ALLOW_ORIGIN_CONFIG) or "").strip(),
            str(self.get(ACCESS_CONTROL_ALLOW_METHODS_CONFIG) or "").strip(),
        )

    def listener(self) -> tuple[str, str, int]:
        """The first REST listener as ``(scheme, host, port)`` (port 0: pick a free one)."""
        first = self.listeners()[0]
        return first.scheme, first.host, first.port

    def advertised_listener(self) -> str:
        """The scheme of the URL given to other drivers and clients (``http``/``https``).

        ``rest.advertised.listener`` when set; else, as Kafka, ``http`` when any listener is
        HTTP and ``https`` when all are HTTPS.

        Raises:
            ConfigException: ``rest.advertised.listener`` names a scheme no listener has.
        """
        schemes = {listener.scheme for listener in self.listeners()}
        chosen = self.get(REST_ADVERTISED_LISTENER_CONFIG)
        if chosen is None:
            return "http" if "http" in schemes else "https"
        scheme = str(chosen).strip().lower()
        if scheme not in schemes:
            raise ConfigException(
                REST_ADVERTISED_LISTENER_CONFIG,
                chosen,
                f"no {scheme} listener in listeners={','.join(x.url for x in self.listeners())}",
            )
        return scheme

    def advertised_host_port(self) -> tuple[str | None, int | None]:
        """``rest.advertised.host.name`` and ``rest.advertised.port`` (``None`` when unset)."""
        host = self.get(REST_ADVERTISED_HOST_NAME_CONFIG)
        port = self.get(REST_ADVERTISED_PORT_CONFIG)
        return (str(host) if host else None), (int(port) if port is not None else None)

    def rest_ssl_settings(self) -> tuple[dict[str, Any], str]:
        """The HTTPS listeners' TLS settings and the prefix they were read with.

        The ``listeners.https.``-prefixed keys alone when any is given, else the ``ssl.*`` keys
        (Kafka's rule); the prefix is ``listeners.https.`` or empty, for messages.
        """
        originals = self.originals()
        values = self.values()
        prefixed = any(k.startswith(LISTENERS_HTTPS_PREFIX) for k in originals)
        return rest_ssl_settings(originals, values), LISTENERS_HTTPS_PREFIX if prefixed else ""

    def basic_auth(self) -> tuple[str, str] | None:
        """``(user, password)`` when REST basic authentication is configured."""
        user = self.get(REST_BASIC_AUTH_USER_CONFIG)
        password = self.get(REST_BASIC_AUTH_PASSWORD_CONFIG)
        if not user:
            return None
        if not isinstance(password, Password):
            raise ConfigException(
                f"{REST_BASIC_AUTH_USER_CONFIG} is set but {REST_BASIC_AUTH_PASSWORD_CONFIG} "
                "is not."
            )
        return str(user), password.value()

    # ------------------------------------------------------------------ clients
    def _prefixed(self, prefix: str) -> dict[str, Any]:
        return {k: _client_value(v) for k, v in self.originals_with_prefix(prefix).items()}

    def producer_props(self) -> dict[str, Any]:
        """The worker's producer settings: delivery-safe defaults, then ``producer.*`` keys.

        Defaults (as Kafka's worker): ``acks=all`` and effectively unlimited delivery retries;
        idempotence keeps the order of retried batches.
        """
        return {
            "bootstrap.servers": self.bootstrap_servers,
            "acks": "all",
            "enable.idempotence": True,
            "delivery.timeout.ms": 2147483647,
            **self._prefixed("producer."),
        }

    def consumer_props(self, group_id: str) -> dict[str, Any]:
        """The worker's consumer settings for ``group_id``, then ``consumer.*`` keys.

        Defaults: manual commits, ``auto.offset.reset=earliest`` (as Kafka's worker), and a
        6 s session timeout with 500 ms heartbeats so that group joins complete quickly.
        """
        return {
            "bootstrap.servers": self.bootstrap_servers,
            "group.id": group_id,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 500,
            **self._prefixed("consumer."),
        }

    def client_security(self) -> dict[str, Any]:
        """The worker's unprefixed Kafka client security keys.

        ``security.protocol`` and the ``ssl.*``/``sasl.*`` keys it needs, as Kafka gives its
        admin clients and internal topics.
        """
        return {k: _client_value(v) for k, v in client_security_settings(self.originals()).items()}

    def admin_props(self) -> dict[str, Any]:
        """The worker's admin client settings.

        As Kafka: ``bootstrap.servers``, the worker's unprefixed client security settings
        (:meth:`client_security`), then the ``admin.*`` keys.
        """
        return {
            "bootstrap.servers": self.bootstrap_servers,
            **self.client_security(),
            **self._prefixed("admin."),
        }

    def client_overrides(
        self, connector_props: Mapping[str, Any], kind: ClientKind
    ) -> dict[str, Any]:
        """A connector's ``<kind>.override.*`` settings (prefix stripped), checked by the policy.

        Raises:
            ConfigException: the policy forbids one of them; names the key.
        """
        prefix = CLIENT_OVERRIDE_PREFIXES[kind]
        result: dict[str, Any] = {}
        for key, value in connector_props.items():
            if not key.startswith(prefix) or len(key) == len(prefix):
                continue
            bare = key[len(prefix) :]
            error = check_client_override(self.override_policy, kind, bare)
            if error is not None:
                raise ConfigException(key, _masked(bare, value), error)
            result[bare] = _client_value(value)
        return result


def _client_value(value: Any) -> Any:
    return value.value() if isinstance(value, Password) else value


def _masked(key: str, value: Any) -> Any:
    lowered = key.lower()
    if isinstance(value, Password) or any(s in lowered for s in ("password", "secret", "jaas")):
        return Password.HIDDEN
    return value


def _resolve_classes(props: dict[str, Any], plugins: Any) -> None:
    """Replace converter names that are plugin aliases by their classes."""
    for key in (
        KEY_CONVERTER_CLASS_CONFIG,
        VALUE_CONVERTER_CLASS_CONFIG,
        HEADER_CONVERTER_CLASS_CONFIG,
    ):
        value = props.get(key)
        if isinstance(value, str) and value.strip():
            with contextlib.suppress(ConfigException):  # parsing reports it, naming the key
                props[key] = plugins.load(value)
