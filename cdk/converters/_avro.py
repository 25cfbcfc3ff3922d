"""The :class:`AvroConverter`: Confluent's Avro wire format with a Schema Registry.

Compatible with ``io.confluent.connect.avro.AvroConverter``: the bytes are a magic byte ``0``, the
4-byte big-endian id of the writer schema in the Schema Registry, then the Avro binary encoding of
the value. Connect schemas map to Avro schemas as Confluent maps them (see
:mod:`cdk.converters._avro_data`), so records written here read with Confluent's converter and
deserializers and the other way round.

fastavro and confluent-kafka's Schema Registry client come with the ``avro`` extra and are
imported on first use.
"""

from __future__ import annotations

import io
import json
import struct
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from cdk.converters._api import Converter
from cdk.converters._avro_common import AvroDataConfig, strip_logical_types
from cdk.converters._avro_data import AvroData
from cdk.converters._avro_names import full_name_of, resolve_avro_schema
from cdk.data import Schema, SchemaAndValue, validate_value
from cdk.errors import ConfigException, DataException, MissingExtraError, RetriableException

if TYPE_CHECKING:
    from cdk.api import Headers
    from cdk.config import ConfigDef

__all__ = ["AvroConverter"]

MAGIC_BYTE = 0
_HEADER = struct.Struct(">bI")

SCHEMA_REGISTRY_URL_CONFIG = "schema.registry.url"
AUTO_REGISTER_SCHEMAS_CONFIG = "auto.register.schemas"
USE_LATEST_VERSION_CONFIG = "use.latest.version"
KEY_SUBJECT_NAME_STRATEGY_CONFIG = "key.subject.name.strategy"
VALUE_SUBJECT_NAME_STRATEGY_CONFIG = "value.subject.name.strategy"
BASIC_AUTH_CREDENTIALS_SOURCE_CONFIG = "basic.auth.credentials.source"
BASIC_AUTH_USER_INFO_CONFIG = "basic.auth.user.info"
SCHEMAS_CACHE_CONFIG = "schemas.cache.config"
CONNECT_META_DATA_CONFIG = "connect.meta.data"
ENHANCED_AVRO_SCHEMA_SUPPORT_CONFIG = "enhanced.avro.schema.support"
SCRUB_INVALID_NAMES_CONFIG = "scrub.invalid.names"
CLIENT_CONFIG_PREFIX = "schema.registry."

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


def _config_def() -> ConfigDef:
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
                "Comma-separated URLs of the Schema Registry that holds the Avro schemas. "
                "A URL starting with mock:// selects an in-process registry for tests."
            ),
        )
        .define(
            AUTO_REGISTER_SCHEMAS_CONFIG,
            Type.BOOLEAN,
            True,
            None,
            Importance.MEDIUM,
            "Register the Avro schema of each outgoing value under its subject when it is not "
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
            "How many schema conversions (Connect to Avro and back) the converter caches.",
        )
        .define(
            CONNECT_META_DATA_CONFIG,
            Type.BOOLEAN,
            True,
            None,
            Importance.LOW,
            "Write Connect's schema details (name, version, doc, parameters, defaults, int8/int16) "
            "as connect.* properties of the Avro schema, and read them back.",
        )
        .define(
            ENHANCED_AVRO_SCHEMA_SUPPORT_CONFIG,
            Type.BOOLEAN,
            False,
            None,
            Importance.MEDIUM,
            "Keep Avro enums as enums when writing a schema that was read from Avro, and use full "
            "names for the record and enum members of unions.",
        )
        .define(
            SCRUB_INVALID_NAMES_CONFIG,
            Type.BOOLEAN,
            False,
            None,
            Importance.MEDIUM,
            "Replace characters that Avro does not allow in record, namespace and field names "
            "instead of failing the conversion.",
        )
    )


def _import_fastavro() -> Any:
    try:
        import fastavro
    except ImportError as exc:
        raise MissingExtraError("AvroConverter", "avro", "fastavro") from exc
    return fastavro


def _import_registry() -> Any:
    try:
        from confluent_kafka import schema_registry
    except ImportError as exc:  # pragma: no cover - confluent-kafka is a core dependency
        raise MissingExtraError("AvroConverter", "avro", "confluent_kafka.schema_registry") from exc
    return schema_registry


class _WriterSchema:
    """A registered Avro schema ready for fastavro: its id, resolved tree and parsed form."""

    __slots__ = ("json", "parsed", "resolved", "schema_id", "text")

    def __init__(self, schema_id: int, text: str) -> None:
        self.schema_id = schema_id
        self.text = text
        self.json = json.loads(text)
        self.resolved = resolve_avro_schema(self.json)
        fastavro = _import_fastavro()
        try:
            self.parsed = fastavro.parse_schema(
                strip_logical_types(self.json), _ignore_default_error=True
            )
        except Exception as exc:
            raise DataException(f"Invalid Avro schema with id {schema_id}: {exc}") from exc


