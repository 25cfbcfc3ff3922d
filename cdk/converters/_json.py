r"""The :class:`JsonConverter`: Kafka's JSON envelope, byte for byte.

With ``schemas.enable=true`` (the default) each key/value is written as
``{"schema":<schema>,"payload":<value>}``, the schema in Kafka's JSON schema format; with
``schemas.enable=false`` only the payload is written and reads infer types (integral numbers
INT64, other numbers FLOAT64, objects MAP, arrays ARRAY).

The JSON text is the one Kafka's Jackson writes: compact, keys in Kafka's order, non-ASCII as UTF-8
except characters beyond U+FFFF, which are escaped as UTF-16 surrogate pairs (``\uD83D\uDE00``),
doubles/floats in Java's ``toString`` form (``1.0E10``), non-finite numbers as the strings
``"NaN"``, ``"Infinity"`` and ``"-Infinity"`` (Jackson's default; Kafka itself reads those back as
``0.0``, this converter reads them back as the special values). Reading accepts what Kafka's
Jackson accepts, including numbers with leading zeros (``00012`` reads as 12).

Performance: per schema, an encoder and a decoder are compiled once and kept in LRU caches of
``schemas.cache.size`` entries; the schema part of the envelope is rendered once and spliced in as
bytes; envelopes whose schema text was seen before are parsed without re-reading the schema.
``orjson`` (a dependency of the kit) parses payloads that need no exact decimals; where it is
missing the stdlib parses them, with identical results.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from decimal import Decimal as _decimal_type
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from cdk.config import ConfigDef, Importance, Type, Width, validators
from cdk.converters._json_codec import (
    Codec,
    Decoder,
    Encoder,
    NeedExactNumbers,
    decode_schemaless,
)
from cdk.converters._json_text import jackson_utf8, without_leading_zeros
from cdk.converters._simple import _KeyValueHeaderConverter, converter_config_def
from cdk.data import Decimal, Schema, SchemaAndValue, SchemaType
from cdk.errors import DataException

if TYPE_CHECKING:
    from cdk.api import Headers

__all__ = ["JsonConverter", "json_converter_config_def"]

_orjson: Any
try:  # pragma: no cover - depends on the environment
    import orjson as _orjson
except ImportError:  # pragma: no cover
    _orjson = None

SCHEMAS_ENABLE_CONFIG = "schemas.enable"
SCHEMAS_CACHE_SIZE_CONFIG = "schemas.cache.size"
DECIMAL_FORMAT_CONFIG = "decimal.format"
REPLACE_NULL_WITH_DEFAULT_CONFIG = "replace.null.with.default"

_ENVELOPE_ERROR = (
    'JsonConverter with schemas.enable requires "schema" and "payload" fields and may not contain '
    "additional fields. If you are trying to deserialize plain JSON data, set schemas.enable=false "
    "in your converter configuration."
)
_READ_ERROR = "Converting byte[] to Kafka Connect data failed due to serialization error: "
_WRITE_ERROR = "Converting Kafka Connect data to byte[] failed due to serialization error: "
_SCHEMA_PREFIX = b'{"schema":'
_PAYLOAD_KEY = b',"payload":'
_LONG_DIGITS = re.compile(rb"\d{20}")
_DIGITS = b"0123456789"
# Parse results orjson always gives exactly as the stdlib does (no float inside).
_EXACT_TYPES = frozenset({str, int, bool, type(None)})


def json_converter_config_def() -> ConfigDef:
    """The JsonConverter's ConfigDef (``converter.type`` plus the JSON settings)."""
    return (
        converter_config_def()
        .define(
            SCHEMAS_ENABLE_CONFIG,
            Type.BOOLEAN,
            True,
            None,
            Importance.HIGH,
            "Whether every serialized key and value carries its schema in a JSON envelope.",
            group="Schemas",
            order_in_group=0,
            width=Width.MEDIUM,
            display_name="Enable Schemas",
        )
        .define(
            SCHEMAS_CACHE_SIZE_CONFIG,
            Type.INT,
            1000,
            None,
            Importance.HIGH,
            "How many schemas one converter instance keeps in its caches.",
            group="Schemas",
            order_in_group=1,
            width=Width.MEDIUM,
            display_name="Schema Cache Size",
        )
        .define(
            DECIMAL_FORMAT_CONFIG,
            Type.STRING,
            "BASE64",
            validators.CaseInsensitiveValidString.of("BASE64", "NUMERIC"),
            Importance.LOW,
            "How Decimal values are written: 'BASE64' (the default; base64 of the unscaled "
            "bytes) or 'NUMERIC' (a JSON number). Case insensitive.",
            group="Serialization",
            order_in_group=0,
            width=Width.MEDIUM,
            display_name="Decimal Format",
        )
        .define(
            REPLACE_NULL_WITH_DEFAULT_CONFIG,
            Type.BOOLEAN,
            True,
            None,
            Importance.LOW,
            "Whether a null field that has a default value is written and read as that default "
            "(true) or as null (false).",
            group="Serialization",
            order_in_group=1,
            width=Width.MEDIUM,
            display_name="Replace null with default",
        )
    )


