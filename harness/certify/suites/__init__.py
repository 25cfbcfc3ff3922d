"""The certification suites: a module or a package per suite, whose check modules register checks.

Nothing here imports the suites: :func:`harness.certify.all_checks` finds every public module
under this package and imports it, which registers its checks with
:func:`harness.certify.check`. The suites import the registry, never the other way round.
Private modules (``_flows``, ``_faults``, a suite's ``_common``) hold what checks share.
"""
