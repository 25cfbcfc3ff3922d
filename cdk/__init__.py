"""connect-cdk: a Connector Development Kit for Kafka Connect-style connectors in Python.

The public API is re-exported here; import from ``cdk`` (``from cdk import ConfigDef, Struct``),
never from the private modules. Converters and transformations live in :mod:`cdk.converters` and
:mod:`cdk.transforms`.
"""

from __future__ import annotations

from cdk.api import ConnectRecord, Header, Headers, SinkRecord, SourceRecord, TimestampType
from cdk.config import (
    NO_DEFAULT,
    AbstractConfig,
    Config,
    ConfigDef,
    ConfigKey,
    ConfigValue,
    Importance,
    Password,
    Recommender,
    Type,
    Width,
)
from cdk.data import (
    Date,
    Decimal,
    Field,
    Schema,
    SchemaAndValue,
    SchemaBuilder,
    SchemaProjector,
    SchemaType,
    Struct,
    Time,
    Timestamp,
    Values,
)
from cdk.errors import (
    AlreadyExistsException,
    ConfigException,
    ConnectException,
    DataException,
    IllegalWorkerStateException,
    MissingExtraError,
    NotFoundException,
    RetriableException,
    SchemaBuilderException,
    SchemaProjectorException,
)

__version__ = "0.1.0"

__all__ = [
    "__version__",
    # records and headers
    "ConnectRecord",
    "SourceRecord",
    "SinkRecord",
    "Header",
    "Headers",
    "TimestampType",
    # configuration
    "ConfigDef",
    "ConfigKey",
    "Type",
    "Importance",
    "Width",
    "NO_DEFAULT",
    "AbstractConfig",
    "Config",
    "ConfigValue",
    "Password",
    "Recommender",
    # data
    "Schema",
    "SchemaBuilder",
    "SchemaType",
    "Field",
    "Struct",
    "SchemaAndValue",
    "SchemaProjector",
    "Values",
    "Decimal",
    "Date",
    "Time",
    "Timestamp",
    # errors
    "ConnectException",
    "RetriableException",
    "DataException",
    "ConfigException",
    "SchemaBuilderException",
    "SchemaProjectorException",
    "NotFoundException",
    "AlreadyExistsException",
    "IllegalWorkerStateException",
    "MissingExtraError",
]
