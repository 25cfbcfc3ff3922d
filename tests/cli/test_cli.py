"""The real ``cdk`` CLI, run as a subprocess from the virtualenv."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import cdk

CDK = Path(sys.executable).with_name("cdk")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CDK), *args], capture_output=True, text=True, timeout=120, check=False
    )


def test_help_lists_commands() -> None:
    result = run("--help")
    assert result.returncode == 0, result.stderr
    assert "Usage: cdk" in result.stdout
    for command in ("plugins", "docs"):
        assert command in result.stdout


def test_version() -> None:
    result = run("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"cdk {cdk.__version__}"


def test_plugins_lists_every_kafka_smt_and_converter() -> None:
    result = run("plugins")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "org.apache.kafka.connect.transforms.InsertField$Value" in out
    assert "org.apache.kafka.connect.transforms.predicates.TopicNameMatches" in out
    assert "org.apache.kafka.connect.json.JsonConverter" in out
    assert "io.confluent.connect.avro.AvroConverter" in out
    header, *lines = out.splitlines()
    assert header.split() == ["TYPE", "NAME", "VERSION", "FROM", "ALIASES"]
    kinds = {line.split()[0] for line in lines if line.strip()}
    assert kinds == {
        "source",
        "sink",
        "converter",
        "header_converter",
        "transformation",
        "predicate",
        "config_provider",
    }


def test_plugins_lists_entry_point_connectors_and_filters_by_type() -> None:
    result = run("plugins", "--type", "source", "--type", "sink")
    assert result.returncode == 0, result.stderr
    rows = [line.split(maxsplit=4) for line in result.stdout.splitlines()[1:]]
    assert {row.pop(3) for row in rows} == {"connect-cdk==0.1.0"}  # FROM: their distribution
    assert rows == [
        [
            "source",
            "reference_connectors.filestream.FileStreamSourceConnector",
            "0.1.0",
            "FileStreamSource, FileStreamSourceConnector, "
            "org.apache.kafka.connect.file.FileStreamSourceConnector",
        ],
        [
            "source",
            "reference_connectors.rabbitmq.RabbitMQSourceConnector",
            "0.1.0",
            "RabbitMQSource, RabbitMQSourceConnector, "
            "io.confluent.connect.rabbitmq.RabbitMQSourceConnector",
        ],
        [
            "source",
            "reference_connectors.sql.SqlSourceConnector",
            "0.1.0",
            "SqlSource, JdbcSource, SqlSourceConnector, "
            "io.confluent.connect.jdbc.JdbcSourceConnector",
        ],
        [
            "source",
            "reference_connectors.sql.SqliteSourceConnector",
            "0.1.0",
            "SqliteSource, SqliteSourceConnector",
        ],
        [
            "sink",
            "reference_connectors.filestream.FileStreamSinkConnector",
            "0.1.0",
            "FileStreamSink, FileStreamSinkConnector, "
            "org.apache.kafka.connect.file.FileStreamSinkConnector",
        ],
        [
            "sink",
            "reference_connectors.rabbitmq.RabbitMQSinkConnector",
            "0.1.0",
            "RabbitMQSink, RabbitMQSinkConnector, "
            "io.confluent.connect.rabbitmq.sink.RabbitMQSinkConnector",
        ],
        [
            "sink",
            "reference_connectors.sql.SqlSinkConnector",
            "0.1.0",
            "SqlSink, JdbcSink, SqlSinkConnector, io.confluent.connect.jdbc.JdbcSinkConnector",
        ],
        [
            "sink",
            "reference_connectors.sql.SqliteSinkConnector",
            "0.1.0",
            "SqliteSink, SqliteSinkConnector",
        ],
    ]


def test_plugins_shows_kafka_aliases_of_builtins() -> None:
    result = run("plugins", "--type", "converter", "--type", "transformation")
    assert result.returncode == 0, result.stderr
    rows = {
        row[1]: row[4] for row in (line.split(maxsplit=4) for line in result.stdout.splitlines())
    }
    assert rows["org.apache.kafka.connect.json.JsonConverter"] == (
        "Json, JsonConverter, cdk.converters.JsonConverter"
    )
    assert rows["org.apache.kafka.connect.transforms.InsertField$Value"] == (
        "InsertField$Value, cdk.transforms.InsertField.Value"
    )


@pytest.mark.parametrize(
    ("fmt", "marker"),
    [
        ("rst", "``regex``"),
        ("enriched-rst", "``regex``"),
        ("html", '<ul class="config-list">'),
        ("markdown", "regex"),
    ],
)
def test_docs_renders_each_format(fmt: str, marker: str) -> None:
    result = run("docs", "org.apache.kafka.connect.transforms.RegexRouter", "--format", fmt)
    assert result.returncode == 0, result.stderr
    assert marker in result.stdout
    assert "replacement" in result.stdout


def test_docs_writes_a_file(tmp_path: Path) -> None:
    target = tmp_path / "json.html"
    result = run("docs", "JsonConverter", "--format", "html", "--output", str(target))
    assert result.returncode == 0, result.stderr
    assert "schemas.enable" in target.read_text(encoding="utf-8")
    assert str(target) in result.stderr


def test_docs_unknown_plugin_is_a_clear_usage_error() -> None:
    result = run("docs", "com.example.NoSuchConnector")
    assert result.returncode == 2
    assert "com.example.NoSuchConnector" in result.stderr
    assert "could not be found" in result.stderr
    assert "Traceback" not in result.stderr


def test_docs_unknown_plugin_suggests_the_closest_names() -> None:
    result = run("docs", "JsonConvertor")
    assert result.returncode == 2
    assert "Did you mean JsonConverter?" in result.stderr
    assert "Did you mean" not in run("docs", "com.example.NoSuchConnector").stderr


def test_docs_unknown_format_is_rejected() -> None:
    result = run("docs", "JsonConverter", "--format", "pdf")
    assert result.returncode == 2
    assert "pdf" in result.stderr