class AvroConverter(Converter):
    """Converts Connect data to Confluent's Avro wire format and back, via a Schema Registry.

    Settings (the ``key.converter.``/``value.converter.`` prefixed keys): see :meth:`config`;
    ``schema.registry.url`` is required. Other ``schema.registry.``-prefixed keys go to the
    registry client with the prefix stripped (``schema.registry.ssl.ca.location``, ...).

    Args:
        schema_registry: a Schema Registry client to use instead of creating one from the
            configuration (tests pass a mock client here).
    """

    def __init__(self, schema_registry: Any = None) -> None:
        self._registry = schema_registry
        self._is_key = False
        self._avro_data = AvroData()
        self._auto_register = True
        self._use_latest = False
        self._strategy = TOPIC_NAME_STRATEGY
        self._lock = threading.Lock()
        self._ids: dict[tuple[str, str], int] = {}
        self._latest: dict[str, _WriterSchema] = {}
        self._writers: dict[tuple[str, str], _WriterSchema] = {}
        self._readers: dict[int, _WriterSchema] = {}
        self._configured = False

    def config(self) -> ConfigDef:
        """The converter's ConfigDef."""
        return _config_def()

    def configure(self, configs: Mapping[str, Any], is_key: bool) -> None:
        """Parse the settings and connect the Schema Registry client.

        Raises:
            ConfigException: a setting is missing or invalid (``schema.registry.url`` is required).
        """
        from cdk.config import AbstractConfig

        _import_fastavro()
        cfg = AbstractConfig(_config_def(), dict(configs))
        self._is_key = is_key
        self._auto_register = cfg.get_boolean(AUTO_REGISTER_SCHEMAS_CONFIG)
        self._use_latest = cfg.get_boolean(USE_LATEST_VERSION_CONFIG)
        key = KEY_SUBJECT_NAME_STRATEGY_CONFIG if is_key else VALUE_SUBJECT_NAME_STRATEGY_CONFIG
        self._strategy = subject_name_strategy(cfg.get_string(key))
        self._avro_data = AvroData(
            AvroDataConfig(
                connect_meta_data=cfg.get_boolean(CONNECT_META_DATA_CONFIG),
                enhanced_avro_schema_support=cfg.get_boolean(ENHANCED_AVRO_SCHEMA_SUPPORT_CONFIG),
                scrub_invalid_names=cfg.get_boolean(SCRUB_INVALID_NAMES_CONFIG),
                schemas_cache_size=cfg.get_int(SCHEMAS_CACHE_CONFIG),
            )
        )
        if self._registry is None:
            self._registry = self._new_client(cfg, configs)
        self._configured = True

    @staticmethod
    def _new_client(cfg: Any, configs: Mapping[str, Any]) -> Any:
        schema_registry = _import_registry()
        urls: list[str] = cfg.get_list(SCHEMA_REGISTRY_URL_CONFIG)
        if not urls:
            raise ConfigException(
                SCHEMA_REGISTRY_URL_CONFIG, "", "at least one Schema Registry URL is required"
            )
        url = ",".join(urls)
        conf: dict[str, Any] = {"url": url}
        for key, value in configs.items():
            if key.startswith(CLIENT_CONFIG_PREFIX) and key != SCHEMA_REGISTRY_URL_CONFIG:
                conf[key[len(CLIENT_CONFIG_PREFIX) :]] = value
        if cfg.get_string(BASIC_AUTH_CREDENTIALS_SOURCE_CONFIG).upper() == "USER_INFO":
            user_info = cfg.get_password(BASIC_AUTH_USER_INFO_CONFIG).value()
            if user_info:
                conf["basic.auth.user.info"] = user_info
        if url.startswith("mock://"):
            with _MOCK_LOCK:
                client = _MOCK_REGISTRIES.get(url)
                if client is None:
                    client = schema_registry.SchemaRegistryClient.new_client(conf)
                    _MOCK_REGISTRIES[url] = client
                return client
        try:
            return schema_registry.SchemaRegistryClient(conf)
        except (ValueError, TypeError) as exc:
            raise ConfigException(
                SCHEMA_REGISTRY_URL_CONFIG, url, f"cannot create a Schema Registry client: {exc}"
            ) from exc

    def _require_configured(self) -> None:
        if not self._configured:
            raise DataException("AvroConverter is not configured: call configure() first")

    # -- subjects ----------------------------------------------------------------------------
    def subject_name(self, topic: str, avro_schema: Any) -> str:
        """The registry subject for a schema written to ``topic``, per the naming strategy."""
        if self._strategy == TOPIC_NAME_STRATEGY:
            return f"{topic}-{'key' if self._is_key else 'value'}"
        name = full_name_of(avro_schema)
        if name is not None and "." not in name and avro_schema.get("namespace"):
            name = f"{avro_schema['namespace']}.{name}"
        if name is None:
            setting = (
                KEY_SUBJECT_NAME_STRATEGY_CONFIG
                if self._is_key
                else VALUE_SUBJECT_NAME_STRATEGY_CONFIG
            )
            raise DataException(
                f"In configuration {setting} = {self._strategy}, the message "
                f"{'key' if self._is_key else 'value'} must only be a record schema"
            )
        if self._strategy == RECORD_NAME_STRATEGY:
            return name
        return f"{topic}-{name}"

    # -- Connect -> bytes --------------------------------------------------------------------
    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        """Serialize a Connect value into Confluent's Avro wire format.

        ``None`` stays ``None`` (a tombstone) and registers nothing.

        Raises:
            DataException: the value is schemaless, does not match its schema, or the schema has
                no Avro form; or the registry refused the schema.
            RetriableException: the registry could not be reached.
        """
        self._require_configured()
        if value is None:
            if schema is not None and not schema.optional:
                raise DataException(
                    f"Failed to serialize Avro data from topic {topic}: found null value for "
                    f"non-optional schema"
                )
            return None
        if schema is None:
            raise DataException(
                f"Failed to serialize Avro data from topic {topic}: AvroConverter needs a schema, "
                f"but the value (a {type(value).__name__}) has none; use a converter for "
                f"schemaless data (e.g. JsonConverter with schemas.enable=false)"
            )
        try:
            validate_value(schema, value)
        except DataException as exc:
            raise DataException(
                f"Failed to serialize Avro data from topic {topic}: {exc.message}", field=exc.field
            ) from exc
        try:
            avro_json = self._avro_data.from_connect_schema(schema)
        except DataException as exc:
            raise DataException(
                f"Failed to serialize Avro data from topic {topic}: {exc.message}", field=exc.field
            ) from exc
        text = json.dumps(avro_json, separators=(",", ":"), ensure_ascii=False)
        subject = self.subject_name(topic, avro_json)
        writer = self._writer_for(topic, subject, text)
        try:
            datum = self._avro_data.from_connect_data(schema, writer.resolved, value)
            body = io.BytesIO()
            body.write(_HEADER.pack(MAGIC_BYTE, writer.schema_id))
            _import_fastavro().schemaless_writer(body, writer.parsed, datum)
        except DataException as exc:
            raise DataException(
                f"Failed to serialize Avro data from topic {topic}: {exc.message}", field=exc.field
            ) from exc
        except (
            ValueError,
            TypeError,
            KeyError,
            AttributeError,
            OverflowError,
            struct.error,
        ) as exc:
            raise DataException(
                f"Failed to serialize Avro data from topic {topic}: {type(exc).__name__}: {exc}"
            ) from exc
        return body.getvalue()

    def _writer_for(self, topic: str, subject: str, text: str) -> _WriterSchema:
        if self._auto_register or not self._use_latest:
            key = (subject, text)
            cached = self._writers.get(key)
            schema_id = self._ids.get(key)
            if schema_id is None:
                schema_id = self._register_or_lookup(topic, subject, text)
                with self._lock:
                    self._ids[key] = schema_id
            if cached is None or cached.schema_id != schema_id:
                cached = _WriterSchema(schema_id, text)
                with self._lock:
                    self._writers[key] = cached
            return cached
        latest = self._latest.get(subject)
        if latest is None:
            registered = self._call(
                topic, "serialize", lambda: self._registry.get_latest_version(subject)
            )
            latest = _WriterSchema(int(registered.schema_id), registered.schema.schema_str)
            with self._lock:
                self._latest[subject] = latest
        return latest

    def _register_or_lookup(self, topic: str, subject: str, text: str) -> int:
        schema_registry = _import_registry()
        sr_schema = schema_registry.Schema(text, "AVRO")
        if self._auto_register:
            return int(
                self._call(
                    topic, "serialize", lambda: self._registry.register_schema(subject, sr_schema)
                )
            )
        registered = self._call(
            topic, "serialize", lambda: self._registry.lookup_schema(subject, sr_schema)
        )
        return int(registered.schema_id)

    def _call(self, topic: str, action: str, fn: Any) -> Any:
        """Call the registry, turning its failures into Connect exceptions naming the topic."""
        schema_registry = _import_registry()
        if action == "serialize":
            prefix = f"Failed to serialize Avro data from topic {topic}"
        else:
            prefix = f"Failed to deserialize data for topic {topic} to Avro"
        try:
            return fn()
        except schema_registry.SchemaRegistryError as exc:
            status = getattr(exc, "http_status_code", -1) or -1
            if status >= 500 or status in (408, 429):
                raise RetriableException(f"{prefix}: Schema Registry error: {exc}") from exc
            raise DataException(f"{prefix}: Schema Registry error: {exc}") from exc
        except (OSError, TimeoutError) as exc:
            raise RetriableException(f"{prefix}: Schema Registry unreachable: {exc}") from exc
        except Exception as exc:
            if _is_transport_error(exc):
                raise RetriableException(f"{prefix}: Schema Registry unreachable: {exc}") from exc
            raise

    # -- bytes -> Connect --------------------------------------------------------------------
    def to_connect_data(
        self, topic: str, data: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        """Deserialize Confluent's Avro wire format into a Connect schema and value.

        The schema gets the registry version of the writer schema unless it carries a
        ``connect.version``. ``None`` gives :attr:`SchemaAndValue.NULL`.

        Raises:
            DataException: wrong magic byte, short payload, unknown schema id or corrupt body.
            RetriableException: the registry could not be reached.
        """
        self._require_configured()
        if data is None:
            return SchemaAndValue.NULL
        prefix = f"Failed to deserialize data for topic {topic} to Avro"
        payload = bytes(data)
        if len(payload) < 1 or payload[0] != MAGIC_BYTE:
            raise DataException(f"{prefix}: Unknown magic byte!")
        if len(payload) < _HEADER.size:
            raise DataException(
                f"{prefix}: the payload has {len(payload)} bytes, fewer than the 5-byte header "
                f"(magic byte and 4-byte schema id)"
            )
        _, schema_id = _HEADER.unpack_from(payload)
        writer = self._reader_for(topic, schema_id)
        fastavro = _import_fastavro()
        stream = io.BytesIO(payload)
        stream.seek(_HEADER.size)
        try:
            raw = fastavro.schemaless_reader(stream, writer.parsed, None, return_named_type=True)
        except (EOFError, ValueError, TypeError, IndexError, KeyError, struct.error) as exc:
            raise DataException(
                f"{prefix}: Error deserializing Avro message for id {schema_id}: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        if stream.tell() != len(payload):
            raise DataException(
                f"{prefix}: Error deserializing Avro message for id {schema_id}: "
                f"{len(payload) - stream.tell()} trailing bytes after the value"
            )
        version = self._version_of(topic, writer)
        try:
            schema = self._avro_data.to_connect_schema_cached(writer.text, writer.resolved, version)
            value = self._avro_data.to_connect_data(schema, writer.resolved, raw)
        except DataException as exc:
            raise DataException(f"{prefix}: {exc.message}", field=exc.field) from exc
        return SchemaAndValue(schema, value)

    def _reader_for(self, topic: str, schema_id: int) -> _WriterSchema:
        cached = self._readers.get(schema_id)
        if cached is not None:
            return cached
        schema_registry = _import_registry()
        try:
            sr_schema = self._registry.get_schema(schema_id)
        except schema_registry.SchemaRegistryError as exc:
            status = getattr(exc, "http_status_code", -1) or -1
            text = (
                f"Failed to deserialize data for topic {topic} to Avro: Error retrieving Avro "
                f"{'key' if self._is_key else 'value'} schema for id {schema_id}: {exc}"
            )
            if status >= 500 or status in (408, 429):
                raise RetriableException(text) from exc
            raise DataException(text) from exc
        except (OSError, TimeoutError) as exc:
            raise RetriableException(
                f"Failed to deserialize data for topic {topic} to Avro: Schema Registry "
                f"unreachable: {exc}"
            ) from exc
        schema_type = getattr(sr_schema, "schema_type", "AVRO") or "AVRO"
        if schema_type != "AVRO":
            raise DataException(
                f"Failed to deserialize data for topic {topic} to Avro: schema id {schema_id} is "
                f"a {schema_type} schema, not Avro"
            )
        reader = _WriterSchema(schema_id, sr_schema.schema_str)
        with self._lock:
            self._readers[schema_id] = reader
        return reader

    def _version_of(self, topic: str, writer: _WriterSchema) -> int | None:
        """The registry version of the writer schema under its subject, when it can be found."""
        try:
            subject = self.subject_name(topic, writer.json)
        except DataException:
            return None
        schema_registry = _import_registry()
        try:
            registered = self._registry.lookup_schema(
                subject, schema_registry.Schema(writer.text, "AVRO")
            )
        except (schema_registry.SchemaRegistryError, OSError):
            return None
        version = getattr(registered, "version", None)
        return int(version) if isinstance(version, int) else None

    def close(self) -> None:
        """Release the registry client when this converter created a real (not mock) one."""
        client = self._registry
        if client is not None and client not in _MOCK_REGISTRIES.values():
            close = getattr(client, "close", None)
            if callable(close):
                close()


def _is_transport_error(exc: BaseException) -> bool:
    for cls in type(exc).__mro__:
        if cls.__name__ in ("TransportError", "TimeoutException", "ConnectError", "NetworkError"):
            return True
    return False
