"""The conformance harness: environment providers, suites, the pytest plugin and `cdk certify`.

It depends only on the public API of :mod:`cdk`. ``harness.strategies`` holds the hypothesis
strategies (schemas with matching values, configs from a ConfigDef) that the kit's own tests and
the certification suites share.
"""
