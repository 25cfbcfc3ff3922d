"""Every Schema Registry converter fails in bounded time, with the kit's errors.

Each converter runs against a registry that is down (a refused port), one that accepts
connections and never answers, and one that answers 503; on both paths the call must raise a
RetriableException naming the registry URL within the configured timeout. Settings given as
strings work, bad ones raise a ConfigException naming the setting, and a 409 names the subject
and the registry's reason.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from cdk.converters import AvroConverter, Converter
from cdk.data import Schema, SchemaBuilder, Struct
from cdk.errors import ConfigException, DataException, RetriableException
from tests.converters._registry_servers import answering_server as _answering_server
from tests.converters._registry_servers import failing as _failing
from tests.converters._registry_servers import refused_port as _refused_port

TOPIC = "orders"
TIMEOUT = 0.5  # seconds, the configured request timeout

CONVERTERS: dict[str, Callable[[], Converter]] = {"avro": AvroConverter}
try:
    from cdk.converters import JsonSchemaConverter, ProtobufConverter

    CONVERTERS["protobuf"] = ProtobufConverter
    CONVERTERS["json_schema"] = JsonSchemaConverter
except ImportError:  # pragma: no cover - the converters land in this change
    pass

SCHEMA = (
    SchemaBuilder.struct()
    .name("com.example.Order")
    .field("id", Schema.INT64_SCHEMA)
    .field("note", Schema.OPTIONAL_STRING_SCHEMA)
    .build()
)
VALUE = Struct(SCHEMA).put("id", 1).put("note", "x")


def _settings(url: str, **extra: Any) -> dict[str, Any]:
    return {
        "schema.registry.url": url,
        "schema.registry.timeout": str(TIMEOUT),  # a string, as in a properties file
        "schema.registry.max.retries": "0",
        "schema.registry.retries.wait.ms": "10",
        **extra,
    }


def _payload() -> bytes:
    # magic byte, schema id 7, then a body no converter gets to (the schema is fetched first)
    return b"\x00" + (7).to_bytes(4, "big") + b"\x00\x02"


def _calls(converter: Converter) -> dict[str, Callable[[], object]]:
    return {
        "serialize": lambda: converter.from_connect_data(TOPIC, SCHEMA, VALUE),
        "deserialize": lambda: converter.to_connect_data(TOPIC, _payload()),
    }


@pytest.mark.parametrize("mode", ["down", "silent", "5xx"])
@pytest.mark.parametrize("name", sorted(CONVERTERS))
def test_registry_failure_is_retriable_and_bounded(name: str, mode: str) -> None:
    with _failing(mode) as url:
        converter = CONVERTERS[name]()
        converter.configure(_settings(url), False)
        try:
            for path in ("serialize", "deserialize"):
                started = time.monotonic()
                call = _calls(converter)[path]
                with pytest.raises(RetriableException) as info:
                    call()
                elapsed = time.monotonic() - started
                assert url in str(info.value), str(info.value)
                assert TOPIC in str(info.value)
                # one request (max.retries=0) within the timeout, plus scheduling slack
                assert elapsed < TIMEOUT + 2.0, f"{path} took {elapsed:.2f}s"
        finally:
            converter.close()


@pytest.mark.parametrize("name", sorted(CONVERTERS))
def test_default_timeout_is_set(name: str) -> None:
    from cdk.converters._registry import DEFAULT_TIMEOUT_SECONDS

    with _refused_port() as url:
        converter = CONVERTERS[name]()
        converter.configure({"schema.registry.url": url}, False)
        try:
            registry = converter._registry  # type: ignore[attr-defined]
            assert registry.client._rest_client.timeout == DEFAULT_TIMEOUT_SECONDS
        finally:
            converter.close()


@pytest.mark.parametrize("name", sorted(CONVERTERS))
@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("schema.registry.timeout", "soon"),
        ("schema.registry.max.retries", "abc"),
        ("schema.registry.retries.wait.ms", "-5"),
        ("schema.registry.cache.capacity", "many"),
        ("schema.registry.no.such.setting", "1"),
        ("auto.register.schemas", "maybe"),
        ("value.subject.name.strategy", "Nope"),
    ],
)
def test_bad_setting_names_itself(name: str, key: str, value: str) -> None:
    with pytest.raises(ConfigException) as info:
        CONVERTERS[name]().configure(
            {"schema.registry.url": "http://127.0.0.1:1", key: value}, False
        )
    assert key in str(info.value)


@pytest.mark.parametrize("name", sorted(CONVERTERS))
def test_numeric_settings_as_strings_are_accepted(name: str) -> None:
    converter = CONVERTERS[name]()
    converter.configure(
        {
            "schema.registry.url": "http://127.0.0.1:1",
            "schema.registry.timeout": "10",
            "schema.registry.max.retries": "1",
            "schema.registry.retries.wait.ms": "100",
            "schema.registry.retries.max.wait.ms": 200,
            "schema.registry.cache.capacity": "50",
        },
        False,
    )
    rest = converter._registry.client._rest_client  # type: ignore[attr-defined]
    assert (rest.timeout, rest.max_retries, rest.retries_wait_ms) == (10.0, 1, 100)
    converter.close()


@pytest.mark.parametrize("name", sorted(CONVERTERS))
def test_incompatible_schema_names_subject_and_reason(name: str) -> None:
    body = {"error_code": 409, "message": "Schema being registered is incompatible: READER_FIELD"}
    with _answering_server(409, body) as url:
        converter = CONVERTERS[name]()
        converter.configure(_settings(url), False)
        try:
            with pytest.raises(DataException) as info:
                converter.from_connect_data(TOPIC, SCHEMA, VALUE)
        finally:
            converter.close()
    text = str(info.value)
    assert "subject orders-value" in text
    assert "READER_FIELD" in text
    assert "incompatible" in text


@pytest.mark.parametrize("name", sorted(CONVERTERS))
def test_password_never_in_errors(name: str) -> None:
    with _refused_port() as url:
        secret_url = url.replace("http://", "http://alice:s3cr3t-pw@")
        for settings in (
            _settings(secret_url),
            _settings(
                url,
                **{
                    "basic.auth.credentials.source": "USER_INFO",
                    "basic.auth.user.info": "bob:hunter2-pw",
                },
            ),
        ):
            converter = CONVERTERS[name]()
            converter.configure(settings, False)
            try:
                with pytest.raises(RetriableException) as info:
                    converter.from_connect_data(TOPIC, SCHEMA, VALUE)
            finally:
                converter.close()
            text = str(info.value)
            assert "s3cr3t-pw" not in text
            assert "hunter2-pw" not in text
            assert url in text
    with pytest.raises(ConfigException) as bad:
        CONVERTERS[name]().configure(
            {
                "schema.registry.url": "http://127.0.0.1:1",
                "basic.auth.credentials.source": "USER_INFO",
                "basic.auth.user.info": "no-colon-secret",
            },
            False,
        )
    assert "no-colon-secret" not in str(bad.value)
    assert "basic.auth.user.info" in str(bad.value)
