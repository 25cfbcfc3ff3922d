"""The PKG suite: the project builds a wheel that installs its connectors next to the kit.

The wheel is built once per project and run (``python -m pip wheel --no-deps``, from a copy of
the project so that build directories never land in it) and shared by the three checks: it
must build, declare every connector in the ``cdk.plugins`` entry point group, and depend on
``connect-cdk`` instead of bundling the kit's packages. Checks that run at the same time in
several processes (``cdk certify --jobs N``) share it too: the first builds it, under a file
lock, and the others read what it built.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from email.parser import HeaderParser
from pathlib import Path
from typing import Any

from cdk.api import Connector
from harness.certify._checks import CheckFailed, CheckNotVerified, check
from harness.certify._context import CheckContext
from harness.certify.suites.doc import _project_connectors

__all__: list[str] = []

ENTRY_POINT_GROUP = "cdk.plugins"
KIT_DISTRIBUTION = "connect-cdk"
KIT_PACKAGES = ("cdk", "harness")
#: How long a wheel build may take (an isolated build installs its build backend first).
BUILD_TIMEOUT_S = 600.0
#: Output lines of a failed build shown in the report.
TAIL_LINES = 40
#: What is not copied to the build directory.
_IGNORED = shutil.ignore_patterns(
    ".git",
    ".hg",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".hypothesis",
    "node_modules",
)


_ERROR_LINE = re.compile(r"^(error|[A-Za-z_.]*(Error|Exception))\b", re.IGNORECASE)
_PIP_SUMMARIES = (
    "error: failed to build",
    "error: failed building wheel",
    "error: could not build wheels",
    "error: subprocess-exited-with-error",
    "error: metadata-generation-failed",
)


@dataclass(frozen=True)
class WheelBuild:
    """The outcome of building the project's wheel."""

    wheel: Path | None
    returncode: int
    output: str
    seconds: float
    command: str

    @property
    def error(self) -> str:
        """The build output's most telling error line (pip's own summary lines skipped)."""
        lines = [line.strip() for line in self.output.splitlines() if line.strip()]
        for line in reversed(lines):
            if _ERROR_LINE.match(line) and not line.lower().startswith(_PIP_SUMMARIES):
                return line
        return lines[-1] if lines else "no output"

    def tail(self, lines: int = TAIL_LINES) -> str:
        """The last ``lines`` lines of the build output."""
        return "\n".join(self.output.splitlines()[-lines:])


#: Wheels built in this process, by (project directory, its files' fingerprint, run directory).
_BUILDS: dict[tuple[str, str, str], WheelBuild] = {}


# ---------------------------------------------------------------------------------------------
# PKG-01


@check(
    "PKG-01",
    "The wheel builds",
    needs=(),
    per_project=True,
    fix=(
        "Run ``python -m pip wheel --no-deps .`` in the project and fix the error it prints, "
        "usually the ``[build-system]`` table or a package the build does not find."
    ),
)
def wheel_builds(ctx: CheckContext) -> None:
    """``python -m pip wheel --no-deps`` builds one wheel of the project.

    The build runs on a copy of the project (build directories never land in it), with pip's
    usual build isolation. On failure the report shows the end of the build output. The wheel
    is kept for PKG-02 and PKG-03 within the run.
    """
    build = _build(ctx)
    ctx.evidence("command", build.command)
    ctx.evidence("exit code", build.returncode)
    ctx.evidence("build took (s)", round(build.seconds, 1))
    ctx.evidence("wheel", build.wheel.name if build.wheel is not None else None)
    if build.wheel is None:
        raise CheckFailed(
            "`pip wheel --no-deps` to build a wheel of the project",
            f"it exited with code {build.returncode} after {build.seconds:.1f}s: {build.error}",
            details=f"$ {build.command}\n{build.tail()}",
        )


# ---------------------------------------------------------------------------------------------
# PKG-02


@check(
    "PKG-02",
    "The wheel declares its connectors as cdk.plugins entry points",
    needs=(),
    per_project=True,
    fix=(
        'Declare each connector under ``[project.entry-points."cdk.plugins"]`` in '
        '``pyproject.toml`` (``MySource = "my_pkg:MySourceConnector"``) and make sure its '
        "package is in the wheel."
    ),
)
def entry_points_declared(ctx: CheckContext) -> None:
    """The wheel declares every connector of the project in the ``cdk.plugins`` group.

    The runtime finds plugins only through that group (no import scanning). Each connector a
    driver names must be the target of one of the wheel's ``cdk.plugins`` entry points, and the
    module of every such entry point must be in the wheel.
    """
    wheel = _wheel(ctx)
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        text = _dist_info_file(archive, "entry_points.txt")
    entries = _entry_points(text or "").get(ENTRY_POINT_GROUP, {})
    ctx.evidence("wheel", wheel.name)
    ctx.evidence(f"{ENTRY_POINT_GROUP} entry points", dict(entries))
    problems = []
    for cls in _project_connectors(ctx.project.drivers):
        if not any(_targets(value, cls) for value in entries.values()):
            problems.append(f"no entry point names {cls.__module__}.{cls.__qualname__}")
    for name, value in entries.items():
        module = value.split(":", 1)[0].strip()
        if not _shipped(module, names):
            problems.append(f"entry point {name} = {value} names module {module}, not in the wheel")
    if problems:
        declared = ", ".join(f"{k} = {v}" for k, v in entries.items()) or "none"
        raise CheckFailed(
            f"each connector declared under [project.entry-points.{ENTRY_POINT_GROUP!r}] "
            'in pyproject.toml, e.g. MySource = "my_package:MySourceConnector"',
            f"{'; '.join(problems)} (the wheel {wheel.name} declares: {declared})",
        )


