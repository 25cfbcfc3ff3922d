"""AbstractConfig (ported from Kafka's AbstractConfigTest, plus typed getters and logging)."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

import pytest

from cdk.config import (
    NO_DEFAULT,
    AbstractConfig,
    ConfigData,
    ConfigDef,
    ConfigProvider,
    Importance,
    Password,
    Type,
)
from cdk.config import validators as v
from cdk.errors import ConfigException


def _def() -> ConfigDef:
    return (
        ConfigDef()
        .define("s", Type.STRING, "str", None, Importance.HIGH, "s")
        .define("i", Type.INT, 1, v.Range.at_least(0), Importance.HIGH, "i")
        .define("sh", Type.SHORT, 2, None, Importance.LOW, "sh")
        .define("l", Type.LONG, 3, None, Importance.LOW, "l")
        .define("d", Type.DOUBLE, 0.5, None, Importance.LOW, "d")
        .define("b", Type.BOOLEAN, False, None, Importance.LOW, "b")
        .define("li", Type.LIST, "x,y", None, Importance.LOW, "li")
        .define("p", Type.PASSWORD, None, None, Importance.LOW, "p")
        .define("c", Type.CLASS, None, None, Importance.LOW, "c")
    )


class Plugin:
    def __init__(self) -> None:
        self.configured: dict[str, Any] | None = None

    def configure(self, configs: Mapping[str, Any]) -> None:
        self.configured = dict(configs)


class NotAPlugin:
    pass


def test_typed_getters() -> None:
    cfg = AbstractConfig(
        _def(),
        {"s": " text ", "i": "7", "b": "TRUE", "li": "a, b", "p": "pw", "c": f"{__name__}.Plugin"},
    )
    assert cfg.get_string("s") == "text"
    assert cfg.get_int("i") == 7
    assert cfg.get_short("sh") == 2
    assert cfg.get_long("l") == 3
    assert cfg.get_double("d") == 0.5
    assert cfg.get_boolean("b") is True
    assert cfg.get_list("li") == ["a", "b"]
    password = cfg.get_password("p")
    assert password is not None
    assert password.value() == "pw"
    assert cfg.get_class("c") is Plugin
    assert cfg.get("s") == "text"
    with pytest.raises(ConfigException, match="Unknown configuration 'nope'"):
        cfg.get("nope")
    with pytest.raises(ConfigException, match="is not of type INT"):
        cfg.get_int("s")
    assert cfg.type_of("i") is Type.INT
    assert cfg.type_of("nope") is None
    assert cfg.documentation_of("i") == "i"


def test_parse_errors_propagate() -> None:
    with pytest.raises(ConfigException, match="Invalid value -1 for configuration i"):
        AbstractConfig(_def(), {"i": "-1"})
    required = ConfigDef().define("r", Type.STRING, NO_DEFAULT, None, Importance.HIGH, "r")
    with pytest.raises(ConfigException, match='Missing required configuration "r"'):
        AbstractConfig(required, {})
    with pytest.raises(ConfigException, match="Key must be a string"):
        AbstractConfig(_def(), {1: "x"})  # type: ignore[dict-item]


def test_unused_and_ignore() -> None:
    cfg = AbstractConfig(_def(), {"s": "a", "i": "2", "extra": "x", "other": "y"})
    assert cfg.unused() == {"s", "i", "extra", "other"}
    cfg.get_string("s")
    cfg.ignore("extra")
    assert cfg.unused() == {"i", "other"}
    cfg.values()["i"]
    assert cfg.unused() == {"other"}


def test_log_unused(caplog: pytest.LogCaptureFixture) -> None:
    cfg = AbstractConfig(_def(), {"zz": "1", "aa": "2"})
    with caplog.at_level(logging.INFO, logger="cdk.config"):
        cfg.log_unused()
    assert caplog.messages == [
        "These configurations '[aa, zz]' were supplied but are not used yet."
    ]


def test_log_all_hides_passwords(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="cdk.config"):
        AbstractConfig(_def(), {"p": "hunter2", "li": "a,b"}, do_log=True)
    [message] = caplog.messages
    assert "hunter2" not in message
    assert message == (
        "AbstractConfig values: \n"
        "\tb = false\n"
        "\tc = null\n"
        "\td = 0.5\n"
        "\ti = 1\n"
        "\tl = 3\n"
        "\tli = [a, b]\n"
        "\tp = [hidden]\n"
        "\ts = str\n"
        "\tsh = 2\n"
    )


def test_log_all_uses_subclass_name(caplog: pytest.LogCaptureFixture) -> None:
    class MyConnectorConfig(AbstractConfig):
        pass

    with caplog.at_level(logging.INFO, logger="cdk.config"):
        MyConnectorConfig(_def(), {}, do_log=True)
    assert caplog.messages[0].startswith("MyConnectorConfig values: \n\tb = false\n")


def test_originals_with_prefix() -> None:
    cfg = AbstractConfig(_def(), {"foo.bar": "abc", "setting": "def", "foo.": "self"})
    with_prefix = cfg.originals_with_prefix("foo.")
    assert with_prefix == {"bar": "abc"}
    assert cfg.originals_with_prefix("foo.", strip=False) == {"foo.bar": "abc"}
    assert "foo.bar" in cfg.unused()
    assert with_prefix["bar"] == "abc"
    assert "foo.bar" not in cfg.unused()
    assert cfg.originals_with_prefix("none.") == {}


def test_originals_and_strings() -> None:
    cfg = AbstractConfig(_def(), {"s": "x", "n": 5})
    assert cfg.originals() == {"s": "x", "n": 5}
    assert cfg.originals({"s": "y"}) == {"s": "y", "n": 5}
    with pytest.raises(ConfigException, match="Invalid value 5 for configuration n"):
        cfg.originals_strings()
    assert AbstractConfig(_def(), {"s": "x"}).originals_strings() == {"s": "x"}


def test_values_with_prefix_override() -> None:
    cfg = AbstractConfig(
        _def(), {"prefix.i": "9", "i": "4", "prefix.unknown": "u", "s": "plain", "prefix.": "z"}
    )
    values = cfg.values_with_prefix_override("prefix.")
    assert values["i"] == 9
    assert values["s"] == "plain"
    assert "unknown" not in values
    assert "prefix.i" not in cfg.unused()
    with pytest.raises(ConfigException, match="Invalid value"):
        AbstractConfig(_def(), {"prefix.i": "-5"}).values_with_prefix_override("prefix.")


def test_values_with_prefix_all_or_nothing() -> None:
    cfg = AbstractConfig(_def(), {"i": "4", "p.s": "from-prefix"})
    assert cfg.values_with_prefix_all_or_nothing("p.")["s"] == "from-prefix"
    assert cfg.values_with_prefix_all_or_nothing("p.")["i"] == 1
    assert cfg.values_with_prefix_all_or_nothing("q.")["i"] == 4


def test_non_internal_values() -> None:
    d = _def().define_internal("hidden", Type.INT, 3)
    cfg = AbstractConfig(d, {})
    assert "hidden" in cfg.values()
    assert "hidden" not in cfg.non_internal_values()


def test_post_process_parsed_config() -> None:
    class Derived(AbstractConfig):
        def post_process_parsed_config(self, parsed: Mapping[str, Any]) -> Mapping[str, Any]:
            return {"l": parsed["i"] * 10}

    assert Derived(_def(), {"i": "3"}).get_long("l") == 30


def test_configured_instance() -> None:
    cfg = AbstractConfig(_def(), {"c": f"{__name__}.Plugin", "extra": "e"})
    plugin = cfg.get_configured_instance("c", Plugin)
    assert isinstance(plugin, Plugin)
    assert plugin.configured == {"c": f"{__name__}.Plugin", "extra": "e"}
    overridden = cfg.get_configured_instance("c", Plugin, {"extra": "o"})
    assert overridden is not None
    assert overridden.configured is not None
    assert overridden.configured["extra"] == "o"
    assert AbstractConfig(_def(), {}).get_configured_instance("c", Plugin) is None
    with pytest.raises(ConfigException, match="is not an instance of Plugin"):
        AbstractConfig(_def(), {"c": NotAPlugin}).get_configured_instance("c", Plugin)


def test_configured_instances() -> None:
    d = ConfigDef().define("classes", Type.LIST, [], None, Importance.LOW, "d")
    cfg = AbstractConfig(d, {"classes": f"{__name__}.Plugin, {__name__}:Plugin"})
    instances = cfg.get_configured_instances("classes", Plugin)
    assert [type(i) for i in instances] == [Plugin, Plugin]
    with pytest.raises(ConfigException, match="could not be found"):
        AbstractConfig(d, {"classes": "no.Such"}).get_configured_instances("classes", Plugin)


def test_equality() -> None:
    assert AbstractConfig(_def(), {"s": "a"}) == AbstractConfig(_def(), {"s": "a"})
    assert AbstractConfig(_def(), {"s": "a"}) != AbstractConfig(_def(), {"s": "b"})
    assert "hunter2" not in repr(AbstractConfig(_def(), {"p": "hunter2"}))


# ------------------------------------------------------------------------------ providers
class MockFileConfigProvider(ConfigProvider):
    configured: ClassVar[dict[str, Any]] = {}
    closed = 0

    def configure(self, configs: Mapping[str, Any]) -> None:
        MockFileConfigProvider.configured = dict(configs)

    def get(self, path: str, keys: Iterable[str] | None = None) -> ConfigData:
        data = {"testKey": "testResult", "testKeyWithTTL": "testResultWithTTL"}
        if path == "/usr/kerberos":
            data = {"key": "testKey", "password": "randomPassword"}
        return ConfigData(data, 1000 if path == "/ttl" else None)

    def close(self) -> None:
        MockFileConfigProvider.closed += 1


MOCK = f"{__name__}.MockFileConfigProvider"


def _kerberos_def() -> ConfigDef:
    return (
        ConfigDef()
        .define("sasl.kerberos.key", Type.STRING, None, None, Importance.LOW, "d")
        .define("sasl.kerberos.password", Type.PASSWORD, None, None, Importance.LOW, "d")
        .define("sasl.kerberos.service.name", Type.STRING, None, None, Importance.LOW, "d")
    )


def test_originals_with_config_providers() -> None:
    props = {
        "config.providers": "file",
        "config.providers.file.class": MOCK,
        "prefix.ssl.truststore.location.number": 5,
        "sasl.kerberos.service.name": "service name",
        "sasl.kerberos.key": "${file:/usr/kerberos:key}",
        "sasl.kerberos.password": "${file:/usr/kerberos:password}",
    }
    before = MockFileConfigProvider.closed
    cfg = AbstractConfig(_kerberos_def(), props)
    assert cfg.originals()["sasl.kerberos.key"] == "testKey"
    assert cfg.get_string("sasl.kerberos.key") == "testKey"
    password = cfg.get_password("sasl.kerberos.password")
    assert password is not None
    assert password.value() == "randomPassword"
    assert cfg.originals()["prefix.ssl.truststore.location.number"] == 5
    assert cfg.get_string("sasl.kerberos.service.name") == "service name"
    assert MockFileConfigProvider.closed == before + 1


def test_config_provider_props_as_param() -> None:
    provider_props = {"config.providers": "file", "config.providers.file.class": MOCK}
    props = {
        "sasl.kerberos.key": "${file:/usr/kerberos:key}",
        "sasl.kerberos.password": "${file:/usr/kerberos:password}",
        "config.providers": "ignored-here",
    }
    cfg = AbstractConfig(_kerberos_def(), props, config_provider_props=provider_props)
    assert cfg.get_string("sasl.kerberos.key") == "testKey"


def test_provider_params_and_unknown_variables() -> None:
    props = {
        "config.providers": "file,other",
        "config.providers.file.class": MOCK,
        "config.providers.file.param.testKey": "testResult",
        "config.providers.file.param.other": "x",
        "sasl.kerberos.key": "${file:/usr/kerberos:missing}",
        "sasl.kerberos.service.name": "${vault:/a:b} and ${file:/usr/kerberos:key}",
    }
    cfg = AbstractConfig(_kerberos_def(), props)
    assert MockFileConfigProvider.configured == {"testKey": "testResult", "other": "x"}
    assert cfg.get_string("sasl.kerberos.key") == "${file:/usr/kerberos:missing}"
    assert cfg.get_string("sasl.kerberos.service.name") == "${vault:/a:b} and testKey"


def test_missing_provider_class() -> None:
    props = {
        "config.providers": "test",
        "config.providers.test.class": (
            "org.apache.kafka.common.config.provider.InvalidConfigProvider"
        ),
        "sasl.kerberos.key": "${test:/foo/bar/testpath:testKey}",
    }
    with pytest.raises(ConfigException) as info:
        AbstractConfig(_kerberos_def(), props)
    assert "config.providers.test.class" in str(info.value)
    assert "Could not load config provider class" in str(info.value)


def test_env_provider_by_alias(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CDK_TEST_SECRET", "from-env")
    props = {
        "config.providers": "env",
        "config.providers.env.class": (
            "org.apache.kafka.common.config.provider.EnvVarConfigProvider"
        ),
        "sasl.kerberos.password": "${env:CDK_TEST_SECRET}",
    }
    cfg = AbstractConfig(_kerberos_def(), props)
    password = cfg.get_password("sasl.kerberos.password")
    assert password is not None
    assert password == Password("from-env")
