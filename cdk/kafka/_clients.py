"""Factories for confluent-kafka producers, consumers and admin clients, and topic administration.

Every client made here logs through Python :mod:`logging` (librdkafka's own log lines go to the
``cdk.kafka.librdkafka`` logger instead of standard error), unwraps
:class:`~cdk.config.Password` values, and turns a bad configuration into a
:class:`~cdk.errors.ConfigException` naming the property. Administrative helpers raise
:class:`BrokerUnreachableException` naming the bootstrap servers when no broker answers, instead
of leaving the caller with librdkafka's transport errors.

Kafka Connect configurations carry Java client settings (``producer.max.request.size``,
``consumer.fetch.max.wait.ms``, ``sasl.jaas.config`` ...). :func:`translate_client_config`
maps the common ones to their librdkafka equivalents and drops (with one WARNING naming them)
the Java-only ones librdkafka has no equivalent for, as Kafka's clients warn about settings they
do not use; every factory applies it. :func:`check_client_config` tells which settings librdkafka
would still reject, for validating connector configurations.
"""

from __future__ import annotations

import logging
import re
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias, TypeVar

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient
from confluent_kafka.cimpl import NewTopic

from cdk._keystores import file_kind, jks_message, read_trust_pem
from cdk.config import Password
from cdk.errors import ConfigException, ConnectException

__all__ = [
    "BrokerUnreachableException",
    "NewTopicSpec",
    "admin_config",
    "check_client_config",
    "check_connection",
    "consumer_config",
    "create_topics",
    "delete_topics",
    "list_topics",
    "new_admin",
    "new_consumer",
    "new_producer",
    "producer_config",
    "translate_client_config",
]

_log = logging.getLogger("cdk.kafka")
#: librdkafka's own log lines (connection failures, protocol warnings) land on this logger.
#: Unless the application configures a handler for it, they are dropped (not printed to stderr).
LIBRDKAFKA_LOGGER = logging.getLogger("cdk.kafka.librdkafka")
LIBRDKAFKA_LOGGER.addHandler(logging.NullHandler())

_T = TypeVar("_T", Producer, Consumer, AdminClient)
# The bootstrap servers of the admin clients made here, for error messages.
_ADMIN_BOOTSTRAP: weakref.WeakKeyDictionary[AdminClient, str] = weakref.WeakKeyDictionary()


class BrokerUnreachableException(ConnectException):
    """No Kafka broker answered at the given bootstrap servers within the timeout.

    Attributes:
        bootstrap_servers: the addresses that were tried.
        detail: what went wrong (the message without the bootstrap servers).
    """

    def __init__(self, bootstrap_servers: str, detail: str) -> None:
        text = f"Kafka broker unreachable at bootstrap servers '{bootstrap_servers}': {detail}"
        super().__init__(text)
        self.bootstrap_servers = bootstrap_servers
        self.detail = detail


@dataclass(frozen=True)
class NewTopicSpec:
    """A topic to create; unset fields take the defaults given to :func:`create_topics`.

    Attributes:
        name: the topic name.
        partitions: the number of partitions.
        replication_factor: the replication factor.
        config: topic-level configs (``cleanup.policy`` ...).
    """

    name: str
    partitions: int | None = None
    replication_factor: int | None = None
    config: Mapping[str, str] = field(default_factory=dict)


#: What :func:`create_topics` accepts for one topic.
TopicLike: TypeAlias = "str | NewTopicSpec | NewTopic"
#: An admin client, or bootstrap servers (or a whole admin config, with security settings) to
#: make a short-lived one for.
AdminLike: TypeAlias = "AdminClient | str | Mapping[str, Any]"


