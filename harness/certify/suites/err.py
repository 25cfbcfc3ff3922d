"""The ERR suite (being written)."""

from __future__ import annotations
