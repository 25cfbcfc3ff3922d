"""``plugin.path``: connector distributions outside the worker's environment, and their checks.

Each ``plugin.path`` entry is a directory holding connector distributions, as Kafka's holds
plugin directories and jars:

* an *installed tree* (what ``pip install --target DIR pkg`` makes): a directory with
  ``*.dist-info`` folders, either the entry itself or one of its sub-directories;
* a *wheel* (``*.whl``): unpacked once into a cache folder named after its content's hash (so a
  replaced wheel is unpacked again), and used from there.

The import roots found are appended to ``sys.path`` before plugins are discovered, so their
``cdk.plugins`` entry points register as those of installed distributions do.

Isolation: all plugins run in the worker's one Python interpreter and share its modules: unlike
Kafka's class loaders, two plugins cannot use two versions of one library. What the kit gives
instead is :func:`check_requirements`: at start, every plugin distribution's declared
requirements (and the kit's own) are checked against the versions importable; a conflict
refuses the worker with one line naming both plugins and the requirement.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import sys
import tempfile
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from cdk.errors import ConfigException

__all__ = [
    "PLUGIN_PATH_CONFIG",
    "PluginDistribution",
    "check_requirements",
    "install_plugin_path",
    "plugin_distributions",
    "plugin_path_roots",
]

log = logging.getLogger("cdk.runtime.plugins")

PLUGIN_PATH_CONFIG = "plugin.path"
_KIT = "connect-cdk"
#: the import roots plugin.path added to sys.path, with the entry each came from
_ROOTS: dict[str, str] = {}


def _entries(value: object) -> list[str]:
    if value is None:
        return []
    items = value if isinstance(value, (list, tuple)) else str(value).split(",")
    return [str(x).strip() for x in items if str(x).strip()]


def _has_dist_info(directory: Path) -> bool:
    return any(child.suffix == ".dist-info" and child.is_dir() for child in directory.iterdir())


def _unpacked(wheel: Path) -> Path:
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()[:16]
    cache = Path(tempfile.gettempdir()) / f"cdk-plugin-path-{os.getuid()}"
    target = cache / f"{wheel.stem}-{digest}"
    if target.is_dir():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{wheel.stem}-", dir=cache))
    try:
        with zipfile.ZipFile(wheel) as archive:
            for member in archive.namelist():  # a wheel never writes outside its root
                if member.startswith("/") or ".." in Path(member).parts:
                    raise ConfigException(
                        PLUGIN_PATH_CONFIG, str(wheel), f"the wheel has an unsafe path {member!r}"
                    )
            archive.extractall(staging)
    except zipfile.BadZipFile as exc:
        raise ConfigException(PLUGIN_PATH_CONFIG, str(wheel), f"not a wheel: {exc}") from exc
    try:
        staging.rename(target)
    except OSError:  # another process unpacked it meanwhile
        if not target.is_dir():
            raise
    return target


def plugin_path_roots(value: object) -> list[tuple[str, Path]]:
    """The import roots of ``plugin.path`` entries, as ``(entry, root)``.

    Raises:
        ConfigException: an entry is not a directory, or holds no distribution; names it.
    """
    roots: list[tuple[str, Path]] = []
    for entry in _entries(value):
        directory = Path(entry).expanduser()
        if not directory.is_dir():
            raise ConfigException(PLUGIN_PATH_CONFIG, entry, "not a directory")
        found: list[Path] = []
        if _has_dist_info(directory):
            found.append(directory)
        for child in sorted(directory.iterdir()):
            if child.is_dir() and not child.name.endswith(".dist-info") and _has_dist_info(child):
                found.append(child)
            elif child.is_file() and child.suffix == ".whl":
                found.append(_unpacked(child))
        if not found:
            raise ConfigException(
                PLUGIN_PATH_CONFIG,
                entry,
                "holds no connector distribution (wheels, or installed trees with *.dist-info "
                "folders such as `pip install --target` makes)",
            )
        roots += [(entry, root) for root in found]
    return roots


def install_plugin_path(value: object) -> list[Path]:
    """Append the import roots of ``plugin.path`` to ``sys.path`` (once each); return them.

    Raises:
        ConfigException: an entry is not a directory, or holds no distribution; names it.
    """
    added: list[Path] = []
    for entry, root in plugin_path_roots(value):
        text = str(root)
        if text not in sys.path:
            sys.path.append(text)
            log.info("plugin.path: %s adds %s", entry, text)
        _ROOTS.setdefault(text, entry)
        added.append(root)
    return added


@dataclass(frozen=True)
class PluginDistribution:
    """A distribution that registers plugins, and where it was found."""

    name: str
    version: str
    requires: tuple[str, ...]
    location: str

    def __str__(self) -> str:
        return f"{self.name} {self.version}"

    @property
    def source(self) -> str:
        """Where its plugins come from, without spaces.

        ``name==version`` when installed in the worker's environment, else
        ``name==version@plugin.path:<entry>``.
        """
        pinned = f"{self.name}=={self.version}"
        return f"{pinned}@{self.location}" if self.location.startswith("plugin.path:") else pinned


def _location(dist: metadata.Distribution) -> str:
    try:
        base = Path(str(dist.locate_file(""))).resolve()
    except Exception:  # noqa: BLE001 - a distribution without files: say so
        return "unknown location"
    for root, entry in _ROOTS.items():
        if base == Path(root).resolve():
            return f"plugin.path:{entry}"
    return f"installed:{base}"


#: What :func:`_distribution` read, by the distribution's metadata directory and the plugin
#: path roots then installed (they decide its location): every worker a process starts
#: discovers the plugins again, and reading a distribution's metadata means parsing its
#: METADATA file (a fifth of the CPU of a ``cdk certify`` run went there before).
_READ: dict[tuple[str, tuple[tuple[str, str], ...]], PluginDistribution] = {}


def _distribution(dist: metadata.Distribution) -> PluginDistribution:
    path = getattr(dist, "_path", None)  # a PathDistribution's metadata directory
    if path is None:
        return _read_distribution(dist)
    key = (str(path), tuple(_ROOTS.items()))
    found = _READ.get(key)
    if found is None:
        found = _READ[key] = _read_distribution(dist)
    return found


def _read_distribution(dist: metadata.Distribution) -> PluginDistribution:
    return PluginDistribution(
        dist.metadata["Name"] or "unknown",
        dist.version,
        tuple(dist.requires or ()),
        _location(dist),
    )


def distribution_of_entry_point(entry_point: metadata.EntryPoint) -> PluginDistribution | None:
    """The distribution an entry point comes from (``None`` when unknown)."""
    dist = getattr(entry_point, "dist", None)
    return None if dist is None else _distribution(dist)


def plugin_distributions(group: str) -> list[PluginDistribution]:
    """Every distribution with entry points in ``group``, first found first, and the kit."""
    found: dict[str, PluginDistribution] = {}
    for entry_point in metadata.entry_points(group=group):
        dist = distribution_of_entry_point(entry_point)
        if dist is not None:
            found.setdefault(_normal(dist.name), dist)
    with contextlib.suppress(metadata.PackageNotFoundError):  # running from a source tree
        found.setdefault(_normal(_KIT), _distribution(metadata.distribution(_KIT)))
    return list(found.values())


def _normal(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def check_requirements(distributions: Iterable[PluginDistribution]) -> None:
    """Refuse plugins whose declared requirements the importable versions do not satisfy.

    Each requirement (markers evaluated for this interpreter, extras left out) is checked
    against the version ``importlib.metadata`` finds first on ``sys.path``, the one imports get.

    Raises:
        ConfigException: one line naming the plugin, the requirement and what is installed,
            and the other plugin (or the kit) that needs the installed version when one does.
    """
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.version import InvalidVersion, Version

    dists = list(distributions)
    wanted: list[tuple[PluginDistribution, Requirement]] = []
    for dist in dists:
        for text in dist.requires:
            try:
                requirement = Requirement(text)
            except InvalidRequirement:
                log.warning("Plugin %s declares an invalid requirement %r", dist, text)
                continue
            if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
                continue
            wanted.append((dist, requirement))
    for dist, requirement in wanted:
        try:
            installed = metadata.version(requirement.name)
        except metadata.PackageNotFoundError:
            raise ConfigException(
                f"Plugin {dist} ({dist.location}) requires {requirement}, which is not "
                "installed: install it in the worker's environment or beside the plugin in "
                "plugin.path"
            ) from None
        try:
            ok = requirement.specifier.contains(Version(installed), prereleases=True)
        except InvalidVersion:
            continue
        if ok:
            continue
        others = [
            other
            for other, r in wanted
            if other is not dist
            and _normal(r.name) == _normal(requirement.name)
            and r.specifier.contains(Version(installed), prereleases=True)
        ]
        # the plugins first, the kit last: the line names the plugin that wins the version
        others.sort(key=lambda other: _normal(other.name) == _normal(_KIT))
        holder = "".join(
            f"; {other} ({other.location}) requires {_requirement_of(other, requirement.name)}"
            for other in dict.fromkeys(others)
        )
        raise ConfigException(
            f"Plugin conflict: {dist} ({dist.location}) requires {requirement} but "
            f"{requirement.name} {installed} is installed{holder}. Plugins share the worker's "
            "Python environment: run them on separate workers, or align their requirements"
        )


def _requirement_of(dist: PluginDistribution, name: str) -> str:
    from packaging.requirements import Requirement

    for text in dist.requires:
        requirement = Requirement(text)
        if _normal(requirement.name) == _normal(name):
            return str(requirement)
    return name
