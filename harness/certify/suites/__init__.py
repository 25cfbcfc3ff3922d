"""The certification suites, one module per suite; importing this registers every check."""

from __future__ import annotations

from harness.certify.suites import cfg, doc, err, off, pkg, prf, rbl, rst, sch

__all__ = ["cfg", "doc", "err", "off", "pkg", "prf", "rbl", "rst", "sch"]
