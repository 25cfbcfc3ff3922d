"""The ``http.*`` configuration keys, their cross-key checks, and a client built from them.

A connector adds the keys to its definition as they are (group ``HTTP``)::

    CONFIG_DEF = ConfigDef(http_config_def()).define("topic", ...)

(into an existing definition: ``for key in http_config_def().config_keys().values():
definition.define(key)``; :meth:`~cdk.config.ConfigDef.embed` works too and prefixes the group). Its
``validate()`` reports :func:`http_config_problems` on the keys they name; its task builds the
client with :func:`http_client_from_config`.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import httpx

from cdk.config import NO_DEFAULT, AbstractConfig, ConfigDef, Importance, Password, Type, Width
from cdk.config import validators as v
from cdk.errors import ConfigException
from cdk.http._auth import ApiKeyAuth, BasicAuth, BearerTokenAuth
from cdk.http._client import HttpClient
from cdk.http._oauth2 import OAuth2ClientCredentials, OAuth2RefreshToken
from cdk.http._rate_limit import RateLimiter

__all__ = [
    "AUTH_TYPES",
    "http_client_from_config",
    "http_config_def",
    "http_config_problems",
    "parse_headers",
    "validate_http_config",
]

GROUP = "HTTP"

BASE_URL = "http.base.url"
TIMEOUT_MS = "http.timeout.ms"
DEADLINE_MS = "http.deadline.ms"
MAX_RETRIES = "http.max.retries"
BACKOFF_INITIAL_MS = "http.backoff.initial.ms"
BACKOFF_MAX_MS = "http.backoff.max.ms"
RATE_LIMIT = "http.rate.limit.per.second"
MAX_CONCURRENT = "http.max.concurrent.requests"
USER_AGENT = "http.user.agent"
HEADERS = "http.headers"
AUTH_TYPE = "http.auth.type"
AUTH_TOKEN = "http.auth.token"
API_KEY = "http.auth.api.key"
API_KEY_HEADER = "http.auth.api.key.header"
API_KEY_QUERY_PARAM = "http.auth.api.key.query.param"
USERNAME = "http.auth.username"
PASSWORD = "http.auth.password"
TOKEN_URL = "http.auth.oauth2.token.url"
CLIENT_ID = "http.auth.oauth2.client.id"
CLIENT_SECRET = "http.auth.oauth2.client.secret"
REFRESH_TOKEN = "http.auth.oauth2.refresh.token"
SCOPES = "http.auth.oauth2.scopes"

#: The values of ``http.auth.type``.
AUTH_TYPES = (
    "none",
    "bearer",
    "api_key",
    "basic",
    "oauth2_client_credentials",
    "oauth2_refresh_token",
)

#: The keys each ``http.auth.type`` needs set (non-empty).
_NEEDED = {
    "bearer": (AUTH_TOKEN,),
    "api_key": (API_KEY,),
    "basic": (USERNAME,),
    "oauth2_client_credentials": (TOKEN_URL, CLIENT_ID, CLIENT_SECRET),
    "oauth2_refresh_token": (TOKEN_URL, CLIENT_ID, REFRESH_TOKEN),
}


def _check_url(name: str, value: Any) -> None:
    if value is None:
        if name.endswith(BASE_URL):
            raise ConfigException(name, value, "an http:// or https:// URL is required")
        return
    try:
        url = httpx.URL(str(value))
    except httpx.InvalidURL as exc:
        raise ConfigException(name, value, f"not a URL ({exc})") from None
    if url.scheme not in ("http", "https") or not url.host:
        raise ConfigException(name, value, "expected an absolute http:// or https:// URL")


def _check_headers(name: str, value: Any) -> None:
    try:
        parse_headers(value or [])
    except ValueError as exc:
        raise ConfigException(name, value, str(exc)) from None


def parse_headers(entries: list[str] | tuple[str, ...]) -> dict[str, str]:
    """Parse ``http.headers`` entries, ``Name: value`` each, into a dict.

    Raises:
        ValueError: an entry without a colon or without a name.
    """
    headers: dict[str, str] = {}
    for entry in entries:
        name, colon, value = str(entry).partition(":")
        if not colon or not name.strip():
            raise ValueError(f"expected entries of the form 'Name: value', not {entry!r}")
        headers[name.strip()] = value.strip()
    return headers


def http_config_def() -> ConfigDef:
    """A new :class:`~cdk.config.ConfigDef` holding the ``http.*`` keys (group ``HTTP``)."""
    url = v.LambdaValidator.of(_check_url, "An absolute http:// or https:// URL")
    keys: list[tuple[str, Type, Any, v.Validator | None, Importance, str, Width]] = [
        (BASE_URL, Type.STRING, NO_DEFAULT, url, Importance.HIGH,
         "The base URL of the API; request paths are relative to it.", Width.LONG),
        (AUTH_TYPE, Type.STRING, "none", v.ValidString.of(*AUTH_TYPES), Importance.HIGH,
         "How requests authenticate: none; bearer (http.auth.token); api_key "
         "(http.auth.api.key in a header or a query parameter); basic (http.auth.username, "
         "http.auth.password); oauth2_client_credentials (http.auth.oauth2.token.url, client.id, "
         "client.secret); oauth2_refresh_token (token.url, client.id, refresh.token and, for a "
         "confidential client, client.secret).", Width.MEDIUM),
        (AUTH_TOKEN, Type.PASSWORD, None, None, Importance.HIGH,
         "The bearer token (http.auth.type=bearer).", Width.LONG),
        (API_KEY, Type.PASSWORD, None, None, Importance.HIGH,
         "The API key (http.auth.type=api_key).", Width.LONG),
        (API_KEY_HEADER, Type.STRING, "X-API-Key", None, Importance.MEDIUM,
         "The header that carries the API key, unless http.auth.api.key.query.param is set.",
         Width.MEDIUM),
        (API_KEY_QUERY_PARAM, Type.STRING, None, None, Importance.MEDIUM,
         "Send the API key as this query parameter instead of a header (its value is masked "
         "in messages and logs).", Width.MEDIUM),
        (USERNAME, Type.STRING, None, None, Importance.HIGH,
         "The user name (http.auth.type=basic).", Width.MEDIUM),
        (PASSWORD, Type.PASSWORD, None, None, Importance.HIGH,
         "The password (http.auth.type=basic); may be empty.", Width.MEDIUM),
        (TOKEN_URL, Type.STRING, None, url, Importance.HIGH,
         "The OAuth2 token endpoint.", Width.LONG),
        (CLIENT_ID, Type.STRING, None, None, Importance.HIGH,
         "The OAuth2 client id.", Width.MEDIUM),
        (CLIENT_SECRET, Type.PASSWORD, None, None, Importance.HIGH,
         "The OAuth2 client secret.", Width.LONG),
        (REFRESH_TOKEN, Type.PASSWORD, None, None, Importance.HIGH,
         "The OAuth2 refresh token (http.auth.type=oauth2_refresh_token). When the token "
         "endpoint rotates it, the new one is used until the task restarts.", Width.LONG),
        (SCOPES, Type.LIST, "", None, Importance.MEDIUM,
         "The OAuth2 scopes to ask for; empty: the client's default scopes.", Width.LONG),
        (TIMEOUT_MS, Type.INT, 30_000, v.Range.at_least(1), Importance.MEDIUM,
         "The timeout of one request (connecting, reading, writing), in milliseconds.",
         Width.SHORT),
        (DEADLINE_MS, Type.LONG, 300_000, v.Range.at_least(1), Importance.MEDIUM,
         "The most time one call may take, retries and their waits included, in milliseconds. "
         "A wait that would pass it (a long Retry-After) is not started: the call fails as "
         "retriable at once and the task polls again later.", Width.SHORT),
        (MAX_RETRIES, Type.INT, 8, v.Range.at_least(0), Importance.MEDIUM,
         "How many times a retriable failure (connection errors, timeouts, 408, 425, 429, 5xx) "
         "is retried within one call.", Width.SHORT),
        (BACKOFF_INITIAL_MS, Type.LONG, 500, v.Range.at_least(0), Importance.LOW,
         "The backoff before the first retry when the server sends no Retry-After; it doubles "
         "with each retry (full jitter: a random wait up to it).", Width.SHORT),
        (BACKOFF_MAX_MS, Type.LONG, 60_000, v.Range.at_least(0), Importance.LOW,
         "The longest backoff between two retries (Retry-After is honoured even when longer).",
         Width.SHORT),
        (RATE_LIMIT, Type.DOUBLE, 0.0, v.Range.at_least(0), Importance.MEDIUM,
         "The most requests per second a task sends, retries included; 0: no limit.",
         Width.SHORT),
        (MAX_CONCURRENT, Type.INT, 1, v.Range.at_least(1), Importance.LOW,
         "The most requests a task has in flight at once.", Width.SHORT),
        (USER_AGENT, Type.STRING, "", None, Importance.LOW,
         "The User-Agent header; empty: connect-cdk/<version>.", Width.MEDIUM),
        (HEADERS, Type.LIST, "", v.LambdaValidator.of(_check_headers, "Name: value entries"),
         Importance.LOW,
         "Headers sent with every request, as comma-separated 'Name: value' entries (a value "
         "cannot contain a comma). Put secrets in the http.auth.* keys, not here.", Width.LONG),
    ]  # fmt: skip
    definition = ConfigDef()
    for order, (name, type_, default, validator, importance, doc, width) in enumerate(keys):
        definition.define(
            name,
            type_,
            default,
            validator,
            importance,
            doc,
            group=GROUP,
            order_in_group=order + 1,
            width=width,
        )
    return definition


def _is_set(value: Any) -> bool:
    if isinstance(value, Password):
        return bool(value.value())
    return value is not None and value != "" and value != []


def http_config_problems(values: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The problems that span several ``http.*`` keys, as ``(key, message)`` pairs.

    For a connector's ``validate()``: add each message to the named key's ConfigValue.

    Args:
        values: parsed values by key.
    """
    problems: list[tuple[str, str]] = []
    auth = str(values.get(AUTH_TYPE) or "none")
    for key in _NEEDED.get(auth, ()):
        if not _is_set(values.get(key)):
            problems.append((key, f"{AUTH_TYPE}={auth} needs {key}"))
    if (
        auth == "api_key"
        and not _is_set(values.get(API_KEY_QUERY_PARAM))
        and not _is_set(values.get(API_KEY_HEADER))
    ):
        problems.append(
            (
                API_KEY_HEADER,
                f"{AUTH_TYPE}=api_key needs {API_KEY_HEADER} or {API_KEY_QUERY_PARAM}",
            )
        )
    initial, longest = values.get(BACKOFF_INITIAL_MS), values.get(BACKOFF_MAX_MS)
    if isinstance(initial, int) and isinstance(longest, int) and longest < initial:
        problems.append((BACKOFF_MAX_MS, f"must be at least {BACKOFF_INITIAL_MS} ({initial})"))
    return problems


