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
from typing import TYPE_CHECKING, Any, ClassVar

from cdk.converters import _avro_plan as _plan
from cdk.converters import _registry as _reg
from cdk.converters._api import Converter
from cdk.converters._avro_common import AvroDataConfig, strip_logical_types
from cdk.converters._avro_data import AvroData
from cdk.converters._avro_names import full_name_of, resolve_avro_schema
from cdk.converters._sr_plan import Decode, Encode
from cdk.data import Schema, SchemaAndValue, validate_value
from cdk.errors import DataException, MissingExtraError

if TYPE_CHECKING:
    from cdk.api import Headers
    from cdk.config import ConfigDef

__all__ = ["AvroConverter"]

MAGIC_BYTE = _reg.MAGIC_BYTE
_HEADER = _reg.HEADER

SCHEMA_REGISTRY_URL_CONFIG = _reg.SCHEMA_REGISTRY_URL_CONFIG
AUTO_REGISTER_SCHEMAS_CONFIG = _reg.AUTO_REGISTER_SCHEMAS_CONFIG
USE_LATEST_VERSION_CONFIG = _reg.USE_LATEST_VERSION_CONFIG
KEY_SUBJECT_NAME_STRATEGY_CONFIG = _reg.KEY_SUBJECT_NAME_STRATEGY_CONFIG
VALUE_SUBJECT_NAME_STRATEGY_CONFIG = _reg.VALUE_SUBJECT_NAME_STRATEGY_CONFIG
SCHEMAS_CACHE_CONFIG = _reg.SCHEMAS_CACHE_CONFIG
CONNECT_META_DATA_CONFIG = "connect.meta.data"
ENHANCED_AVRO_SCHEMA_SUPPORT_CONFIG = "enhanced.avro.schema.support"
SCRUB_INVALID_NAMES_CONFIG = "scrub.invalid.names"
TOPIC_NAME_STRATEGY = _reg.TOPIC_NAME_STRATEGY
RECORD_NAME_STRATEGY = _reg.RECORD_NAME_STRATEGY

_FMT = "Avro"


