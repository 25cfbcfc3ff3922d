"""A base for the Schema Registry converters of this kit that are not Avro: Protobuf, JSON Schema.

It owns what they share with Confluent's: the settings (:func:`registry_config_def`), the
registry client, subjects, registration or lookup (or the latest version) of a writer schema,
the wire header (magic byte ``0``, the 4-byte big-endian schema id) and the cache of reader
schemas by id. A subclass maps Connect schemas and values to its format.
"""

from __future__ import annotations

import threading
from abc import abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from cdk.converters import _registry as _reg
from cdk.converters._api import Converter
from cdk.converters._sr_plan import Decode, Encode
from cdk.data import Schema, SchemaAndValue, validate_value
from cdk.errors import DataException

if TYPE_CHECKING:
    from cdk.api import Headers
    from cdk.config import AbstractConfig, ConfigDef

__all__: list[str] = []

W = TypeVar("W")  # the format's parsed writer schema


class RegistryConverter(Converter, Generic[W]):
    """The registry side of a Schema Registry converter; the format side is the subclass's.

    Args:
        schema_registry: a Schema Registry client to use instead of creating one from the
            configuration.
    """

    #: The format's name in messages ("Protobuf", "JSON Schema").
    FORMAT = ""
    #: The registry's schema type ("PROTOBUF", "JSON").
    SCHEMA_TYPE = ""
    #: The extra that provides the format's dependencies.
    EXTRA = ""
    #: Whether records take the compiled per-schema plans (:mod:`._sr_plan`) where they can;
    #: ``False`` (on the class or an instance) always takes the general path (tests compare).
    use_plans: ClassVar[bool] = True

    def __init__(self, schema_registry: Any = None) -> None:
        self._given_client = schema_registry
        self._registry: _reg.Registry | None = None
        self._is_key = False
        self._auto_register = True
        self._use_latest = False
        self._latest_strict = True
        self._strategy = _reg.TOPIC_NAME_STRATEGY
        self._lock = threading.Lock()
        self._writers: dict[tuple[str, Schema], tuple[int, W]] = {}
        self._readers: dict[int, tuple[W, int | None]] = {}
        self._configured = False
        self._reset_plans()

    def _reset_plans(self) -> None:
        # (topic, schema) -> the plan serializing it (None: the schema has none)
        self._encoders: dict[tuple[str, Schema], Encode | None] = {}
        # the schema object and topic last written, and its plan
        self._last_encoder: tuple[Schema, str, Encode] | None = None
        # the payload start (header and format prefix) last read, and its plan
        self._last_decoder: tuple[bytes, Decode] | None = None
        # 5-byte header -> the payload start and plan last compiled for it
        self._decoders: dict[bytes, tuple[bytes, Decode]] = {}

    # -- format hooks --------------------------------------------------------------------------
    @abstractmethod
    def _format_config_def(self, base: ConfigDef) -> ConfigDef:
        """The converter's ConfigDef: ``base`` (the registry settings) plus the format's."""

    @abstractmethod
    def _configure_format(self, cfg: AbstractConfig) -> None:
        """Import the format's dependencies and read its settings."""

    @abstractmethod
    def _writer_from_connect(self, schema: Schema) -> tuple[str, str | None, W]:
        """The registry text, the record (message) name and the parsed form of ``schema``."""

    @abstractmethod
    def _writer_from_registry(self, text: str, schema_id: int) -> W:
        """Parse a schema read from the registry."""

    @abstractmethod
    def _encode(self, writer: W, schema: Schema, value: Any) -> bytes:
        """The bytes after the 5-byte header for ``value``."""

    @abstractmethod
    def _decode(self, writer: W, version: int | None, body: memoryview) -> SchemaAndValue:
        """A Connect schema and value from the bytes after the header."""

    def _compile_encoder(self, writer: W, schema: Schema, header: bytes) -> Encode | None:
        """The plan serializing values of ``schema`` (the whole record, ``header`` first)."""
        return None

    def _compile_decoder(
        self, writer: W, version: int | None, body: memoryview
    ) -> tuple[bytes, Decode] | None:
        """The bytes after the header that start payloads like ``body``, and their plan."""
        return None

    def _registry_schema(self, text: str) -> Any:
        schema_registry = _reg.import_registry(type(self).__name__, self.EXTRA)
        return schema_registry.Schema(text, self.SCHEMA_TYPE)

    # -- Converter -----------------------------------------------------------------------------
    def config(self) -> ConfigDef:
        """The converter's ConfigDef."""
        return self._format_config_def(_reg.registry_config_def(self.FORMAT))

    def configure(self, configs: Mapping[str, Any], is_key: bool) -> None:
        """Parse the settings and connect the Schema Registry client.

        Raises:
            ConfigException: a setting is missing or invalid (``schema.registry.url`` is
                required); the message names the setting.
            MissingExtraError: the format's optional dependencies are not installed.
        """
        from cdk.config import AbstractConfig

        cfg = AbstractConfig(self.config(), dict(configs))
        self._configure_format(cfg)
        self._is_key = is_key
        self._auto_register = cfg.get_boolean(_reg.AUTO_REGISTER_SCHEMAS_CONFIG)
        self._use_latest = cfg.get_boolean(_reg.USE_LATEST_VERSION_CONFIG)
        self._latest_strict = cfg.get_boolean(_reg.LATEST_COMPATIBILITY_STRICT_CONFIG)
        key = (
            _reg.KEY_SUBJECT_NAME_STRATEGY_CONFIG
            if is_key
            else _reg.VALUE_SUBJECT_NAME_STRATEGY_CONFIG
        )
        self._strategy = _reg.subject_name_strategy(cfg.get_string(key))
        self._reset_plans()
        if self._given_client is not None:
            urls = cfg.get_list(_reg.SCHEMA_REGISTRY_URL_CONFIG)
            self._registry = _reg.Registry(
                self._given_client, ",".join(urls), self.FORMAT, extra=self.EXTRA
            )
        else:
            self._registry = _reg.Registry.from_config(
                cfg, configs, self.FORMAT, type(self).__name__, self.EXTRA
            )
        self._configured = True

    def _client(self) -> _reg.Registry:
        if not self._configured or self._registry is None:
            raise DataException(f"{type(self).__name__} is not configured: call configure() first")
        return self._registry

    def _ser_prefix(self, topic: str) -> str:
        return f"Failed to serialize {self.FORMAT} data from topic {topic}"

    def _de_prefix(self, topic: str) -> str:
        return f"Failed to deserialize data for topic {topic} to {self.FORMAT}"

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        """Serialize a Connect value into Confluent's wire format for this format.

        ``None`` stays ``None`` (a tombstone) and registers nothing.

        Raises:
            DataException: the value is schemaless or does not match its schema, the schema has
                no form in this format, or the registry refused it (naming the subject and the
                registry's reason).
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
        self._client()
        prefix = self._ser_prefix(topic)
        if value is None:
            if schema is not None and not schema.optional:
                raise DataException(f"{prefix}: found null value for non-optional schema")
            return None
        if schema is None:
            raise DataException(
                f"{prefix}: {type(self).__name__} needs a schema, but the value (a "
                f"{type(value).__name__}) has none; use a converter for schemaless data "
                f"(e.g. JsonConverter with schemas.enable=false)"
            )
        try:
            validate_value(schema, value)
        except DataException as exc:
            raise DataException(f"{prefix}: {exc.message}", field=exc.field) from exc
        schema_id, writer = self._writer_for(topic, schema)
        try:
            body = self._encode(writer, schema, value)
        except DataException as exc:
            raise DataException(f"{prefix}: {exc.message}", field=exc.field) from exc
        except (ValueError, TypeError, KeyError, AttributeError, OverflowError) as exc:
            raise DataException(f"{prefix}: {type(exc).__name__}: {exc}") from exc
        header = _reg.HEADER.pack(_reg.MAGIC_BYTE, schema_id)
        if self.use_plans:
            self._remember_encoder(topic, schema, writer, header)
        return header + body

    def _remember_encoder(self, topic: str, schema: Schema, writer: W, header: bytes) -> None:
        key = (topic, schema)
        if key in self._encoders:
            encoder = self._encoders[key]
        else:
            encoder = self._compile_encoder(writer, schema, header)
            with self._lock:
                self._encoders[key] = encoder
        if encoder is not None:
            self._last_encoder = (schema, topic, encoder)

    def _writer_for(self, topic: str, schema: Schema) -> tuple[int, W]:
        key = (topic, schema)
        cached = self._writers.get(key)
        if cached is not None:
            return cached
        prefix = self._ser_prefix(topic)
        try:
            text, record_name, writer = self._writer_from_connect(schema)
        except DataException as exc:
            raise DataException(f"{prefix}: {exc.message}", field=exc.field) from exc
        subject = _reg.subject_name(self._strategy, topic, self._is_key, record_name)
        registry = self._client()
        sr_schema = self._registry_schema(text)
        if self._auto_register:
            schema_id = int(
                registry.call(
                    prefix,
                    f"registering the schema under subject {subject}",
                    lambda: registry.client.register_schema(subject, sr_schema),
                )
            )
        elif self._use_latest:
            latest = registry.call(
                prefix,
                f"getting the latest schema of subject {subject}",
                lambda: registry.client.get_latest_version(subject),
            )
            if self._latest_strict and latest.schema.schema_str != text:
                ok = registry.call(
                    prefix,
                    f"testing the value's schema against the latest of subject {subject}",
                    lambda: registry.client.test_compatibility(subject, sr_schema),
                )
                if not ok:
                    raise DataException(
                        f"{prefix}: the latest schema of subject {subject} (id "
                        f"{latest.schema_id}) is not compatible with the value's schema "
                        f"(latest.compatibility.strict=true)"
                    )
            schema_id = int(latest.schema_id)
            writer = self._writer_from_registry(latest.schema.schema_str, schema_id)
        else:
            registered = registry.call(
                prefix,
                f"looking up the schema under subject {subject}",
                lambda: registry.client.lookup_schema(subject, sr_schema),
            )
            schema_id = int(registered.schema_id)
        with self._lock:
            self._writers[key] = (schema_id, writer)
        return schema_id, writer

    def to_connect_data(
        self, topic: str, data: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        """Deserialize Confluent's wire format for this format into a Connect schema and value.

        ``None`` gives :attr:`SchemaAndValue.NULL`.

        Raises:
            DataException: wrong magic byte, short payload, unknown schema id or corrupt body.
            RetriableException: the registry could not be reached or did not answer in time.
        """
        if type(data) is bytes:
            last = self._last_decoder
            if last is None or not data.startswith(last[0]):
                last = self._decoders.get(data[: _reg.HEADER.size])
                if last is not None and data.startswith(last[0]):
                    self._last_decoder = last
                else:
                    last = None
            if last is not None:
                found = last[1](data)
                if found is not None:
                    return found
        self._client()
        if data is None:
            return SchemaAndValue.NULL
        prefix = self._de_prefix(topic)
        payload = memoryview(bytes(data))
        if len(payload) < 1 or payload[0] != _reg.MAGIC_BYTE:
            raise DataException(f"{prefix}: Unknown magic byte!")
        if len(payload) < _reg.HEADER.size:
            raise DataException(
                f"{prefix}: the payload has {len(payload)} bytes, fewer than the 5-byte header "
                f"(magic byte and 4-byte schema id)"
            )
        _, schema_id = _reg.HEADER.unpack_from(payload)
        writer, version = self._reader_for(topic, schema_id)
        body = payload[_reg.HEADER.size :]
        try:
            found = self._decode(writer, version, body)
        except DataException as exc:
            raise DataException(f"{prefix}: {exc.message}", field=exc.field) from exc
        except (ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
            raise DataException(
                f"{prefix}: Error deserializing {self.FORMAT} message for id {schema_id}: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        if self.use_plans:
            plan = self._compile_decoder(writer, version, body)
            if plan is not None:
                header = bytes(payload[: _reg.HEADER.size])
                self._last_decoder = (header + plan[0], plan[1])
                with self._lock:
                    self._decoders[header] = self._last_decoder
        return found

    def _fetch_schema(self, registry: _reg.Registry, schema_id: int) -> Any:
        return registry.client.get_schema(schema_id)

    def _reader_for(self, topic: str, schema_id: int) -> tuple[W, int | None]:
        cached = self._readers.get(schema_id)
        if cached is not None:
            return cached
        registry = self._client()
        prefix = self._de_prefix(topic)
        part = "key" if self._is_key else "value"
        sr_schema = registry.call(
            prefix,
            f"retrieving the {self.FORMAT} {part} schema for id {schema_id}",
            lambda: self._fetch_schema(registry, schema_id),
        )
        schema_type = getattr(sr_schema, "schema_type", None) or "AVRO"
        if schema_type != self.SCHEMA_TYPE:
            raise DataException(
                f"{prefix}: schema id {schema_id} is a {schema_type} schema, not {self.FORMAT}"
            )
        try:
            writer = self._writer_from_registry(sr_schema.schema_str, schema_id)
        except DataException as exc:
            raise DataException(f"{prefix}: {exc.message}") from exc
        version = self._version_of(topic, schema_id, sr_schema, writer)
        with self._lock:
            self._readers[schema_id] = (writer, version)
        return writer, version

    def _record_name(self, writer: W) -> str | None:
        return None

    def _version_of(self, topic: str, schema_id: int, sr_schema: Any, writer: W) -> int | None:
        """The version of schema ``schema_id`` under its subject, when it can be found."""
        registry = self._client()
        try:
            subject = _reg.subject_name(
                self._strategy, topic, self._is_key, self._record_name(writer)
            )
            registered = registry.call(
                self._de_prefix(topic),
                f"looking up the version of schema id {schema_id} under subject {subject}",
                lambda: registry.client.lookup_schema(subject, sr_schema),
            )
        except DataException:
            return None
        version = getattr(registered, "version", None)
        return int(version) if isinstance(version, int) else None

    def close(self) -> None:
        """Release the registry client when this converter created a real (not mock) one."""
        if self._registry is not None:
            self._registry.close()
