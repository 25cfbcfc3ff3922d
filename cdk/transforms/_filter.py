"""Filter: drop records (Kafka's ``Filter``); combine it with a predicate to drop some."""

from __future__ import annotations

from cdk.config import ConfigDef
from cdk.transforms._base import R, Transformation

__all__ = ["Filter"]

CONFIG_DEF: ConfigDef = ConfigDef()


class Filter(Transformation[R]):
    """Drop every record it sees.

    On its own it drops everything; with ``transforms.<alias>.predicate`` it drops only the
    records the predicate matches (or, with ``negate=true``, those it does not match).
    """

    def config(self) -> ConfigDef:
        """An empty ConfigDef: Filter has no settings."""
        return CONFIG_DEF

    def apply(self, record: R) -> R | None:
        """Always ``None``: the record is dropped."""
        return None
