"""Converters between Connect data and bytes (exports are added by the lead when the modules land)."""
