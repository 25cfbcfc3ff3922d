"""A Schema Registry over HTTP for tests: the endpoints the kit's AvroConverter calls.

The ``mock://`` registry lives in one process; Spark runs converters in its Python worker
processes, which must reach the same registry, so the Spark tests serve this one on loopback.
It keeps schemas in memory: ``POST /subjects/{s}/versions`` (register), ``POST /subjects/{s}``
(look up), ``GET /schemas/ids/{id}`` and ``GET /subjects/{s}/versions/latest``, answering as
Confluent's registry does (ids shared across subjects for the same schema, error 40403 for an
unknown schema under a subject).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlparse

__all__ = ["schema_registry"]


class _State:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.ids: dict[str, int] = {}  # schema string -> id
        self.by_id: dict[int, dict[str, Any]] = {}
        self.subjects: dict[str, list[int]] = {}  # subject -> ids by version


class _Handler(BaseHTTPRequestHandler):
    state: _State

    def log_message(self, format: str, *args: Any) -> None:
        return  # quiet

    def _send(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _parts(self) -> list[str]:
        return [unquote(p) for p in urlparse(self.path).path.strip("/").split("/")]

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        request = json.loads(self.rfile.read(length) or b"{}")
        parts = self._parts()
        state = self.state
        with state.lock:
            if len(parts) == 3 and parts[0] == "subjects" and parts[2] == "versions":
                key = request["schema"]
                schema_id = state.ids.setdefault(key, len(state.ids) + 1)
                state.by_id[schema_id] = {"schema": key, "schemaType": "AVRO"}
                versions = state.subjects.setdefault(parts[1], [])
                if schema_id not in versions:
                    versions.append(schema_id)
                self._send(200, {"id": schema_id})
                return
            if len(parts) == 2 and parts[0] == "subjects":
                schema_id = state.ids.get(request.get("schema", ""))
                versions = state.subjects.get(parts[1], [])
                if schema_id is None or schema_id not in versions:
                    self._send(404, {"error_code": 40403, "message": "Schema not found"})
                    return
                self._send(200, self._registered(parts[1], schema_id, versions))
                return
        self._send(404, {"error_code": 404, "message": f"no endpoint POST {self.path}"})

    def do_GET(self) -> None:
        parts = self._parts()
        state = self.state
        with state.lock:
            if len(parts) == 3 and parts[:2] == ["schemas", "ids"] and parts[2].isdigit():
                found = state.by_id.get(int(parts[2]))
                if found is None:
                    self._send(404, {"error_code": 40403, "message": "Schema not found"})
                else:
                    self._send(200, found)
                return
            if len(parts) == 4 and parts[0] == "subjects" and parts[2:] == ["versions", "latest"]:
                versions = state.subjects.get(parts[1])
                if not versions:
                    self._send(404, {"error_code": 40401, "message": "Subject not found"})
                else:
                    self._send(200, self._registered(parts[1], versions[-1], versions))
                return
        self._send(404, {"error_code": 404, "message": f"no endpoint GET {self.path}"})

    def _registered(self, subject: str, schema_id: int, versions: list[int]) -> dict[str, Any]:
        return {
            "subject": subject,
            "id": schema_id,
            "version": versions.index(schema_id) + 1,
            **self.state.by_id[schema_id],
        }


@contextmanager
def schema_registry() -> Iterator[str]:
    """Serve a fresh registry on a free loopback port; yield its URL; stop it afterwards."""
    handler = type("Handler", (_Handler,), {"state": _State()})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="schema-registry", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
