"""The DOC suite: generated config docs, the README a certification review reads, the license.

DOC-01 renders each connector's ConfigDef; DOC-02..04 read the project's files (README,
LICENSE, ``pyproject.toml``) once per project. Headings are recognised in Markdown (``#`` and
underlined) and reStructuredText (underlined, with or without an overline), and each required
section accepts the usual synonyms (``Overview`` for the description, ``Getting started`` for
the quickstart...).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cdk.api import Connector
from cdk.config import ConfigDef, ConfigKey
from harness._driver import ConnectorDriver
from harness.certify._checks import CheckFailed, check
from harness.certify._context import CheckContext

__all__: list[str] = []

README_NAMES = ("README.md", "README.rst", "README.txt", "README.markdown", "README")
LICENSE_NAMES = (
    "LICENSE",
    "LICENSE.txt",
    "LICENSE.md",
    "LICENSE.rst",
    "LICENCE",
    "LICENCE.txt",
    "LICENCE.md",
    "COPYING",
    "COPYING.txt",
)

#: The README sections a review asks for, each with the heading words that count for it.
SECTIONS: dict[str, tuple[str, ...]] = {
    "description": ("description", "overview", "about", "introduction", "what it does"),
    "data model": (
        "data model",
        "data format",
        "record format",
        "message format",
        "records",
        "record",
        "schema",
        "schemas",
        "data types",
        "type mapping",
        "mapping",
    ),
    "delivery semantics": (
        "delivery",
        "semantics",
        "guarantee",
        "guarantees",
        "exactly once",
        "at least once",
    ),
    "quickstart": (
        "quickstart",
        "quick start",
        "getting started",
        "usage",
        "example",
        "examples",
        "tutorial",
        "how to use",
    ),
    "configuration reference": (
        "configuration",
        "config",
        "settings",
        "options",
        "properties",
        "parameters",
    ),
    "license": ("license", "licence", "licensing", "copyright"),
}
#: Words of prose under the title that count as the description when it has no heading.
_INTRO_WORDS = 8


# ---------------------------------------------------------------------------------------------
# DOC-01


@check(
    "DOC-01",
    "Config docs generate as RST and HTML and name every key",
    needs=(),
    fix=(
        "Make every key's documentation, default and validator convertible to text "
        "(``ConfigDef.to_rst()`` and ``to_html()`` must not raise), and do not mark keys "
        "users must set as internal."
    ),
)
def config_docs(ctx: CheckContext) -> None:
    """The connector's config reference renders as RST and as HTML and names every key.

    ``ConfigDef.to_rst()`` and ``to_html()`` (what the report and the kit's docs use) must
    succeed and show every key a user can set, including required keys that are marked
    internal (internal keys with a default are meant to stay out of the docs).
    """
    definition = _config_def_of(ctx.connector_class)
    keys = [k for k in definition.config_keys().values() if _user_facing(k)]
    problems = []
    for label, render, named in (
        ("RST", definition.to_rst, _named_in_rst),
        ("HTML", definition.to_html, _named_in_html),
    ):
        try:
            text = render()
        except Exception as exc:  # noqa: BLE001 - reported as the failure
            problems.append(f"to_{label.lower()}() raised {type(exc).__name__}: {exc}")
            continue
        missing = [k.name for k in keys if not named(text, k.name)]
        ctx.evidence(f"keys named in the {label} reference", len(keys) - len(missing))
        if missing:
            problems.append(f"the {label} reference does not name {', '.join(missing)}")
    ctx.evidence("keys", len(keys))
    if problems:
        raise CheckFailed(
            f"the RST and HTML config references to name all {len(keys)} keys",
            "; ".join(problems),
        )


def _named_in_rst(text: str, name: str) -> bool:
    return f"``{name}``" in text


def _named_in_html(text: str, name: str) -> bool:
    return f'id="{html.escape(name, quote=True)}"' in text


# ---------------------------------------------------------------------------------------------
# DOC-02


@check(
    "DOC-02",
    "The README has the sections a review asks for",
    needs=(),
    per_project=True,
    fix=(
        "Add the missing sections to the README, each with content: description, data model, "
        "delivery semantics, quickstart, configuration reference and license (a project from "
        "``cdk new`` starts with all of them)."
    ),
)
def readme_sections(ctx: CheckContext) -> None:
    """The README has the sections a certification review reads.

    They are: description, data model, delivery semantics, quickstart, configuration reference
    and license. Sections are found by their headings, with the usual synonyms (``Overview``,
    ``Record format``, ``Guarantees``, ``Getting started``, ``Settings``...); prose under the
    title counts as the description. A heading with nothing under it does not count. The
    report names the missing sections and the headings it found.
    """
    readme = _readme(ctx)
    doc = Readme.parse(readme.read_text(encoding="utf-8", errors="replace"))
    missing = [name for name in SECTIONS if not doc.has(name)]
    ctx.evidence("README", readme.name)
    ctx.evidence("headings found", [s.title for s in doc.sections])
    ctx.evidence("sections missing", missing)
    if missing:
        found = ", ".join(repr(s.title) for s in doc.sections) or "none"
        raise CheckFailed(
            f"{readme.name} to have sections for: {', '.join(SECTIONS)}",
            f"it has none for {', '.join(missing)} (headings found: {found})",
        )


# ---------------------------------------------------------------------------------------------
# DOC-03


@check(
    "DOC-03",
    "The README's config reference names every key",
    needs=(),
    per_project=True,
    fix=(
        "List every key in the README's configuration section (``cdk docs YourConnector "
        "--format markdown`` prints them) and remove the keys that no longer exist."
    ),
)
def readme_config_reference(ctx: CheckContext) -> None:
    """The README's configuration reference mentions every config key of every connector.

    The keys are those of each connector's ConfigDef (internal keys with a default excepted).
    The configuration section (with its subsections) is searched, or the whole README when it
    has none. Code spans that look like config keys but are not defined by any connector are
    listed as possibly stale.
    """
    readme = _readme(ctx)
    doc = Readme.parse(readme.read_text(encoding="utf-8", errors="replace"))
    section = doc.section_text("configuration reference")
    text = section if section is not None else doc.text
    where = "its configuration reference" if section is not None else "it (no config section)"
    missing: dict[str, list[str]] = {}
    defined: set[str] = set()
    for cls in _project_connectors(ctx.project.drivers):
        keys = [k.name for k in _config_def_of(cls).config_keys().values() if _user_facing(k)]
        defined.update(keys)
        absent = [k for k in keys if not _mentions(text, k)]
        if absent:
            missing[cls.__name__] = absent
    ctx.evidence("searched", where.replace("it (no config section)", "the whole README"))
    ctx.evidence("keys", len(defined))
    ctx.evidence("keys not mentioned", sum(len(keys) for keys in missing.values()))
    if missing:
        stale = sorted(set(_key_like_spans(text)) - defined)
        listed = "; ".join(f"{name}: {', '.join(keys)}" for name, keys in missing.items())
        raise CheckFailed(
            f"{readme.name} to document every config key of every connector",
            f"{where} does not mention {listed}"
            + (f" (it documents keys no connector defines: {', '.join(stale)})" if stale else ""),
        )


_FRAMEWORK_PREFIXES = (
    "name",
    "connector.class",
    "tasks.max",
    "topics",
    "key.converter",
    "value.converter",
    "header.converter",
    "transforms",
    "predicates",
    "errors.",
    "consumer.",
    "producer.",
    "admin.",
    "offsets.",
    "exactly.once",
    "transaction.",
    "topic.creation",
    "config.action",
)


def _mentions(text: str, key: str) -> bool:
    return re.search(rf"(?<![\w.-]){re.escape(key)}(?![\w-]|\.\w)", text) is not None


def _key_like_spans(text: str) -> Iterable[str]:
    for match in re.finditer(r"`+([a-z][a-z0-9_-]*(?:\.[a-z0-9_-]+)+)`+", text):
        name = match.group(1)
        if not name.startswith(_FRAMEWORK_PREFIXES):
            yield name


# ---------------------------------------------------------------------------------------------
# DOC-04


@check(
    "DOC-04",
    "A LICENSE file exists and pyproject declares a license",
    needs=(),
    per_project=True,
    fix=(
        "Add a LICENSE file and declare it in ``pyproject.toml``, e.g. ``license = "
        '"Apache-2.0"`` under ``[project]``.'
    ),
)
def license_declared(ctx: CheckContext) -> None:
    """The project has a non-empty LICENSE file and ``pyproject.toml`` declares its license.

    The file may be LICENSE, LICENCE or COPYING (with .txt/.md/.rst); the declaration is
    ``[project] license`` (an SPDX expression, or a table with ``text`` or ``file``), a
    ``License ::`` classifier, or ``license`` listed in ``[project] dynamic``.
    """
    problems = []
    found = ctx.project.file(*LICENSE_NAMES)
    if found is None:
        problems.append(
            f"no license file in {ctx.project.path} (looked for {', '.join(LICENSE_NAMES)})"
        )
    elif not found.read_text(encoding="utf-8", errors="replace").strip():
        problems.append(f"{found.name} is empty")
    meta = ctx.project.pyproject.get("project", {})
    declared = _declared_license(meta, ctx.project.path)
    ctx.evidence("license file", found.name if found is not None else None)
    ctx.evidence("[project] license", meta.get("license"))
    if declared is not None:
        problems.append(declared)
    if problems:
        raise CheckFailed(
            "a LICENSE file and a license declared in pyproject.toml [project]",
            "; ".join(problems),
        )


def _declared_license(meta: Mapping[str, Any], root: Path) -> str | None:
    """What is wrong with the license declaration, or None when there is one."""
    value = meta.get("license")
    if isinstance(value, str) and value.strip():
        return None
    if isinstance(value, Mapping):
        if isinstance(value.get("text"), str) and value["text"].strip():
            return None
        if isinstance(value.get("file"), str):
            if (root / value["file"]).is_file():
                return None
            return f"pyproject.toml names license file {value['file']!r}, which does not exist"
    if any(str(c).startswith("License ::") for c in meta.get("classifiers", []) or []):
        return None
    if "license" in (meta.get("dynamic", []) or []):
        return None
    return (
        'pyproject.toml [project] declares no license (add e.g. license = "Apache-2.0" '
        'and license-files = ["LICENSE"])'
    )


# ---------------------------------------------------------------------------------------------
# The README


@dataclass(frozen=True)
class Section:
    """A heading of the README and the text under it (its subsections included)."""

    title: str
    level: int
    body: str


@dataclass(frozen=True)
class Readme:
    """A README split into sections by its Markdown or reStructuredText headings."""

    text: str
    sections: tuple[Section, ...]
    intro: str  # the text between the first heading (the title) and the next one

    @classmethod
    def parse(cls, text: str) -> Readme:
        """Find the headings of ``text`` (outside code blocks) and the text under each."""
        lines = text.splitlines()
        headings = _headings(lines)
        sections = []
        for n, (line_no, level, title) in enumerate(headings):
            end = len(lines)
            for later_line, later_level, _ in headings[n + 1 :]:
                if later_level <= level:
                    end = later_line
                    break
            underlined = line_no + 1 < len(lines) and _UNDERLINE.match(lines[line_no + 1])
            body_start = line_no + (2 if underlined else 1)
            sections.append(Section(title, level, "\n".join(lines[body_start:end])))
        intro = ""
        if headings:
            first_line = headings[0][0]
            next_line = headings[1][0] if len(headings) > 1 else len(lines)
            intro = "\n".join(lines[first_line + 1 : next_line])
            intro = "\n".join(line for line in intro.splitlines() if not _UNDERLINE.match(line))
        return cls(text, tuple(sections), intro)

    def find(self, requirement: str) -> Section | None:
        """The top-most non-empty section whose heading matches ``requirement`` (a SECTIONS key).

        Of several matching headings, the one with the highest level (fewest ``#``) wins, then
        the first.
        """
        matching = [
            s
            for s in self.sections
            if _heading_matches(s.title, SECTIONS[requirement]) and _has_content(s.body)
        ]
        return min(matching, key=lambda s: s.level) if matching else None

    def has(self, requirement: str) -> bool:
        """Whether the README has the section ``requirement`` (a SECTIONS key)."""
        if self.find(requirement) is not None:
            return True
        return requirement == "description" and _prose_words(self.intro) >= _INTRO_WORDS

    def section_text(self, requirement: str) -> str | None:
        """The text of the section ``requirement`` with its subsections, or None."""
        found = self.find(requirement)
        return None if found is None else found.body


_ATX = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+.:_])\1{2,}\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def _headings(lines: list[str]) -> list[tuple[int, int, str]]:
    """(line index of the title, level, title) of every heading, in order."""
    out: list[tuple[int, int, str]] = []
    styles: list[tuple[str, bool]] = []  # underline styles in order of appearance (RST levels)
    in_code = False
    skip_next = False
    for index, line in enumerate(lines):
        if skip_next:
            skip_next = False
            continue
        if _FENCE.match(line):
            in_code = not in_code
            continue
        if in_code:
            continue
        atx = _ATX.match(line)
        if atx:
            out.append((index, len(atx.group(1)), atx.group(2).strip()))
            continue
        following = lines[index + 1] if index + 1 < len(lines) else ""
        under = _UNDERLINE.match(following)
        title = line.strip()
        if not under or not title or _UNDERLINE.match(line) or title.startswith(("|", "- ", "* ")):
            continue
        if len(following.strip()) < min(len(title), 3):
            continue
        overline = index > 0 and lines[index - 1].strip() == following.strip()
        style = (under.group(1), overline)
        if style not in styles:
            styles.append(style)
        out.append((index, styles.index(style) + 1, title))
        skip_next = True
    return out


def _normalized(text: str) -> str:
    return " " + " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split()) + " "


def _heading_matches(title: str, synonyms: Iterable[str]) -> bool:
    words = _normalized(title)
    return any(_normalized(s) in words for s in synonyms)


def _has_content(body: str) -> bool:
    return any(line.strip() and not _UNDERLINE.match(line) for line in body.splitlines())


def _prose_words(text: str) -> int:
    count = 0
    in_code = False
    for line in text.splitlines():
        if _FENCE.match(line):
            in_code = not in_code
            continue
        stripped = line.strip()
        if in_code or stripped.startswith(("![", "[![", "..", "<", "|")):
            continue
        count += len(stripped.split())
    return count


# ---------------------------------------------------------------------------------------------
# Shared helpers


def _readme(ctx: CheckContext) -> Path:
    found = ctx.project.file(*README_NAMES)
    if found is None:
        raise CheckFailed(
            "a README (README.md or README.rst) in the project directory",
            f"there is none in {ctx.project.path}",
        )
    return found


def _project_connectors(drivers: Iterable[type[ConnectorDriver]]) -> list[type[Connector]]:
    """The connector classes of the project's drivers, each once, in order."""
    out: list[type[Connector]] = []
    for driver in drivers:
        cls = _connector_class(driver)
        if cls not in out:
            out.append(cls)
    return out


def _connector_class(driver: type[ConnectorDriver]) -> type[Connector]:
    target = driver.connector
    if isinstance(target, type):
        return target
    from cdk.runtime import Plugins

    return Plugins().connector_class(target)


def _config_def_of(cls: type[Connector]) -> ConfigDef:
    try:
        definition: Any = cls().config()
    except Exception as exc:  # noqa: BLE001 - reported as the failure
        raise CheckFailed(
            f"{cls.__name__}().config() to return its ConfigDef",
            f"it raised {type(exc).__name__}: {exc}",
        ) from None
    if not isinstance(definition, ConfigDef):
        raise CheckFailed(
            f"{cls.__name__}().config() to return a cdk.config.ConfigDef",
            f"it returned a {type(definition).__name__}",
        )
    return definition


def _user_facing(key: ConfigKey) -> bool:
    return not key.internal_config or not key.has_default()
