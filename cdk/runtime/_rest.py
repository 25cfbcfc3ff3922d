"""Kafka Connect's REST API over the standard library's HTTP server.

Endpoints, JSON shapes, status codes and error bodies (``{"error_code": N, "message": ...}``)
follow Kafka Connect 3.9: ``/``, ``/health``, ``/connectors`` (with ``?expand=status|info``),
``/connectors/{name}`` and its ``config``, ``status``, ``tasks``, ``restart``, ``pause``,
``resume``, ``stop``, ``topics`` and ``offsets`` sub-resources, and ``/connector-plugins``.
The server binds ``127.0.0.1`` unless configured otherwise, may require HTTP basic
authentication, and never logs request bodies (they carry secrets).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hmac
import json
import logging
import re
import socket
import threading
import time
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

from cdk.errors import (
    AlreadyExistsException,
    ConfigException,
    ConnectException,
    DataException,
    IllegalWorkerStateException,
    NotFoundException,
)
from cdk.runtime._herder import BadRequestException

if TYPE_CHECKING:
    from cdk.runtime._herder import StandaloneHerder
    from cdk.runtime._worker_config import WorkerConfig

__all__ = ["RestServer"]

log = logging.getLogger("cdk.runtime.rest")

_MAX_BODY = 16 * 1024 * 1024


class _HttpError(Exception):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


class _Response:
    __slots__ = ("body", "headers", "status")

    def __init__(
        self, status: int, body: Any = None, headers: dict[str, str] | None = None
    ) -> None:
        self.status = status
        self.body = body
        self.headers = headers or {}


class _Request:
    def __init__(self, method: str, params: list[str], query: dict[str, list[str]], body: bytes):
        self.method = method
        self.params = params
        self.query = query
        self._body = body

    def flag(self, name: str, default: bool = False) -> bool:
        values = self.query.get(name)
        if not values:
            return default
        return values[-1].strip().lower() == "true"

    def json(self) -> Any:
        if not self._body.strip():
            raise _HttpError(400, "Request body is required and must be JSON")
        try:
            return json.loads(self._body)
        except UnicodeDecodeError as exc:
            raise _HttpError(400, f"Request body is not UTF-8: {exc}") from None
        except json.JSONDecodeError as exc:
            raise _HttpError(
                400,
                f"Malformed JSON in request body: {exc.msg} (line {exc.lineno} column {exc.colno})",
            ) from None


Handler = Callable[[_Request], _Response]


class _Route:
    def __init__(self, pattern: str, methods: dict[str, Handler], body: frozenset[str]) -> None:
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


def _string_map(value: Any, what: str) -> dict[str, Any]:
    """A JSON object of string values; numbers and booleans are converted (as Jackson does).

    ``null`` values are kept, for validation (an error) or PATCH (removal) to handle.
    """
    if not isinstance(value, dict):
        raise _HttpError(400, f"{what} must be a JSON object")
    result: dict[str, Any] = {}
    for key, item in value.items():
        if item is None:
            result[key] = None
        elif isinstance(item, bool):
            result[key] = "true" if item else "false"
        elif isinstance(item, (str, int, float)):
            result[key] = str(item)
        else:
            raise _HttpError(400, f"{what}: the value of {key} must be a string")
    return result


class RestServer:
    """The REST API of a worker, served on its own threads.

    Args:
        host: the interface to bind (``127.0.0.1`` by default).
        port: the port; 0 picks a free one (see :attr:`url`).
        basic_auth: ``(user, password)`` every request must present, or ``None``.

    Example::

        server = RestServer(port=0)
        server.start(herder)
        httpx.get(f"{server.url}/connectors")
        server.stop()
    """

    def __init__(
        self, host: str = "127.0.0.1", port: int = 8083, basic_auth: tuple[str, str] | None = None
    ) -> None:
        self.host = host
        self.port = port
        self._basic_auth = basic_auth
        self._herder: StandaloneHerder | None = None
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        self._routes = self._build_routes()

    @classmethod
    def from_config(cls, config: WorkerConfig) -> RestServer:
        """A server for the worker's ``listeners`` and ``rest.basic.auth.*`` settings.

        Raises:
            ConfigException: the listener is HTTPS (not supported) or basic auth is incomplete.
        """
        scheme, host, port = config.listener()
        if scheme != "http":
            raise ConfigException("listeners", scheme, "Only HTTP listeners are supported")
        return cls(host, port, config.basic_auth())

    # ------------------------------------------------------------------ lifecycle
    def bind(self) -> str:
        """Bind the listening socket (without serving yet); return :attr:`url`.

        Raises:
            ConnectException: the address cannot be bound (e.g. the port is in use).
        """
        if self._server is None:
            rest = self

            class Handler(_RequestHandler):
                server_rest = rest

            try:
                server = ThreadingHTTPServer((self.host, self.port), Handler)
            except OSError as exc:
                raise ConnectException(
                    f"Could not bind the REST API to {self.host}:{self.port}: {exc}"
                ) from exc
            server.daemon_threads = False
            server.block_on_close = True
            self._server = server
            self.port = server.server_address[1]
        return self.url

    def start(self, herder: StandaloneHerder) -> None:
        """Serve ``herder``'s API on a background thread (binding first if needed)."""
        self._herder = herder
        self.bind()
        assert self._server is not None
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.1},
            name="cdk-rest",
            daemon=False,
        )
        self._thread.start()
        log.info("REST API listening on %s", self.url)

    def stop(self) -> None:
        """Stop serving: close open connections, close the socket, join the threads."""
        server, self._server = self._server, None
        if server is None:
            return
        if self._thread is not None:
            server.shutdown()
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        server.server_close()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        log.info("REST API stopped")

    def __enter__(self) -> RestServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """The base URL, e.g. ``http://127.0.0.1:8083``."""
        host = self.host or "127.0.0.1"
        if host == "0.0.0.0":
            host = "127.0.0.1"
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}"

    def _track(self, connection: socket.socket, add: bool) -> None:
        with self._connections_lock:
            if add:
                self._connections.add(connection)
            else:
                self._connections.discard(connection)

    # ------------------------------------------------------------------ routing
    @property
    def herder(self) -> StandaloneHerder:
        """The herder being served."""
        if self._herder is None:
            raise _HttpError(503, "Worker is still starting up.")
        return self._herder

    def _build_routes(self) -> list[_Route]:
        def route(pattern: str, body: tuple[str, ...] = (), **methods: Handler) -> _Route:
            return _Route(pattern, {m.upper(): h for m, h in methods.items()}, frozenset(body))

        c = "/connectors/{c}"
        return [
            route("/", get=self._root),
            route("/health", get=self._health),
            route("/connectors", ("POST",), get=self._list, post=self._create),
            route(c, get=self._info, delete=self._delete),
            route(
                f"{c}/config",
                ("PUT", "PATCH"),
                get=self._get_config,
                put=self._put_config,
                patch=self._patch_config,
            ),
            route(f"{c}/status", get=self._status),
            route(f"{c}/tasks", get=self._tasks),
            route(f"{c}/tasks-config", get=self._tasks_config),
            route(f"{c}/tasks/{{t}}/status", get=self._task_status),
            route(f"{c}/tasks/{{t}}/restart", post=self._restart_task),
            route(f"{c}/restart", post=self._restart),
            route(f"{c}/pause", put=self._pause),
            route(f"{c}/resume", put=self._resume),
            route(f"{c}/stop", put=self._stop),
            route(f"{c}/topics", get=self._topics),
            route(f"{c}/topics/reset", put=self._topics_reset),
            route(
                f"{c}/offsets",
                ("PATCH",),
                get=self._offsets,
                patch=self._alter_offsets,
                delete=self._reset_offsets,
            ),
            route("/connector-plugins", get=self._plugins),
            route("/connector-plugins/{p}/config", get=self._plugin_config),
            route("/connector-plugins/{p}/config/validate", ("PUT",), put=self._validate),
        ]

    def _dispatch(
        self, method: str, raw_path: str, headers: Any, read_body: Callable[[], bytes]
    ) -> _Response:
        self._authenticate(headers.get("Authorization"))
        split = urlsplit(raw_path)
        path = split.path.rstrip("/") or "/"
        parts = [unquote(p) for p in path.strip("/").split("/")] if path != "/" else []
        allowed: set[str] = set()
        for candidate in self._routes:
            params = candidate.match(parts)
            if params is None:
                continue
            handler = candidate.methods.get(method)
            if handler is None:
                allowed.update(candidate.methods)
                continue
            if method in candidate.body_methods:
                content_type = (headers.get("Content-Type") or "").split(";")[0].strip().lower()
                if content_type != "application/json":
                    raise _HttpError(415, "HTTP 415 Unsupported Media Type")
            body = read_body()
            request = _Request(method, params, parse_qs(split.query, keep_blank_values=True), body)
            return handler(request)
        if allowed:
            raise _HttpError(
                405, "HTTP 405 Method Not Allowed", {"Allow": ", ".join(sorted(allowed))}
            )
        raise _HttpError(404, "HTTP 404 Not Found")

    def _authenticate(self, header: str | None) -> None:
        if self._basic_auth is None:
            return
        challenge = {"WWW-Authenticate": 'Basic realm="connect-cdk"'}
        if not header or not header.lower().startswith("basic "):
            raise _HttpError(401, "Credentials are required to access this resource.", challenge)
        try:
            decoded = base64.b64decode(header[6:].strip(), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            raise _HttpError(
                401, "Malformed basic authentication credentials.", challenge
            ) from None
        user, _, password = decoded.partition(":")
        want_user, want_password = self._basic_auth
        user_ok = hmac.compare_digest(user.encode(), want_user.encode())
        password_ok = hmac.compare_digest(password.encode(), want_password.encode())
        if not (user_ok and password_ok):
            raise _HttpError(401, "Invalid credentials.", challenge)

    # ------------------------------------------------------------------ handlers
    def _root(self, request: _Request) -> _Response:
        from cdk import __version__

        return _Response(
            200,
            {
                "version": __version__,
                "commit": "unknown",
                "kafka_cluster_id": self.herder.kafka_cluster_id,
            },
        )

    def _health(self, request: _Request) -> _Response:
        if self._herder is not None and self._herder.ready:
            return _Response(
                200,
                {
                    "status": "healthy",
                    "message": "Worker has completed startup and is ready to handle requests.",
                },
            )
        return _Response(503, {"status": "starting", "message": "Worker is still starting up."})

    def _list(self, request: _Request) -> _Response:
        herder = self.herder
        names = herder.connectors()
        expand = {v.strip().lower() for v in request.query.get("expand", [])}
        expand &= {"status", "info"}
        if not expand:
            return _Response(200, names)
        result: dict[str, dict[str, Any]] = {}
        for name in names:
            entry: dict[str, Any] = {}
            try:
                if "status" in expand:
                    entry["status"] = herder.connector_status(name)
                if "info" in expand:
                    entry["info"] = herder.connector_info(name)
            except NotFoundException:  # deleted or not started meanwhile
                continue
            result[name] = entry
        return _Response(200, result)

    def _create(self, request: _Request) -> _Response:
        body = request.json()
        if not isinstance(body, dict):
            raise _HttpError(400, "Request body must be a JSON object with name and config")
        raw_name = body.get("name")
        if raw_name is not None and not isinstance(raw_name, str):
            raise _HttpError(400, "Connector name must be a string")
        name = (raw_name or "").strip()
        config = _string_map(body.get("config") or {}, "Connector config")
        if not name:
            name = str(config.get("name") or "").strip()
        if not name:
            raise _HttpError(400, "Connector name is required")
        initial_state = body.get("initial_state")
        info = self.herder.create_connector(name, config, initial_state)
        return _Response(201, info, {"Location": f"/connectors/{quote(name, safe='')}"})

    def _info(self, request: _Request) -> _Response:
        return _Response(200, self.herder.connector_info(request.params[0]))

    def _delete(self, request: _Request) -> _Response:
        self.herder.delete_connector(request.params[0])
        return _Response(204)

    def _get_config(self, request: _Request) -> _Response:
        return _Response(200, self.herder.connector_config(request.params[0]))

    def _put_config(self, request: _Request) -> _Response:
        name = request.params[0]
        config = _string_map(request.json(), "Connector config")
        created, info = self.herder.put_connector_config(name, config, allow_replace=True)
        headers = {"Location": f"/connectors/{quote(name, safe='')}"} if created else {}
        return _Response(201 if created else 200, info, headers)

    def _patch_config(self, request: _Request) -> _Response:
        patch = _string_map(request.json(), "Connector config patch")
        return _Response(200, self.herder.patch_connector_config(request.params[0], patch))

    def _status(self, request: _Request) -> _Response:
        return _Response(200, self.herder.connector_status(request.params[0]))

    def _tasks(self, request: _Request) -> _Response:
        return _Response(200, self.herder.tasks(request.params[0]))

    def _tasks_config(self, request: _Request) -> _Response:
        name = request.params[0]
        return _Response(
            200, {f"{name}-{t['id']['task']}": t["config"] for t in self.herder.tasks(name)}
        )

    @staticmethod
    def _task_number(request: _Request) -> int:
        text = request.params[1]
        if not re.fullmatch(r"[+-]?\d+", text):
            raise _HttpError(404, "HTTP 404 Not Found")
        return int(text)

    def _task_status(self, request: _Request) -> _Response:
        return _Response(
            200, self.herder.task_status(request.params[0], self._task_number(request))
        )

    def _restart_task(self, request: _Request) -> _Response:
        self.herder.restart_task(request.params[0], self._task_number(request))
        return _Response(204)

    def _restart(self, request: _Request) -> _Response:
        include_tasks = request.flag("includeTasks")
        only_failed = request.flag("onlyFailed")
        name = request.params[0]
        if not include_tasks and not only_failed:
            self.herder.restart_connector(name)
            return _Response(204)
        plan = self.herder.restart_connector_and_tasks(
            name, only_failed=only_failed, include_tasks=include_tasks
        )
        return _Response(202, plan)

    def _pause(self, request: _Request) -> _Response:
        self.herder.pause_connector(request.params[0])
        return _Response(202)

    def _resume(self, request: _Request) -> _Response:
        self.herder.resume_connector(request.params[0])
        return _Response(202)

    def _stop(self, request: _Request) -> _Response:
        self.herder.stop_connector(request.params[0])
        return _Response(204)

    def _topics(self, request: _Request) -> _Response:
        return _Response(200, self.herder.connector_active_topics(request.params[0]))

    def _topics_reset(self, request: _Request) -> _Response:
        self.herder.connector_active_topics(request.params[0])
        return _Response(204)

    def _offsets(self, request: _Request) -> _Response:
        return _Response(200, self.herder.connector_offsets(request.params[0]))

    def _alter_offsets(self, request: _Request) -> _Response:
        body = request.json()
        if not isinstance(body, dict):
            raise _HttpError(400, 'Request body must be a JSON object with an "offsets" list')
        offsets = body.get("offsets")
        return _Response(200, self.herder.alter_connector_offsets(request.params[0], offsets))

    def _reset_offsets(self, request: _Request) -> _Response:
        return _Response(200, self.herder.reset_connector_offsets(request.params[0]))

    def _plugins(self, request: _Request) -> _Response:
        connectors_only = request.flag("connectorsOnly", default=True)
        return _Response(200, self.herder.connector_plugins(connectors_only))

    def _plugin_config(self, request: _Request) -> _Response:
        return _Response(200, self.herder.connector_plugin_config(request.params[0]))

    def _validate(self, request: _Request) -> _Response:
        plugin = request.params[0]
        config = _string_map(request.json(), "Connector config")
        included = config.get("connector.class")
        if included is None:
            config["connector.class"] = plugin
        elif not _normalized(included).endswith(_normalized(plugin)) and not _normalized(
            plugin
        ).endswith(_normalized(included)):
            raise _HttpError(
                400, f"Included connector type {included} does not match request type {plugin}"
            )
        return _Response(200, self.herder.validate_connector_config(config))


def _normalized(name: str) -> str:
    text = name.strip().replace(":", ".")
    return text[: -len("Connector")] if text.endswith("Connector") else text


def _error_status(error: BaseException) -> int:
    if isinstance(error, _HttpError):
        return error.status
    if isinstance(error, NotFoundException):
        return 404
    if isinstance(error, AlreadyExistsException):
        return 409
    if isinstance(error, IllegalWorkerStateException):
        return 409
    if isinstance(error, (BadRequestException, ConfigException, DataException)):
        return 400
    return 500


class _RequestHandler(BaseHTTPRequestHandler):
    """One HTTP connection; dispatches each request to the :class:`RestServer`."""

    server_rest: RestServer
    protocol_version = "HTTP/1.1"
    server_version = "connect-cdk"
    sys_version = ""

    def setup(self) -> None:
        super().setup()
        self.server_rest._track(self.connection, True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server_rest._track(self.connection, False)

    def log_message(self, format: str, *args: Any) -> None:
        """Route the server's own messages to logging (never request bodies)."""
        log.debug("%s - %s", self.address_string(), format % args)

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            raise _HttpError(411, "HTTP 411 Length Required")
        length_text = self.headers.get("Content-Length") or "0"
        try:
            length = int(length_text)
        except ValueError:
            raise _HttpError(400, "Invalid Content-Length header") from None
        if length < 0 or length > _MAX_BODY:
            raise _HttpError(413, "HTTP 413 Payload Too Large")
        self._body_read = True
        return self.rfile.read(length) if length else b""

    def _handle(self) -> None:
        started = time.monotonic()
        self._body_read = False
        status = 500
        try:
            response = self.server_rest._dispatch(
                self.command, self.path, self.headers, self._read_body
            )
        except Exception as error:
            status = _error_status(error)
            message = error.message if isinstance(error, _HttpError) else str(error)
            if status >= 500:
                log.error(
                    "Uncaught exception in REST call to %s %s",
                    self.command,
                    urlsplit(self.path).path,
                    exc_info=error,
                )
            headers = error.headers if isinstance(error, _HttpError) else {}
            response = _Response(status, {"error_code": status, "message": message}, headers)
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
        if 0 < length <= _MAX_BODY:
            self.rfile.read(length)
        elif length:
            self.close_connection = True

    def _send(self, response: _Response) -> None:
        payload = b""
        if response.body is not None:
            payload = json.dumps(response.body, ensure_ascii=False).encode("utf-8")
        try:
            self.send_response(response.status, HTTPStatus(response.status).phrase)
            if response.body is not None:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for key, value in response.headers.items():
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
