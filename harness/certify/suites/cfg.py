"""The CFG suite (being written)."""

from __future__ import annotations
