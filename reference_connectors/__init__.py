"""Reference connectors built only on the public API of ``cdk`` and certified in CI."""
