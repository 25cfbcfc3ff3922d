"""The kit's version and commit, as ``GET /`` reports them (Kafka's ``AppInfoParser``).

The commit is looked up once per process, never with a ``git`` subprocess:

1. running from a git checkout (an editable install, or the source tree on ``sys.path``): the
   commit its ``HEAD`` names, read from the ``.git`` directory (a worktree's ``.git`` file,
   loose refs and ``packed-refs`` included);
2. installed from a git URL (``pip install git+https://...``): the ``commit_id`` pip recorded
   in the distribution's ``direct_url.json`` (PEP 610);
3. otherwise ``unknown``.

Like Kafka's, the reported commit is the first 16 hex digits of the sha.
"""

from __future__ import annotations

import functools
import json
import logging
import re
from importlib import metadata
from pathlib import Path

__all__ = ["COMMIT_LENGTH", "UNKNOWN", "git_commit", "kit_commit"]

log = logging.getLogger("cdk.runtime.rest")

UNKNOWN = "unknown"
#: Kafka reports the first 16 hex digits of its commit id.
COMMIT_LENGTH = 16
_DISTRIBUTION = "connect-cdk"
_SHA = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")


@functools.cache
def kit_commit() -> str:
    """The kit's commit (16 hex digits), or ``unknown``; computed on the first call only."""
    source_root = Path(__file__).resolve().parents[3]  # cdk/runtime/rest/_kit_info.py -> the tree
    commit = git_commit(source_root) or _pip_vcs_commit()
    return commit[:COMMIT_LENGTH] if commit else UNKNOWN


def git_commit(root: Path) -> str | None:
    """The full sha that ``HEAD`` of the git checkout at ``root`` names, ``None`` if there is none.

    Reads the files git keeps (no ``git`` process): ``.git`` may be a directory or, in a
    worktree or submodule, a file naming the git directory; the ref ``HEAD`` names is looked up
    as a loose ref, then in ``packed-refs``, in the git directory and its common directory.
    """
    try:
        git_dir = _git_dir(root / ".git")
        if git_dir is None:
            return None
        head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
        if _SHA.fullmatch(head):
            return head  # a detached HEAD
        if not head.startswith("ref:"):
            return None
        ref = head[len("ref:") :].strip()
        common = git_dir
        commondir = git_dir / "commondir"
        if commondir.is_file():
            common = (git_dir / commondir.read_text(encoding="utf-8").strip()).resolve()
        for directory in dict.fromkeys((git_dir, common)):
            sha = _read_ref(directory, ref)
            if sha is not None:
                return sha
    except (OSError, UnicodeDecodeError) as exc:
        log.debug("Could not read the git commit of %s: %s", root, exc)
    return None


def _git_dir(dot_git: Path) -> Path | None:
    if dot_git.is_dir():
        return dot_git
    if dot_git.is_file():
        text = dot_git.read_text(encoding="utf-8").strip()
        if text.startswith("gitdir:"):
            path = Path(text[len("gitdir:") :].strip())
            path = path if path.is_absolute() else dot_git.parent / path
            return path if path.is_dir() else None
    return None


def _read_ref(git_dir: Path, ref: str) -> str | None:
    loose = git_dir / ref
    if loose.is_file():
        sha = loose.read_text(encoding="utf-8").strip()
        return sha if _SHA.fullmatch(sha) else None
    packed = git_dir / "packed-refs"
    if packed.is_file():
        for line in packed.read_text(encoding="utf-8").splitlines():
            sha, _, name = line.partition(" ")
            if name.strip() == ref and _SHA.fullmatch(sha):
                return sha
    return None


def _pip_vcs_commit() -> str | None:
    """The commit pip recorded for an install from a git URL (PEP 610 ``direct_url.json``)."""
    try:
        text = metadata.distribution(_DISTRIBUTION).read_text("direct_url.json")
        if not text:
            return None
        commit = json.loads(text).get("vcs_info", {}).get("commit_id")
    except (metadata.PackageNotFoundError, ValueError, AttributeError, OSError):
        return None
    return commit if isinstance(commit, str) and _SHA.fullmatch(commit) else None
