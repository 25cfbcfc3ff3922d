"""Building blocks for sources that read HTTP APIs (SaaS REST APIs).

Composable parts a :class:`~cdk.SourceTask` uses: authenticators, a client that classifies
errors, honours ``Retry-After``, backs off and limits its rate, paginators, an incremental
cursor offset, JSON to Connect schema mapping, and the ``http.*`` configuration keys.
"""

from __future__ import annotations

import importlib.util

from cdk.errors import MissingExtraError

if importlib.util.find_spec("httpx") is None:  # an actionable error, not httpx's ImportError
    raise MissingExtraError("cdk.http", "http", "httpx")

# isort: split
# --- auth, client, config (block A) ---
from cdk.http._auth import ApiKeyAuth, BasicAuth, BearerTokenAuth
from cdk.http._client import HttpClient
from cdk.http._config import (
    http_client_from_config,
    http_config_def,
    http_config_problems,
    validate_http_config,
)
from cdk.http._errors import HttpFatalError, HttpInterruptedError, HttpRetriableError
from cdk.http._oauth2 import OAuth2ClientCredentials, OAuth2RefreshToken
from cdk.http._rate_limit import RateLimiter

# --- end of block A ---

# --- paginators, cursor, schema (block B) ---
# isort: split
from cdk.http._cursor import CursorStream, IncrementalCursor
from cdk.http._paginators import (
    CursorPaginator,
    LinkHeaderPaginator,
    NextTokenPaginator,
    OffsetPaginator,
    Page,
    PageNumberPaginator,
    Paginator,
    records_at,
)
from cdk.http._schema import JsonRecordMapper, infer_schema

# --- end of block B ---

__all__: list[str] = [
    # auth, client, config (block A)
    "BearerTokenAuth",
    "ApiKeyAuth",
    "BasicAuth",
    "OAuth2ClientCredentials",
    "OAuth2RefreshToken",
    "HttpClient",
    "RateLimiter",
    "HttpFatalError",
    "HttpRetriableError",
    "HttpInterruptedError",
    "http_config_def",
    "http_config_problems",
    "validate_http_config",
    "http_client_from_config",
    # paginators, cursor, schema (block B)
    "Page",
    "Paginator",
    "CursorPaginator",
    "NextTokenPaginator",
    "LinkHeaderPaginator",
    "PageNumberPaginator",
    "OffsetPaginator",
    "records_at",
    "IncrementalCursor",
    "CursorStream",
    "infer_schema",
    "JsonRecordMapper",
]
