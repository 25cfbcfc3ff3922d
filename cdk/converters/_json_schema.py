"""The :class:`JsonSchemaConverter`: Confluent's JSON Schema wire format with a Schema Registry.

Compatible with ``io.confluent.connect.json.JsonSchemaConverter``: the bytes are a magic byte
``0``, the 4-byte big-endian id of the writer's JSON Schema in the registry, then the value as
UTF-8 JSON. Connect schemas map to JSON Schemas as Confluent's ``JsonSchemaData`` maps them (see
:mod:`cdk.converters._json_schema_data`).

``jsonschema`` (validation with ``json.fail.invalid.schema=true``) comes with the ``json-schema``
extra and is imported on first use.
"""

from __future__ import annotations

import decimal as _decimal
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import orjson

from cdk.converters import _json_schema_data as _data
from cdk.converters import _json_schema_plan as _plan
from cdk.converters import _registry as _reg
from cdk.converters._json_text import json_decimal
from cdk.converters._sr_base import RegistryConverter
from cdk.converters._sr_plan import Decode, Encode
from cdk.data import Schema, SchemaAndValue, SchemaType
from cdk.errors import DataException, MissingExtraError

if TYPE_CHECKING:
    from cdk.config import AbstractConfig, ConfigDef

__all__ = ["JsonSchemaConverter"]

JSON_FAIL_INVALID_SCHEMA_CONFIG = "json.fail.invalid.schema"
OBJECT_ADDITIONAL_PROPERTIES_CONFIG = "object.additional.properties"
DECIMAL_FORMAT_CONFIG = "decimal.format"
SCHEMA_DRAFT = "http://json-schema.org/draft-07/schema#"


def _import_jsonschema() -> Any:
    try:
        import jsonschema
    except ImportError as exc:
        raise MissingExtraError("JsonSchemaConverter", "json-schema", "jsonschema") from exc
    return jsonschema


def _fragment(value: Any) -> Any:
    if isinstance(value, _decimal.Decimal):
        return orjson.Fragment(json_decimal(value))
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def _has_numeric(schema: Schema) -> bool:
    if schema.type is SchemaType.BYTES:
        return True
    if schema.type is SchemaType.STRUCT:
        return any(_has_numeric(f.schema) for f in schema.fields)
    if schema.type is SchemaType.ARRAY:
        return _has_numeric(schema.value_schema)
    if schema.type is SchemaType.MAP:
        return _has_numeric(schema.key_schema) or _has_numeric(schema.value_schema)
    return False


class _Writer:
    """A JSON Schema in the registry: its parsed form, Connect schema and validator."""

    __slots__ = ("connect", "decoder", "exact_numbers", "json", "validator")

    def __init__(self, node: Any, connect: Schema | None, validator: Any) -> None:
        self.json = node
        # the Connect schema read payloads have, and the plan reading them (None: none)
        self.decoder: tuple[Schema, Decode | None] | None = None
        self.connect = connect
        self.validator = validator
        self.exact_numbers = connect is not None and _has_numeric(connect)


