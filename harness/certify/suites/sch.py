"""The SCH suite (being written)."""

from __future__ import annotations
