"""The public surface of cdk.http: changing it is changing the contract."""

from __future__ import annotations

import cdk.http


def test_exports() -> None:
    assert set(cdk.http.__all__) == {
        "ApiKeyAuth",
        "BasicAuth",
        "BearerTokenAuth",
        "OAuth2ClientCredentials",
        "OAuth2RefreshToken",
        "HttpClient",
        "RateLimiter",
        "HttpFatalError",
        "HttpRetriableError",
        "HttpInterruptedError",
        "http_client_from_config",
        "http_config_def",
        "http_config_problems",
        "validate_http_config",
        "Page",
        "Paginator",
        "CursorPaginator",
        "LinkHeaderPaginator",
        "NextTokenPaginator",
        "OffsetPaginator",
        "PageNumberPaginator",
        "records_at",
        "IncrementalCursor",
        "CursorStream",
        "JsonRecordMapper",
        "infer_schema",
    }
    for name in cdk.http.__all__:
        assert getattr(cdk.http, name).__module__.startswith("cdk.http"), name