def _config_def() -> ConfigDef:
    from cdk.config import Importance, Type

    return (
        _reg.registry_config_def(_FMT)
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
    ``schema.registry.url`` is required. The registry client's own keys (``schema.registry.ssl.*``,
    ``schema.registry.timeout``, ...) keep their ``schema.registry.`` prefix. Every registry call
    ends in bounded time (see :mod:`cdk.converters._registry`).

    Args:
        schema_registry: a Schema Registry client to use instead of creating one from the
            configuration (tests pass a mock client here).
    """

    #: Whether records take compiled per-schema plans (:mod:`._avro_plan`) where they can;
    #: ``False`` (on the class or an instance) always takes the general path (tests compare).
    use_plans: ClassVar[bool] = True

    def __init__(self, schema_registry: Any = None) -> None:
        self._given_client = schema_registry
        self._registry: _reg.Registry | None = None
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
        self._reset_plans()

    def _reset_plans(self) -> None:
        # (topic, schema) -> the plan writing it (None: the schema has none)
        self._encoders: dict[tuple[str, Schema], Encode | None] = {}
        # the schema object and topic last written, and its plan
        self._last_encoder: tuple[Schema, str, Encode] | None = None
        # (topic, schema id, version) -> the plan reading it (None: none)
        self._decoders: dict[tuple[str, int, int], Decode | None] = {}
        # the topic and 5-byte header last read, and its plan
        self._last_decoder: tuple[str, bytes, Decode] | None = None
        # (topic, 5-byte header) -> the plan last compiled for it
        self._by_header: dict[tuple[str, bytes], Decode] = {}

    def config(self) -> ConfigDef:
        """The converter's ConfigDef."""
        return _config_def()

    def configure(self, configs: Mapping[str, Any], is_key: bool) -> None:
        """Parse the settings and connect the Schema Registry client.

        Raises:
            ConfigException: a setting is missing or invalid (``schema.registry.url`` is required);
                the message names the setting.
        """
        from cdk.config import AbstractConfig

        _import_fastavro()
        cfg = AbstractConfig(_config_def(), dict(configs))
        self._is_key = is_key
        self._auto_register = cfg.get_boolean(AUTO_REGISTER_SCHEMAS_CONFIG)
        self._use_latest = cfg.get_boolean(USE_LATEST_VERSION_CONFIG)
        key = KEY_SUBJECT_NAME_STRATEGY_CONFIG if is_key else VALUE_SUBJECT_NAME_STRATEGY_CONFIG
        self._strategy = _reg.subject_name_strategy(cfg.get_string(key))
        self._avro_data = AvroData(
            AvroDataConfig(
                connect_meta_data=cfg.get_boolean(CONNECT_META_DATA_CONFIG),
                enhanced_avro_schema_support=cfg.get_boolean(ENHANCED_AVRO_SCHEMA_SUPPORT_CONFIG),
                scrub_invalid_names=cfg.get_boolean(SCRUB_INVALID_NAMES_CONFIG),
                schemas_cache_size=cfg.get_int(SCHEMAS_CACHE_CONFIG),
            )
        )
        if self._given_client is not None:
            urls = cfg.get_list(SCHEMA_REGISTRY_URL_CONFIG)
            self._registry = _reg.Registry(self._given_client, ",".join(urls), _FMT)
        else:
            self._registry = _reg.Registry.from_config(cfg, configs, _FMT, "AvroConverter", "avro")
        self._reset_plans()
        self._configured = True

    def _client(self) -> _reg.Registry:
        if not self._configured or self._registry is None:
            raise DataException("AvroConverter is not configured: call configure() first")
        return self._registry

    def _require_configured(self) -> None:
        self._client()

    # -- subjects ----------------------------------------------------------------------------
    def subject_name(self, topic: str, avro_schema: Any) -> str:
        """The registry subject for a schema written to ``topic``, per the naming strategy."""
        name = None
        if self._strategy != TOPIC_NAME_STRATEGY:
            name = full_name_of(avro_schema)
            if name is not None and "." not in name and avro_schema.get("namespace"):
                name = f"{avro_schema['namespace']}.{name}"
        return _reg.subject_name(self._strategy, topic, self._is_key, name)

    # -- Connect -> bytes --------------------------------------------------------------------
    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        """Serialize a Connect value into Confluent's Avro wire format.

        ``None`` stays ``None`` (a tombstone) and registers nothing.

        Raises:
            DataException: the value is schemaless, does not match its schema, or the schema has
                no Avro form; or the registry refused the schema (the message names the subject
                and the registry's reason).
            RetriableException: the registry could not be reached or did not answer in time.
        """
        last = self._last_encoder
        if last is not None and last[0] is schema and last[1] == topic:
            data = last[2](value)
            if data is not None:
                return data
        elif self._encoders:
            encoder = self._encoders.get((topic, schema))  # type: ignore[arg-type]
            if encoder is not None:
                self._last_encoder = (schema, topic, encoder)  # type: ignore[assignment]
                data = encoder(value)
                if data is not None:
                    return data
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
        if self.use_plans:
            self._remember_encoder(topic, schema, writer)
        return body.getvalue()

    def _remember_encoder(self, topic: str, schema: Schema, writer: _WriterSchema) -> None:
        key = (topic, schema)
        if key in self._encoders:
            encoder = self._encoders[key]
        else:
            header = _HEADER.pack(MAGIC_BYTE, writer.schema_id)
            encoder = _plan.compile_encoder(self._avro_data.config, schema, writer.resolved, header)
            with self._lock:
                self._encoders[key] = encoder
        if encoder is not None:
            self._last_encoder = (schema, topic, encoder)

    def _writer_for(self, topic: str, subject: str, text: str) -> _WriterSchema:
        registry = self._client()
        prefix = f"Failed to serialize Avro data from topic {topic}"
        if self._auto_register or not self._use_latest:
            key = (subject, text)
            cached = self._writers.get(key)
            schema_id = self._ids.get(key)
            if schema_id is None:
                schema_id = self._register_or_lookup(prefix, subject, text)
                with self._lock:
                    self._ids[key] = schema_id
            if cached is None or cached.schema_id != schema_id:
                cached = _WriterSchema(schema_id, text)
                with self._lock:
                    self._writers[key] = cached
            return cached
        latest = self._latest.get(subject)
        if latest is None:
            registered = registry.call(
                prefix,
                f"getting the latest schema of subject {subject}",
                lambda: registry.client.get_latest_version(subject),
            )
            latest = _WriterSchema(int(registered.schema_id), registered.schema.schema_str)
            with self._lock:
                self._latest[subject] = latest
        return latest

    def _register_or_lookup(self, prefix: str, subject: str, text: str) -> int:
        registry = self._client()
        schema_registry = _reg.import_registry("AvroConverter", "avro")
        sr_schema = schema_registry.Schema(text, "AVRO")
        if self._auto_register:
            return int(
                registry.call(
                    prefix,
                    f"registering the schema under subject {subject}",
                    lambda: registry.client.register_schema(subject, sr_schema),
                )
            )
        registered = registry.call(
            prefix,
            f"looking up the schema under subject {subject}",
            lambda: registry.client.lookup_schema(subject, sr_schema),
        )
        return int(registered.schema_id)

    # -- bytes -> Connect --------------------------------------------------------------------
    def to_connect_data(
        self, topic: str, data: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        """Deserialize Confluent's Avro wire format into a Connect schema and value.

        The schema gets the registry version of the writer schema unless it carries a
        ``connect.version``. ``None`` gives :attr:`SchemaAndValue.NULL`.

        Raises:
            DataException: wrong magic byte, short payload, unknown schema id or corrupt body.
            RetriableException: the registry could not be reached or did not answer in time.
        """
        if type(data) is bytes:
            last = self._last_decoder
            if last is None or not (data.startswith(last[1]) and last[0] == topic):
                header = data[: _HEADER.size]
                plan = self._by_header.get((topic, header))
                last = None if plan is None else (topic, header, plan)
                if last is not None:
                    self._last_decoder = last
            if last is not None:
                found = last[2](data)
                if found is not None:
                    return found
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
        if self.use_plans and version is not None:
            # A version once found under the subject stays that schema's: the plan keeps it.
            self._remember_decoder(topic, writer, version, schema)
        return SchemaAndValue(schema, value)

    def _remember_decoder(
        self, topic: str, writer: _WriterSchema, version: int, schema: Schema
    ) -> None:
        key = (topic, writer.schema_id, version)
        if key in self._decoders:
            decoder = self._decoders[key]
        else:
            decoder = _plan.compile_decoder(schema, writer.resolved, _HEADER.size)
            with self._lock:
                self._decoders[key] = decoder
        if decoder is not None:
            header = _HEADER.pack(MAGIC_BYTE, writer.schema_id)
            self._last_decoder = (topic, header, decoder)
            with self._lock:
                self._by_header[(topic, header)] = decoder

    def _reader_for(self, topic: str, schema_id: int) -> _WriterSchema:
        cached = self._readers.get(schema_id)
        if cached is not None:
            return cached
        registry = self._client()
        prefix = f"Failed to deserialize data for topic {topic} to Avro"
        sr_schema = registry.call(
            prefix,
            f"retrieving the Avro {'key' if self._is_key else 'value'} schema for id {schema_id}",
            lambda: registry.client.get_schema(schema_id),
        )
        schema_type = getattr(sr_schema, "schema_type", "AVRO") or "AVRO"
        if schema_type != "AVRO":
            raise DataException(
                f"{prefix}: schema id {schema_id} is a {schema_type} schema, not Avro"
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
        registry = self._client()
        schema_registry = _reg.import_registry("AvroConverter", "avro")
        try:
            registered = registry.call(
                f"Failed to deserialize data for topic {topic} to Avro",
                f"looking up the version of schema id {writer.schema_id} under subject {subject}",
                lambda: registry.client.lookup_schema(
                    subject, schema_registry.Schema(writer.text, "AVRO")
                ),
            )
        except DataException:
            return None  # not registered under the subject: no version
        version = getattr(registered, "version", None)
        return int(version) if isinstance(version, int) else None

    def close(self) -> None:
        """Release the registry client when this converter created a real (not mock) one."""
        if self._registry is not None:
            self._registry.close()
