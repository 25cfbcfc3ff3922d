"""What the Schema Registry converters share: their registry settings, client and error mapping.

``AvroConverter``, ``ProtobufConverter`` and ``JsonSchemaConverter`` take the same registry keys
as Confluent's converters (``schema.registry.url``, ``auto.register.schemas``,
``use.latest.version``, ``latest.compatibility.strict``, the subject name strategies,
``basic.auth.*``), and each call to the registry ends in bounded time: every request has a
timeout (``schema.registry.timeout``, :data:`DEFAULT_TIMEOUT_SECONDS` by default), so a registry
that accepts connections and never answers fails a call after at most
``(schema.registry.max.retries + 1) * schema.registry.timeout`` plus the client's backoff between
attempts (``schema.registry.retries.wait.ms``, doubling up to
``schema.registry.retries.max.wait.ms``).

Failures map to the kit's exceptions: a registry that cannot be reached, times out or answers
5xx/408/429 raises :class:`~cdk.errors.RetriableException` naming the registry URL (its
credentials removed); a refusal (a 409 incompatible schema, an unknown subject) raises
:class:`~cdk.errors.DataException` naming the subject and the registry's reason; a bad setting
raises :class:`~cdk.errors.ConfigException` naming it.
"""

from __future__ import annotations

import struct
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from cdk.errors import ConfigException, DataException, MissingExtraError, RetriableException

if TYPE_CHECKING:
    from cdk.config import AbstractConfig, ConfigDef

__all__: list[str] = []

T = TypeVar("T")

MAGIC_BYTE = 0
HEADER = struct.Struct(">bI")

SCHEMA_REGISTRY_URL_CONFIG = "schema.registry.url"
AUTO_REGISTER_SCHEMAS_CONFIG = "auto.register.schemas"
USE_LATEST_VERSION_CONFIG = "use.latest.version"
LATEST_COMPATIBILITY_STRICT_CONFIG = "latest.compatibility.strict"
KEY_SUBJECT_NAME_STRATEGY_CONFIG = "key.subject.name.strategy"
VALUE_SUBJECT_NAME_STRATEGY_CONFIG = "value.subject.name.strategy"
BASIC_AUTH_CREDENTIALS_SOURCE_CONFIG = "basic.auth.credentials.source"
BASIC_AUTH_USER_INFO_CONFIG = "basic.auth.user.info"
SCHEMAS_CACHE_CONFIG = "schemas.cache.config"
TIMEOUT_CONFIG = "schema.registry.timeout"
MAX_RETRIES_CONFIG = "schema.registry.max.retries"
RETRIES_WAIT_MS_CONFIG = "schema.registry.retries.wait.ms"
RETRIES_MAX_WAIT_MS_CONFIG = "schema.registry.retries.max.wait.ms"
CACHE_CAPACITY_CONFIG = "schema.registry.cache.capacity"
CACHE_LATEST_TTL_CONFIG = "schema.registry.cache.latest.ttl.sec"
CLIENT_CONFIG_PREFIX = "schema.registry."

#: The request timeout of the registry client when ``schema.registry.timeout`` is not set.
DEFAULT_TIMEOUT_SECONDS = 30.0
#: Retries of a failed request (transport error, 5xx, 408, 429) by default.
DEFAULT_MAX_RETRIES = 3

# Client keys given as strings in a properties file that the client wants as numbers.
_NUMERIC_CLIENT_KEYS = {
    TIMEOUT_CONFIG: "timeout",
    MAX_RETRIES_CONFIG: "max.retries",
    RETRIES_WAIT_MS_CONFIG: "retries.wait.ms",
    RETRIES_MAX_WAIT_MS_CONFIG: "retries.max.wait.ms",
    CACHE_CAPACITY_CONFIG: "cache.capacity",
    CACHE_LATEST_TTL_CONFIG: "cache.latest.ttl.sec",
}
# Other keys confluent-kafka's client accepts, passed on as strings (prefix stripped).
_PASS_THROUGH_CLIENT_KEYS = frozenset(
    {
        "ssl.ca.location",
        "ssl.certificate.location",
        "ssl.key.location",
        "ssl.key.password",
        "proxy",
        "basic.auth.user.info",
        "bearer.auth.credentials.source",
        "bearer.auth.token",
        "bearer.auth.logical.cluster",
        "bearer.auth.identity.pool.id",
        "bearer.auth.issuer.endpoint.url",
        "bearer.auth.client.id",
        "bearer.auth.client.secret",
        "bearer.auth.scope",
    }
)
_SECRET_CLIENT_KEYS = frozenset(
    {"ssl.key.password", "basic.auth.user.info", "bearer.auth.token", "bearer.auth.client.secret"}
)

