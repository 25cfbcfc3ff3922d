"""The bundle's file manifest (``SHA256SUMS``) and its verification (``cdk certify verify``).

``SHA256SUMS`` lists the SHA-256 of every other file of the bundle, one ``<hex>  <path>`` line
each (paths relative to the bundle, ``/``-separated, sorted), the format ``sha256sum`` writes,
so ``sha256sum -c SHA256SUMS`` checks a bundle as well as ``cdk certify verify`` does. It is
written last and does not list itself: compare its own SHA-256 (printed by ``cdk certify`` and
by ``cdk certify verify``) with the one in the CI log that produced the bundle to know that the
manifest itself is the one the run wrote.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

__all__ = [
    "MANIFEST_NAME",
    "BundleVerification",
    "NotABundleError",
    "bundle_files",
    "sha256_file",
    "verify_bundle",
    "write_manifest",
]

MANIFEST_NAME = "SHA256SUMS"

_LINE = re.compile(r"^(?P<digest>[0-9a-f]{64}) [ *](?P<path>.+)$")
_CHUNK = 1 << 20


class NotABundleError(ValueError):
    """The directory is not a certification bundle (it has no ``SHA256SUMS``)."""


@dataclass
class BundleVerification:
    """What :func:`verify_bundle` found.

    Attributes:
        directory: the bundle directory.
        manifest_sha256: the SHA-256 of ``SHA256SUMS`` itself.
        intact: the files listed, with their expected digest matched.
        changed: files whose content differs from the manifest.
        missing: files the manifest lists that are not there.
        added: files in the bundle the manifest does not list.
        malformed: manifest lines that are not ``<sha256>  <relative path>`` (by line number).
    """

    directory: Path
    manifest_sha256: str
    intact: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    malformed: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Every listed file is there unchanged, and nothing else is."""
        return not (self.changed or self.missing or self.added or self.malformed)

    def problems(self) -> list[str]:
        """One line per problem, naming the file (or the manifest line)."""
        return (
            [f"changed: {p}" for p in self.changed]
            + [f"missing: {p}" for p in self.missing]
            + [f"added: {p}" for p in self.added]
            + [f"{MANIFEST_NAME} {line}" for line in self.malformed]
        )


def sha256_file(path: Path) -> str:
    """The SHA-256 of the file at ``path``, in hex."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def bundle_files(directory: Path) -> list[str]:
    """Every file under ``directory`` but the manifest, as sorted ``/``-separated paths."""
    found = []
    for path in directory.rglob("*"):
        if path.is_file() or (path.is_symlink() and not path.is_dir()):
            relative = path.relative_to(directory).as_posix()
            if relative != MANIFEST_NAME:
                found.append(relative)
    return sorted(found)


def write_manifest(directory: Path) -> Path:
    """Write ``SHA256SUMS`` for every file under ``directory`` (call it last) and return it."""
    lines = [f"{sha256_file(directory / name)}  {name}\n" for name in bundle_files(directory)]
    path = directory / MANIFEST_NAME
    path.write_text("".join(lines), encoding="utf-8", newline="\n")
    return path


def verify_bundle(directory: str | Path) -> BundleVerification:
    """Check every file of the bundle at ``directory`` against its ``SHA256SUMS``.

    Raises:
        NotABundleError: ``directory`` is not a directory or has no ``SHA256SUMS``.
    """
    root = Path(directory)
    if not root.is_dir():
        raise NotABundleError(f"{root} is not a directory (a bundle is the report directory)")
    manifest = root / MANIFEST_NAME
    if not manifest.is_file():
        raise NotABundleError(
            f"{root} is not a certification bundle: it has no {MANIFEST_NAME} "
            "(cdk certify writes one into every report directory)"
        )
    result = BundleVerification(root, sha256_file(manifest))
    listed: dict[str, str] = {}
    text = manifest.read_text(encoding="utf-8", errors="replace")
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        match = _LINE.match(raw)
        name = match.group("path") if match else ""
        if match is None or not _safe(name):
            result.malformed.append(f"line {number} is not '<sha256>  <relative path>': {raw!r}")
        elif name in listed:
            result.malformed.append(f"line {number} lists {name} a second time")
        else:
            listed[name] = match.group("digest")
    for name, digest in sorted(listed.items()):
        path = root / name
        if not path.is_file():
            result.missing.append(name)
        elif sha256_file(path) != digest:
            result.changed.append(name)
        else:
            result.intact.append(name)
    result.added = [name for name in bundle_files(root) if name not in listed]
    return result


def _safe(name: str) -> bool:
    """A relative path that stays inside the bundle."""
    path = PurePosixPath(name)
    return bool(name) and not path.is_absolute() and ".." not in path.parts and "\\" not in name
