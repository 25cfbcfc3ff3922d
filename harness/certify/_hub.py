"""The Connector Hub details of the submission: ``manifest.json``, built from the project.

Confluent Hub describes a component with a ``manifest.json`` (name, version, title, description,
owner, tags, component types, features such as the supported encodings and transforms support,
license, source and binary links). :func:`hub_manifest` builds the same document from what the
project already states, and never invents a value:

- ``[project]`` of ``pyproject.toml``: ``name``, ``version``, ``description``, ``keywords``
  (the tags), ``license``, ``authors`` (the owner's name) and ``[project.urls]``
  (``Source``/``Repository``, ``Download``, ``Documentation``, ``Homepage``);
- the connector classes the drivers name: the component types (``source``, ``sink``) and each
  connector's class, one-line description and (for the default ``version()``, read without
  creating a connector) version;
- ``[tool.cdk.hub]`` for what only the Hub asks: ``title``, ``owner`` (``username``, ``name``,
  ``type``, ``url``, ``logo``), ``tags``, ``supported_encodings``, ``source_url``,
  ``binary_url``, ``documentation_url``, ``logo``, ``support`` (each overrides the value found
  in ``[project]``).

Whatever is still unknown is left out of the manifest and named in ``missing``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cdk.api import Connector
from cdk.api._versioned import package_version
from harness._driver import SourceDriver
from harness.certify._project import Project

__all__ = ["HUB_TABLE", "HubManifest", "hub_manifest"]

HUB_TABLE = "[tool.cdk.hub]"

#: What a Hub listing needs, with where to state it when the project does not.
REQUIRED: dict[str, str] = {
    "title": f"{HUB_TABLE} title",
    "description": "[project] description",
    "owner.username": f"{HUB_TABLE} owner = {{ username = ... }}",
    "owner.name": "[project] authors, or owner.name in " + HUB_TABLE,
    "tags": "[project] keywords, or tags in " + HUB_TABLE,
    "features.supported_encodings": f'{HUB_TABLE} supported_encodings (e.g. ["any"])',
    "license": "[project] license",
    "source_url": '[project.urls] Source (or "Repository"), or source_url in ' + HUB_TABLE,
    "binary_url": "[project.urls] Download, or binary_url in " + HUB_TABLE,
}

_SOURCE_KEYS = ("source", "source code", "repository", "code", "github", "gitlab")
_BINARY_KEYS = ("download", "binary", "package", "pypi", "release", "releases")
_DOCS_KEYS = ("documentation", "docs")
_HOME_KEYS = ("homepage", "home", "home-page", "website")


@dataclass
class HubManifest:
    """The manifest and the items a Hub listing needs that the project does not state.

    Attributes:
        data: the ``manifest.json`` document.
        missing: ``field: where to state it`` for every required item not found.
    """

    data: dict[str, Any]
    missing: list[str] = field(default_factory=list)


def hub_manifest(project: Project, *, source_remote: str | None = None) -> HubManifest:
    """The Connector Hub manifest of ``project``.

    Args:
        project: the loaded project (its ``pyproject.toml`` and drivers).
        source_remote: the git remote of the project (an ``https`` one serves as the source
            link when the project states none).
    """
    meta = _table(project.pyproject.get("project"))
    hub = _table(_table(project.pyproject.get("tool")).get("cdk"))
    hub = _table(hub.get("hub"))
    urls = {str(k).lower(): str(v) for k, v in _table(meta.get("urls")).items()}
    data: dict[str, Any] = {"name": project.name, "version": project.version}
    _put(data, "title", _text(hub.get("title")))
    _put(data, "description", _text(hub.get("description")) or _text(meta.get("description")))
    owner = _owner(hub.get("owner"), meta.get("authors"))
    if owner:
        data["owner"] = owner
    _put(data, "tags", _strings(hub.get("tags")) or _strings(meta.get("keywords")))
    connectors = _connectors(project)
    data["component_types"] = sorted({c["type"] for c in connectors})
    features: dict[str, Any] = {}
    encodings = _strings(hub.get("supported_encodings"))
    if encodings:
        features["supported_encodings"] = encodings
    smt = hub.get("single_message_transforms")
    # the kit's runtime applies a connector's `transforms` chain, whatever the connector
    features["single_message_transforms"] = smt if isinstance(smt, bool) else True
    data["features"] = features
    _put(data, "license", _license(meta.get("license")))
    source = _text(hub.get("source_url")) or _url(urls, _SOURCE_KEYS)
    if not source and source_remote and source_remote.startswith("https://"):
        source = source_remote
    _put(data, "source_url", source)
    _put(data, "binary_url", _text(hub.get("binary_url")) or _url(urls, _BINARY_KEYS))
    _put(data, "documentation_url", _text(hub.get("documentation_url")) or _url(urls, _DOCS_KEYS))
    _put(data, "home_url", _text(hub.get("home_url")) or _url(urls, _HOME_KEYS))
    _put(data, "logo", _text(hub.get("logo")))
    support = _table(hub.get("support"))
    if support:
        data["support"] = {str(k): v for k, v in support.items()}
    data["connectors"] = connectors
    missing = [
        f"{name}: state it in {where}" for name, where in REQUIRED.items() if not _has(data, name)
    ]
    return HubManifest(data, missing)


def _table(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return []
    return [v.strip() for v in value if isinstance(v, str) and v.strip()]


def _put(data: dict[str, Any], key: str, value: Any) -> None:
    if value:
        data[key] = value


def _has(data: Mapping[str, Any], dotted: str) -> bool:
    value: Any = data
    for part in dotted.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return False
        value = value[part]
    return bool(value)


def _url(urls: Mapping[str, str], keys: tuple[str, ...]) -> str:
    for key in keys:
        if urls.get(key):
            return urls[key]
    return ""


def _owner(declared: Any, authors: Any) -> dict[str, str]:
    owner = {str(k): str(v) for k, v in _table(declared).items() if _text(v)}
    if "name" not in owner and isinstance(authors, list):
        for author in authors:
            name = _text(_table(author).get("name"))
            if name:
                owner["name"] = name
                break
    return owner


def _license(value: Any) -> list[dict[str, str]]:
    if isinstance(value, str) and value.strip():
        return [{"name": value.strip()}]
    table = _table(value)
    if _text(table.get("text")):
        return [{"name": _text(table.get("text"))}]
    if _text(table.get("file")):
        return [{"name": f"see {_text(table.get('file'))}", "file": _text(table.get("file"))}]
    return []


def _connectors(project: Project) -> list[dict[str, str]]:
    from cdk.runtime import Plugins

    plugins = Plugins()
    out: list[dict[str, str]] = []
    seen: set[str] = set()
    for driver in project.drivers:
        kind = "source" if issubclass(driver, SourceDriver) else "sink"
        target = driver.connector
        entry: dict[str, str] = {"type": kind}
        try:
            cls = target if isinstance(target, type) else plugins.connector_class(target)
        except Exception as exc:  # noqa: BLE001 - the CFG checks report it; the manifest says so
            entry.update({"class": str(target), "error": f"{type(exc).__name__}: {exc}"})
        else:
            entry["class"] = f"{cls.__module__}.{cls.__qualname__}"
            doc = (cls.__doc__ or "").strip().splitlines()
            if doc:
                entry["description"] = doc[0].strip()
            # the default version() without creating a connector: connector code runs in the
            # checks' processes, never in the one writing the bundle
            if getattr(cls, "version", None) is Connector.version:
                entry["version"] = package_version(cls)
        if entry["class"] not in seen:
            seen.add(entry["class"])
            out.append(entry)
    return out
