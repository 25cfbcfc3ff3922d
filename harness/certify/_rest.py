"""A small Kafka Connect REST client on the standard library (no extra dependency)."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

__all__ = ["RestClient", "RestResponse"]


@dataclass(frozen=True)
class RestResponse:
    """A REST answer: status code, body text, and the body as JSON (None if it is not JSON)."""

    status: int
    text: str

    @property
    def json(self) -> Any:
        """The body parsed as JSON, or None."""
        try:
            return json.loads(self.text) if self.text else None
        except ValueError:
            return None


class RestClient:
    """Calls a worker's REST API.

    Every call returns a :class:`RestResponse` (it never raises on HTTP error codes) and is
    recorded in :attr:`history`, so checks can inspect every body the API returned.
    """

    def __init__(
        self, url: str, *, timeout: float = 60.0, auth: tuple[str, str] | None = None
    ) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self._auth = (
            "Basic " + base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode() if auth else None
        )
        self.history: list[tuple[str, str, RestResponse]] = []

    def request(self, method: str, path: str, body: Any = None) -> RestResponse:
        """Send ``method path`` with an optional JSON ``body``."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if self._auth:
            req.add_header("Authorization", self._auth)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                answer = RestResponse(resp.status, resp.read().decode("utf-8", "replace"))
        except urllib.error.HTTPError as exc:
            answer = RestResponse(exc.code, exc.read().decode("utf-8", "replace"))
        self.history.append((method, path, answer))
        return answer

    def get(self, path: str) -> RestResponse:
        """``GET path``."""
        return self.request("GET", path)

    def post(self, path: str, body: Any = None) -> RestResponse:
        """``POST path``."""
        return self.request("POST", path, body)

    def put(self, path: str, body: Any = None) -> RestResponse:
        """``PUT path``."""
        return self.request("PUT", path, body)

    def patch(self, path: str, body: Any = None) -> RestResponse:
        """``PATCH path``."""
        return self.request("PATCH", path, body)

    def delete(self, path: str) -> RestResponse:
        """``DELETE path``."""
        return self.request("DELETE", path)
