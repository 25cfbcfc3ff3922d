"""The public surface of cdk.config."""

from __future__ import annotations

import cdk.config
from cdk.config import validators


def test_exports() -> None:
    assert set(cdk.config.__all__) == {
        "ConfigDef",
        "ConfigKey",
        "Type",
        "Importance",
        "Width",
        "NO_DEFAULT",
        "Password",
        "Recommender",
        "Validator",
        "validators",
        "ConfigValue",
        "Config",
        "AbstractConfig",
        "parse_type",
        "convert_to_string",
        "load_class",
        "ConfigProvider",
        "ConfigData",
        "ConfigTransformer",
        "ConfigTransformerResult",
        "EnvVarConfigProvider",
        "FileConfigProvider",
        "DirectoryConfigProvider",
        "load_properties",
        "parse_properties",
        "nice_memory_units",
        "nice_time_units",
    }
    for name in cdk.config.__all__:
        assert getattr(cdk.config, name) is not None


def test_validator_exports() -> None:
    assert set(validators.__all__) == {
        "CaseInsensitiveValidString",
        "CompositeValidator",
        "LambdaValidator",
        "ListSize",
        "NonEmptyString",
        "NonEmptyStringWithoutControlChars",
        "NonNullValidator",
        "Range",
        "ValidList",
        "ValidString",
        "Validator",
    }


def test_config_result() -> None:
    from cdk.config import Config, ConfigValue

    cfg = Config([ConfigValue("a", 1, error_messages=["bad", "worse"]), ConfigValue("b")])
    assert cfg.config_values[0].name == "a"
    assert cfg.error_count() == 2
    assert cfg == Config([ConfigValue("a", 1, error_messages=["bad", "worse"]), ConfigValue("b")])
    assert "[a,1,[],[bad, worse],true]" in repr(cfg)