K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class _LRU(Generic[K, V]):
    """A small thread-safe LRU map (Kafka's ``SynchronizedCache(LRUCache)``)."""

    __slots__ = ("_data", "_lock", "_max")

    def __init__(self, max_size: int) -> None:
        self._data: OrderedDict[K, V] = OrderedDict()
        self._max = max(1, max_size)
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._data.get(key)
            if value is not None:
                self._data.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self._max:
                self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"Non-standard token '{name}': NaN and Infinity are not valid JSON numbers")


_EXACT = json.JSONDecoder(parse_float=_decimal_type, parse_constant=_reject_constant)
_STD = json.JSONDecoder(parse_constant=_reject_constant)


def _text(data: bytes) -> str:
    return data.decode(json.detect_encoding(data), "surrogatepass")


def _decode(decoder: json.JSONDecoder, data: bytes) -> Any:
    """Parse; only after a parse error, retry with leading zeros dropped (as Kafka's Jackson)."""
    text = _text(data)
    try:
        return decoder.decode(text)
    except ValueError as exc:
        relaxed = without_leading_zeros(text)
        if relaxed is None:
            raise
        try:
            return decoder.decode(relaxed)
        except ValueError:
            raise exc from None


def _loads_exact(data: bytes) -> Any:
    """Parse with exact decimals (Jackson's ``USE_BIG_DECIMAL_FOR_FLOATS``)."""
    return _decode(_EXACT, data)


def _loads_std(data: bytes) -> Any:
    return _decode(_STD, data)


def _has_long_digits(data: bytes) -> bool:
    """Whether ``data`` holds a run of 20 digits (an integer orjson would read as a float)."""
    # Counting the digits first is ~10x cheaper than the regex, which only runs when there
    # are at least 20 of them.
    return len(data) - len(data.translate(None, _DIGITS)) >= 20 and bool(_LONG_DIGITS.search(data))


def _loads_fast(data: bytes) -> Any:
    """Parse with orjson when it gives exactly what the stdlib gives, else with the stdlib.

    orjson reads an integer beyond 64 bits as a float where the stdlib keeps it exact: a result
    that holds no float (a string, an in-range int, a boolean, null) is always what the stdlib
    gives; objects, arrays and floats are kept only when no 20-digit run is in the text.
    """
    if _orjson is not None:
        try:
            value = _orjson.loads(data)
        except _orjson.JSONDecodeError:
            pass  # let the stdlib parse it or word the error
        else:
            if type(value) in _EXACT_TYPES or not _has_long_digits(data):
                return value
    return _loads_std(data)


def _has_decimal(schema: Schema | None) -> bool:
    if schema is None:
        return False
    if schema.name == Decimal.LOGICAL_NAME:
        return True
    if schema.type is SchemaType.STRUCT:
        return any(_has_decimal(f.schema) for f in schema.fields)
    if schema.type is SchemaType.ARRAY:
        return _has_decimal(schema.value_schema)
    if schema.type is SchemaType.MAP:
        return _has_decimal(schema.key_schema) or _has_decimal(schema.value_schema)
    return False


