"""Configuration: definitions, parsing, validation, providers and generated documentation.

The Python spelling of Kafka's ``org.apache.kafka.common.config``: declare a connector's or
plugin's configuration once as a :class:`ConfigDef`, then parse it (:meth:`ConfigDef.parse`,
:class:`AbstractConfig`), validate it for a UI or the REST API (:meth:`ConfigDef.validate`),
and render its reference documentation (RST, HTML, Markdown). Validators live in
:mod:`cdk.config.validators`.
"""

from __future__ import annotations

from cdk.config import validators
from cdk.config._abstract import AbstractConfig
from cdk.config._classes import load_class
from cdk.config._def import ConfigDef, ConfigKey, Recommender
from cdk.config._docs import nice_memory_units, nice_time_units
from cdk.config._properties import load_properties, parse_properties
from cdk.config._providers import (
    ConfigData,
    ConfigProvider,
    ConfigTransformer,
    ConfigTransformerResult,
    DirectoryConfigProvider,
    EnvVarConfigProvider,
    FileConfigProvider,
)
from cdk.config._types import (
    NO_DEFAULT,
    Importance,
    Password,
    Type,
    Width,
    convert_to_string,
    parse_type,
)
from cdk.config._value import Config, ConfigValue
from cdk.config.validators import Validator

__all__ = [
    # definition
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
    # results
    "ConfigValue",
    "Config",
    # parsed configs
    "AbstractConfig",
    "parse_type",
    "convert_to_string",
    "load_class",
    # providers
    "ConfigProvider",
    "ConfigData",
    "ConfigTransformer",
    "ConfigTransformerResult",
    "EnvVarConfigProvider",
    "FileConfigProvider",
    "DirectoryConfigProvider",
    # properties files
    "load_properties",
    "parse_properties",
    # docs helpers
    "nice_memory_units",
    "nice_time_units",
]
