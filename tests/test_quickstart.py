"""The FileStream quickstart (`make quickstart`) works end to end."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_quickstart_copies_the_file_through_kafka_and_resumes(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "harness.quickstart", "--lines", "200", "--workdir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "output.txt == input.txt (310 lines, none lost, none duplicated)" in result.stdout
    assert "local-file-source: RUNNING (task 0 RUNNING)" in result.stdout
    lines = (tmp_path / "output.txt").read_text().splitlines()
    assert lines == (tmp_path / "input.txt").read_text().splitlines()
