"""Sphinx configuration for the connect-cdk docs (``pip install 'connect-cdk[docs]'``)."""

from __future__ import annotations

import builtins
from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform

project = "connect-cdk"
author = "connect-cdk developers"
extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "cdk.sphinxext",  # the cdk-config and cdk-checklist directives
]
napoleon_google_docstring = True
napoleon_numpy_docstring = False
autodoc_member_order = "bysource"
html_theme = "alabaster"
exclude_patterns = ["_build", "README.md"]
# config references quote defaults exactly (``""``, ``[1,...]``): no typographic quotes
smartquotes = False


class _BuiltinAnnotations(SphinxPostTransform):
    """Built-in names in signatures (``type[Task]``) stay text.

    Sphinx resolves annotation references fuzzily, so ``type`` would link, ambiguously, to the
    ``type`` attributes of ``ConfigKey`` and ``Schema``.
    """

    default_priority = 5  # before the references are resolved (10)

    def run(self, **kwargs: Any) -> None:
        for ref in list(self.document.findall(addnodes.pending_xref)):
            target = ref.get("reftarget", "")
            if ref.get("refdomain") == "py" and "." not in target and hasattr(builtins, target):
                ref.replace_self(nodes.literal("", ref.astext(), classes=["xref", "py"]))


def setup(app: Sphinx) -> None:
    """Register the transform above."""
    app.add_post_transform(_BuiltinAnnotations)
