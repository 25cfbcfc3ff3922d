"""connect-cdk: a Connector Development Kit for Kafka Connect-style connectors in Python.

The public API is re-exported here; import from ``cdk`` (``from cdk import ConfigDef, Struct``),
never from the private modules.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
