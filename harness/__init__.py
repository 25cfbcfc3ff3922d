"""The conformance harness: driver contract, environment providers, suites and `cdk certify`.

It depends only on the public API of :mod:`cdk`. A connector project describes its external
system with a driver (:class:`SourceDriver`, :class:`SinkDriver`), and the values it cannot
hold with :class:`Limit` declarations; :mod:`harness.certify` runs
the certification suites against it and writes the report bundle. ``harness.strategies`` holds
the hypothesis strategies (schemas with matching values, hostile values, configs from a
ConfigDef) that the kit's own tests and the suites share.
"""

from __future__ import annotations

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
    "Limit",
    "SinkDriver",
    "SourceDriver",
    "SourceKind",
    "default_sink_value",
    "default_sink_value_schema",
]
