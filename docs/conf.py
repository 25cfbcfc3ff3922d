"""Sphinx configuration for the connect-cdk user guide (``pip install 'connect-cdk[docs]'``)."""

project = "connect-cdk"
author = "connect-cdk developers"
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.viewcode"]
napoleon_google_docstring = True
napoleon_numpy_docstring = False
autodoc_member_order = "bysource"
html_theme = "alabaster"
exclude_patterns = ["_build", "README.md"]
