"""HTTP plumbing of the REST API: requests, responses, routes and the connection handler.

Errors become Kafka Connect's error bodies ``{"error_code": N, "message": ...}``; request
bodies are never logged (they carry secrets).
"""

from __future__ import annotations

import json
import logging
import socket
import ssl
import time
from collections.abc import Callable, Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import urlsplit

from cdk.errors import (
    AlreadyExistsException,
    ConfigException,
    DataException,
    IllegalWorkerStateException,
    NotFoundException,
)
from cdk.runtime.rest._requests import BadRequestException, NotLeaderException

__all__ = [
    "HttpError",
    "Request",
    "RequestHandler",
    "Response",
    "Route",
    "RouteHandler",
    "error_status",
    "string_map",
]

log = logging.getLogger("cdk.runtime.rest")

MAX_BODY = 16 * 1024 * 1024


class HttpError(Exception):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


class Response:
    __slots__ = ("body", "headers", "status")

    def __init__(
        self, status: int, body: Any = None, headers: dict[str, str] | None = None
    ) -> None:
        self.status = status
        self.body = body
        self.headers = headers or {}


class Request:
    def __init__(
        self,
        method: str,
        params: list[str],
        query: dict[str, list[str]],
        body: bytes,
        headers: Mapping[str, str] | None = None,
    ):
        self.method = method
        self.params = params
        self.query = query
        self._body = body
        self.headers: Mapping[str, str] = headers if headers is not None else {}

    def flag(self, name: str, default: bool = False) -> bool:
        values = self.query.get(name)
        if not values:
            return default
        return values[-1].strip().lower() == "true"

    def json(self) -> Any:
        if not self._body.strip():
            raise HttpError(400, "Request body is required and must be JSON")
        try:
            return json.loads(self._body)
        except UnicodeDecodeError as exc:
            raise HttpError(400, f"Request body is not UTF-8: {exc}") from None
        except json.JSONDecodeError as exc:
            raise HttpError(
                400,
                f"Malformed JSON in request body: {exc.msg} (line {exc.lineno} column {exc.colno})",
            ) from None


RouteHandler = Callable[[Request], Response]


class Route:
    def __init__(
        self, pattern: str, methods: dict[str, RouteHandler], body: frozenset[str]
    ) -> None:
        self.parts = pattern.strip("/").split("/") if pattern != "/" else []
        self.methods = methods
        self.body_methods = body

    def match(self, parts: list[str]) -> list[str] | None:
        if len(parts) != len(self.parts):
            return None
        params: list[str] = []
        for want, got in zip(self.parts, parts, strict=True):
            if want.startswith("{"):
                params.append(got)
            elif want != got:
                return None
        return params


def string_map(value: Any, what: str) -> dict[str, Any]:
    """A JSON object of string values; numbers and booleans are converted (as Jackson does).

    ``null`` values are kept, for validation (an error) or PATCH (removal) to handle.
    """
    if not isinstance(value, dict):
        raise HttpError(400, f"{what} must be a JSON object")
    result: dict[str, Any] = {}
    for key, item in value.items():
        if item is None:
            result[key] = None
        elif isinstance(item, bool):
            result[key] = "true" if item else "false"
        elif isinstance(item, (str, int, float)):
            result[key] = str(item)
        else:
            raise HttpError(400, f"{what}: the value of {key} must be a string")
    return result


def error_status(error: BaseException) -> int:
    if isinstance(error, HttpError):
        return error.status
    if isinstance(error, NotFoundException):
        return 404
    if isinstance(error, AlreadyExistsException):
        return 409
    if isinstance(error, (IllegalWorkerStateException, NotLeaderException)):
        return 409
    if isinstance(error, (BadRequestException, ConfigException, DataException)):
        return 400
    return 500