class JsonSchemaConverter(RegistryConverter[_Writer]):
    """Converts Connect data to Confluent's JSON Schema wire format and back, via a registry.

    Settings (the ``key.converter.``/``value.converter.`` prefixed keys): see :meth:`config`;
    ``schema.registry.url`` is required. Every registry call ends in bounded time (see
    :mod:`cdk.converters._registry`).

    Args:
        schema_registry: a Schema Registry client to use instead of creating one from the
            configuration.
    """

    FORMAT = "JSON Schema"
    SCHEMA_TYPE = "JSON"
    EXTRA = "json-schema"

    def __init__(self, schema_registry: Any = None) -> None:
        super().__init__(schema_registry)
        self._data_config = _data.JsonSchemaDataConfig()
        self._validate = False
        self._jsonschema: Any = None

    def _format_config_def(self, base: ConfigDef) -> ConfigDef:
        from cdk.config import Importance, Type, validators

        return (
            base.define(
                JSON_FAIL_INVALID_SCHEMA_CONFIG,
                Type.BOOLEAN,
                False,
                None,
                Importance.MEDIUM,
                "Validate each value against its JSON Schema (jsonschema) when writing and "
                "reading it, and fail the record when it does not match.",
            )
            .define(
                OBJECT_ADDITIONAL_PROPERTIES_CONFIG,
                Type.BOOLEAN,
                True,
                None,
                Importance.LOW,
                "Whether the JSON Schema written for a struct allows properties it does not "
                'declare; false writes "additionalProperties": false.',
            )
            .define(
                DECIMAL_FORMAT_CONFIG,
                Type.STRING,
                "BASE64",
                validators.CaseInsensitiveValidString.of("BASE64", "NUMERIC"),
                Importance.LOW,
                "How Decimal values are written: BASE64 (the unscaled bytes, as JsonConverter) "
                "or NUMERIC (a JSON number).",
            )
        )

    def _configure_format(self, cfg: AbstractConfig) -> None:
        self._validate = cfg.get_boolean(JSON_FAIL_INVALID_SCHEMA_CONFIG)
        if self._validate:
            self._jsonschema = _import_jsonschema()
        self._data_config = _data.JsonSchemaDataConfig(
            decimal_numeric=cfg.get_string(DECIMAL_FORMAT_CONFIG).upper() == "NUMERIC",
            allow_additional_properties=cfg.get_boolean(OBJECT_ADDITIONAL_PROPERTIES_CONFIG),
        )

    def _validator(self, node: Any) -> Any:
        if not self._validate:
            return None
        jsonschema = self._jsonschema
        cls = jsonschema.validators.validator_for(node, default=jsonschema.Draft7Validator)
        try:
            cls.check_schema(node)
        except jsonschema.SchemaError as exc:
            raise DataException(f"Invalid JSON Schema: {exc.message}") from exc
        return cls(node)

    def _writer_from_connect(self, schema: Schema) -> tuple[str, str | None, _Writer]:
        node = {"$schema": SCHEMA_DRAFT, **_data.from_connect_schema(schema, self._data_config)}
        text = orjson.dumps(node, default=_fragment).decode()
        return text, _data.record_name(node), _Writer(node, schema, self._validator(node))

    def _writer_from_registry(self, text: str, schema_id: int) -> _Writer:
        try:
            node = json.loads(text)
        except ValueError as exc:
            raise DataException(f"schema id {schema_id} is not valid JSON: {exc}") from exc
        return _Writer(node, None, self._validator(node))

    def _record_name(self, writer: _Writer) -> str | None:
        return _data.record_name(writer.json) if isinstance(writer.json, Mapping) else None

    def _check(self, writer: _Writer, tree: Any) -> None:
        if writer.validator is None:
            return
        error = next(iter(writer.validator.iter_errors(tree)), None)
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path) or "the value"
            raise DataException(
                f"the JSON at {where} does not match the JSON Schema "
                f"({JSON_FAIL_INVALID_SCHEMA_CONFIG}=true): {error.message}"
            )

    def _encode(self, writer: _Writer, schema: Schema, value: Any) -> bytes:
        tree = _data.from_connect_data(schema, value, self._data_config)
        if writer.validator is not None:
            self._check(writer, json.loads(orjson.dumps(tree, default=_fragment)))
        return orjson.dumps(tree, default=_fragment)

    def _compile_encoder(self, writer: _Writer, schema: Schema, header: bytes) -> Encode | None:
        if writer.validator is not None:
            return None
        return _plan.compile_encoder(schema, self._data_config, header, _fragment)

    def _compile_decoder(
        self, writer: _Writer, version: int | None, body: memoryview
    ) -> tuple[bytes, Decode] | None:
        schema = writer.connect
        if schema is None or writer.validator is not None or writer.exact_numbers:
            return None
        if writer.decoder is None or writer.decoder[0] is not schema:
            writer.decoder = (schema, _plan.compile_decoder(schema, _reg.HEADER.size))
        decoder = writer.decoder[1]
        return None if decoder is None else (b"", decoder)

    def _decode(self, writer: _Writer, version: int | None, body: memoryview) -> SchemaAndValue:
        if writer.connect is None or writer.connect.version != version:
            writer.connect = _data.to_connect_schema(writer.json, version)
            writer.exact_numbers = _has_numeric(writer.connect)
        raw = bytes(body)
        try:
            if writer.exact_numbers:
                tree = json.loads(raw, parse_float=_decimal.Decimal)
            else:
                tree = orjson.loads(raw)
        except ValueError as exc:
            raise DataException(f"the payload is not valid JSON: {exc}") from exc
        self._check(writer, tree)
        schema = writer.connect
        return SchemaAndValue(schema, _data.to_connect_data(schema, tree))
