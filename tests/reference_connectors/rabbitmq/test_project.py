"""The RabbitMQ connectors as a connector project: metadata, README, aliases, the drivers."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

import reference_connectors.rabbitmq as rabbitmq
from cdk import Type
from harness import SourceKind
from reference_connectors.rabbitmq import SINK_CONFIG_DEF, SOURCE_CONFIG_DEF
from reference_connectors.rabbitmq.certify import RabbitMQSinkDriver, RabbitMQSourceDriver

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PROJECT = Path(rabbitmq.__file__).parent


def test_metadata_and_entry_points() -> None:
    meta = tomllib.loads((PROJECT / "pyproject.toml").read_text(encoding="utf-8"))
    assert meta["project"]["version"] == rabbitmq.__version__
    assert meta["project"]["dependencies"] == ["connect-cdk[rabbitmq]"]
    plugins = meta["project"]["entry-points"]["cdk.plugins"]
    assert plugins["RabbitMQSource"] == "reference_connectors.rabbitmq:RabbitMQSourceConnector"
    assert plugins["RabbitMQSink"] == "reference_connectors.rabbitmq:RabbitMQSinkConnector"
    assert meta["tool"]["cdk"]["drivers"] == [
        "reference_connectors.rabbitmq.certify:RabbitMQSourceDriver",
        "reference_connectors.rabbitmq.certify:RabbitMQSinkDriver",
    ]


def test_readme_has_the_review_sections_and_the_generated_reference() -> None:
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", readme, flags=re.MULTILINE)
    for section in (
        "Description",
        "Data model",
        "Delivery semantics",
        "Quickstart",
        "Configuration reference",
        "License",
    ):
        assert section in headings
    for config_def in (SOURCE_CONFIG_DEF, SINK_CONFIG_DEF):
        generated = re.sub(r"^## ", "#### ", config_def.to_markdown().strip(), flags=re.M)
        assert generated in readme, "README's configuration reference is stale: regenerate it"


@pytest.mark.parametrize("config_def", [SOURCE_CONFIG_DEF, SINK_CONFIG_DEF])
def test_the_password_is_a_password(config_def: object) -> None:
    keys = config_def.config_keys()  # type: ignore[attr-defined]
    assert keys["rabbitmq.password"].type is Type.PASSWORD


def test_the_source_driver_declares_an_acknowledging_source_without_offsets() -> None:
    assert RabbitMQSourceDriver.source_kind is SourceKind.ACKNOWLEDGING
    assert RabbitMQSourceDriver.records_carry_offsets is False
    assert RabbitMQSourceDriver.streams > 1
    assert RabbitMQSinkDriver.accepts_any_schema