class RequestHandler(BaseHTTPRequestHandler):
    """One HTTP connection; hands each request to :attr:`dispatch_request`.

    A server subclasses it, setting :attr:`dispatch_request` (method, path, headers, body
    reader -> response) and :attr:`track_connection` (called with ``True`` when a connection
    opens and ``False`` when it closes).
    """

    dispatch_request: Callable[[str, str, Any, Callable[[], bytes]], Response]
    track_connection: Callable[[socket.socket, bool], None]
    #: the headers a response is sent with, from (method, request headers, response headers):
    #: ``response.http.headers.config`` and CORS (``None``: as they are)
    finish_headers: Callable[[str, Any, list[tuple[str, str]]], list[tuple[str, str]]] | None = None
    #: whether a request is a CORS preflight answered at once, without dispatching it
    is_preflight: Callable[[str, Any], bool] | None = None
    protocol_version = "HTTP/1.1"
    server_version = "connect-cdk"
    sys_version = ""

    #: How long a client may take to complete the TLS handshake of an HTTPS connection.
    handshake_timeout: float = 30.0

    def setup(self) -> None:
        if isinstance(self.request, ssl.SSLSocket):
            # on this connection's thread: a slow or failing client holds up no one else
            self.request.settimeout(self.handshake_timeout)
            self.request.do_handshake()
            self.request.settimeout(None)
        super().setup()
        self.track_connection(self.connection, True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.track_connection(self.connection, False)

    def log_message(self, format: str, *args: Any) -> None:
        """Route the server's own messages to logging (never request bodies)."""
        log.debug("%s - %s", self.address_string(), format % args)

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            raise HttpError(411, "HTTP 411 Length Required")
        length_text = self.headers.get("Content-Length") or "0"
        try:
            length = int(length_text)
        except ValueError:
            raise HttpError(400, "Invalid Content-Length header") from None
        if length < 0 or length > MAX_BODY:
            raise HttpError(413, "HTTP 413 Payload Too Large")
        self._body_read = True
        return self.rfile.read(length) if length else b""

    def _handle(self) -> None:
        started = time.monotonic()
        self._body_read = False
        status = 500
        try:
            preflight = self.is_preflight
            if preflight is not None and preflight(self.command, self.headers):
                response = Response(200)
            else:
                response = self.dispatch_request(
                    self.command, self.path, self.headers, self._read_body
                )
        except Exception as error:
            status = error_status(error)
            message = error.message if isinstance(error, HttpError) else str(error)
            if status >= 500:
                log.error(
                    "Uncaught exception in REST call to %s %s",
                    self.command,
                    urlsplit(self.path).path,
                    exc_info=error,
                )
            headers = error.headers if isinstance(error, HttpError) else {}
            response = Response(status, {"error_code": status, "message": message}, headers)
        if not self._body_read:
            self._discard_body()
        self._send(response)
        log.info(
            '"%s %s" %d %.0fms',
            self.command,
            urlsplit(self.path).path,
            response.status,
            (time.monotonic() - started) * 1000,
        )

    def _discard_body(self) -> None:
        try:
            length = int(self.headers.get("Content-Length") or "0")
        except ValueError:
            self.close_connection = True
            return
        if 0 < length <= MAX_BODY:
            self.rfile.read(length)
        elif length:
            self.close_connection = True

    def _send(self, response: Response) -> None:
        payload = b""
        raw = isinstance(response.body, bytes)  # sent as is, with the handler's Content-Type
        if raw:
            payload = response.body
        elif response.body is not None:
            payload = json.dumps(response.body, ensure_ascii=False).encode("utf-8")
        try:
            self.send_response(response.status, HTTPStatus(response.status).phrase)
            headers: list[tuple[str, str]] = []
            if response.body is not None and not raw:
                headers.append(("Content-Type", "application/json"))
            headers.append(("Content-Length", str(len(payload))))
            headers += response.headers.items()
            finish = self.finish_headers
            if finish is not None:
                headers = finish(self.command, self.headers, headers)
            for key, value in headers:
                self.send_header(key, value)
            self.end_headers()
            if payload:
                self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    do_GET = _handle
    do_POST = _handle
    do_PUT = _handle
    do_PATCH = _handle
    do_DELETE = _handle
    do_OPTIONS = _handle