def _targets(value: str, cls: type[Connector]) -> bool:
    """Whether the entry point ``module:attr`` names ``cls``."""
    module, _, attr = value.split("[", 1)[0].strip().partition(":")
    module, attr = module.strip(), attr.strip()
    if not attr:
        return False
    try:
        target: Any = importlib.import_module(module)
        for part in attr.split("."):
            target = getattr(target, part)
    except Exception:  # noqa: BLE001 - not importable here: compare the names instead
        return attr == cls.__qualname__ and (
            cls.__module__ == module or cls.__module__.startswith(module + ".")
        )
    return target is cls


def _shipped(module: str, names: list[str]) -> bool:
    path = module.replace(".", "/")
    prefixes = (f"{path}.", f"{path}/__init__.")
    return any(n.startswith(prefixes) or _in_data(n, prefixes) for n in names)


def _in_data(name: str, prefixes: tuple[str, ...]) -> bool:
    match = re.match(r"^[^/]+\.data/(?:purelib|platlib)/(.*)$", name)
    return match is not None and match.group(1).startswith(prefixes)


def _entry_points(text: str) -> dict[str, dict[str, str]]:
    groups: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = groups.setdefault(line[1:-1].strip(), {})
        elif current is not None and "=" in line:
            name, _, value = line.partition("=")
            current[name.strip()] = value.strip()
    return groups


# ---------------------------------------------------------------------------------------------
# PKG-03


@check(
    "PKG-03",
    "The wheel requires connect-cdk and does not bundle it",
    needs=(),
    per_project=True,
    fix=(
        "List ``connect-cdk`` in ``[project] dependencies`` (not in an extra) and include "
        "only your own packages in the wheel (``[tool.setuptools.packages.find] include``)."
    ),
)
def kit_not_bundled(ctx: CheckContext) -> None:
    """The wheel does not contain the kit's packages and requires ``connect-cdk``.

    A wheel holding its own ``cdk/`` or ``harness/`` would shadow (or be shadowed by) the
    installed kit. ``connect-cdk`` must be an unconditional requirement (``Requires-Dist``
    without an ``extra`` marker) so that installing the connector installs the kit.
    """
    wheel = _wheel(ctx)
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = _dist_info_file(archive, "METADATA") or ""
    problems = []
    bundled = sorted({_top_package(n) for n in names} & set(KIT_PACKAGES))
    if bundled:
        count = sum(1 for n in names if _top_package(n) in bundled)
        problems.append(f"it bundles the kit's packages {', '.join(bundled)}/ ({count} files)")
    requires = HeaderParser().parsestr(metadata).get_all("Requires-Dist") or []
    kit = [r for r in requires if _requirement_name(r) == KIT_DISTRIBUTION]
    if not kit:
        shown = ", ".join(requires) or "nothing"
        problems.append(f"it does not require {KIT_DISTRIBUTION} (Requires-Dist: {shown})")
    elif all(_conditional(r) for r in kit):
        problems.append(f"it requires {KIT_DISTRIBUTION} only with an extra: {'; '.join(kit)}")
    ctx.evidence("wheel", wheel.name)
    ctx.evidence("files", len(names))
    ctx.evidence(f"Requires-Dist {KIT_DISTRIBUTION}", kit)
    ctx.evidence("kit packages bundled", bundled)
    if problems:
        raise CheckFailed(
            f"a wheel without the kit's packages ({', '.join(KIT_PACKAGES)}) that requires "
            f"{KIT_DISTRIBUTION}",
            f"{wheel.name}: " + "; ".join(problems),
        )


def _top_package(name: str) -> str:
    match = re.match(r"^[^/]+\.data/(?:purelib|platlib)/(.*)$", name)
    path = match.group(1) if match else name
    return path.split("/", 1)[0] if "/" in path else ""


