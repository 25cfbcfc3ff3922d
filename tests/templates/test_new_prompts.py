"""``cdk new`` asks its questions in a terminal (a pseudo-terminal, driven with pexpect)."""

from __future__ import annotations

from pathlib import Path

import pexpect

from tests.templates._support import CDK, toml


def test_prompts_in_a_terminal(tmp_path: Path) -> None:
    child = pexpect.spawn(
        str(CDK),
        ["new", "--output-dir", str(tmp_path)],
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 200),
    )
    try:
        child.expect("Connector project name")
        child.sendline("acme-crm")
        child.expect("Python package name")
        child.sendline("")  # the derived default, acme_crm
        child.expect("Which connectors to generate")
        child.expect("Choose from")
        child.sendline("2")  # source
        child.expect("Author")
        child.sendline("Acme Inc.")
        child.expect("One-line description")
        child.sendline("")
        child.expect("License")
        child.expect("Choose from")
        child.sendline("2")  # MIT
        child.expect("GitHub Actions workflow")
        child.sendline("n")
        child.expect("Created ")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0, child.before
    project = tmp_path / "acme-crm"
    meta = toml(project / "pyproject.toml")
    assert meta["project"]["license"] == "MIT"
    assert meta["project"]["authors"] == [{"name": "Acme Inc."}]
    assert (project / "src/acme_crm/_source.py").exists()
    assert not (project / "src/acme_crm/_sink.py").exists()
    assert not (project / ".github").exists()