_STRATEGY_PACKAGE = "io.confluent.kafka.serializers.subject."
TOPIC_NAME_STRATEGY = "TopicNameStrategy"
RECORD_NAME_STRATEGY = "RecordNameStrategy"
TOPIC_RECORD_NAME_STRATEGY = "TopicRecordNameStrategy"
_STRATEGIES = (TOPIC_NAME_STRATEGY, RECORD_NAME_STRATEGY, TOPIC_RECORD_NAME_STRATEGY)

# mock:// registries live for the process and are shared by URL, like Confluent's mock scopes,
# so the converters of a worker (and of a test) see the same schemas.
_MOCK_REGISTRIES: dict[str, Any] = {}
_MOCK_LOCK = threading.Lock()


def subject_name_strategy(value: str) -> str:
    """The strategy a ``*.subject.name.strategy`` value names (Confluent class name or short).

    Raises:
        ConfigException: the value names no known strategy.
    """
    short = value.strip()
    if short.startswith(_STRATEGY_PACKAGE):
        short = short[len(_STRATEGY_PACKAGE) :]
    if short not in _STRATEGIES:
        raise ConfigException(
            value,
            value,
            "not a known subject name strategy; use one of "
            + ", ".join(_STRATEGY_PACKAGE + s for s in _STRATEGIES),
        )
    return short


def subject_name(strategy: str, topic: str, is_key: bool, record_name: str | None) -> str:
    """The registry subject for a schema written to ``topic``, per the naming strategy.

    Raises:
        DataException: a record name strategy, and the schema has no record (message) name.
    """
    if strategy == TOPIC_NAME_STRATEGY:
        return f"{topic}-{'key' if is_key else 'value'}"
    if record_name is None:
        setting = KEY_SUBJECT_NAME_STRATEGY_CONFIG if is_key else VALUE_SUBJECT_NAME_STRATEGY_CONFIG
        raise DataException(
            f"In configuration {setting} = {strategy}, the message "
            f"{'key' if is_key else 'value'} must only be a record schema"
        )
    if strategy == RECORD_NAME_STRATEGY:
        return record_name
    return f"{topic}-{record_name}"


