"""Offsets in a local file, rewritten atomically (``offset.storage.file.filename``)."""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cdk.errors import ConnectException
from cdk.runtime.storage._offset_store import MemoryOffsetBackingStore, apply_changes

__all__ = ["FileOffsetBackingStore"]

log = logging.getLogger("cdk.runtime.offsets")

_FILE_FORMAT = "connect-cdk offsets"
_FILE_VERSION = 1


def _encode_bytes(prefix: str, data: bytes) -> dict[str, str]:
    try:
        return {prefix: data.decode("utf-8")}
    except UnicodeDecodeError:
        return {f"{prefix}_base64": base64.b64encode(data).decode("ascii")}


def _decode_bytes(entry: Mapping[str, Any], prefix: str) -> bytes:
    if isinstance(entry.get(prefix), str):
        return str(entry[prefix]).encode("utf-8")
    if isinstance(entry.get(f"{prefix}_base64"), str):
        return base64.b64decode(str(entry[f"{prefix}_base64"]), validate=True)
    raise ValueError(f"entry without a {prefix!r}")


class FileOffsetBackingStore(MemoryOffsetBackingStore):
    """Offsets in a local file, rewritten atomically on every :meth:`set` (standalone mode).

    The file is readable JSON: ``{"format": ..., "version": 1, "offsets": [{"key": ...,
    "value": ...}]}`` where key and value are the stored bytes as text (the Kafka-format JSON
    documents above), or ``key_base64``/``value_base64`` for bytes that are not UTF-8. Each write
    goes to a temporary file in the same directory, is fsynced, renamed over the old file with
    :func:`os.replace` and the directory is fsynced: a crash at any moment (even ``kill -9``
    or power loss) leaves either the old or the new complete file.

    Args:
        path: the offsets file (Kafka's ``offset.storage.file.filename``); its directory is
            created if missing.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__()
        self.path = Path(path)

    def start(self) -> None:
        """Load the file if it exists (a missing or empty file means no offsets yet).

        Raises:
            ConnectException: the file exists but cannot be read or parsed (names the file).
        """
        with self._lock:
            self._data = self._load()
            self._remove_stale_temporaries()

    def _load(self) -> dict[bytes, bytes]:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as e:
            raise ConnectException(f"Could not read the offsets file {self.path}: {e}") from e
        if not raw.strip():
            return {}
        try:
            document = json.loads(raw.decode("utf-8"))
            if not isinstance(document, dict) or not isinstance(document.get("offsets"), list):
                raise ValueError('expected a JSON object with an "offsets" list')
            data: dict[bytes, bytes] = {}
            for entry in document["offsets"]:
                if not isinstance(entry, dict):
                    raise ValueError("every offsets entry must be a JSON object")
                data[_decode_bytes(entry, "key")] = _decode_bytes(entry, "value")
        except (UnicodeDecodeError, ValueError) as e:
            raise ConnectException(
                f"The offsets file {self.path} is corrupt or not an offsets file: {e}"
            ) from e
        return data

    def _remove_stale_temporaries(self) -> None:
        directory = self.path.parent
        if not directory.is_dir():
            return
        for leftover in directory.glob(f".{self.path.name}.*.tmp"):
            try:
                leftover.unlink()
            except OSError:  # pragma: no cover - best effort
                log.debug("Could not remove the stale temporary file %s", leftover)

    def _save(self) -> None:
        document = {
            "format": _FILE_FORMAT,
            "version": _FILE_VERSION,
            "offsets": [
                {**_encode_bytes("key", key), **_encode_bytes("value", value)}
                for key, value in self._data.items()
            ],
        }
        payload = json.dumps(document, indent=1, ensure_ascii=False).encode("utf-8") + b"\n"
        directory = self.path.parent
        try:
            directory.mkdir(parents=True, exist_ok=True)
            fd, tmp_name = tempfile.mkstemp(
                prefix=f".{self.path.name}.", suffix=".tmp", dir=directory
            )
        except OSError as e:
            raise ConnectException(f"Could not write the offsets file {self.path}: {e}") from e
        try:
            with os.fdopen(fd, "wb") as tmp:
                tmp.write(payload)
                tmp.flush()
                os.fsync(tmp.fileno())
            os.replace(tmp_name, self.path)
            _fsync_directory(directory)
        except OSError as e:
            with contextlib.suppress(OSError):
                os.unlink(tmp_name)
            raise ConnectException(f"Could not write the offsets file {self.path}: {e}") from e

    def set(self, values: Mapping[bytes, bytes | None]) -> None:
        """Store ``values`` and rewrite the file atomically; on failure nothing changes.

        Raises:
            ConnectException: the file could not be written (names the file).
        """
        with self._lock:
            previous = dict(self._data)
            apply_changes(self._data, values)
            try:
                self._save()
            except BaseException:
                self._data = previous
                raise

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.path)!r})"


def _fsync_directory(directory: Path) -> None:
    if os.name != "posix":  # pragma: no cover - directories cannot be opened on Windows
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
