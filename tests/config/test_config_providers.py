"""Config providers and ConfigTransformer (Kafka's FileConfigProvider/EnvVar/ConfigTransformer)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest

from cdk.config import (
    ConfigData,
    ConfigProvider,
    ConfigTransformer,
    DirectoryConfigProvider,
    EnvVarConfigProvider,
    FileConfigProvider,
)
from cdk.config._providers import instantiate_providers, load_provider_class
from cdk.errors import ConfigException


class StaticProvider(ConfigProvider):
    def get(self, path: str, keys: Iterable[str] | None = None) -> ConfigData:
        data: dict[str, str] = {}
        if path == "testPath":
            data = {"testKey": "testResult", "testKeyWithTTL": "testResultWithTTL"}
        elif path == "testPathWithTTL":
            return ConfigData({"testKeyWithTTL": "testResultWithTTL"}, 1)
        return ConfigData(data)


@pytest.fixture
def transformer() -> ConfigTransformer:
    return ConfigTransformer({"test": StaticProvider()})


def test_replace_variable(transformer: ConfigTransformer) -> None:
    result = transformer.transform({"myKey": "${test:testPath:testKey}"})
    assert result.data == {"myKey": "testResult"}
    assert result.ttls == {}


def test_replace_variable_with_ttl(transformer: ConfigTransformer) -> None:
    result = transformer.transform({"myKey": "${test:testPathWithTTL:testKeyWithTTL}"})
    assert result.data == {"myKey": "testResultWithTTL"}
    assert result.ttls == {"testPathWithTTL": 1}


def test_replace_multiple_variables_in_value(transformer: ConfigTransformer) -> None:
    result = transformer.transform(
        {"myKey": "hello, ${test:testPath:testKey}; goodbye, ${test:testPath:testKeyWithTTL}!!!"}
    )
    assert result.data["myKey"] == "hello, testResult; goodbye, testResultWithTTL!!!"


def test_unknown_provider_and_key_are_left_alone(transformer: ConfigTransformer) -> None:
    result = transformer.transform(
        {
            "a": "${unknown:p:k}",
            "b": "${test:testPath:missing}",
            "c": "${test:noPath}",
            "d": "plain",
            "e": 5,
        }
    )
    assert result.data == {
        "a": "${unknown:p:k}",
        "b": "${test:testPath:missing}",
        "c": "${test:noPath}",
        "d": "plain",
        "e": 5,
    }


def test_file_provider(tmp_path: Path) -> None:
    file = tmp_path / "secrets.properties"
    file.write_text("testKey=testResult\ntestKey2 : value with spaces\n# comment\n")
    provider = FileConfigProvider()
    provider.configure({})
    assert provider.get(str(file)).data == {
        "testKey": "testResult",
        "testKey2": "value with spaces",
    }
    assert provider.get(str(file), ["testKey"]).data == {"testKey": "testResult"}
    assert provider.get("").data == {}
    with pytest.raises(ConfigException, match="Key nope is not in properties file"):
        provider.get(str(file), ["nope"])
    missing = tmp_path / "missing.properties"
    with pytest.raises(ConfigException, match=f"Could not read properties from file {missing}"):
        provider.get(str(missing), ["k"])
    result = ConfigTransformer({"file": provider}).transform({"x": f"${{file:{file}:testKey2}}"})
    assert result.data == {"x": "value with spaces"}


def test_file_provider_allowed_paths(tmp_path: Path) -> None:
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    (allowed / "ok.properties").write_text("k=v\n")
    (tmp_path / "outside.properties").write_text("k=v\n")
    provider = FileConfigProvider()
    provider.configure({"allowed.paths": str(allowed)})
    assert provider.get(str(allowed / "ok.properties"), ["k"]).data == {"k": "v"}
    with pytest.raises(ConfigException, match=r"is not allowed by allowed\.paths"):
        provider.get(str(tmp_path / "outside.properties"), ["k"])
    with pytest.raises(ConfigException, match="is not allowed"):
        provider.get(str(allowed / ".." / "outside.properties"), ["k"])
    with pytest.raises(ConfigException, match="is not absolute"):
        FileConfigProvider().configure({"allowed.paths": "relative/dir"})


def test_env_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CDK_TEST_A", "a-value")
    monkeypatch.setenv("OTHER_CDK_TEST", "other")
    monkeypatch.delenv("CDK_TEST_MISSING", raising=False)
    provider = EnvVarConfigProvider()
    provider.configure({})
    assert provider.get("", ["CDK_TEST_A"]).data == {"CDK_TEST_A": "a-value"}
    assert provider.get("").data["CDK_TEST_A"] == "a-value"
    with pytest.raises(ConfigException, match="Environment variable CDK_TEST_MISSING is not set"):
        provider.get("", ["CDK_TEST_MISSING"])
    with pytest.raises(ConfigException, match="Path is not supported"):
        provider.get("some/path", ["CDK_TEST_A"])
    restricted = EnvVarConfigProvider()
    restricted.configure({"allowlist.pattern": "CDK_TEST_.*"})
    assert "OTHER_CDK_TEST" not in restricted.get("").data
    with pytest.raises(ConfigException, match=r"allowlist\.pattern"):
        restricted.get("", ["OTHER_CDK_TEST"])
    with pytest.raises(ConfigException):
        EnvVarConfigProvider().configure({"allowlist.pattern": "("})


def test_env_provider_through_transformer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CDK_TEST_USER", "alice")
    result = ConfigTransformer({"env": EnvVarConfigProvider()}).transform(
        {"user": "${env:CDK_TEST_USER}", "url": "db://${env:CDK_TEST_USER}@host"}
    )
    assert result.data == {"user": "alice", "url": "db://alice@host"}


def test_directory_provider(tmp_path: Path) -> None:
    (tmp_path / "db-password").write_text("s3cret")
    (tmp_path / "api-key").write_text("key")
    (tmp_path / "sub").mkdir()
    provider = DirectoryConfigProvider()
    assert provider.get(str(tmp_path)).data == {"db-password": "s3cret", "api-key": "key"}
    assert provider.get(str(tmp_path), ["api-key"]).data == {"api-key": "key"}
    assert provider.get("").data == {}
    with pytest.raises(ConfigException, match="File nope is not in directory"):
        provider.get(str(tmp_path), ["nope"])
    with pytest.raises(ConfigException, match=r"File \.\./x is not in directory"):
        provider.get(str(tmp_path), ["../x"])
    with pytest.raises(ConfigException, match="Could not read directory"):
        provider.get(str(tmp_path / "absent"), ["x"])


@pytest.mark.parametrize(
    ("name", "cls"),
    [
        ("env", EnvVarConfigProvider),
        ("file", FileConfigProvider),
        ("directory", DirectoryConfigProvider),
        ("org.apache.kafka.common.config.provider.EnvVarConfigProvider", EnvVarConfigProvider),
        ("org.apache.kafka.common.config.provider.FileConfigProvider", FileConfigProvider),
        (
            "org.apache.kafka.common.config.provider.DirectoryConfigProvider",
            DirectoryConfigProvider,
        ),
        ("cdk.config:FileConfigProvider", FileConfigProvider),
    ],
)
def test_provider_class_names(name: str, cls: type) -> None:
    assert load_provider_class(name) is cls


def test_load_provider_class_rejects_non_providers() -> None:
    with pytest.raises(ConfigException, match="is not a ConfigProvider"):
        load_provider_class("collections.OrderedDict")


def test_instantiate_providers() -> None:
    assert instantiate_providers({}) == {}
    assert instantiate_providers({"config.providers": ""}) == {}
    providers = instantiate_providers(
        {
            "config.providers": "env, nofile",
            "config.providers.env.class": "env",
            "config.providers.env.param.allowlist.pattern": "X.*",
        }
    )
    assert list(providers) == ["env"]
    assert isinstance(providers["env"], EnvVarConfigProvider)
