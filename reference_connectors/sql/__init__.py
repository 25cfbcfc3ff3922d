"""SQL source and sink: reference connectors modelled on Confluent's JDBC connectors.

They reach SQLite (the embedded default), PostgreSQL and MariaDB/MySQL through SQLAlchemy Core
(the ``sql`` extra: ``pip install 'connect-cdk[sql]'``).
"""

from __future__ import annotations

__all__: list[str] = []
