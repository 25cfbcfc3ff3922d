"""Sphinx configuration of the connectors' documentation (``sphinx-build -W docs docs/_build``)."""

project = "{{ cookiecutter.project_name }}"
author = "{{ cookiecutter.author }}"
# cdk.sphinxext renders configuration references from ConfigDefs (the cdk-config directive).
extensions = ["cdk.sphinxext"]
html_theme = "alabaster"
exclude_patterns = ["_build"]