def registry_config_def(fmt: str) -> ConfigDef:
    """The ConfigDef of the registry settings every Schema Registry converter takes.

    Args:
        fmt: the format's name for the documentation ("Avro", "Protobuf", "JSON Schema").
    """
    from cdk.config import ConfigDef, Importance, Type, validators

    def check_strategy(name: str, value: Any) -> None:
        try:
            subject_name_strategy(str(value))
        except ConfigException as exc:
            raise ConfigException(name, value, exc.message.split(": ", 1)[-1]) from None

    strategy_validator = validators.LambdaValidator.of(
        check_strategy, "TopicNameStrategy, RecordNameStrategy or TopicRecordNameStrategy"
    )
    default_strategy = _STRATEGY_PACKAGE + TOPIC_NAME_STRATEGY
    return (
        ConfigDef()
        .define(
            SCHEMA_REGISTRY_URL_CONFIG,
            Type.LIST,
            importance=Importance.HIGH,
            documentation=(
                f"Comma-separated URLs of the Schema Registry that holds the {fmt} schemas. "
                "A URL starting with mock:// selects an in-process registry for tests."
            ),
        )
        .define(
            AUTO_REGISTER_SCHEMAS_CONFIG,
            Type.BOOLEAN,
            True,
            None,
            Importance.MEDIUM,
            f"Register the {fmt} schema of each outgoing value under its subject when it is not "
            "registered yet. When false, the schema must already be registered.",
        )
        .define(
            USE_LATEST_VERSION_CONFIG,
            Type.BOOLEAN,
            False,
            None,
            Importance.LOW,
            "With auto.register.schemas=false, write values with the latest schema registered "
            "under the subject instead of looking up the exact schema.",
        )
        .define(
            LATEST_COMPATIBILITY_STRICT_CONFIG,
            Type.BOOLEAN,
            True,
            None,
            Importance.LOW,
            "With use.latest.version=true, refuse a value whose schema the latest registered "
            "schema is not backward compatible with (the registry is asked), instead of "
            "writing it with the latest schema anyway.",
        )
        .define(
            KEY_SUBJECT_NAME_STRATEGY_CONFIG,
            Type.STRING,
            default_strategy,
            strategy_validator,
            Importance.MEDIUM,
            "How the registry subject of a key schema is named: TopicNameStrategy "
            "(<topic>-key), RecordNameStrategy (the record's full name) or "
            "TopicRecordNameStrategy (<topic>-<record full name>). Confluent's class names "
            "are accepted.",
        )
        .define(
            VALUE_SUBJECT_NAME_STRATEGY_CONFIG,
            Type.STRING,
            default_strategy,
            strategy_validator,
            Importance.MEDIUM,
            "How the registry subject of a value schema is named: TopicNameStrategy "
            "(<topic>-value), RecordNameStrategy or TopicRecordNameStrategy.",
        )
        .define(
            BASIC_AUTH_CREDENTIALS_SOURCE_CONFIG,
            Type.STRING,
            "URL",
            validators.CaseInsensitiveValidString.of("URL", "USER_INFO"),
            Importance.MEDIUM,
            "Where HTTP basic authentication credentials for the registry come from: the "
            "user-info part of the URL, or basic.auth.user.info.",
        )
        .define(
            BASIC_AUTH_USER_INFO_CONFIG,
            Type.PASSWORD,
            "",
            None,
            Importance.MEDIUM,
            "Registry credentials as <username>:<password>, used with "
            "basic.auth.credentials.source=USER_INFO.",
        )
        .define(
            SCHEMAS_CACHE_CONFIG,
            Type.INT,
            1000,
            validators.Range.at_least(0),
            Importance.LOW,
            f"How many schema conversions (Connect to {fmt} and back) the converter caches.",
        )
        .define(
            TIMEOUT_CONFIG,
            Type.DOUBLE,
            DEFAULT_TIMEOUT_SECONDS,
            validators.Range.between(0.001, 3600),
            Importance.MEDIUM,
            "Seconds each request to the Schema Registry may take (connect, send, wait for the "
            "answer) before it fails. A call fails after at most (max.retries + 1) requests, "
            "so a registry that never answers fails a record in bounded time.",
        )
        .define(
            MAX_RETRIES_CONFIG,
            Type.INT,
            DEFAULT_MAX_RETRIES,
            validators.Range.between(0, 100),
            Importance.LOW,
            "How many times a request that failed in transport or with 5xx, 408 or 429 is "
            "retried before the call fails.",
        )
        .define(
            RETRIES_WAIT_MS_CONFIG,
            Type.INT,
            1000,
            validators.Range.at_least(0),
            Importance.LOW,
            "Milliseconds before the first retry of a failed registry request (jittered, "
            "doubling each retry).",
        )
        .define(
            RETRIES_MAX_WAIT_MS_CONFIG,
            Type.INT,
            20000,
            validators.Range.at_least(0),
            Importance.LOW,
            "The longest wait in milliseconds between two attempts of a registry request.",
        )
        .define(
            CACHE_CAPACITY_CONFIG,
            Type.INT,
            1000,
            validators.Range.at_least(1),
            Importance.LOW,
            "How many schemas and ids the registry client caches.",
        )
        .define(
            CACHE_LATEST_TTL_CONFIG,
            Type.INT,
            -1,
            None,
            Importance.LOW,
            "Seconds the client caches the latest version of a subject (use.latest.version); "
            "-1 caches it for the converter's life.",
        )
    )


def import_registry(feature: str, extra: str) -> Any:
    """confluent-kafka's ``schema_registry`` package.

    Raises:
        MissingExtraError: it cannot be imported (its HTTP client is missing).
    """
    try:
        from confluent_kafka import schema_registry
    except ImportError as exc:
        raise MissingExtraError(feature, extra, "confluent_kafka.schema_registry") from exc
    return schema_registry


