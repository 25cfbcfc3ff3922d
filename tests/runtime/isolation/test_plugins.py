"""Plugin discovery and loading: built-ins, ``cdk.plugins`` entry points, aliases, class paths."""

from __future__ import annotations

from typing import Any

import pytest

from cdk.api import SinkConnector, SinkRecord, SourceConnector, SourceRecord, SourceTask, Task
from cdk.config import ConfigDef
from cdk.converters import JsonConverter, SimpleHeaderConverter, StringConverter
from cdk.errors import ConfigException
from cdk.runtime.isolation._plugins import PluginDesc, Plugins, PluginType
from cdk.transforms import InsertField


class _NoopTask(SourceTask):
    def start(self, props: dict[str, str]) -> None:
        pass

    def poll(self) -> list[SourceRecord] | None:
        return None

    def stop(self) -> None:
        pass


class _Base:
    def start(self, props: dict[str, str]) -> None:
        pass

    def task_class(self) -> type[Task]:
        return _NoopTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{}]

    def stop(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return ConfigDef()


class AcmeSourceConnector(_Base, SourceConnector):
    def version(self) -> str:
        return "7.1"


class AcmeSinkConnector(_Base, SinkConnector):
    pass


class Dup:
    class AcmeSourceConnector(_Base, SourceConnector):
        pass


class Untyped:
    pass


def test_builtins_are_listed_with_their_kinds() -> None:
    plugins = Plugins()
    by_name: dict[str, set[PluginType]] = {}
    for desc in plugins.all():
        by_name.setdefault(desc.class_name, set()).add(desc.type)
    assert by_name["cdk.converters.JsonConverter"] == {
        PluginType.CONVERTER,
        PluginType.HEADER_CONVERTER,
    }
    assert by_name["cdk.converters.SimpleHeaderConverter"] == {PluginType.HEADER_CONVERTER}
    assert by_name["cdk.transforms.InsertField.Value"] == {PluginType.TRANSFORMATION}
    assert by_name["cdk.transforms.TopicNameMatches"] == {PluginType.PREDICATE}
    assert by_name["cdk.config.FileConfigProvider"] == {PluginType.CONFIG_PROVIDER}
    names = [d.class_name for d in plugins.all()]
    assert names == sorted(names)


def test_entry_point_connectors_and_their_aliases() -> None:
    plugins = Plugins()
    source = plugins.load("FileStreamSource")
    assert issubclass(source, SourceConnector)
    assert plugins.load("org.apache.kafka.connect.file.FileStreamSourceConnector") is source
    assert plugins.load("FileStreamSourceConnector") is source
    assert plugins.load("reference_connectors.filestream:FileStreamSourceConnector") is source
    kinds = {d.class_name: d.type for d in plugins.connectors()}
    assert kinds["reference_connectors.filestream.FileStreamSourceConnector"] is PluginType.SOURCE
    assert kinds["reference_connectors.filestream.FileStreamSinkConnector"] is PluginType.SINK
    # each class is listed once even though several entry points name it
    assert len([d for d in plugins.connectors() if d.cls is source]) == 1


def test_extra_classes_get_kafka_style_aliases() -> None:
    plugins = Plugins([AcmeSourceConnector, AcmeSinkConnector])
    assert plugins.connector_class("AcmeSourceConnector") is AcmeSourceConnector
    assert plugins.connector_class("AcmeSource") is AcmeSourceConnector
    assert plugins.connector_class("AcmeSink") is AcmeSinkConnector
    assert plugins.load(f"{__name__}:AcmeSinkConnector") is AcmeSinkConnector
    assert plugins.load(f"{__name__}.AcmeSinkConnector") is AcmeSinkConnector
    desc = next(d for d in plugins.connectors() if d.cls is AcmeSourceConnector)
    assert desc == PluginDesc(f"{__name__}.AcmeSourceConnector", PluginType.SOURCE, "7.1", desc.cls)
    assert desc.to_json() == {
        "class": f"{__name__}.AcmeSourceConnector",
        "type": "source",
        "version": "7.1",
    }


def test_kafka_names_of_builtins() -> None:
    plugins = Plugins()
    assert plugins.load("org.apache.kafka.connect.json.JsonConverter") is JsonConverter
    assert plugins.load("Json") is JsonConverter
    assert plugins.load("InsertField$Value") is InsertField.Value
    assert plugins.load(JsonConverter) is JsonConverter


def test_ambiguous_alias_lists_the_candidates() -> None:
    plugins = Plugins([AcmeSourceConnector, Dup.AcmeSourceConnector])
    with pytest.raises(ConfigException) as info:
        plugins.load("AcmeSource")
    message = str(info.value)
    assert "ambiguous" in message
    assert f"{__name__}.AcmeSourceConnector" in message
    assert f"{__name__}.Dup.AcmeSourceConnector" in message


def test_unknown_names_are_clear_errors() -> None:
    plugins = Plugins()
    with pytest.raises(ConfigException, match=r"Class com\.acme\.Nope could not be found"):
        plugins.load("com.acme.Nope")
    with pytest.raises(ConfigException) as info:
        plugins.connector_class("Nope")
    assert "which name matches Nope" in str(info.value)
    assert "reference_connectors.filestream.FileStreamSourceConnector" in str(info.value)
    with pytest.raises(ConfigException, match="is not a connector"):
        plugins.connector_class("JsonConverter")
    with pytest.raises(ConfigException, match="non-empty"):
        plugins.load("  ")


def test_aliases_are_every_other_name_that_loads_the_plugin() -> None:
    plugins = Plugins([AcmeSourceConnector, AcmeSinkConnector])
    assert plugins.aliases("reference_connectors.filestream.FileStreamSourceConnector") == [
        "FileStreamSource",
        "FileStreamSourceConnector",
        "org.apache.kafka.connect.file.FileStreamSourceConnector",
    ]
    assert plugins.aliases("cdk.converters.JsonConverter") == [
        "Json",
        "JsonConverter",
        "org.apache.kafka.connect.json.JsonConverter",
    ]
    # "Value" is the simple name of every X.Value transformation: an alias of none of them
    assert plugins.aliases("cdk.transforms.InsertField.Value") == [
        "InsertField$Value",
        "org.apache.kafka.connect.transforms.InsertField$Value",
    ]
    assert plugins.aliases(f"{__name__}.AcmeSinkConnector") == ["AcmeSink", "AcmeSinkConnector"]
    assert plugins.aliases("no.such.Plugin") == []
    for desc in plugins.all():
        for alias in plugins.aliases(desc.class_name):
            assert plugins.load(alias) is desc.cls, alias


def test_unknown_connector_class_suggests_the_closest_names() -> None:
    plugins = Plugins([AcmeSourceConnector, AcmeSinkConnector])
    assert plugins.suggestions("FileStreamSorce", connectors_only=True) == ["FileStreamSource"]
    assert plugins.suggestions("filestreamsource", connectors_only=True) == ["FileStreamSource"]
    assert plugins.suggestions("com.example.AcmeSorceConnector", connectors_only=True) == [
        "AcmeSourceConnector"
    ]
    assert plugins.suggestions("SqliteSourceConnecter", connectors_only=True) == [
        "SqliteSourceConnector"
    ]
    # the same suffix alone does not make names close
    assert plugins.suggestions("MongoSourceConnector", connectors_only=True) == []
    # the JDBC connector's short name finds the SQL source's alias
    assert plugins.suggestions("JdbcSourceConnector", connectors_only=True) == ["JdbcSource"]
    assert plugins.suggestions("Nope", connectors_only=True) == []
    assert plugins.suggestions("JsonConvertor") == ["JsonConverter"]
    assert plugins.suggestions("JsonConvertor", connectors_only=True) == []
    with pytest.raises(ConfigException) as info:
        plugins.connector_class("AcmeSorce")
    message = str(info.value)
    assert message.startswith("Failed to find any class that implements Connector")
    assert message.endswith(" Did you mean AcmeSource?")
    with pytest.raises(ConfigException) as info:
        plugins.connector_class("Nope")
    assert "Did you mean" not in str(info.value)


def test_untyped_extra_is_ignored_and_plugin_type_errors() -> None:
    plugins = Plugins([Untyped])
    assert all(d.cls is not Untyped for d in plugins.all())
    with pytest.raises(ConfigException, match="is not a plugin"):
        plugins.plugin_type(Untyped)
    assert plugins.plugin_type(StringConverter) is PluginType.CONVERTER


def test_new_converters_are_configured() -> None:
    plugins = Plugins()
    converter = plugins.new_converter("JsonConverter", {"schemas.enable": "false"}, False)
    assert isinstance(converter, JsonConverter)
    assert converter.from_connect_data("t", None, {"a": 1}) == b'{"a":1}'
    header = plugins.new_header_converter("SimpleHeaderConverter", {})
    assert isinstance(header, SimpleHeaderConverter)
    with pytest.raises(ConfigException, match="is not a Converter"):
        plugins.new_converter("SimpleHeaderConverter", {}, True)
    with pytest.raises(ConfigException, match="is not a HeaderConverter"):
        plugins.new_header_converter("InsertField$Value", {})


def test_new_connector_instances() -> None:
    plugins = Plugins([AcmeSinkConnector])
    connector: Any = plugins.new_connector("AcmeSink")
    assert isinstance(connector, AcmeSinkConnector)
    assert SinkRecord is not None  # the API the connectors build on is importable
    assert "plugins" in repr(plugins) or "scanned" in repr(plugins)


def test_remembered_classes_load_by_class_path_even_when_not_importable() -> None:
    def make_task() -> type[SourceTask]:
        class LocalTask(_NoopTask):
            pass

        return LocalTask

    plugins = Plugins()
    local = make_task()
    path = f"{local.__module__}.{local.__qualname__}"
    with pytest.raises(ConfigException, match="could not be found"):
        plugins.load(path)
    plugins.remember(local)
    assert plugins.load(path) is local
    newer = make_task()
    plugins.remember(newer)
    assert plugins.load(path) is newer