def validate_http_config(values: Mapping[str, Any]) -> None:
    """Raise the first of :func:`http_config_problems` as a ConfigException naming its key.

    Raises:
        ConfigException: ``Invalid value <value> for configuration <key>: <problem>``
            (secrets shown as ``[hidden]``).
    """
    problems = http_config_problems(values)
    if problems:
        key, message = problems[0]
        value = values.get(key)
        raise ConfigException(
            key, Password.HIDDEN if isinstance(value, Password) else value, message
        )


def http_client_from_config(
    config: Mapping[str, object] | AbstractConfig,
    *,
    stop: threading.Event | None = None,
) -> HttpClient:
    """Build the authenticator and the :class:`HttpClient` the ``http.*`` keys describe.

    Args:
        config: the connector's parsed config, or its properties (raw or parsed values).
        stop: the task's stop event, which ends the client's waits (see :class:`HttpClient`).

    Returns:
        A new client; the caller closes it.

    Raises:
        ConfigException: a key is invalid or missing, or keys do not fit together; names it.
    """
    raw = config.values() if isinstance(config, AbstractConfig) else config
    values = http_config_def().parse({k: val for k, val in raw.items() if k.startswith("http.")})
    validate_http_config(values)
    rate = values[RATE_LIMIT] or None
    return HttpClient(
        values[BASE_URL],
        auth=_auth(values),
        timeout_s=values[TIMEOUT_MS] / 1000,
        deadline_s=values[DEADLINE_MS] / 1000,
        max_retries=values[MAX_RETRIES],
        backoff_initial_s=values[BACKOFF_INITIAL_MS] / 1000,
        backoff_max_s=values[BACKOFF_MAX_MS] / 1000,
        rate_limiter=RateLimiter(rate, values[MAX_CONCURRENT]),
        headers=parse_headers(values[HEADERS]),
        user_agent=values[USER_AGENT] or None,
        stop=stop,
    )


def _auth(values: Mapping[str, Any]) -> httpx.Auth | None:
    auth = values[AUTH_TYPE]
    timeout_s = values[TIMEOUT_MS] / 1000
    if auth == "bearer":
        return BearerTokenAuth(values[AUTH_TOKEN])
    if auth == "api_key":
        query = values[API_KEY_QUERY_PARAM] or None
        return ApiKeyAuth(
            values[API_KEY], header=None if query else values[API_KEY_HEADER], query_param=query
        )
    if auth == "basic":
        return BasicAuth(values[USERNAME], values[PASSWORD])
    if auth == "oauth2_client_credentials":
        return OAuth2ClientCredentials(
            values[TOKEN_URL],
            values[CLIENT_ID],
            values[CLIENT_SECRET],
            scopes=values[SCOPES],
            timeout_s=timeout_s,
        )
    if auth == "oauth2_refresh_token":
        return OAuth2RefreshToken(
            values[TOKEN_URL],
            values[CLIENT_ID],
            values[CLIENT_SECRET],
            values[REFRESH_TOKEN],
            scopes=values[SCOPES],
            timeout_s=timeout_s,
        )
    return None
