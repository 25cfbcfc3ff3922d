"""Standalone mode (Kafka Connect's ``runtime/standalone`` package).

:class:`EmbeddedWorker` is the in-process standalone worker: plugins, offsets (memory or
``offset.storage.file.filename``), statuses, the worker, the herder and the REST API;
``cdk standalone`` runs one and tests embed one. :class:`StandaloneHerder` keeps connector
configurations in memory and drives the worker's connectors and tasks.
"""

from __future__ import annotations

from cdk.runtime.standalone._herder import StandaloneHerder
from cdk.runtime.standalone._worker import EmbeddedWorker

__all__ = ["EmbeddedWorker", "StandaloneHerder"]