class JsonConverter(_KeyValueHeaderConverter):
    """Kafka's ``org.apache.kafka.connect.json.JsonConverter`` (keys, values and headers).

    Example::

        converter = JsonConverter()
        converter.configure({"schemas.enable": "true"}, is_key=False)
        data = converter.from_connect_data("topic", Schema.INT32_SCHEMA, 42)
        # b'{"schema":{"type":"int32","optional":false},"payload":42}'
        converter.to_connect_data("topic", data)  # SchemaAndValue(INT32_SCHEMA, 42)

    Settings: ``schemas.enable`` (default true), ``schemas.cache.size`` (1000),
    ``decimal.format`` (BASE64 or NUMERIC), ``replace.null.with.default`` (true) and
    ``converter.type`` (set by :meth:`configure` from ``is_key``). An unconfigured converter uses
    the defaults.
    """

    use_orjson: ClassVar[bool] = True
    """Set to ``False`` (on the class or an instance) to parse with the stdlib only."""

    def __init__(self) -> None:
        self._apply(self.config().parse({"converter.type": "value"}))

    def config(self) -> ConfigDef:
        """The converter's ConfigDef."""
        return json_converter_config_def()

    def _configure(self, parsed: dict[str, Any]) -> None:
        self._apply(parsed)

    def _apply(self, parsed: dict[str, Any]) -> None:
        self._schemas_enabled: bool = parsed[SCHEMAS_ENABLE_CONFIG]
        self._cache_size: int = parsed[SCHEMAS_CACHE_SIZE_CONFIG]
        self._decimal_numeric = str(parsed[DECIMAL_FORMAT_CONFIG]).upper() == "NUMERIC"
        self._replace_null = bool(parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG])
        self._codec = Codec(
            decimal_numeric=self._decimal_numeric,
            replace_null_with_default=self._replace_null,
        )
        size = self._cache_size
        # Schema -> (envelope prefix, encoder)
        self._from_connect: _LRU[Schema | None, tuple[bytes, Encoder]] = _LRU(size)
        # parsed JSON schema (repr) -> (schema, decoder, whether it holds Decimals)
        self._to_connect: _LRU[str, tuple[Schema | None, Decoder, bool]] = _LRU(size)
        # schema text as it appears in envelopes -> (schema, decoder, whether it holds Decimals)
        self._by_text: _LRU[bytes, tuple[Schema | None, Decoder, bool]] = _LRU(size)
        # the schema object last written, and its _from_connect entry
        self._last_from: tuple[Schema | None, tuple[bytes, Encoder]] | None = None
        # the envelope prefix (up to the payload) last read from _by_text, and its entry
        self._last_known: tuple[bytes, tuple[Schema | None, Decoder, bool]] | None = None

    # -- writing -------------------------------------------------------------------------------
    def _compile_encoder(self, schema: Schema | None) -> tuple[bytes, Encoder]:
        try:
            encoder = self._codec.encoder(schema)
            prefix = b""
            if self._schemas_enabled:
                text = self._codec.schema_json(schema)
                prefix = _SCHEMA_PREFIX + jackson_utf8(text) + _PAYLOAD_KEY
        except UnicodeEncodeError as exc:
            raise DataException(_WRITE_ERROR + str(exc)) from exc
        entry = (prefix, encoder)
        self._from_connect.put(schema, entry)
        return entry

    def as_json_schema(self, schema: Schema | None) -> Any:
        """The JSON schema of ``schema`` as parsed JSON (``None`` for no schema)."""
        return _loads_exact(jackson_utf8(self._codec.schema_json(schema)))

    def as_connect_schema(self, json_schema: Any) -> Schema | None:
        """The Connect schema described by a parsed JSON schema (``None`` for JSON null)."""
        return self._schema_entry(json_schema)[0]

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        """Serialize a value (with its schema in an envelope when ``schemas.enable``).

        ``None`` with no schema is a tombstone and stays ``None``.

        Raises:
            DataException: the value does not match the schema.
        """
        if schema is None and value is None:
            return None
        last = self._last_from
        if last is not None and last[0] is schema:
            entry = last[1]  # the previous record's schema object: no LRU lookup
        else:
            cached = self._from_connect.get(schema)
            entry = cached if cached is not None else self._compile_encoder(schema)
            self._last_from = (schema, entry)
        prefix, encoder = entry
        try:
            body = jackson_utf8(encoder(value))
        except DataException:
            raise
        except (UnicodeEncodeError, RecursionError) as exc:
            raise DataException(_WRITE_ERROR + str(exc)) from exc
        except (TypeError, ValueError, AttributeError, OverflowError) as exc:
            raise DataException(f"Invalid value for schema {schema!r}: {exc}") from exc
        if prefix:
            return prefix + body + b"}"
        return body

    # -- reading -------------------------------------------------------------------------------
    def _loads_for(self, exact: bool) -> Callable[[bytes], Any]:
        if self.use_orjson and _orjson is not None:
            return _loads_fast  # a Decimal decoder seeing a float asks for an exact re-parse
        return _loads_exact if exact else _loads_std

    def _schema_entry(self, node: Any) -> tuple[Schema | None, Decoder, bool]:
        key = repr(node)
        entry = self._to_connect.get(key)
        if entry is None:
            schema = self._codec.parse_schema(node)
            entry = (schema, self._codec.decoder(schema), _has_decimal(schema))
            self._to_connect.put(key, entry)
        return entry

    def _parse(self, loads: Callable[[bytes], Any], data: bytes) -> Any:
        try:
            return loads(data)
        except (ValueError, RecursionError) as exc:
            raise DataException(_READ_ERROR + str(exc)) from exc

    def to_connect_data(
        self, topic: str, data: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        """Deserialize bytes into a schema and value (``None`` gives ``SchemaAndValue.NULL``).

        Raises:
            DataException: invalid JSON, a missing/extra envelope field, or a payload that does
                not match its schema.
        """
        if data is None:
            return SchemaAndValue.NULL
        last = self._last_known
        if (
            last is not None
            and type(data) is bytes
            and data.startswith(last[0])
            and data.endswith(b"}")
            and self.use_orjson
        ):
            # The fast path: the schema text of the previous envelope (records of a topic mostly
            # share one), the payload read by orjson. Anything unusual takes the path below.
            text = data[len(last[0]) : -1]
            try:
                payload = _orjson.loads(text)
            except _orjson.JSONDecodeError:
                pass
            else:
                if type(payload) in _EXACT_TYPES or not _has_long_digits(text):
                    schema, decoder, _ = last[1]
                    try:
                        return SchemaAndValue(schema, decoder(payload))
                    except NeedExactNumbers:
                        return SchemaAndValue(schema, decoder(_loads_exact(text)))
        if type(data) is not bytes:
            data = bytes(data)
        if not self._schemas_enabled:
            if not data.strip():
                return SchemaAndValue.NULL
            loads = _loads_fast if self.use_orjson and _orjson is not None else _loads_std
            return SchemaAndValue(None, decode_schemaless(self._parse(loads, data)))
        if data.endswith(b"}"):
            last = self._last_known
            if last is not None and data.startswith(last[0]):
                # The schema text of the previous envelope: records of a topic mostly share one.
                found = self._read_payload(data[len(last[0]) : -1], last[1])
                if found is not None:
                    return found
            if data.startswith(_SCHEMA_PREFIX):
                found = self._read_known(data)
                if found is not None:
                    return found
        envelope = self._parse(_loads_exact, data)
        if not (
            type(envelope) is dict
            and len(envelope) == 2
            and "schema" in envelope
            and "payload" in envelope
        ):
            raise DataException(_ENVELOPE_ERROR)
        schema, decoder, exact = self._schema_entry(envelope["schema"])
        prefix = self._from_connect.get(schema)
        if prefix is None:
            prefix = self._compile_encoder(schema)
        if data.startswith(prefix[0]):
            self._by_text.put(
                prefix[0][len(_SCHEMA_PREFIX) : -len(_PAYLOAD_KEY)], (schema, decoder, exact)
            )
        return SchemaAndValue(schema, decoder(envelope["payload"]))

    def _read_known(self, data: bytes) -> SchemaAndValue | None:
        """Read an envelope whose schema text was seen before; ``None`` if it was not."""
        start = len(_SCHEMA_PREFIX)
        index = data.find(_PAYLOAD_KEY, start)
        for _ in range(4):
            if index < 0:
                return None
            entry = self._by_text.get(data[start:index])
            if entry is not None:
                end = index + len(_PAYLOAD_KEY)
                found = self._read_payload(data[end:-1], entry)
                if found is not None and _orjson is not None:
                    self._last_known = (data[:end], entry)
                return found
            index = data.find(_PAYLOAD_KEY, index + 1)
        return None

    def _read_payload(
        self, text: bytes, entry: tuple[Schema | None, Decoder, bool]
    ) -> SchemaAndValue | None:
        """Decode an envelope's payload text with a known schema; ``None`` if it is not JSON."""
        schema, decoder, exact = entry
        try:
            payload = self._loads_for(exact)(text)
        except (ValueError, RecursionError):
            return None  # not a plain envelope after all: the full parse words the error
        try:
            return SchemaAndValue(schema, decoder(payload))
        except NeedExactNumbers:
            return SchemaAndValue(schema, decoder(_loads_exact(text)))

    # -- introspection (tests) -----------------------------------------------------------------
    def _cache_sizes(self) -> tuple[int, int]:
        """Entries in the (from-Connect, to-Connect) schema caches."""
        return len(self._from_connect), len(self._to_connect)
