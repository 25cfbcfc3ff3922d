"""The exception tree: one root, Kafka's message formats, context attributes."""

from __future__ import annotations

import pytest

from cdk import errors
from cdk.config import Password
from cdk.errors import (
    AlreadyExistsException,
    ConfigException,
    ConnectException,
    DataException,
    IllegalWorkerStateException,
    MissingExtraError,
    NotFoundException,
    RetriableException,
    SchemaBuilderException,
    SchemaProjectorException,
)


@pytest.mark.parametrize("name", errors.__all__)
def test_every_exception_derives_from_the_root(name: str) -> None:
    assert issubclass(getattr(errors, name), ConnectException)


def test_branches() -> None:
    assert issubclass(SchemaBuilderException, DataException)
    assert issubclass(SchemaProjectorException, DataException)
    assert issubclass(MissingExtraError, ImportError)
    for cls in (
        RetriableException,
        DataException,
        ConfigException,
        NotFoundException,
        AlreadyExistsException,
        IllegalWorkerStateException,
    ):
        assert cls.__bases__ == (ConnectException,)


def test_config_exception_formats_kafkas_invalid_value_text() -> None:
    exc = ConfigException("tasks.max", "abc", "Not a number of type INT")
    assert str(exc) == "Invalid value abc for configuration tasks.max: Not a number of type INT"
    assert (exc.name, exc.value) == ("tasks.max", "abc")


def test_config_exception_renders_java_style_values() -> None:
    assert str(ConfigException("a", None, "m")) == "Invalid value null for configuration a: m"
    assert str(ConfigException("a", True)) == "Invalid value true for configuration a"
    assert str(ConfigException("a", ["x", "y"], "m")) == (
        "Invalid value [x, y] for configuration a: m"
    )


def test_config_exception_never_shows_a_password() -> None:
    exc = ConfigException("db.password", Password("s3cret"), "too short")
    assert "s3cret" not in str(exc)
    assert "[hidden]" in str(exc)


def test_config_exception_with_a_plain_message() -> None:
    exc = ConfigException('Missing required configuration "x" which has no default value.')
    assert exc.name is None
    assert str(exc) == 'Missing required configuration "x" which has no default value.'


def test_data_exception_carries_the_field() -> None:
    exc = DataException("bad", field="email")
    assert exc.field == "email"
    assert str(exc) == "bad"


def test_missing_extra_error_says_how_to_install() -> None:
    exc = MissingExtraError("AvroConverter", "avro", "fastavro")
    assert "pip install 'connect-cdk[avro]'" in str(exc)
    assert "fastavro" in str(exc)
    with pytest.raises(ImportError):
        raise exc
