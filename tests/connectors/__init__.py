"""Small, real test connectors built on the public API (used by the integration tests).

Load them by importable path, e.g. ``tests.connectors.generator.GeneratorSourceConnector``
(the repository root must be on ``sys.path``; it is for pytest and for subprocesses started
with ``cwd`` = the repository root and ``PYTHONPATH`` including it).
"""

from __future__ import annotations

GENERATOR = "tests.connectors.generator.GeneratorSourceConnector"
RECORDING = "tests.connectors.recording.RecordingSinkConnector"