def producer_config(
    bootstrap_servers: str, overrides: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Return a producer config for ``bootstrap_servers`` with the kit's defaults.

    Defaults: ``acks=all`` and the idempotent producer (no duplicates on internal retries), as
    durable as Kafka Connect's own producers. ``overrides`` win over the defaults; overriding
    ``acks`` to anything but ``all``/``-1`` also drops the idempotence default, which needs it.
    """
    config: dict[str, Any] = {
        "bootstrap.servers": bootstrap_servers,
        "acks": "all",
        "enable.idempotence": True,
    }
    overrides = overrides or {}
    if "acks" in overrides and str(overrides["acks"]) not in ("all", "-1"):
        del config["enable.idempotence"]
    config.update(overrides)
    return config


def consumer_config(
    bootstrap_servers: str,
    group_id: str | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Return a consumer config for ``bootstrap_servers`` with Kafka Connect's sink defaults.

    Defaults: ``auto.offset.reset=earliest`` and ``enable.auto.commit=false`` (offsets are
    committed explicitly). A consumer that never joins a group gets a placeholder ``group.id``
    because librdkafka requires one. ``overrides`` win over the defaults.
    """
    config: dict[str, Any] = {
        "bootstrap.servers": bootstrap_servers,
        "group.id": group_id if group_id is not None else "cdk-unassigned",
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
    }
    config.update(overrides or {})
    return config


def admin_config(
    bootstrap_servers: str, overrides: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Return an admin client config for ``bootstrap_servers`` (``overrides`` win)."""
    config: dict[str, Any] = {"bootstrap.servers": bootstrap_servers}
    config.update(overrides or {})
    return config


def new_producer(config: Mapping[str, Any]) -> Producer:
    """Create a confluent-kafka ``Producer`` from a librdkafka config.

    Raises:
        ConfigException: a property is unknown or has an invalid value (named in the message).
    """
    return _new_client(Producer, "producer", config)


def new_consumer(config: Mapping[str, Any]) -> Consumer:
    """Create a confluent-kafka ``Consumer`` from a librdkafka config (``group.id`` required).

    Raises:
        ConfigException: a property is unknown, has an invalid value, or ``group.id`` is missing.
    """
    if not config.get("group.id"):
        raise ConfigException("group.id", config.get("group.id"), "a consumer needs a group.id")
    return _new_client(Consumer, "consumer", config)


def new_admin(config: Mapping[str, Any]) -> AdminClient:
    """Create a confluent-kafka ``AdminClient`` from a librdkafka config.

    Raises:
        ConfigException: a property is unknown or has an invalid value (named in the message).
    """
    admin = _new_client(AdminClient, "admin", config)
    _ADMIN_BOOTSTRAP[admin] = str(config["bootstrap.servers"])
    return admin


def _new_client(cls: Callable[[dict[str, Any]], _T], kind: str, config: Mapping[str, Any]) -> _T:
    if not isinstance(config, Mapping):
        kind_of = type(config).__name__
        raise ConfigException(f"a Kafka {kind} config must be a mapping, not {kind_of}")
    bootstrap = config.get("bootstrap.servers")
    if not bootstrap:
        raise ConfigException("bootstrap.servers", bootstrap, f"a Kafka {kind} needs brokers")
    for key in config:
        if not isinstance(key, str):
            raise ConfigException(f"Kafka {kind} config keys must be strings, got {key!r}")
    translated = translate_client_config(config, kind=kind)
    if translated.dropped:
        _log.warning(
            "These Kafka %s configurations have no librdkafka equivalent and are ignored: %s",
            kind,
            ", ".join(translated.dropped),
        )
    final = dict(translated.config)
    final.setdefault("logger", _LibrdkafkaLog(str(bootstrap)))
    final.setdefault("error_cb", _error_logger(str(bootstrap), kind))
    try:
        return cls(final)
    except KafkaException as exc:
        raise _config_error(kind, exc, translated) from exc
    except (TypeError, ValueError) as exc:
        raise ConfigException(f"Invalid Kafka {kind} config: {exc}") from exc


# -- Java client settings -> librdkafka ------------------------------------------------------------
#: Java client settings librdkafka spells differently (same meaning and unit).
_RENAMED: dict[str, str] = {
    "max.request.size": "message.max.bytes",
    "fetch.max.wait.ms": "fetch.wait.max.ms",
    "receive.buffer.bytes": "socket.receive.buffer.bytes",
    "send.buffer.bytes": "socket.send.buffer.bytes",
    "compression.gzip.level": "compression.level",
    "compression.lz4.level": "compression.level",
    "compression.zstd.level": "compression.level",
    "ssl.keystore.certificate.chain": "ssl.certificate.pem",
    "ssl.keystore.key": "ssl.key.pem",
    "ssl.truststore.certificates": "ssl.ca.pem",
}
#: Java client settings without a librdkafka equivalent: dropped with a warning.
_JAVA_ONLY: frozenset[str] = frozenset(
    {
        "max.block.ms",
        "partitioner.class",
        "partitioner.ignore.keys",
        "partitioner.adaptive.partitioning.enable",
        "partitioner.availability.timeout.ms",
        "key.serializer",
        "value.serializer",
        "key.deserializer",
        "value.deserializer",
        "interceptor.classes",
        "metadata.max.idle.ms",
        "metric.reporters",
        "metrics.num.samples",
        "metrics.sample.window.ms",
        "metrics.recording.level",
        "auto.include.jmx.reporter",
        "socket.connection.setup.timeout.max.ms",
        "default.api.timeout.ms",
        "exclude.internal.topics",
        "internal.leave.group.on.close",
        "security.providers",
        "ssl.enabled.protocols",
        "ssl.protocol",
        "ssl.keymanager.algorithm",
        "ssl.trustmanager.algorithm",
        "ssl.secure.random.implementation",
        "ssl.engine.factory.class",
        "ssl.provider",
        "sasl.jaas.config",
        "sasl.client.callback.handler.class",
        "sasl.kerberos.ticket.renew.jitter",
        "sasl.kerberos.ticket.renew.window.factor",
        "sasl.oauthbearer.scope.claim.name",
        "sasl.oauthbearer.sub.claim.name",
        "sasl.oauthbearer.jwks.endpoint.url",
        "sasl.oauthbearer.jwks.endpoint.refresh.ms",
        "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms",
        "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms",
        "sasl.oauthbearer.clock.skew.seconds",
        "sasl.oauthbearer.expected.audience",
        "sasl.oauthbearer.expected.issuer",
        "sasl.oauthbearer.header.urlencode",
    }
)
#: Prefixes of Java-only settings (the JAAS login machinery).
_JAVA_ONLY_PREFIXES = ("sasl.login.",)
_ASSIGNORS = {
    "org.apache.kafka.clients.consumer.RangeAssignor": "range",
    "org.apache.kafka.clients.consumer.RoundRobinAssignor": "roundrobin",
}
#: Java settings that only describe a store: read with it, never given to librdkafka.
_STORE_SETTINGS = frozenset({"ssl.truststore.type", "ssl.truststore.password", "ssl.keystore.type"})
_TRUSTSTORE_KEYS = ("ssl.truststore.location", "ssl.truststore.type", "ssl.truststore.password")


def _check_pkcs12_keystore(path: str, declared: str) -> None:
    """Refuse a key store librdkafka cannot read (JKS), naming the conversion."""
    kind = file_kind(path)
    if kind == "JKS":
        raise ConfigException(
            "ssl.keystore.location",
            path,
            jks_message("ssl.keystore.location", path, "ssl.keystore.password", "keystore"),
        )
    if kind == "PEM":
        raise ConfigException(
            "ssl.keystore.location",
            path,
            f"the file is PEM but ssl.keystore.type is {declared}: set ssl.keystore.type=PEM",
        )


_JAAS_LOGIN = re.compile(
    r"\b(?:PlainLoginModule|ScramLoginModule)\s+required\b(?P<options>.*)", re.DOTALL
)
_JAAS_OPTION = re.compile(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"')
_JAAS_ESCAPE = re.compile(r"\\(.)")


@dataclass(frozen=True)
class TranslatedConfig:
    """A client config in librdkafka's terms (see :func:`translate_client_config`).

    Attributes:
        config: the settings to give librdkafka (Password values unwrapped).
        dropped: the Java-only settings left out (no librdkafka equivalent), sorted.
        origin: for each translated setting, the setting it came from.
    """

    config: dict[str, Any]
    dropped: list[str]
    origin: dict[str, str]


def translate_client_config(config: Mapping[str, Any], *, kind: str = "client") -> TranslatedConfig:
    """Map Kafka (Java) client settings to librdkafka's; drop the ones it has no equivalent for.

    ``max.request.size`` becomes ``message.max.bytes``, ``fetch.max.wait.ms``
    ``fetch.wait.max.ms``, ``buffer.memory`` (bytes) ``queue.buffering.max.kbytes``,
    ``receive.buffer.bytes``/``send.buffer.bytes`` the ``socket.*`` ones, a PEM
    ``ssl.truststore.location`` ``ssl.ca.location`` and a PKCS12 one its certificates
    (``ssl.ca.pem``), a PEM ``ssl.keystore.location`` ``ssl.certificate.location`` and
    ``ssl.key.location`` (a PKCS12 one librdkafka reads as it is), a PLAIN/SCRAM
    ``sasl.jaas.config``
    ``sasl.username``/``sasl.password``, the Java assignor classes librdkafka's names, and so
    on; settings librdkafka spells the same way (and unknown ones, which librdkafka then
    rejects) pass through. A librdkafka setting given explicitly wins over a translated one.

    Args:
        config: the client settings (values may be :class:`~cdk.config.Password`).
        kind: ``producer``, ``consumer`` or ``admin`` (for messages).

    Returns:
        The translated settings, the dropped keys and where each translated key came from.

    Raises:
        ConfigException: a key or trust store cannot be read, or is a Java KeyStore (JKS),
            which librdkafka cannot read (the message says how to convert it).
    """
    plain = {k: v.value() if isinstance(v, Password) else v for k, v in config.items()}
    result: dict[str, Any] = {}
    origin: dict[str, str] = {}
    dropped: list[str] = []

    def put(key: str, value: Any, source: str) -> None:
        if key in plain and key != source:
            return  # the librdkafka setting itself was given: it wins
        result[key] = value
        origin[key] = source

    truststore_type = str(plain.get("ssl.truststore.type", "JKS")).strip().upper()
    keystore_type = str(plain.get("ssl.keystore.type", "JKS")).strip().upper()
    for key, value in plain.items():
        text = str(value).strip() if isinstance(value, (str, int, float, bool)) else None
        if key in _RENAMED:
            put(_RENAMED[key], value, key)
        elif key == "buffer.memory" and text is not None and text.lstrip("-").isdigit():
            put("queue.buffering.max.kbytes", max(1, int(text) // 1024), key)
        elif key in _STORE_SETTINGS:
            continue  # read with the store they describe
        elif key == "ssl.truststore.location":
            if truststore_type == "PEM":
                put("ssl.ca.location", value, key)
            else:  # PKCS12 (or a PKCS12 file typed JKS, as Java reads it): its certificates
                pem = read_trust_pem({k: plain.get(k) for k in _TRUSTSTORE_KEYS})
                if pem is not None:
                    put("ssl.ca.pem", pem.decode("ascii"), key)
        elif key == "ssl.keystore.location" and keystore_type == "PEM":
            put("ssl.certificate.location", value, key)
            put("ssl.key.location", value, key)
        elif key == "ssl.keystore.location":
            # librdkafka reads PKCS12 key stores itself; a JKS one is refused, naming keytool
            _check_pkcs12_keystore(str(value), keystore_type)
            put(key, value, key)
        elif key == "ssl.keystore.password" and keystore_type == "PEM":
            continue  # a PEM key store has no store password (ssl.key.password is the key's)
        elif key == "sasl.jaas.config" and text is not None and _JAAS_LOGIN.search(text):
            options = dict(_JAAS_OPTION.findall(_JAAS_LOGIN.search(text)["options"]))  # type: ignore[index]
            for option in ("username", "password"):
                if option in options:
                    put(f"sasl.{option}", _JAAS_ESCAPE.sub(r"\1", options[option]), key)
        elif key == "ssl.endpoint.identification.algorithm" and text == "":
            put(key, "none", key)
        elif key == "auto.offset.reset" and text == "none":
            put(key, "error", key)
        elif key == "client.dns.lookup" and text == "default":
            dropped.append(key)
        elif key == "partition.assignment.strategy" and text is not None and "." in text:
            names = [_ASSIGNORS.get(part.strip()) for part in text.split(",") if part.strip()]
            known = [name for name in names if name is not None]
            if known:
                put(key, ",".join(known), key)
            else:
                dropped.append(key)
        elif key in _JAVA_ONLY or key.startswith(_JAVA_ONLY_PREFIXES):
            dropped.append(key)
        else:
            result[key] = value
    for key in plain:
        if key in result and key not in origin:
            origin[key] = key
    return TranslatedConfig(result, sorted(set(dropped)), origin)


def check_client_config(kind: str, config: Mapping[str, Any]) -> dict[str, str]:
    """The settings of ``config`` that librdkafka would reject, with librdkafka's reason.

    The settings are translated first (:func:`translate_client_config`): Java-only settings are
    not errors (the client ignores them with a warning). No connection is made.

    Args:
        kind: ``producer``, ``consumer`` or ``admin``.
        config: client settings, as given (Java or librdkafka names).

    Returns:
        ``{key as given: reason}``; empty when a client would accept them all.
    """
    remaining = dict(config)
    rejected: dict[str, str] = {}
    while remaining:  # librdkafka stops at the first bad setting: find them one by one
        try:
            translated = translate_client_config(remaining, kind=kind)
        except ConfigException as exc:  # a store that cannot be read
            key = exc.name if exc.name in remaining else next(iter(remaining))
            rejected[str(key)] = str(exc)
            del remaining[key]
            continue
        if not translated.config:
            break
        try:
            _probe(kind, translated.config)
        except KafkaException as exc:
            error = _config_error(kind, exc, translated)
            key = error.name if error.name in remaining else next(iter(remaining))
            reason = _error_text(exc)
        except (TypeError, ValueError) as exc:
            key, reason = next(iter(remaining)), str(exc)
        else:
            break
        rejected[str(key)] = f"The Kafka {kind} client rejects '{key}': {reason}"
        del remaining[key]
    return rejected


def _probe(kind: str, config: Mapping[str, Any]) -> None:
    """Create (and close) a client that never connects, to let librdkafka check ``config``."""
    settings = {**config, "logger": _LIBRDKAFKA_LOG}
    settings.pop("bootstrap.servers", None)
    if kind == "consumer":
        settings.setdefault("group.id", "cdk-config-check")
        Consumer(settings).close()
    elif kind == "admin":
        AdminClient(settings)
    else:
        Producer(settings)


def _config_error(kind: str, exc: KafkaException, translated: TranslatedConfig) -> ConfigException:
    text = _error_text(exc)
    config = translated.config
    match = re.search(r'property[:]? "([^"]+)"', text)
    key = match.group(1) if match else None
    if key not in config:  # librdkafka names the canonical property of an alias (linger.ms)
        key = _rejected_key(kind, config)
    if key is not None:
        value = config[key]
        shown = translated.origin.get(key, key)
        if any(word in shown for word in ("password", "secret", "jaas", "sasl.username")):
            value = Password(str(value))  # shown as [hidden]
        return ConfigException(shown, value, f"rejected by the Kafka {kind} client: {text}")
    return ConfigException(f"Invalid Kafka {kind} config: {text}")


def _rejected_key(kind: str, config: Mapping[str, Any]) -> str | None:
    """Find the property librdkafka rejects by trying each one alone."""
    for key, value in config.items():
        if key in ("bootstrap.servers", "logger", "error_cb") or callable(value):
            continue
        try:
            _probe(kind, {key: value})
        except (KafkaException, TypeError, ValueError):
            return key
    return None


#: How long the report of a broker that does not answer stays quiet after it was logged (s).
UNREACHABLE_WARNING_INTERVAL_S = 60.0


class _UnreachableWarnings:
    """One log line per bootstrap servers (and failure) while their brokers stay unreachable.

    A client retries a broker that does not answer every second or so, and librdkafka logs each
    failed attempt: those lines go to :data:`LIBRDKAFKA_LOGGER` at DEBUG, and the first failure
    is logged once, naming the bootstrap servers, then at most every
    :data:`UNREACHABLE_WARNING_INTERVAL_S` seconds (with the number of attempts in between).
    A broker that cannot be reached is a WARNING; any other failure to connect (authentication,
    TLS) keeps librdkafka's level and is counted apart, by its text.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: dict[tuple[str, str], float] = {}
        self._since: dict[tuple[str, str], int] = {}

    def report(self, bootstrap: str, detail: str, level: int = logging.WARNING) -> None:
        """Log why a broker at ``bootstrap`` did not answer, unless that was logged lately."""
        detail = _ATTEMPT_SUFFIX.sub("", _THREAD_PREFIX.sub("", detail)).strip()
        unreachable = _UNREACHABLE.search(detail) is not None
        key = (bootstrap, "unreachable" if unreachable else _BROKER_ID.sub("", detail))
        now = time.monotonic()
        with self._lock:
            last = self._last.get(key)
            if last is not None and now - last < UNREACHABLE_WARNING_INTERVAL_S:
                self._since[key] = self._since.get(key, 0) + 1
                return
            self._last[key] = now
            repeats = self._since.pop(key, 0)
        what = "Kafka broker unreachable" if unreachable else "Cannot connect to Kafka"
        since = f", {repeats} more failed attempt(s) since the last report" if repeats else ""
        _log.log(
            logging.WARNING if unreachable else max(level, logging.WARNING),
            "%s at bootstrap servers '%s': %s (the clients keep retrying%s; "
            "repeated at most every %gs)",
            what,
            bootstrap,
            detail,
            since,
            UNREACHABLE_WARNING_INTERVAL_S,
        )


# "[thrd:host:port/bootstrap]: " before librdkafka's text, and " (after 0ms in state CONNECT)"
# or " (after 5ms in state UP, 3 identical error(s) suppressed)" after it.
_THREAD_PREFIX = re.compile(r"^\[thrd:[^\]]*\]:\s*")
_ATTEMPT_SUFFIX = re.compile(
    r"\s*\(after \d+ms in state \w+(, \d+ identical error\(s\) suppressed)?\)"
)
_BROKER_ID = re.compile(r"^\S+/(bootstrap|\d+):\s*")
#: librdkafka's texts for a broker that does not answer (refused, unresolvable, timed out, gone).
_UNREACHABLE = re.compile(
    r"Connect to \S+ failed|Connection (refused|reset|timed out)|Failed to resolve|"
    r"Disconnected|timed out|No route to host|Network is unreachable|brokers are down|"
    r"broker connections are down|transport failure",
    re.IGNORECASE,
)

#: Where the clients made here report brokers they cannot reach.
UNREACHABLE_WARNINGS = _UnreachableWarnings()


class _LibrdkafkaLog:
    """Forwards librdkafka's log lines to :data:`LIBRDKAFKA_LOGGER`.

    A broker that does not answer makes librdkafka log an error line (facility ``FAIL``) on
    every reconnect attempt: those go to DEBUG and, for a client that knows its bootstrap
    servers and whose caller does not report the failure itself (``warn``), to
    :data:`UNREACHABLE_WARNINGS`, which logs them once in a while. Other lines (an idle
    connection closed, at INFO, included) keep their level.
    """

    def __init__(self, bootstrap: str | None = None, *, warn: bool = True) -> None:
        self._bootstrap = bootstrap if warn else None

    def log(self, level: int, msg: str, *args: Any) -> None:
        if args and args[0] == "FAIL" and level >= logging.WARNING:
            if self._bootstrap is not None:
                UNREACHABLE_WARNINGS.report(self._bootstrap, str(args[-1]), level)
            level = logging.DEBUG
        LIBRDKAFKA_LOGGER.log(level, msg, *args)


_LIBRDKAFKA_LOG = _LibrdkafkaLog()


def _error_logger(bootstrap: str, kind: str) -> Callable[[KafkaError], None]:
    def on_error(error: KafkaError) -> None:
        if error.fatal():
            _log.error("Kafka %s (%s) fatal error: %s", kind, bootstrap, error.str())
        elif error.code() == KafkaError._ALL_BROKERS_DOWN:
            UNREACHABLE_WARNINGS.report(bootstrap, error.str())
        else:
            _log.debug("Kafka %s (%s) error: %s", kind, bootstrap, error.str())

    return on_error


def _ignore_error(error: KafkaError) -> None:
    _log.debug("Kafka admin error: %s", error.str())


def _error_text(exc: KafkaException) -> str:
    err = exc.args[0] if exc.args else None
    return err.str() if isinstance(err, KafkaError) else str(exc)


def _error_code(exc: KafkaException) -> int | None:
    err = exc.args[0] if exc.args else None
    return err.code() if isinstance(err, KafkaError) else None


def _admin(admin_or_bootstrap: AdminLike) -> tuple[AdminClient, str]:
    if isinstance(admin_or_bootstrap, str):
        # A short-lived client: an unreachable broker is reported by the exception alone.
        config = admin_config(
            admin_or_bootstrap,
            {"error_cb": _ignore_error, "logger": _LibrdkafkaLog(admin_or_bootstrap, warn=False)},
        )
        return new_admin(config), admin_or_bootstrap
    if isinstance(admin_or_bootstrap, AdminClient):
        bootstrap = _ADMIN_BOOTSTRAP.get(admin_or_bootstrap, "(those of the admin client)")
        return admin_or_bootstrap, bootstrap
    if isinstance(admin_or_bootstrap, Mapping) and admin_or_bootstrap.get("bootstrap.servers"):
        bootstrap = str(admin_or_bootstrap["bootstrap.servers"])
        quiet = {"error_cb": _ignore_error, "logger": _LibrdkafkaLog(bootstrap, warn=False)}
        return new_admin({**admin_or_bootstrap, **quiet}), bootstrap
    raise ConfigException(
        "expected an AdminClient, a bootstrap servers string or an admin config, "
        f"got {type(admin_or_bootstrap).__name__}"
    )


def _metadata(admin: AdminClient, bootstrap: str, timeout: float) -> Any:
    try:
        return admin.list_topics(timeout=timeout)
    except KafkaException as exc:
        raise BrokerUnreachableException(
            bootstrap, f"no metadata within {timeout:g}s ({_error_text(exc)})"
        ) from exc
    finally:
        admin.poll(0)  # deliver queued librdkafka log lines to Python logging


def check_connection(admin_or_bootstrap: AdminLike, timeout: float = 10.0) -> str | None:
    """Fetch cluster metadata once; return the cluster id.

    Raises:
        BrokerUnreachableException: no broker answered within ``timeout`` seconds.
    """
    admin, bootstrap = _admin(admin_or_bootstrap)
    cluster_id: str | None = _metadata(admin, bootstrap, timeout).cluster_id
    return cluster_id


def list_topics(admin_or_bootstrap: AdminLike, timeout: float = 10.0) -> set[str]:
    """Return the names of the cluster's topics.

    Raises:
        BrokerUnreachableException: no broker answered within ``timeout`` seconds.
    """
    admin, bootstrap = _admin(admin_or_bootstrap)
    return set(_metadata(admin, bootstrap, timeout).topics)


def create_topics(
    admin_or_bootstrap: AdminLike,
    topics: Iterable[TopicLike],
    *,
    partitions: int = 1,
    replication_factor: int = 1,
    config: Mapping[str, str] | None = None,
    timeout: float = 30.0,
) -> None:
    """Create topics, leaving existing ones as they are (idempotent).

    Args:
        admin_or_bootstrap: an ``AdminClient`` or bootstrap servers.
        topics: names, :class:`NewTopicSpec` or confluent-kafka ``NewTopic`` objects.
        partitions: partitions of the topics that do not set their own.
        replication_factor: replication factor of the topics that do not set their own.
        config: topic configs merged under each topic's own.
        timeout: seconds to wait for the broker.

    Raises:
        BrokerUnreachableException: no broker answered.
        ConnectException: the broker refused to create a topic (the topic and reason named).
    """
    admin, bootstrap = _admin(admin_or_bootstrap)
    new_topics = [_new_topic(t, partitions, replication_factor, config or {}) for t in topics]
    if not new_topics:
        return
    _metadata(admin, bootstrap, timeout)
    try:
        futures = admin.create_topics(
            new_topics, operation_timeout=timeout, request_timeout=timeout
        )
    except (TypeError, ValueError) as exc:
        raise ConfigException(f"Invalid topic to create: {exc}") from exc
    for name, future in futures.items():
        try:
            future.result(timeout=timeout)
        except KafkaException as exc:
            if _error_code(exc) == KafkaError.TOPIC_ALREADY_EXISTS:
                continue
            raise ConnectException(f"Could not create topic '{name}': {_error_text(exc)}") from exc
    admin.poll(0)


def delete_topics(
    admin_or_bootstrap: AdminLike, topics: Iterable[str], *, timeout: float = 30.0
) -> None:
    """Delete topics; topics that do not exist are ignored (idempotent).

    Raises:
        BrokerUnreachableException: no broker answered.
        ConnectException: the broker refused to delete a topic (the topic and reason named).
    """
    admin, bootstrap = _admin(admin_or_bootstrap)
    names = list(topics)
    if not names:
        return
    _metadata(admin, bootstrap, timeout)
    futures = admin.delete_topics(names, operation_timeout=timeout, request_timeout=timeout)
    for name, future in futures.items():
        try:
            future.result(timeout=timeout)
        except KafkaException as exc:
            if _error_code(exc) == KafkaError.UNKNOWN_TOPIC_OR_PART:
                continue
            raise ConnectException(f"Could not delete topic '{name}': {_error_text(exc)}") from exc
    admin.poll(0)


def _new_topic(
    topic: TopicLike, partitions: int, replication_factor: int, config: Mapping[str, str]
) -> NewTopic:
    if isinstance(topic, NewTopic):
        return topic
    if isinstance(topic, str):
        topic = NewTopicSpec(topic)
    if not isinstance(topic, NewTopicSpec):
        raise ConfigException(
            f"a topic to create must be a name, NewTopicSpec or NewTopic, not {topic!r}"
        )
    if not topic.name:
        raise ConfigException("a topic to create needs a non-empty name")
    merged = {**config, **topic.config}
    count = topic.partitions if topic.partitions is not None else partitions
    replicas = (
        topic.replication_factor if topic.replication_factor is not None else replication_factor
    )
    for what, number in (("partitions", count), ("replication factor", replicas)):
        if not isinstance(number, int) or (number < 1 and number != -1):
            raise ConfigException(
                f"Invalid {what} {number!r} for topic '{topic.name}': a positive integer, "
                "or -1 for the broker's default"
            )
    return NewTopic(
        topic.name,
        num_partitions=count,
        replication_factor=replicas,
        config={k: str(v) for k, v in merged.items()},
    )
