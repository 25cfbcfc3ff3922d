"""Kafka Connect's REST API (Kafka Connect's ``runtime/rest`` package).

:class:`RestServer` serves the endpoints and JSON shapes of Kafka Connect 3.9 over a herder;
:class:`BadRequestException` is what a malformed request value raises (answered with 400). The
private modules hold the HTTP plumbing (``_http``), the checks of request values
(``_requests``), the ``ConfigInfos`` entities of validation and plugin descriptions
(``_config_infos``) and the kit's version for ``GET /`` (``_kit_info``).
"""

from __future__ import annotations

from cdk.runtime.rest._requests import BadRequestException, NotLeaderException
from cdk.runtime.rest._server import RestServer

__all__ = ["BadRequestException", "NotLeaderException", "RestServer"]
