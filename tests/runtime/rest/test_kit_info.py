"""The kit's commit for ``GET /``: read from git's files, checked against the real git CLI."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from cdk.runtime.rest._kit_info import COMMIT_LENGTH, UNKNOWN, git_commit, kit_commit

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git CLI")


def git(cwd: Path, *args: str) -> str:
    result = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "a.txt").write_text("a\n")
    git(root, "add", "a.txt")
    git(root, "commit", "-q", "-m", "first")
    return root


def test_reads_head_through_loose_and_packed_refs(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    assert git_commit(repo) == head
    git(repo, "pack-refs", "--all")  # the branch now lives in packed-refs only
    assert not (repo / ".git" / "refs" / "heads" / "main").exists()
    assert git_commit(repo) == head
    (repo / "b.txt").write_text("b\n")
    git(repo, "add", "b.txt")
    git(repo, "commit", "-q", "-m", "second")  # a loose ref again, newer than packed-refs
    assert git_commit(repo) == git(repo, "rev-parse", "HEAD") != head


def test_detached_head_and_worktrees(repo: Path, tmp_path: Path) -> None:
    first = git(repo, "rev-parse", "HEAD")
    (repo / "b.txt").write_text("b\n")
    git(repo, "add", "b.txt")
    git(repo, "commit", "-q", "-m", "second")
    worktree = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "other", str(worktree), first)
    assert (worktree / ".git").is_file()  # "gitdir: ..." pointing into the main repository
    assert git_commit(worktree) == first
    assert git_commit(repo) == git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "--detach", first)
    assert git_commit(repo) == first


def test_not_a_checkout(tmp_path: Path) -> None:
    assert git_commit(tmp_path) is None
    (tmp_path / ".git").write_text("gitdir: /does/not/exist\n")
    assert git_commit(tmp_path) is None


def test_the_kit_reports_sixteen_hex_digits_or_unknown() -> None:
    commit = kit_commit()
    assert commit == UNKNOWN or (
        len(commit) == COMMIT_LENGTH and all(c in "0123456789abcdef" for c in commit)
    )
    assert kit_commit() is commit  # computed once
