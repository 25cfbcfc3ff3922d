"""Single message transforms and predicates (exports are added by the lead when the modules land)."""
