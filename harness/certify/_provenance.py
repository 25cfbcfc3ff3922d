"""Provenance: what was certified, from which source, with which tools.

:func:`provenance` gathers, when the bundle is written: the project's name and version; its
source (the git commit, whether the work tree had uncommitted changes, the branch and the
remote without credentials; or why there is none); the wheel PKG-01 built during the run and
its SHA-256 (the wheel is built once, from a copy of the same project tree the checks ran,
and copied into the bundle); the kit, Python, operating system and broker. Every part that
cannot be known says why instead of being left out.
"""

from __future__ import annotations

import platform
import shutil
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from harness.certify._checks import Outcome
from harness.certify._manifest import sha256_file
from harness.certify._runner import CertificationRun

__all__ = ["built_wheel", "git_state", "provenance"]

#: The check that builds the project's wheel (PKG-02 and PKG-03 inspect the same file).
WHEEL_CHECK = "PKG-01"
#: How long one git command may take.
GIT_TIMEOUT_S = 20.0

WHEEL_RELATION = (
    "The checks ran the connector from the project's source tree (its import roots); "
    f"{WHEEL_CHECK} built this wheel during the same run from a copy of that tree, and the "
    "PKG checks inspected this file. With a clean git tree, the commit names both."
)


def provenance(
    run: CertificationRun,
    *,
    wheel: Path | None = None,
    wheel_note: str = "",
    exclude: Path | None = None,
    source: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The provenance of ``run`` as JSON-ready data (``summary.json`` ``provenance``).

    Args:
        run: the finished run.
        wheel: the wheel PKG-01 built (see :func:`built_wheel`), or None.
        wheel_note: why there is no wheel, when ``wheel`` is None.
        exclude: a directory whose files do not make the tree dirty (the report directory).
        source: :func:`git_state` taken before the run started (``cdk certify`` does): it is
            what the provenance reports, and a tree that differs now is flagged. Without it,
            the state is read now.
    """
    env = run.environment
    now = git_state(run.project.path, exclude=exclude)
    if source is None:
        source = now
    elif _differs(source, now):
        source = {
            **source,
            "changed_during_run": True,
            "note": "the work tree changed during the run (its state at the start is shown; "
            f"now: commit {now.get('commit')}, {now.get('changed_files')} changed file(s))",
        }
    data: dict[str, Any] = {
        "project": {"name": run.project.name, "version": run.project.version},
        "source": source,
        "wheel": _wheel(wheel, wheel_note),
        "kit": {"name": "connect-cdk", "version": env.get("connect-cdk") or _kit_version()},
        "python": {
            "implementation": platform.python_implementation(),
            "version": platform.python_version(),
        },
        "os": {
            "system": platform.system(),
            "release": platform.release(),
            "machine": platform.machine(),
            "platform": platform.platform(),
        },
        "broker": _broker(run),
    }
    return data


def _differs(before: dict[str, Any], now: dict[str, Any]) -> bool:
    keys = ("commit", "dirty", "changed_files")
    return any(before.get(k) != now.get(k) for k in keys)


def _kit_version() -> str:
    import cdk

    return cdk.__version__


def _wheel(wheel: Path | None, note: str) -> dict[str, Any]:
    if wheel is None:
        return {"file": None, "sha256": None, "note": note or "no wheel was built"}
    return {
        "file": wheel.name,
        "sha256": sha256_file(wheel),
        "bytes": wheel.stat().st_size,
        "built_by": WHEEL_CHECK,
        "relation": WHEEL_RELATION,
    }


def _broker(run: CertificationRun) -> dict[str, Any]:
    kind = run.environment.get("kafka") or run.kafka
    described = run.environment.get("broker")
    if described:
        name, _, version = described.partition(" ")
        if kind in ("embedded", "embedded-tls"):
            version, _, how = version.partition(" ")
            found = {"kind": kind, "name": name, "version": version or "unknown"}
            return found | ({"note": how} if how else {})
        return {"kind": kind, "name": described, "version": "unknown"}
    if kind in ("embedded", "embedded-tls", "testcontainers"):
        return {"kind": kind, "name": None, "version": None, "note": "no check needed Kafka"}
    return {
        "kind": "external",
        "bootstrap_servers": run.kafka,
        "name": None,
        "version": None,
        "note": "a cluster the user runs: the Kafka protocol does not report its version",
    }


def built_wheel(run: CertificationRun, workdir: Path | None) -> tuple[Path | None, str]:
    """The wheel PKG-01 built in ``workdir`` (the run's working directory), or why there is none.

    Returns:
        ``(wheel, "")`` or ``(None, reason)``.
    """
    results = [r for r in run.results if r.id == WHEEL_CHECK]
    if not results:
        return None, f"{WHEEL_CHECK} did not run (not selected), so no wheel was built"
    result = results[0]
    if result.outcome is not Outcome.PASSED:
        return None, f"{WHEEL_CHECK} {result.outcome}: {result.message}".strip()
    if workdir is None:
        return None, f"{WHEEL_CHECK} built a wheel, but the run's working directory was not kept"
    # PKG-01 builds into <workdir>/wheel-<fingerprint>/wheels/ (a new one if the tree changes)
    wheels = sorted(workdir.glob("wheel-*/wheels/*.whl"), key=lambda p: p.stat().st_mtime)
    recorded = (getattr(result, "evidence", None) or {}).get("wheel")
    if isinstance(recorded, str):  # the file PKG-01 says it built
        wheels = [w for w in wheels if w.name == recorded]
    if not wheels:
        return None, f"{WHEEL_CHECK} passed, but its wheel is not in {workdir}"
    return wheels[-1], ""


def git_state(path: Path, *, exclude: Path | None = None) -> dict[str, Any]:
    """The git commit of ``path``, whether its tree is dirty, its branch and remote.

    Uncommitted changes under ``path`` count (files under ``exclude`` do not); a project that
    is not in a git work tree, or a machine without git, says so in ``note``.
    """
    git = shutil.which("git")
    if git is None:
        return {"vcs": None, "commit": None, "dirty": None, "note": "git is not installed"}
    top = _git(git, path, "rev-parse", "--show-toplevel")
    if top is None:
        return {
            "vcs": None,
            "commit": None,
            "dirty": None,
            "note": f"the project is not in a git work tree ({path.name})",
        }
    commit = _git(git, path, "rev-parse", "HEAD")
    if commit and _git(git, path, "ls-files", "--error-unmatch", "--", "pyproject.toml") is None:
        # a project generated inside another checkout (build/, a scratch directory): that
        # repository's commit does not name the project's files, so it is no provenance
        ignored = _git(git, path, "check-ignore", "--", "pyproject.toml") is not None
        return {
            "vcs": None,
            "commit": None,
            "dirty": None,
            "note": (
                f"the project's pyproject.toml is not tracked by the git work tree around it "
                f"({top}{', which ignores it' if ignored else ''}): no commit names the project"
            ),
        }
    status = _git(git, path, "status", "--porcelain", "--untracked-files=normal", "--", ".")
    changed = [line[3:] for line in (status or "").splitlines() if len(line) > 3]
    if exclude is not None:
        try:
            skipped = exclude.resolve().relative_to(Path(top).resolve()).as_posix() + "/"
        except ValueError:
            skipped = ""
        if skipped:
            changed = [c for c in changed if not c.strip('"').startswith(skipped)]
    branch = _git(git, path, "rev-parse", "--abbrev-ref", "HEAD")
    remote = _git(git, path, "config", "--get", "remote.origin.url")
    return {
        "vcs": "git",
        "commit": commit,
        "dirty": bool(changed) if status is not None else None,
        "changed_files": len(changed),
        "branch": None if branch in (None, "HEAD") else branch,
        "remote": _without_credentials(remote) if remote else None,
        **({} if commit else {"note": "the repository has no commit yet"}),
    }


def _git(git: str, path: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            [git, "-C", str(path), *args],
            capture_output=True,
            text=True,
            errors="replace",
            stdin=subprocess.DEVNULL,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _without_credentials(url: str) -> str:
    """``url`` without a user or token (``https://user:token@host/x`` → ``https://host/x``)."""
    if "://" not in url:
        return url  # a path or scp-style git@host:repo (no secret in it)
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(
        (parts.scheme, parts.netloc.rsplit("@", 1)[1], parts.path, parts.query, parts.fragment)
    )
