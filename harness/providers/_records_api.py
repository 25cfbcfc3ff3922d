"""A small REST API of records on loopback: the SaaS API that HTTP source drivers stand up.

It serves ``GET /records`` over HTTP (JSON), and the driver writes into it in-process (the bulk
write an API's admin endpoint would be), so a certification measures the connector, not the
writes. The records are JSON objects with an integer ``id`` and an ``updated_at`` stamp (ISO
8601, milliseconds, ``Z``): the cursor an incremental source follows, with ``id`` as its tie
breaker.

``GET /records`` takes:

- ``updated_since``: only records with ``updated_at >= updated_since`` (inclusive);
- ``after_id``: with ``updated_since``, leave out the records stamped exactly ``updated_since``
  whose id is not above it (keyset pagination: ``(updated_at, id) > (since, after_id)``);
- ``limit``: at most this many (default and maximum: ``max_page``);

and answers ``{"data": [...], "next": {"updated_since": ..., "after_id": ...} | null}``, the
records in ``(updated_at, id)`` order; ``next`` is null on the last page. With a ``token``,
every request must carry ``Authorization: Bearer <token>`` (401 otherwise).
"""

from __future__ import annotations

import datetime as dt
import json
import threading
from collections.abc import Iterable, Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = ["RecordsApi", "stamp"]


def stamp(moment: dt.datetime) -> str:
    """``moment`` as the API writes ``updated_at``: ISO 8601 UTC with milliseconds and ``Z``."""
    utc = moment.astimezone(dt.timezone.utc)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def _instant(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


class RecordsApi:
    """The API; ``with RecordsApi() as api:`` serves on ``api.url`` until the block ends.

    Args:
        max_page: the largest page ``GET /records`` returns.
        token: a bearer token every request must carry (None: no auth).
    """

    def __init__(self, *, max_page: int = 500, token: str | None = None) -> None:
        self.max_page = max_page
        self.token = token
        self._lock = threading.Lock()
        self._records: dict[int, dict[str, Any]] = {}
        self._clock = dt.datetime(2030, 1, 1, tzinfo=dt.timezone.utc)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.requests = 0

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> RecordsApi:
        """Listen on a free loopback port."""
        api = self

        class Handler(_Handler):
            owner = api

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving (idempotent)."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> RecordsApi:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """The API's base URL (``http://127.0.0.1:<port>``)."""
        if self._server is None:
            raise RuntimeError("the API is not started")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    # ------------------------------------------------------------------ the driver's writes
    def put(self, records: Iterable[Mapping[str, Any]], *, updated_at: str | None = None) -> None:
        """Create or replace records (each with an int ``id``), all stamped ``updated_at``.

        Without ``updated_at``, each record is stamped one millisecond after the last stamp
        given, so stamps only grow (as a server's clock would); with it, every record of the
        call shares that stamp (a burst written within one millisecond).
        """
        with self._lock:
            for record in records:
                if not isinstance(record.get("id"), int):
                    raise ValueError(f"a record needs an int id: {dict(record)!r:.200}")
                if updated_at is None:
                    self._clock += dt.timedelta(milliseconds=1)
                    when = stamp(self._clock)
                else:
                    when = updated_at
                    self._clock = max(self._clock, _instant(updated_at))
                self._records[record["id"]] = {**record, "updated_at": when}

    def update(self, ids: Iterable[int], **fields: Any) -> None:
        """Change existing records: ``fields`` set, stamped later than anything before."""
        with self._lock:
            for record_id in ids:
                self._clock += dt.timedelta(milliseconds=1)
                record = self._records[record_id]
                self._records[record_id] = {**record, **fields, "updated_at": stamp(self._clock)}

    def records(self) -> list[dict[str, Any]]:
        """Every record, in ``(updated_at, id)`` order."""
        with self._lock:
            return sorted(self._records.values(), key=_order)

    # ------------------------------------------------------------------ the API's reads
    def page(self, query: Mapping[str, str]) -> tuple[int, dict[str, Any]]:
        """The answer to ``GET /records`` with ``query``: (status, body)."""
        try:
            limit = min(int(query.get("limit", self.max_page)), self.max_page)
            since = query.get("updated_since")
            since_at = _instant(since) if since else None
            after = int(query["after_id"]) if "after_id" in query else None
        except ValueError as exc:
            return 400, {"error": f"bad query: {exc}"}
        if limit < 1:
            return 400, {"error": "limit must be at least 1"}
        with self._lock:
            self.requests += 1
            rows = sorted(self._records.values(), key=_order)
        if since_at is not None:
            rows = [
                r
                for r in rows
                if _instant(r["updated_at"]) > since_at
                or (_instant(r["updated_at"]) == since_at and (after is None or r["id"] > after))
            ]
        data = rows[:limit]
        more = len(rows) > limit
        last = data[-1] if data else None
        following = (
            {"updated_since": last["updated_at"], "after_id": last["id"]}
            if more and last is not None
            else None
        )
        return 200, {"data": data, "next": following}


def _order(record: Mapping[str, Any]) -> tuple[dt.datetime, int]:
    return _instant(record["updated_at"]), record["id"]


class _Handler(BaseHTTPRequestHandler):
    owner: RecordsApi
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        if self.owner.token is not None and (
            self.headers.get("Authorization") != f"Bearer {self.owner.token}"
        ):
            self._send(401, {"error": "a valid bearer token is required"})
            return
        if parts.path.rstrip("/") != "/records":
            self._send(404, {"error": f"no such resource: {parts.path}"})
            return
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        self._send(*self.owner.page(query))

    def _send(self, status: int, body: Any) -> None:
        payload = json.dumps(body).encode()
        self.send_response(status, HTTPStatus(status).phrase)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the requests are counted, not logged."""
