"""Kafka Connect's REST API over the standard library's HTTP server.

Endpoints, JSON shapes, status codes and error bodies (``{"error_code": N, "message": ...}``)
follow Kafka Connect 3.9: ``/``, ``/health``, ``/connectors`` (with ``?expand=status|info``),
``/connectors/{name}`` and its ``config``, ``status``, ``tasks``, ``restart``, ``pause``,
``resume``, ``stop``, ``topics`` and ``offsets`` sub-resources, ``/connector-plugins``, and
``/admin/loggers`` (log levels, KIP-495).
The server binds ``127.0.0.1`` unless configured otherwise, serves HTTP and HTTPS listeners
side by side (``listeners=http://...,https://...``; client certificates with
``ssl.client.auth``), may require HTTP basic authentication, and never logs request bodies
(they carry secrets).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hmac
import logging
import re
import socket
import ssl
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import SplitResult, parse_qs, quote, unquote, urlsplit

from cdk.errors import ConfigException, NotFoundException
from cdk.runtime._http_headers import Cors, HeaderRule, apply_header_rules, parse_header_rules
from cdk.runtime._loggers import to_python_level
from cdk.runtime._worker_config import Listener
from cdk.runtime.rest._http import (
    HttpError,
    Request,
    RequestHandler,
    Response,
    Route,
    RouteHandler,
    string_map,
)
from cdk.runtime.rest._kit_info import kit_commit
from cdk.runtime.rest._listeners import BoundListener, bind_listener, is_loopback
from cdk.runtime.rest._requests import NotLeaderException

if TYPE_CHECKING:
    from cdk.runtime._herder_base import AbstractHerder
    from cdk.runtime._worker_config import WorkerConfig

__all__ = ["RestServer"]

log = logging.getLogger("cdk.runtime.rest")

#: How long a write forwarded to the leading driver may take (its request timeout and more).
FORWARD_TIMEOUT_S = 120.0


class RestServer:
    """The REST API of a worker, served on its own threads.

    Args:
        host: the interface to bind (``127.0.0.1`` by default), when ``listeners`` is not given.
        port: the port; 0 picks a free one (see :attr:`url`).
        basic_auth: ``(user, password)`` every request must present, or ``None``.
        listeners: the listeners to serve (HTTP and HTTPS side by side), instead of
            ``host``/``port``.
        tls: the TLS context of the HTTPS listeners (required when one is HTTPS).
        client_tls: the TLS context for forwarding writes to an HTTPS leader (the system's
            trust when ``None``).
        advertised: the URL given to other drivers and clients, as
            ``(scheme, host, port)`` with ``None`` for "the listener's own"; by default the
            first HTTP listener (the first HTTPS one when there is no HTTP one).
        admin_listeners: Kafka's ``admin.listeners``: ``None`` serves the admin endpoints
            (``/admin/...``) on ``listeners``; otherwise only these listeners serve them (and
            nothing else), and an empty list disables them.
        admin_tls: the TLS context of HTTPS admin listeners (``tls`` when ``None``).
        header_rules: ``response.http.headers.config``, applied to every response.
        cors: Kafka's ``access.control.allow.*`` answers to cross-origin requests.

    Example::

        server = RestServer(port=0)
        server.start(herder)
        httpx.get(f"{server.url}/connectors")
        server.stop()
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 8083,
        basic_auth: tuple[str, str] | None = None,
        *,
        listeners: Sequence[Listener] | None = None,
        tls: ssl.SSLContext | None = None,
        client_tls: ssl.SSLContext | None = None,
        advertised: tuple[str | None, str | None, int | None] = (None, None, None),
        admin_listeners: Sequence[Listener] | None = None,
        admin_tls: ssl.SSLContext | None = None,
        header_rules: Sequence[HeaderRule] = (),
        cors: Cors | None = None,
    ) -> None:
        self.listeners: list[Listener] = (
            list(listeners) if listeners else [Listener("http", host, port)]
        )
        #: the admin listeners (``None``: the admin endpoints are on :attr:`listeners`)
        self.admin_listeners: list[Listener] | None = (
            None if admin_listeners is None else list(admin_listeners)
        )
        self._admin_tls = admin_tls or tls
        if self._admin_tls is None and any(x.scheme == "https" for x in self.admin_listeners or ()):
            raise ConfigException(
                "admin.listeners",
                ",".join(x.url for x in self.admin_listeners or ()),
                "HTTPS needs a TLS context",
            )
        self._header_rules = list(header_rules)
        self._cors = cors if cors is not None and cors.enabled else None
        self._admin_bound: list[BoundListener] = []
        if any(listener.scheme == "https" for listener in self.listeners) and tls is None:
            raise ConfigException(
                "listeners", ",".join(x.url for x in self.listeners), "HTTPS needs a TLS context"
            )
        self._tls = tls
        self._client_tls = client_tls
        self._advertised = advertised
        self._basic_auth = basic_auth
        self._herder: AbstractHerder | None = None
        self._bound: list[BoundListener] = []
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        self._routes = self._build_routes()
        # the Prometheus registry over the served worker's metrics, made at the first scrape
        self._metrics_lock = threading.Lock()
        self._metrics_registry: Any = None
        self._metrics_source: Any = None

    @classmethod
    def from_config(cls, config: WorkerConfig) -> RestServer:
        """A server for the worker's ``listeners``, TLS, ``rest.advertised.*`` and basic auth.

        HTTPS listeners take their key and certificate from the ``listeners.https.ssl.*`` keys,
        or the ``ssl.*`` ones when none is prefixed (Kafka's rule); the same settings are used
        to forward writes to an HTTPS leader.

        Raises:
            ConfigException: a TLS setting is missing or invalid (a JKS store names its
                conversion), ``rest.advertised.listener`` names a scheme no listener has, or
                basic auth is incomplete.
        """
        from cdk.runtime.rest._tls import client_context, server_context

        listeners = config.listeners()
        scheme = config.advertised_listener()
        host, port = config.advertised_host_port()
        settings, prefix = config.rest_ssl_settings()
        https = any(listener.scheme == "https" for listener in listeners)
        tls = server_context(settings, prefix) if https else None
        trust_given = any(
            settings.get(k) for k in ("ssl.truststore.location", "ssl.truststore.certificates")
        )
        client_tls = client_context(settings, prefix) if https or trust_given else None
        admin = config.admin_listeners()
        admin_tls = None
        if any(listener.scheme == "https" for listener in admin or ()):
            admin_settings, admin_prefix = config.admin_ssl_settings()
            admin_tls = server_context(admin_settings, admin_prefix)
        origins, methods = config.cors()
        return cls(
            listeners=listeners,
            basic_auth=config.basic_auth(),
            tls=tls,
            client_tls=client_tls,
            advertised=(scheme, host, port),
            admin_listeners=admin,
            admin_tls=admin_tls,
            header_rules=parse_header_rules(
                "response.http.headers.config", str(config.get("response.http.headers.config"))
            ),
            cors=Cors(origins, methods),
        )

    # ------------------------------------------------------------------ lifecycle
    def bind(self) -> str:
        """Bind the listening sockets (without serving yet); return :attr:`url`.

        Raises:
            ConnectException: an address cannot be bound (e.g. the port is in use).
        """
        if not self._bound:
            main_scope = "all" if self.admin_listeners is None else "main"
            handler = self._handler(main_scope)
            admin_handler = self._handler("admin")
            try:
                for listener in self.listeners:
                    tls = self._tls if listener.scheme == "https" else None
                    self._bound.append(bind_listener(listener, handler, tls))
                for listener in self.admin_listeners or ():
                    tls = self._admin_tls if listener.scheme == "https" else None
                    bound = bind_listener(listener, admin_handler, tls)
                    self._bound.append(bound)
                    self._admin_bound.append(bound)
            except BaseException:
                for bound in self._bound:
                    bound.stop()
                self._bound = []
                self._admin_bound = []
                raise
            self.listeners = [b.listener for b in self._bound if b not in self._admin_bound]
            if self.admin_listeners is not None:
                self.admin_listeners = [b.listener for b in self._admin_bound]
        return self.url

    def _handler(self, scope: str) -> type[RequestHandler]:
        """The request handler class of listeners serving ``scope`` (all, main or admin)."""
        rest = self

        def dispatch(
            method: str, raw_path: str, headers: Any, read_body: Callable[[], bytes]
        ) -> Response:
            return rest._dispatch(method, raw_path, headers, read_body, scope=scope)

        class Handler(RequestHandler):
            dispatch_request = staticmethod(dispatch)
            track_connection = staticmethod(rest._track)
            finish_headers = staticmethod(rest._finish_headers)
            is_preflight = staticmethod(rest._cors.is_preflight) if rest._cors else None

        return Handler

    def _finish_headers(
        self, method: str, request: Any, headers: list[tuple[str, str]]
    ) -> list[tuple[str, str]]:
        if self._cors is not None:
            headers = headers + self._cors.headers(method, request)
        return apply_header_rules(headers, self._header_rules) if self._header_rules else headers

    @property
    def admin_urls(self) -> list[str]:
        """The URLs of the admin listeners (bound ports once :meth:`bind` ran); ``[]`` if none."""
        return [listener.url for listener in self.admin_listeners or ()]

    def start(self, herder: AbstractHerder) -> None:
        """Serve ``herder``'s API on background threads (binding first if needed)."""
        self._herder = herder
        self.bind()
        for bound in self._bound:
            bound.start()
        self._warn_clear_credentials()
        log.info(
            "REST API listening on %s, advertising %s",
            ", ".join(listener.url for listener in self.listeners),
            self.url,
        )
        if self.admin_listeners is not None:
            log.info(
                "Admin REST API (/admin/...) %s",
                "disabled (admin.listeners is empty)"
                if not self.admin_listeners
                else "listening on " + ", ".join(x.url for x in self.admin_listeners),
            )

    def _warn_clear_credentials(self) -> None:
        if self._basic_auth is None:
            return
        for listener in self.listeners:
            if listener.scheme == "http" and not is_loopback(listener.host):
                log.warning(
                    "REST basic authentication is configured, but the plain HTTP listener %s "
                    "is reachable beyond this host: passwords and connector configs cross the "
                    "network in clear. Serve the REST API over HTTPS (listeners=https://..., "
                    "with listeners.https.ssl.keystore.location) or bind HTTP to 127.0.0.1.",
                    listener.url,
                )

    def stop(self) -> None:
        """Stop serving: close open connections, close the sockets, join the threads."""
        bound, self._bound = self._bound, []
        if not bound:
            return
        for each in bound:
            if each.thread is not None:
                each.server.shutdown()
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        for each in bound:
            each.stop()
        log.info("REST API stopped")

    def __enter__(self) -> RestServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _advertised_listener(self) -> Listener:
        scheme = self._advertised[0]
        if scheme is None:
            schemes = {listener.scheme for listener in self.listeners}
            scheme = "http" if "http" in schemes else "https"
        for listener in self.listeners:
            if listener.scheme == scheme:
                return listener
        return self.listeners[0]

    @property
    def host(self) -> str:
        """The advertised host (``rest.advertised.host.name``, else the listener's)."""
        listener = self._advertised_listener()
        host = self._advertised[1] or listener.host or "127.0.0.1"
        return "127.0.0.1" if host in ("0.0.0.0", "::") else host

    @property
    def port(self) -> int:
        """The advertised port (``rest.advertised.port``, else the listener's bound port)."""
        advertised = self._advertised[2]
        return advertised if advertised is not None else self._advertised_listener().port

    @property
    def url(self) -> str:
        """The URL given to other drivers and clients, e.g. ``https://127.0.0.1:8443``.

        ``rest.advertised.listener``/``host.name``/``port`` when set, else those of the first
        HTTP listener (HTTPS when there is none); a wildcard host is given as 127.0.0.1.
        """
        scheme = self._advertised_listener().scheme
        return Listener(scheme, self.host, self.port).url

    @property
    def urls(self) -> list[str]:
        """The URL of every listener (bound ports once :meth:`bind` ran)."""
        return [listener.url for listener in self.listeners]

    def _track(self, connection: socket.socket, add: bool) -> None:
        with self._connections_lock:
            if add:
                self._connections.add(connection)
            else:
                self._connections.discard(connection)

    # ------------------------------------------------------------------ routing
    @property
    def herder(self) -> AbstractHerder:
        """The herder being served."""
        if self._herder is None:
            raise HttpError(503, "Worker is still starting up.")
        return self._herder

    def _build_routes(self) -> list[Route]:
        def route(pattern: str, body: tuple[str, ...] = (), **methods: RouteHandler) -> Route:
            return Route(pattern, {m.upper(): h for m, h in methods.items()}, frozenset(body))

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
            route("/metrics", get=self._metrics),
            route("/admin/loggers", get=self._loggers),
            route("/admin/loggers/{l}", ("PUT",), get=self._logger, put=self._set_logger),
        ]

    def _dispatch(
        self,
        method: str,
        raw_path: str,
        headers: Any,
        read_body: Callable[[], bytes],
        *,
        scope: str = "all",
    ) -> Response:
        self._authenticate(headers.get("Authorization"))
        split = urlsplit(raw_path)
        path = split.path.rstrip("/") or "/"
        parts = [unquote(p) for p in path.strip("/").split("/")] if path != "/" else []
        allowed: set[str] = set()
        for candidate in self._routes:
            is_admin = bool(candidate.parts) and candidate.parts[0] == "admin"
            if (scope == "main" and is_admin) or (scope == "admin" and not is_admin):
                continue
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
                    raise HttpError(415, "HTTP 415 Unsupported Media Type")
            body = read_body()
            query = parse_qs(split.query, keep_blank_values=True)
            request = Request(method, params, query, body, headers)
            try:
                return handler(request)
            except NotLeaderException as exc:
                if exc.leader_url is None or not request.flag("forward", True):
                    raise
                return self._forward(exc.leader_url, method, split, headers, body)
        if allowed:
            raise HttpError(
                405, "HTTP 405 Method Not Allowed", {"Allow": ", ".join(sorted(allowed))}
            )
        raise HttpError(404, "HTTP 404 Not Found")

    def _forward(
        self, leader: str, method: str, split: SplitResult, headers: Any, body: bytes
    ) -> Response:
        """Send a write to the leading driver and answer with its response (Kafka's followers)."""
        query = split.query + ("&" if split.query else "") + "forward=false"
        target = f"{leader.rstrip('/')}{split.path}?{query}"
        forwarded = urllib.request.Request(
            target, data=body if method in ("POST", "PUT", "PATCH") else None, method=method
        )
        for name in ("Content-Type", "Authorization", "Accept"):
            value = headers.get(name)
            if value:
                forwarded.add_header(name, value)
        log.debug("Forwarding %s %s to the leader at %s", method, split.path, leader)
        tls = self._client_tls if target.lower().startswith("https:") else None
        try:
            with urllib.request.urlopen(
                forwarded, timeout=FORWARD_TIMEOUT_S, context=tls
            ) as answer:
                status, payload = answer.status, answer.read()
                content_type = answer.headers.get("Content-Type")
        except urllib.error.HTTPError as exc:
            status, payload = exc.code, exc.read()
            content_type = exc.headers.get("Content-Type") if exc.headers else None
        except OSError as exc:
            raise HttpError(
                503, f"Could not forward the request to the leader at {leader}: {exc}"
            ) from None
        return Response(status, payload, {"Content-Type": content_type} if content_type else {})

    def _authenticate(self, header: str | None) -> None:
        if self._basic_auth is None:
            return
        challenge = {"WWW-Authenticate": 'Basic realm="connect-cdk"'}
        if not header or not header.lower().startswith("basic "):
            raise HttpError(401, "Credentials are required to access this resource.", challenge)
        try:
            decoded = base64.b64decode(header[6:].strip(), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            raise HttpError(401, "Malformed basic authentication credentials.", challenge) from None
        user, _, password = decoded.partition(":")
        want_user, want_password = self._basic_auth
        user_ok = hmac.compare_digest(user.encode(), want_user.encode())
        password_ok = hmac.compare_digest(password.encode(), want_password.encode())
        if not (user_ok and password_ok):
            raise HttpError(401, "Invalid credentials.", challenge)

    # ------------------------------------------------------------------ handlers
    def _root(self, request: Request) -> Response:
        from cdk import __version__

        return Response(
            200,
            {
                "version": __version__,
                "commit": kit_commit(),
                "kafka_cluster_id": self.herder.kafka_cluster_id,
            },
        )

    def _health(self, request: Request) -> Response:
        if self._herder is not None and self._herder.ready:
            return Response(
                200,
                {
                    "status": "healthy",
                    "message": "Worker has completed startup and is ready to handle requests.",
                },
            )
        return Response(503, {"status": "starting", "message": "Worker is still starting up."})

    def _list(self, request: Request) -> Response:
        herder = self.herder
        names = herder.connectors()
        expand = {v.strip().lower() for v in request.query.get("expand", [])}
        expand &= {"status", "info"}
        if not expand:
            return Response(200, names)
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
        return Response(200, result)

    def _create(self, request: Request) -> Response:
        body = request.json()
        if not isinstance(body, dict):
            raise HttpError(400, "Request body must be a JSON object with name and config")
        raw_name = body.get("name")
        if raw_name is not None and not isinstance(raw_name, str):
            raise HttpError(400, "Connector name must be a string")
        name = (raw_name or "").strip()
        config = string_map(body.get("config") or {}, "Connector config")
        if not name:
            name = str(config.get("name") or "").strip()
        if not name:
            raise HttpError(400, "Connector name is required")
        initial_state = body.get("initial_state")
        info = self.herder.create_connector(name, config, initial_state)
        return Response(201, info, {"Location": f"/connectors/{quote(name, safe='')}"})

    def _info(self, request: Request) -> Response:
        return Response(200, self.herder.connector_info(request.params[0]))

    def _delete(self, request: Request) -> Response:
        self.herder.delete_connector(request.params[0])
        return Response(204)

    def _get_config(self, request: Request) -> Response:
        return Response(200, self.herder.connector_config(request.params[0]))

    def _put_config(self, request: Request) -> Response:
        name = request.params[0]
        config = string_map(request.json(), "Connector config")
        created, info = self.herder.put_connector_config(name, config, allow_replace=True)
        headers = {"Location": f"/connectors/{quote(name, safe='')}"} if created else {}
        return Response(201 if created else 200, info, headers)

    def _patch_config(self, request: Request) -> Response:
        patch = string_map(request.json(), "Connector config patch")
        return Response(200, self.herder.patch_connector_config(request.params[0], patch))

    def _status(self, request: Request) -> Response:
        return Response(200, self.herder.connector_status(request.params[0]))

    def _tasks(self, request: Request) -> Response:
        return Response(200, self.herder.tasks(request.params[0]))

    def _tasks_config(self, request: Request) -> Response:
        name = request.params[0]
        return Response(
            200, {f"{name}-{t['id']['task']}": t["config"] for t in self.herder.tasks(name)}
        )

    @staticmethod
    def _task_number(request: Request) -> int:
        text = request.params[1]
        if not re.fullmatch(r"[+-]?\d+", text):
            raise HttpError(404, "HTTP 404 Not Found")
        return int(text)

    def _task_status(self, request: Request) -> Response:
        return Response(200, self.herder.task_status(request.params[0], self._task_number(request)))

    def _restart_task(self, request: Request) -> Response:
        self.herder.restart_task(request.params[0], self._task_number(request))
        return Response(204)

    def _restart(self, request: Request) -> Response:
        include_tasks = request.flag("includeTasks")
        only_failed = request.flag("onlyFailed")
        name = request.params[0]
        if not include_tasks and not only_failed:
            self.herder.restart_connector(name)
            return Response(204)
        plan = self.herder.restart_connector_and_tasks(
            name, only_failed=only_failed, include_tasks=include_tasks
        )
        return Response(202, plan)

    def _pause(self, request: Request) -> Response:
        self.herder.pause_connector(request.params[0])
        return Response(202)

    def _resume(self, request: Request) -> Response:
        self.herder.resume_connector(request.params[0])
        return Response(202)

    def _stop(self, request: Request) -> Response:
        self.herder.stop_connector(request.params[0])
        return Response(204)

    def _topics(self, request: Request) -> Response:
        herder = self.herder
        if not herder.config.topic_tracking_enabled:
            raise HttpError(403, "Topic tracking is disabled.")
        return Response(200, herder.connector_active_topics(request.params[0]))

    def _topics_reset(self, request: Request) -> Response:
        herder = self.herder
        if not herder.config.topic_tracking_enabled:
            raise HttpError(403, "Topic tracking is disabled.")
        if not herder.config.topic_tracking_reset_allowed:
            raise HttpError(403, "Topic tracking reset is disabled.")
        herder.reset_connector_active_topics(request.params[0])
        return Response(202)

    def _offsets(self, request: Request) -> Response:
        return Response(200, self.herder.connector_offsets(request.params[0]))

    def _alter_offsets(self, request: Request) -> Response:
        body = request.json()
        if not isinstance(body, dict):
            raise HttpError(400, 'Request body must be a JSON object with an "offsets" list')
        offsets = body.get("offsets")
        return Response(200, self.herder.alter_connector_offsets(request.params[0], offsets))

    def _reset_offsets(self, request: Request) -> Response:
        return Response(200, self.herder.reset_connector_offsets(request.params[0]))

    def _plugins(self, request: Request) -> Response:
        connectors_only = request.flag("connectorsOnly", default=True)
        return Response(200, self.herder.connector_plugins(connectors_only))

    def _plugin_config(self, request: Request) -> Response:
        return Response(200, self.herder.connector_plugin_config(request.params[0]))

    def _validate(self, request: Request) -> Response:
        plugin = request.params[0]
        config = string_map(request.json(), "Connector config")
        included = config.get("connector.class")
        if included is None:
            config["connector.class"] = plugin
        elif not _normalized(included).endswith(_normalized(plugin)) and not _normalized(
            plugin
        ).endswith(_normalized(included)):
            raise HttpError(
                400, f"Included connector type {included} does not match request type {plugin}"
            )
        return Response(200, self.herder.validate_connector_config(config))

    def _metrics(self, request: Request) -> Response:
        from cdk.runtime.metrics._prometheus import new_registry, render

        herder = self.herder
        with self._metrics_lock:
            if self._metrics_registry is None or self._metrics_source is not herder.metrics:
                self._metrics_source = herder.metrics
                self._metrics_registry = new_registry(herder.metrics)
            registry = self._metrics_registry
        body, content_type = render(registry, request.headers.get("Accept"))
        return Response(200, body, {"Content-Type": content_type})

    def _loggers(self, request: Request) -> Response:
        return Response(200, self.herder.all_logger_levels())

    def _logger(self, request: Request) -> Response:
        name = request.params[0]
        level = self.herder.logger_level(name)
        if level is None:
            raise HttpError(404, f"Logger {name} not found.")
        return Response(200, level)

    def _set_logger(self, request: Request) -> Response:
        namespace = request.params[0]
        body = request.json()
        if not isinstance(body, dict):
            raise HttpError(400, "Request body must be a JSON object with the desired 'level'")
        level = string_map(body, "Logger level").get("level")
        if level is None:
            raise HttpError(400, "Desired 'level' parameter was not specified in request.")
        if to_python_level(level) is None:
            # Kafka answers an unknown level with 404 Not Found (LoggingResource)
            raise HttpError(404, f"invalid log level '{level}'.")
        scopes = request.query.get("scope") or ["worker"]
        scope = scopes[0].lower()  # the first, as JAX-RS reads a query parameter
        if scope == "cluster":
            self.herder.set_cluster_logger_level(namespace, level)
            return Response(204)
        if scope != "worker":
            log.warning(
                "Received invalid scope %r in request to adjust logging level; "
                "will default to worker",
                scopes[0],
            )
        return Response(200, self.herder.set_worker_logger_level(namespace, level))


def _normalized(name: str) -> str:
    text = name.strip().replace(":", ".")
    return text[: -len("Connector")] if text.endswith("Connector") else text