def _requirement_name(requirement: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    return re.sub(r"[-_.]+", "-", match.group(1)).lower() if match else ""


def _conditional(requirement: str) -> bool:
    _, _, marker = requirement.partition(";")
    return re.search(r"\bextra\b", marker) is not None


# ---------------------------------------------------------------------------------------------
# Building and reading the wheel


def _wheel(ctx: CheckContext) -> Path:
    build = _build(ctx)
    if build.wheel is None:
        raise CheckNotVerified(
            f"the wheel does not build (PKG-01 fails with why), so it cannot be inspected: "
            f"{build.error}"
        )
    return build.wheel


def _build(ctx: CheckContext) -> WheelBuild:
    """The project's wheel for this run, built on first use."""
    root = ctx.project.path
    if not (root / "pyproject.toml").is_file() and not (root / "setup.py").is_file():
        raise CheckFailed(
            "a pyproject.toml that builds the project's wheel",
            f"there is no pyproject.toml (nor setup.py) in {root}",
        )
    fingerprint = _fingerprint(root, exclude=ctx.workdir.parent)
    key = (str(root), fingerprint, str(ctx.workdir.parent))
    cached = _BUILDS.get(key)
    if cached is not None and (cached.wheel is None or cached.wheel.is_file()):
        return cached
    directory = ctx.workdir.parent / f"wheel-{fingerprint[:12]}"
    with _locked(directory.with_name(directory.name + ".lock")):
        build = _built(directory)  # by a check in another process of the run
        if build is None:
            shutil.rmtree(directory, ignore_errors=True)
            build = _build_wheel(root, directory, exclude=ctx.workdir.parent)
            record = {**asdict(build), "wheel": str(build.wheel) if build.wheel else None}
            (directory / _RECORD).write_text(json.dumps(record), encoding="utf-8")
    _BUILDS[key] = build
    return build


#: What a build left next to its wheel, for the checks in other processes of the run.
_RECORD = "build.json"


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (released when the process dies, whatever happens)."""
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _built(directory: Path) -> WheelBuild | None:
    """The build recorded in ``directory``, if its wheel (when it built one) is still there."""
    try:
        record = json.loads((directory / _RECORD).read_text(encoding="utf-8"))
        wheel = Path(record["wheel"]) if record["wheel"] else None
        build = WheelBuild(
            wheel, record["returncode"], record["output"], record["seconds"], record["command"]
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return build if wheel is None or wheel.is_file() else None


def _build_wheel(root: Path, directory: Path, *, exclude: Path) -> WheelBuild:
    """Build the wheel of a copy of ``root`` in ``directory`` (``exclude`` is not copied)."""
    source = directory / "src" / root.name
    out = directory / "wheels"
    out.mkdir(parents=True)
    excluded = exclude.resolve()

    def ignore(path: str, names: list[str]) -> set[str]:
        skipped = set(_IGNORED(path, names))
        skipped.update(n for n in names if Path(path, n).resolve() == excluded)
        return skipped

    shutil.copytree(root, source, ignore=ignore, symlinks=True)
    command = [
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "--disable-pip-version-check",
        "--no-input",
        "-w",
        str(out),
        str(source),
    ]
    env = {**os.environ, "PIP_NO_INPUT": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    start = time.monotonic()
    try:
        done = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            env=env,
            timeout=BUILD_TIMEOUT_S,
            check=False,
        )
        returncode, output = done.returncode, done.stdout + done.stderr
    except subprocess.TimeoutExpired as exc:
        returncode = -1
        output = _text(exc.stdout) + _text(exc.stderr) + f"\ntimed out after {BUILD_TIMEOUT_S:g}s"
    seconds = time.monotonic() - start
    wheels = sorted(out.glob("*.whl"))
    wheel = wheels[0] if returncode == 0 and len(wheels) == 1 else None
    if returncode == 0 and len(wheels) != 1:
        output += f"\npip built {len(wheels)} wheels, expected one: {[w.name for w in wheels]}"
        returncode = returncode or 1
    return WheelBuild(wheel, returncode, output, seconds, " ".join(command))


def _text(data: str | bytes | None) -> str:
    if data is None:
        return ""
    return data if isinstance(data, str) else data.decode("utf-8", errors="replace")


def _fingerprint(root: Path, *, exclude: Path) -> str:
    """A hash of the project's file names, sizes and modification times (build dirs ignored)."""
    digest = hashlib.sha256()
    excluded = exclude.resolve()
    for directory, subdirs, files in os.walk(root):
        ignored = set(_IGNORED(directory, subdirs + files))
        subdirs[:] = sorted(
            d for d in subdirs if d not in ignored and Path(directory, d).resolve() != excluded
        )
        for name in sorted(f for f in files if f not in ignored):
            path = Path(directory, name)
            try:
                stat = path.stat()
            except OSError:
                continue
            digest.update(f"{path.relative_to(root)}|{stat.st_size}|{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def _dist_info_file(archive: zipfile.ZipFile, name: str) -> str | None:
    for entry in archive.namelist():
        parts = entry.split("/")
        if len(parts) == 2 and parts[0].endswith(".dist-info") and parts[1] == name:
            return archive.read(entry).decode("utf-8", errors="replace")
    return None