def redact_url(url: str) -> str:
    """``url`` without the user info (credentials) part, for messages."""
    out = []
    for one in url.split(","):
        one = one.strip()
        try:
            parts = urlsplit(one)
        except ValueError:
            out.append("<invalid URL>")
            continue
        if parts.username is not None or parts.password is not None:
            host = parts.hostname or ""
            if parts.port is not None:
                host = f"{host}:{parts.port}"
            one = urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
        out.append(one)
    return ",".join(out)


class Registry:
    """A Schema Registry client with bounded calls and the kit's errors.

    Args:
        client: confluent-kafka's ``SchemaRegistryClient`` (or a mock with its methods).
        url: the configured URL(s), for messages (credentials are removed).
        fmt: the format's name for messages ("Avro", "Protobuf", "JSON Schema").
        secrets: strings (passwords) never to show in a message.
    """

    def __init__(
        self, client: Any, url: str, fmt: str, secrets: tuple[str, ...] = (), extra: str = "avro"
    ) -> None:
        self.client = client
        self.url = redact_url(url) if url else "the configured Schema Registry"
        self.fmt = fmt
        self._secrets = tuple(s for s in secrets if s)
        self._extra = extra

    # -- construction --------------------------------------------------------------------------
    @classmethod
    def from_config(
        cls, cfg: AbstractConfig, configs: Mapping[str, Any], fmt: str, feature: str, extra: str
    ) -> Registry:
        """Create the client from a converter's parsed settings.

        Raises:
            ConfigException: ``schema.registry.url`` is missing or invalid, or a
                ``schema.registry.`` setting is unknown or invalid (the message names it).
        """
        schema_registry = import_registry(feature, extra)
        urls: list[str] = cfg.get_list(SCHEMA_REGISTRY_URL_CONFIG)
        if not urls:
            raise ConfigException(
                SCHEMA_REGISTRY_URL_CONFIG, "", "at least one Schema Registry URL is required"
            )
        url = ",".join(u.strip() for u in urls)
        for one in urls:
            if not one.strip().startswith(("http://", "https://", "mock://")):
                raise ConfigException(
                    SCHEMA_REGISTRY_URL_CONFIG,
                    redact_url(url),
                    "each URL must start with http://, https:// or mock://",
                )
        conf: dict[str, Any] = {"url": url}
        secrets: list[str] = []
        for key, value in configs.items():
            if not key.startswith(CLIENT_CONFIG_PREFIX) or key == SCHEMA_REGISTRY_URL_CONFIG:
                continue
            if key in _NUMERIC_CLIENT_KEYS:
                continue
            short = key[len(CLIENT_CONFIG_PREFIX) :]
            if short not in _PASS_THROUGH_CLIENT_KEYS:
                raise ConfigException(
                    key,
                    "[hidden]" if "password" in key or "secret" in key else value,
                    "not a Schema Registry client setting; known ones: "
                    + ", ".join(
                        sorted(
                            [CLIENT_CONFIG_PREFIX + k for k in _PASS_THROUGH_CLIENT_KEYS]
                            + list(_NUMERIC_CLIENT_KEYS)
                        )
                    ),
                )
            text = value.value() if hasattr(value, "value") and callable(value.value) else value
            conf[short] = str(text)
            if short in _SECRET_CLIENT_KEYS:
                secrets.append(str(text))
        conf["timeout"] = cfg.get_double(TIMEOUT_CONFIG)
        conf["max.retries"] = cfg.get_int(MAX_RETRIES_CONFIG)
        conf["retries.wait.ms"] = cfg.get_int(RETRIES_WAIT_MS_CONFIG)
        conf["retries.max.wait.ms"] = cfg.get_int(RETRIES_MAX_WAIT_MS_CONFIG)
        conf["cache.capacity"] = cfg.get_int(CACHE_CAPACITY_CONFIG)
        ttl = cfg.get_int(CACHE_LATEST_TTL_CONFIG)
        if ttl >= 0:
            conf["cache.latest.ttl.sec"] = ttl
        if cfg.get_string(BASIC_AUTH_CREDENTIALS_SOURCE_CONFIG).upper() == "USER_INFO":
            user_info = cfg.get_password(BASIC_AUTH_USER_INFO_CONFIG).value()
            if user_info:
                if ":" not in user_info:
                    raise ConfigException(
                        BASIC_AUTH_USER_INFO_CONFIG,
                        "[hidden]",
                        "must be <username>:<password>",
                    )
                conf["basic.auth.user.info"] = user_info
                secrets.append(user_info)
                secrets.append(user_info.split(":", 1)[1])
        for one in urls:
            password = urlsplit(one.strip()).password
            if password:
                secrets.append(password)
        if url.startswith("mock://"):
            with _MOCK_LOCK:
                client = _MOCK_REGISTRIES.get(url)
                if client is None:
                    client = schema_registry.SchemaRegistryClient.new_client(conf)
                    _MOCK_REGISTRIES[url] = client
            return cls(client, url, fmt, tuple(secrets), extra)
        try:
            client = schema_registry.SchemaRegistryClient(conf)
        except (ValueError, TypeError) as exc:
            text = str(exc)
            for secret in secrets:
                text = text.replace(secret, "[hidden]")
            raise ConfigException(
                SCHEMA_REGISTRY_URL_CONFIG,
                redact_url(url),
                f"cannot create a Schema Registry client: {text}",
            ) from None
        return cls(client, url, fmt, tuple(secrets), extra)

    @property
    def is_mock(self) -> bool:
        """Whether the client is a shared ``mock://`` registry (never closed by a converter)."""
        return any(self.client is c for c in _MOCK_REGISTRIES.values())

    def close(self) -> None:
        """Release the client when it is a real (not mock) one."""
        if self.client is not None and not self.is_mock:
            close = getattr(self.client, "close", None)
            if callable(close):
                close()

    # -- calls ---------------------------------------------------------------------------------
    def _hide(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "[hidden]")
        return text

    def call(self, prefix: str, what: str, fn: Callable[[], T]) -> T:
        """Call the registry; map its failures to the kit's exceptions.

        Args:
            prefix: the message's start ("Failed to serialize Avro data from topic t").
            what: the request, naming the subject or schema id ("registering the schema under
                subject t-value").
            fn: the client call.

        Raises:
            RetriableException: the registry could not be reached, timed out, or answered
                5xx, 408 or 429; the message names the registry URL.
            DataException: the registry refused the request (409 incompatible, 404 unknown,
                422 invalid); the message names the subject and the registry's reason.
        """
        schema_registry = import_registry(self.fmt + " converter", self._extra)
        try:
            return fn()
        except schema_registry.SchemaRegistryError as exc:
            status = getattr(exc, "http_status_code", -1) or -1
            reason = self._hide(getattr(exc, "error_message", None) or str(exc))
            code = getattr(exc, "error_code", None)
            detail = f"HTTP {status}" + (f", error code {code}" if code not in (None, -1) else "")
            text = f"{prefix}: Schema Registry at {self.url} failed {what} ({detail}): {reason}"
            if status >= 500 or status in (408, 429) or status < 0:
                raise RetriableException(text) from None
            if status == 409:
                text = (
                    f"{prefix}: Schema Registry at {self.url} refused {what} as incompatible "
                    f"({detail}): {reason}"
                )
            raise DataException(text) from None
        except (OSError, TimeoutError) as exc:
            raise RetriableException(
                f"{prefix}: Schema Registry at {self.url} unreachable while {what}: "
                f"{type(exc).__name__}: {self._hide(str(exc))}"
            ) from None
        except Exception as exc:
            if _is_transport_error(exc):
                raise RetriableException(
                    f"{prefix}: Schema Registry at {self.url} unreachable while {what}: "
                    f"{type(exc).__name__}: {self._hide(str(exc)) or 'no answer'}"
                ) from None
            raise


def _is_transport_error(exc: BaseException) -> bool:
    for cls in type(exc).__mro__:
        if cls.__name__ in (
            "TransportError",
            "TimeoutException",
            "ConnectError",
            "NetworkError",
            "ReadTimeout",
            "ConnectTimeout",
            "RemoteProtocolError",
            "ProtocolError",
        ):
            return True
    return False
