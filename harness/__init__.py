"""The conformance harness: driver contract, environment providers, suites and `cdk certify`.

It depends only on the public API of :mod:`cdk`. A connector project describes its external
system with a driver (:class:`SourceDriver`, :class:`SinkDriver`), and the values it cannot
hold with :class:`Limit` declarations; :mod:`harness.certify` runs
the certification suites against it and writes the report bundle. ``harness.strategies`` holds
the hypothesis strategies (schemas with matching values, hostile values, configs from a
ConfigDef) that the kit's own tests and the suites share. For a connector's own unit tests it
offers task contexts without a worker (:class:`FakeSourceTaskContext`,
:class:`FakeSinkTaskContext`, :class:`FakeOffsetStorageReader`) and :func:`read_topic`, which
reads a topic of the embedded broker from the beginning without a consumer group.
"""

from __future__ import annotations

from harness._doubles import (
    FakeOffsetStorageReader,
    FakeSinkTaskContext,
    FakeSourceTaskContext,
    read_topic,
)
from harness._driver import (
    ConnectorDriver,
    Delivery,
    SinkDriver,
    SourceDriver,
    SourceKind,
    default_sink_value,
    default_sink_value_schema,
)
from harness._limits import Limit

__all__ = [
    "ConnectorDriver",
    "Delivery",
    "FakeOffsetStorageReader",
    "FakeSinkTaskContext",
    "FakeSourceTaskContext",
    "Limit",
    "SinkDriver",
    "SourceDriver",
    "SourceKind",
    "default_sink_value",
    "default_sink_value_schema",
    "read_topic",
]
