"""A connector project as the harness sees it: its ``[tool.cdk]`` table and its drivers.

``pyproject.toml`` of a connector project::

    [tool.cdk]
    drivers = ["my_connector.certify:MySourceDriver"]   # required
    paths = ["src"]                                      # import roots (default: src/ and .)

    [tool.cdk.certify]
    skip = { "PRF-02" = "latency is not meaningful for a batch source" }
    waive = { "RBL-03" = "tables are created by migrations that restart the connector" }

    [tool.cdk.certify.thresholds]
    "source.throughput" = 1000      # records/s; a PRF check fails below it
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cdk.errors import ConfigException
from harness._driver import ConnectorDriver, SinkDriver, SourceDriver

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["Project"]

_EXAMPLE = (
    "Add to pyproject.toml:\n\n    [tool.cdk]\n"
    '    drivers = ["my_connector.certify:MySourceDriver"]\n\n'
    "(see docs/guide/certify.rst for the driver contract)"
)


@dataclass
class Project:
    """A connector project: where it is, its metadata and its certification settings.

    Attributes:
        path: the project directory (holding ``pyproject.toml``).
        name: ``[project].name`` (or the directory name).
        version: ``[project].version`` (or ``"unknown"``).
        drivers: the driver classes, in the order declared.
        skip: check ids (or suites) to skip, with the reason (the run is then INCOMPLETE).
        waive: check ids the project accepts unverified, with the written reason the reports
            show next to the check (a waiver never excuses a check that ran and failed).
        thresholds: PRF thresholds by metric name.
        import_roots: the directories put on ``sys.path`` to import the drivers.
    """

    path: Path
    name: str
    version: str
    drivers: list[type[ConnectorDriver]]
    skip: dict[str, str] = field(default_factory=dict)
    waive: dict[str, str] = field(default_factory=dict)
    thresholds: dict[str, float] = field(default_factory=dict)
    import_roots: list[Path] = field(default_factory=list)
    pyproject: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, path: str | Path) -> Project:
        """Read the project at ``path`` and import its drivers.

        Raises:
            ConfigException: no ``pyproject.toml``, no ``[tool.cdk]`` table, or a driver that
                cannot be imported or is not a SourceDriver/SinkDriver (the message says which).
        """
        root = Path(path).resolve()
        if root.is_file() and root.name == "pyproject.toml":
            root = root.parent
        pyproject_file = root / "pyproject.toml"
        if not pyproject_file.is_file():
            raise ConfigException(f"No pyproject.toml in {root}. {_EXAMPLE}")
        try:
            data = tomllib.loads(pyproject_file.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigException(f"{pyproject_file} is not valid TOML: {exc}") from None
        tool = data.get("tool", {}).get("cdk")
        if not isinstance(tool, Mapping):
            raise ConfigException(f"{pyproject_file} has no [tool.cdk] table. {_EXAMPLE}")
        driver_names = tool.get("drivers")
        if (
            not isinstance(driver_names, list)
            or not driver_names
            or not all(isinstance(d, str) for d in driver_names)
        ):
            raise ConfigException(
                f"[tool.cdk] drivers in {pyproject_file} must be a non-empty list of "
                f"'package.module:DriverClass' strings, not {driver_names!r}"
            )
        roots = _import_roots(root, tool.get("paths"), pyproject_file)
        for entry in reversed(roots):
            if str(entry) not in sys.path:
                sys.path.insert(0, str(entry))
        certify = tool.get("certify", {})
        if not isinstance(certify, Mapping):
            raise ConfigException(f"[tool.cdk.certify] in {pyproject_file} must be a table")
        project_meta = data.get("project", {})
        return cls(
            path=root,
            name=str(project_meta.get("name") or root.name),
            version=str(project_meta.get("version") or "unknown"),
            drivers=[_load_driver(name, pyproject_file) for name in driver_names],
            skip=_skips(certify.get("skip", {}), pyproject_file),
            waive=_waivers(certify.get("waive", {}), pyproject_file),
            thresholds=_thresholds(certify.get("thresholds", {}), pyproject_file),
            import_roots=roots,
            pyproject=data,
        )

    def file(self, *names: str) -> Path | None:
        """The first of ``names`` that exists in the project directory (any case), or None."""
        by_lower = {p.name.lower(): p for p in self.path.iterdir() if p.is_file()}
        for name in names:
            found = by_lower.get(name.lower())
            if found is not None:
                return found
        return None


def _import_roots(root: Path, paths: Any, pyproject_file: Path) -> list[Path]:
    if paths is None:
        return [p for p in (root / "src", root) if p.is_dir()]
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise ConfigException(f"[tool.cdk] paths in {pyproject_file} must be a list of strings")
    return [(root / p).resolve() for p in paths]


def _load_driver(name: str, pyproject_file: Path) -> type[ConnectorDriver]:
    module_name, sep, qualname = name.partition(":")
    if not sep or not module_name or not qualname:
        raise ConfigException(
            f"Driver {name!r} in {pyproject_file} is not 'package.module:DriverClass'"
        )
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigException(
            f"Cannot import driver module {module_name!r} named in {pyproject_file}: {exc}"
        ) from exc
    for part in qualname.split("."):
        target = getattr(target, part, None)
        if target is None:
            raise ConfigException(f"Module {module_name!r} has no driver class {qualname!r}")
    if not isinstance(target, type) or not issubclass(target, (SourceDriver, SinkDriver)):
        raise ConfigException(
            f"Driver {name} is not a subclass of harness.SourceDriver or harness.SinkDriver"
        )
    if not hasattr(target, "connector"):
        raise ConfigException(f"Driver {name} does not set its `connector` class attribute")
    _check_declarations(target, name)
    return target


def _check_declarations(driver: type[ConnectorDriver], name: str) -> None:
    """The driver's declarations have the form the contract gives them (a clear error if not)."""
    flags = ["external_system"]
    if issubclass(driver, SourceDriver):
        flags.append("detects_new_streams")
        streams = inspect.getattr_static(driver, "streams", 1)
        if not isinstance(streams, property) and (
            isinstance(streams, bool) or not isinstance(streams, int) or streams < 1
        ):
            raise ConfigException(
                f"Driver {name}: streams must be a positive int (a class attribute "
                f"`streams = 4`, or a property returning one), not {streams!r}"
            )
    else:
        flags.append("accepts_any_schema")
        unstored = getattr(driver, "unstored_fields", {})
        if not isinstance(unstored, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in unstored.items()
        ):
            raise ConfigException(
                f"Driver {name}: unstored_fields must map field names to the reason the sink "
                f'does not store them, e.g. {{"score": "the table has no column for it"}}, '
                f"not {unstored!r}"
            )
    for flag in flags:
        value = getattr(driver, flag, None)
        if not isinstance(value, bool):
            raise ConfigException(
                f"Driver {name}: {flag} must be a class attribute True or False, not {value!r}"
            )


