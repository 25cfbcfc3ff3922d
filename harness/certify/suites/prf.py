"""The PRF suite (being written)."""

from __future__ import annotations
