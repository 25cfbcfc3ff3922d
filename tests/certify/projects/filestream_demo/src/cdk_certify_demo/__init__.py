"""The FileStream reference connectors, shipped by a connector project of their own."""

from __future__ import annotations

from reference_connectors.filestream import FileStreamSinkConnector, FileStreamSourceConnector

__all__ = ["FileStreamSinkConnector", "FileStreamSourceConnector"]