def _skips(raw: Any, pyproject_file: Path) -> dict[str, str]:
    if not isinstance(raw, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in raw.items()
    ):
        raise ConfigException(
            f"[tool.cdk.certify] skip in {pyproject_file} must map check ids to non-empty "
            'reasons, e.g. skip = { "PRF-02" = "why" }'
        )
    return {k.strip().upper(): v.strip() for k, v in raw.items()}


def _waivers(raw: Any, pyproject_file: Path) -> dict[str, str]:
    example = 'e.g. waive = { "RBL-03" = "why the check cannot be verified for this connector" }'
    if not isinstance(raw, Mapping):
        raise ConfigException(
            f"[tool.cdk.certify] waive in {pyproject_file} must map check ids to written "
            f"reasons, {example}"
        )
    from harness.certify._discovery import all_checks

    known = {c.id for c in all_checks()}
    out: dict[str, str] = {}
    for key, reason in raw.items():
        check_id = str(key).strip().upper()
        if check_id not in known:
            suites = sorted({c.split("-", 1)[0] for c in known})
            hint = (
                f"waivers name single checks, not a suite: list the {check_id}-NN ids you mean"
                if check_id in suites
                else "`cdk certify --list` shows the ids"
            )
            raise ConfigException(
                f"[tool.cdk.certify] waive in {pyproject_file} names {key!r}, which is not a "
                f"check id ({hint})"
            )
        if not isinstance(reason, str) or not reason.strip():
            raise ConfigException(
                f"[tool.cdk.certify] waive in {pyproject_file}: {check_id} needs a written "
                f"reason (a non-empty string, shown next to the check in the report), {example}"
            )
        out[check_id] = reason.strip()
    return out


def _thresholds(raw: Any, pyproject_file: Path) -> dict[str, float]:
    if not isinstance(raw, Mapping):
        raise ConfigException(f"[tool.cdk.certify.thresholds] in {pyproject_file} is a table")
    out: dict[str, float] = {}
    for key, value in raw.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigException(
                f"Threshold {key!r} in {pyproject_file} must be a number, not {value!r}"
            )
        out[str(key)] = float(value)
    return out
