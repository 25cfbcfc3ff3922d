"""Configuration validation: what a user gets back for good and bad configs."""

from __future__ import annotations

from pathlib import Path

{% if cookiecutter.kind != 'sink' -%}
import pytest
from cdk import ConfigDef, ConfigException
{%- else -%}
from cdk import ConfigDef
{%- endif %}

from {{ cookiecutter.package_name }} import {% if cookiecutter.kind != 'source' %}SINK_CONFIG_DEF{% endif %}{% if cookiecutter.kind == 'both' %}, {% endif %}{% if cookiecutter.kind != 'sink' %}SOURCE_CONFIG_DEF{% endif %}
from {{ cookiecutter.package_name }}._config import parse


def _errors(config_def: ConfigDef, props: dict[str, str]) -> dict[str, list[str]]:
    return {v.name: v.error_messages for v in config_def.validate(props) if v.error_messages}
{%- if cookiecutter.kind != 'sink' %}


def test_source_example_config_is_valid(tmp_path: Path) -> None:
    props = {"input.dir": str(tmp_path), "topic.prefix": "demo-"}
    assert _errors(SOURCE_CONFIG_DEF, props) == {}
    config = parse(SOURCE_CONFIG_DEF, props)
    assert config.get_string("file.pattern") == "*.jsonl"
    assert config.get_int("batch.max.lines") == 500


def test_source_reports_every_missing_required_key() -> None:
    assert set(_errors(SOURCE_CONFIG_DEF, {})) == {"input.dir", "topic.prefix"}


def test_source_rejects_a_missing_directory_naming_the_key(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    errors = _errors(SOURCE_CONFIG_DEF, {"input.dir": str(missing), "topic.prefix": "t-"})
    assert list(errors) == ["input.dir"]
    assert "does not exist" in errors["input.dir"][0]
    with pytest.raises(ConfigException, match=r"input\.dir"):
        parse(SOURCE_CONFIG_DEF, {"input.dir": str(missing), "topic.prefix": "t-"})


def test_source_rejects_out_of_range_values(tmp_path: Path) -> None:
    props = {"input.dir": str(tmp_path), "topic.prefix": "t-", "batch.max.lines": "0"}
    assert list(_errors(SOURCE_CONFIG_DEF, props)) == ["batch.max.lines"]


def test_file_poll_interval_is_hidden_without_file_detection(tmp_path: Path) -> None:
    props = {"input.dir": str(tmp_path), "topic.prefix": "t-"}
    shown = {v.name: v.visible for v in SOURCE_CONFIG_DEF.validate(props)}
    assert shown["file.poll.interval.ms"] is True
    props["file.detection.enabled"] = "false"
    hidden = {v.name: v.visible for v in SOURCE_CONFIG_DEF.validate(props)}
    assert hidden["file.poll.interval.ms"] is False
{%- endif %}
{%- if cookiecutter.kind != 'source' %}


def test_sink_example_config_is_valid(tmp_path: Path) -> None:
    assert _errors(SINK_CONFIG_DEF, {"output.dir": str(tmp_path)}) == {}


def test_sink_rejects_a_file_as_output_dir(tmp_path: Path) -> None:
    file = tmp_path / "file.txt"
    file.write_text("x", encoding="utf-8")
    errors = _errors(SINK_CONFIG_DEF, {"output.dir": str(file)})
    assert "is not a directory" in errors["output.dir"][0]


def test_sink_schema_evolution_takes_known_values_only(tmp_path: Path) -> None:
    props = {"output.dir": str(tmp_path), "schema.evolution": "sometimes"}
    assert list(_errors(SINK_CONFIG_DEF, props)) == ["schema.evolution"]
{%- endif %}


def test_every_key_is_documented() -> None:
{%- if cookiecutter.kind == 'both' %}
    for config_def in (SOURCE_CONFIG_DEF, SINK_CONFIG_DEF):
{%- elif cookiecutter.kind == 'source' %}
    for config_def in (SOURCE_CONFIG_DEF,):
{%- else %}
    for config_def in (SINK_CONFIG_DEF,):
{%- endif %}
        for key in config_def.config_keys().values():
            assert key.documentation, f"{key.name} has no documentation"
            assert key.group, f"{key.name} has no group"


def test_the_password_never_appears_in_parsed_values(tmp_path: Path) -> None:
{%- if cookiecutter.kind != 'sink' %}
    props = {"input.dir": str(tmp_path), "topic.prefix": "t-", "auth.token": "s3cr3t-value"}
    config = parse(SOURCE_CONFIG_DEF, props)
{%- else %}
    props = {"output.dir": str(tmp_path), "auth.token": "s3cr3t-value"}
    config = parse(SINK_CONFIG_DEF, props)
{%- endif %}
    assert "s3cr3t-value" not in repr(config.get("auth.token"))
    assert config.get_password("auth.token").value() == "s3cr3t-value"
