"""Connectors with configuration defects, one per CFG check, and their drivers.

Each is a small subclass of a FileStream reference connector that gets one thing wrong; its
driver is the FileStream driver pointed at it. ``SecretFileStreamSourceConnector`` is the
correct connector with a PASSWORD key that CFG-08 needs to pass (FileStream has none); the
leaky ones derive from it.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, ClassVar

from typing_extensions import override

from cdk import ConfigDef, Importance, Type
from cdk.config import AbstractConfig, Config
from reference_connectors.filestream import FileStreamSinkConnector, FileStreamSourceConnector
from reference_connectors.filestream._source import CONFIG_DEF as SOURCE_CONFIG_DEF
from reference_connectors.filestream.certify import FileStreamSinkDriver, FileStreamSourceDriver

log = logging.getLogger(__name__)

# ------------------------------------------------------------------------------------- CFG-01
_UNDOCUMENTED = ConfigDef(SOURCE_CONFIG_DEF).define(
    "poll.interval.ms", Type.LONG, 1000, None, Importance.LOW, ""
)


class UndocumentedKeySourceConnector(FileStreamSourceConnector):
    """Adds ``poll.interval.ms`` without documentation."""

    @override
    def config(self) -> ConfigDef:
        return _UNDOCUMENTED


class UndocumentedKeyDriver(FileStreamSourceDriver):
    connector: ClassVar[type] = UndocumentedKeySourceConnector


# ------------------------------------------------------------------------------------- CFG-02
class RaisingValidateSourceConnector(FileStreamSourceConnector):
    """A cross-key check in validate() that assumes ``topic`` is present (KeyError on {})."""

    @override
    def validate(self, props: dict[str, str]) -> Config:
        if props["topic"].startswith("_"):
            log.info("Writing to an internal topic")
        return super().validate(props)


class RaisingValidateDriver(FileStreamSourceDriver):
    connector: ClassVar[type] = RaisingValidateSourceConnector


class SilentValidateSourceConnector(FileStreamSourceConnector):
    """validate() reports only the keys the user set: a missing required key goes unnoticed."""

    @override
    def validate(self, props: dict[str, str]) -> Config:
        result = super().validate(props)
        return Config(v for v in result.config_values if v.name in props)


class SilentValidateDriver(FileStreamSourceDriver):
    connector: ClassVar[type] = SilentValidateSourceConnector


# ------------------------------------------------------------------------------------- CFG-03
class InvalidExampleDriver(FileStreamSourceDriver):
    """The correct connector, but an example config with ``batch.size=0`` (at least 1)."""

    @override
    def example_config(self, topic: str) -> dict[str, str]:
        return {**super().example_config(topic), "batch.size": "0"}


# ------------------------------------------------------------------------------------- CFG-04
class FragileValidateSourceConnector(FileStreamSourceConnector):
    """A custom validate() that parses ``batch.size`` itself with int() (ValueError on 'abc')."""

    @override
    def validate(self, props: dict[str, str]) -> Config:
        result = super().validate(props)
        if int(props.get("batch.size", "2000")) > 100_000:
            log.warning("batch.size is very large")
        return result


class FragileValidateDriver(FileStreamSourceDriver):
    connector: ClassVar[type] = FragileValidateSourceConnector


class PathProbingSourceConnector(FileStreamSourceConnector):
    """validate() looks at ``file`` on disk, unguarded: a 300-character name raises OSError."""

    @override
    def validate(self, props: dict[str, str]) -> Config:
        result = super().validate(props)
        name = props.get("file")
        if name and Path(name).is_dir():
            log.warning("file %s is a directory", name)
        return result


class PathProbingDriver(FileStreamSourceDriver):
    connector: ClassVar[type] = PathProbingSourceConnector


# ------------------------------------------------------------------------------------- CFG-05
class RawErrorStartSourceConnector(FileStreamSourceConnector):
    """start() reads props by hand: KeyError for a missing topic, ValueError for a bad int."""

    @override
    def start(self, props: dict[str, str]) -> None:
        self.topic = props["topic"]
        self.batch_size = int(props.get("batch.size", "2000"))
        super().start(props)


class RawErrorStartDriver(FileStreamSourceDriver):
    connector: ClassVar[type] = RawErrorStartSourceConnector


# ------------------------------------------------------------------------------------- CFG-06
class TooManyTasksSinkConnector(FileStreamSinkConnector):
    """Returns one task config more than max_tasks."""

    @override
    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props) for _ in range(max_tasks + 1)]


class TooManyTasksDriver(FileStreamSinkDriver):
    connector: ClassVar[type] = TooManyTasksSinkConnector


# ------------------------------------------------------------------------------------- CFG-07
class FileStreamSourceThing(FileStreamSourceConnector):
    """A source connector whose class name lacks the SourceConnector suffix."""


class BadNameDriver(FileStreamSourceDriver):
    connector: ClassVar[type] = FileStreamSourceThing


class EmptyVersionSourceConnector(FileStreamSourceConnector):
    """version() returns the empty string."""

    @override
    def version(self) -> str:
        return ""


class EmptyVersionDriver(FileStreamSourceDriver):
    connector: ClassVar[type] = EmptyVersionSourceConnector


# ------------------------------------------------------------------------------------- CFG-08
PASSWORD_CONFIG = "file.password"
_WITH_SECRET = ConfigDef(SOURCE_CONFIG_DEF).define(
    PASSWORD_CONFIG,
    Type.PASSWORD,
    None,
    None,
    Importance.MEDIUM,
    "The password of the file server (a PASSWORD: never shown)",
)


class SecretFileStreamSourceConnector(FileStreamSourceConnector):
    """A correct connector with a PASSWORD key, passed to its task under the same key."""

    @override
    def config(self) -> ConfigDef:
        return _WITH_SECRET

    @override
    def start(self, props: dict[str, str]) -> None:
        self.secret = AbstractConfig(_WITH_SECRET, props).get_password(PASSWORD_CONFIG)
        super().start(props)


class SecretSourceDriver(FileStreamSourceDriver):
    connector: ClassVar[type] = SecretFileStreamSourceConnector


class TaskConfigLeakSourceConnector(SecretFileStreamSourceConnector):
    """Copies the password into the task config key ``file.credential`` (not a PASSWORD)."""

    @override
    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        configs = super().task_configs(max_tasks)
        if self.secret is not None:
            for config in configs:
                config["file.credential"] = self.secret.value()
        return configs


class TaskConfigLeakDriver(FileStreamSourceDriver):
    connector: ClassVar[type] = TaskConfigLeakSourceConnector


class LogLeakSourceConnector(SecretFileStreamSourceConnector):
    """Logs the password at DEBUG when it starts."""

    @override
    def start(self, props: dict[str, str]) -> None:
        super().start(props)
        log.debug("Connecting to the file server with password %s", props.get(PASSWORD_CONFIG))


class LogLeakDriver(FileStreamSourceDriver):
    connector: ClassVar[type] = LogLeakSourceConnector


def broken_drivers() -> dict[str, list[type[Any]]]:
    """The drivers of the broken connectors by the check each must fail."""
    return {
        "CFG-01": [UndocumentedKeyDriver],
        "CFG-02": [RaisingValidateDriver, SilentValidateDriver],
        "CFG-03": [InvalidExampleDriver],
        "CFG-04": [FragileValidateDriver],
        "CFG-05": [RawErrorStartDriver],
        "CFG-06": [TooManyTasksDriver],
        "CFG-07": [BadNameDriver, EmptyVersionDriver],
        "CFG-08": [TaskConfigLeakDriver, LogLeakDriver],
    }
