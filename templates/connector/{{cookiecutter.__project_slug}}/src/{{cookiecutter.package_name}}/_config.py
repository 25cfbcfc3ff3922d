"""The connectors' configuration, declared once as ConfigDefs.

Validation, the REST ``validate`` endpoint, the generated documentation and the harness's fuzzed
configs all come from these definitions, so every key carries its type, default, validator,
importance, documentation, group and order.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cdk import NO_DEFAULT, AbstractConfig, ConfigDef, ConfigException, Importance, Type, Width
from cdk.config import Recommender
from cdk.config.validators import {% if cookiecutter.kind != 'source' %}CaseInsensitiveValidString, {% endif %}{% if cookiecutter.kind != 'sink' %}NonEmptyString, {% endif %}Range, Validator

__all__ = [
    "AUTH_TOKEN",
{%- if cookiecutter.kind != 'sink' %}
    "BATCH_MAX_LINES",
    "FILE_DETECTION_ENABLED",
    "FILE_PATTERN",
    "FILE_POLL_INTERVAL_MS",
    "INPUT_DIR",
    "KEY_FIELD",
    "POLL_INTERVAL_MS",
    "SOURCE_CONFIG_DEF",
    "TOPIC_PREFIX",
{%- endif %}
{%- if cookiecutter.kind != 'source' %}
    "OUTPUT_DIR",
    "RETRY_BACKOFF_MS",
    "SCHEMA_EVOLUTION",
    "SINK_CONFIG_DEF",
{%- endif %}
    "VERSION",
    "Directory",
    "EnabledBy",
    "parse",
]

VERSION = "0.1.0"

# TODO(partner): replace these keys with the settings your external system needs (its address,
# credentials, what to read or write). Reuse Kafka Connect's names where one exists.
AUTH_TOKEN = "auth.token"
{%- if cookiecutter.kind != 'sink' %}
INPUT_DIR = "input.dir"
FILE_PATTERN = "file.pattern"
FILE_DETECTION_ENABLED = "file.detection.enabled"
FILE_POLL_INTERVAL_MS = "file.poll.interval.ms"
TOPIC_PREFIX = "topic.prefix"
KEY_FIELD = "key.field"
POLL_INTERVAL_MS = "poll.interval.ms"
BATCH_MAX_LINES = "batch.max.lines"
{%- endif %}
{%- if cookiecutter.kind != 'source' %}
OUTPUT_DIR = "output.dir"
SCHEMA_EVOLUTION = "schema.evolution"
RETRY_BACKOFF_MS = "retry.backoff.ms"
{%- endif %}


class Directory(Validator):
    """Checks that a key names an existing directory (the example's external system)."""

    def ensure_valid(self, name: str, value: Any) -> None:
        if value is None:
            return  # a missing required key is reported by the ConfigDef itself
        if not isinstance(value, str) or not value.strip():
            raise ConfigException(name, value, "expected the path of a directory")
        path = Path(value)
        if not path.exists():
            raise ConfigException(name, value, f"the directory {path} does not exist")
        if not path.is_dir():
            raise ConfigException(name, value, f"{path} is not a directory")

    def __str__(self) -> str:
        return "an existing directory"


class EnabledBy(Recommender):
    """Shows a key only while the boolean key ``switch`` is true (a UI hides it otherwise)."""

    def __init__(self, switch: str) -> None:
        self.switch = switch

    def valid_values(self, name: str, parsed: Mapping[str, Any]) -> list[Any]:
        return []  # any value the validator accepts

    def visible(self, name: str, parsed: Mapping[str, Any]) -> bool:
        return bool(parsed.get(self.switch, True))


def _with_auth(config_def: ConfigDef) -> ConfigDef:
    return config_def.define(
        AUTH_TOKEN,
        Type.PASSWORD,
        None,
        None,
        Importance.LOW,
        "The secret the connector presents to the external system. The example's directories "
        "need none; it shows how a PASSWORD key stays hidden in logs, REST responses and docs.",
        group="Connection",
        order_in_group=1,
        width=Width.MEDIUM,
        display_name="Auth Token",
    )
{%- if cookiecutter.kind != 'sink' %}


SOURCE_CONFIG_DEF: ConfigDef = (
    _with_auth(ConfigDef())
    .define(
        INPUT_DIR,
        Type.STRING,
        NO_DEFAULT,
        Directory(),
        Importance.HIGH,
        "The directory to read. Every file matching file.pattern is one input stream: its "
        "lines are JSON objects, each of which becomes one record.",
        group="Input",
        order_in_group=1,
        width=Width.LONG,
        display_name="Input Directory",
    )
    .define(
        FILE_PATTERN,
        Type.STRING,
        "*.jsonl",
        NonEmptyString(),
        Importance.MEDIUM,
        "The glob pattern of the file names to read in input.dir.",
        group="Input",
        order_in_group=2,
        width=Width.SHORT,
        display_name="File Pattern",
    )
    .define(
        FILE_DETECTION_ENABLED,
        Type.BOOLEAN,
        True,
        None,
        Importance.LOW,
        "Whether to watch input.dir for new and removed files, and reassign the files to the "
        "tasks when they change.",
        group="Input",
        order_in_group=3,
        width=Width.SHORT,
        display_name="Detect New Files",
        dependents=(FILE_POLL_INTERVAL_MS,),
    )
    .define(
        FILE_POLL_INTERVAL_MS,
        Type.LONG,
        5000,
        Range.at_least(10),
        Importance.LOW,
        "How often, in milliseconds, to look for new or removed files in input.dir.",
        group="Input",
        order_in_group=4,
        width=Width.SHORT,
        display_name="File Poll Interval (ms)",
        recommender=EnabledBy(FILE_DETECTION_ENABLED),
    )
    .define(
        TOPIC_PREFIX,
        Type.STRING,
        NO_DEFAULT,
        NonEmptyString(),
        Importance.HIGH,
        "Prefix of the topic names: the records of file name.jsonl go to topic <topic.prefix>name.",
        group="Output",
        order_in_group=1,
        width=Width.MEDIUM,
        display_name="Topic Prefix",
    )
    .define(
        KEY_FIELD,
        Type.STRING,
        "id",
        None,
        Importance.MEDIUM,
        "The field whose value becomes the record key. Empty: records have no key.",
        group="Output",
        order_in_group=2,
        width=Width.SHORT,
        display_name="Key Field",
    )
    .define(
        POLL_INTERVAL_MS,
        Type.INT,
        1000,
        Range.at_least(1),
        Importance.MEDIUM,
        "How long, in milliseconds, a task waits before it reads its files again when they "
        "had no new lines.",
        group="Polling",
        order_in_group=1,
        width=Width.SHORT,
        display_name="Poll Interval (ms)",
    )
    .define(
        BATCH_MAX_LINES,
        Type.INT,
        500,
        Range.between(1, 100_000),
        Importance.LOW,
        "The maximum number of lines read from one file by one poll.",
        group="Polling",
        order_in_group=2,
        width=Width.SHORT,
        display_name="Batch Max Lines",
    )
)
{%- endif %}
{%- if cookiecutter.kind != 'source' %}


SINK_CONFIG_DEF: ConfigDef = (
    _with_auth(ConfigDef())
    .define(
        OUTPUT_DIR,
        Type.STRING,
        NO_DEFAULT,
        Directory(),
        Importance.HIGH,
        "The directory to write to. Each topic partition is written to its own file, "
        "<topic>-<partition>.jsonl, one JSON object per record, next to the file's schema, "
        "<topic>-<partition>.schema.json.",
        group="Output",
        order_in_group=1,
        width=Width.LONG,
        display_name="Output Directory",
    )
    .define(
        SCHEMA_EVOLUTION,
        Type.STRING,
        "add_fields",
        CaseInsensitiveValidString.of("add_fields", "none"),
        Importance.MEDIUM,
        "What a record with a new optional field does to its file's schema. add_fields: the "
        "field is added to the file's schema. none: the record is rejected with a "
        "DataException. A record whose field changes type is always rejected.",
        group="Schema",
        order_in_group=1,
        width=Width.SHORT,
        display_name="Schema Evolution",
    )
    .define(
        RETRY_BACKOFF_MS,
        Type.LONG,
        1000,
        Range.at_least(0),
        Importance.LOW,
        "How long, in milliseconds, the framework waits before it redelivers a batch that "
        "could not be written because output.dir was unavailable.",
        group="Errors",
        order_in_group=1,
        width=Width.SHORT,
        display_name="Retry Backoff (ms)",
    )
)
{%- endif %}


def parse(config_def: ConfigDef, props: Mapping[str, str]) -> AbstractConfig:
    """The typed configuration; a bad value raises a ConfigException that names the key."""
    return AbstractConfig(config_def, dict(props))
