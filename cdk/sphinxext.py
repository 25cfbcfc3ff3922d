"""A Sphinx extension that writes reference pages from code: config references and the checklist.

Add it to ``extensions`` in a Sphinx project's ``conf.py``; it needs ``connect-cdk[docs]``
(Sphinx). The rest of the kit never imports Sphinx, so it works without it.

``.. cdk-config:: package.module:Attr`` renders the configuration reference of ``Attr``, which
may be a :class:`~cdk.config.ConfigDef`, a class with a ``config()`` method (a connector, a
transformation such as ``cdk.transforms:InsertField.Value``, a converter), or a callable
returning a ConfigDef. The reference is ``ConfigDef.to_rst()`` (or ``to_enriched_rst()`` with
the ``:enriched:`` flag, which groups the keys under their group names) parsed as RST, so it is
the same text that ``cdk docs`` prints; PASSWORD defaults show as ``[hidden]``. A target that
cannot be imported or has no ConfigDef is an error naming the target.

``.. cdk-checklist::`` renders every certification check, by suite: its id, title, what it
proves, how to fix a failure, and where it applies. ``:suite: CFG`` limits it to one suite.
It reads the check registry of :mod:`harness.certify` (imported when the directive runs).
Each suite and check is a section with a label, so other pages link a check with
``:ref:`OFF-01``` (and a suite with ``:ref:`suite-OFF```).

``.. cdk-skip-reasons::`` lists the only reasons a check may be skipped (it does not apply),
from ``harness.certify.NOT_APPLICABLE``: the checklist shows the list the code enforces.
"""

from __future__ import annotations

import importlib
import inspect
from typing import TYPE_CHECKING, Any, ClassVar, cast

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.domains.std import StandardDomain
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import make_id

from cdk.config import ConfigDef, ConfigKey
from cdk.config._docs import config_value

if TYPE_CHECKING:
    from collections.abc import Callable

    from sphinx.application import Sphinx
    from sphinx.util.typing import ExtensionMetadata

__all__ = ["ChecklistDirective", "ConfigDirective", "TargetError", "resolve_config_def", "setup"]


class TargetError(Exception):
    """A ``cdk-config`` target cannot be imported or gives no ConfigDef; the message says why."""


def _import_target(target: str) -> object:
    module_name, colon, attribute = target.partition(":")
    if not colon or not module_name or not attribute:
        raise TargetError(
            f"{target!r} is not 'package.module:Attribute' (e.g. 'cdk.transforms:Cast.Value')"
        )
    try:
        found: object = importlib.import_module(module_name)
    except ImportError as exc:
        raise TargetError(f"cannot import module {module_name!r}: {exc}") from exc
    for part in attribute.split("."):
        try:
            found = getattr(found, part)
        except AttributeError:
            raise TargetError(f"{module_name!r} has no attribute {attribute!r}") from None
    return found


def resolve_config_def(target: str) -> ConfigDef:
    """The ConfigDef that ``target`` (``package.module:Attr``) names.

    ``Attr`` may be dotted (``InsertField.Value``). A ConfigDef is returned as is; a class is
    instantiated without arguments and asked for ``config()``; another callable is called.

    Raises:
        TargetError: the target cannot be imported, or it has or gives no ConfigDef.
    """
    found = _import_target(target)
    if isinstance(found, ConfigDef):
        return found
    make: Callable[[], object]
    if isinstance(found, type):
        if not callable(getattr(found, "config", None)):
            raise TargetError(f"{target!r} is a class without a config() method")
        if inspect.isabstract(found):
            raise TargetError(f"{target!r} is abstract; name a concrete class")
        cls = found

        def make() -> object:
            return cls().config()

        what = f"{target}().config()"
    elif callable(found):
        make = found
        what = f"{target}()"
    else:
        raise TargetError(
            f"{target!r} is not a ConfigDef, a class with config() or a callable returning a "
            f"ConfigDef (found an object of type {type(found).__name__})"
        )
    try:
        definition = make()
    except Exception as exc:  # any failure of partner code becomes the message
        raise TargetError(f"{what} failed: {type(exc).__name__}: {exc}") from exc
    if not isinstance(definition, ConfigDef):
        raise TargetError(f"{what} returned a {type(definition).__name__}, not a ConfigDef")
    return definition


class ConfigDirective(SphinxDirective):
    """``.. cdk-config:: package.module:Attr``: the configuration reference of a ConfigDef."""

    required_arguments = 1
    optional_arguments = 0
    has_content = False
    option_spec: ClassVar[dict[str, Callable[[str], Any]]] = {
        "enriched": directives.flag,
    }

    def run(self) -> list[nodes.Node]:
        """Resolve the target and render its keys as docutils nodes.

        The entries say what ``ConfigDef.to_rst()`` (``to_enriched_rst()`` with ``:enriched:``)
        says, but are built as nodes, never parsed: a documentation string or a default such as
        ``*.jsonl`` or ``<topic.prefix>`` is shown as written, not read as markup.
        """
        target = self.arguments[0].strip()
        try:
            definition = resolve_config_def(target)
        except TargetError as exc:
            raise self.error(f"cdk-config {target}: {exc}") from exc
        self._note_source(target)
        enriched = "enriched" in self.options
        container = nodes.container(classes=["cdk-config"])
        keys = [k for k in definition.sorted_keys() if not k.internal_config]
        if not keys:
            container += nodes.paragraph(text="This has no configuration keys.")
            return [container]
        entries = nodes.definition_list()
        last_group = ""
        for key in keys:
            if enriched and key.group is not None and key.group.lower() != last_group.lower():
                # group headings are rubrics, so the page's own section levels never clash
                if len(entries):
                    container += entries
                    entries = nodes.definition_list()
                container += nodes.rubric(text=key.group)
            if key.group is not None:
                last_group = key.group
            entries += _entry(key, enriched=enriched)
        container += entries
        return [container]

    def _note_source(self, target: str) -> None:
        module = importlib.import_module(target.partition(":")[0])
        path = getattr(module, "__file__", None)
        if path:
            self.env.note_dependency(path)


def _entry(key: ConfigKey, *, enriched: bool) -> nodes.definition_list_item:
    """One key: its name, documentation and facts (Type, Default, Valid Values, Importance)."""
    item = nodes.definition_list_item()
    item += nodes.term("", "", nodes.literal(text=key.name))
    body = nodes.definition()
    for line in (key.documentation or "").split("\n"):
        if line:
            body += nodes.paragraph(text=line)
    facts = [("Type", config_value(key, "Type"))]
    if key.has_default():
        facts.append(("Default", config_value(key, "Default")))
    if key.validator is not None:
        facts.append(("Valid Values", config_value(key, "Valid Values")))
    facts.append(("Importance", config_value(key, "Importance")))
    if enriched and key.dependents:
        facts.append(("Dependents", ", ".join(key.dependents)))
    bullets = nodes.bullet_list()
    for name, value in facts:
        bullets += nodes.list_item("", nodes.paragraph(text=f"{name}: {value}"))
    body += bullets
    item += body
    return item


def _suite_name(value: str | None) -> str:
    if value is None or not value.strip():
        raise ValueError("the suite's name is missing, e.g. CFG")
    return value.strip().upper()


class ChecklistDirective(SphinxDirective):
    """``.. cdk-checklist::``: every certification check, by suite, from the registry."""

    has_content = False
    option_spec: ClassVar[dict[str, Callable[[str], Any]]] = {"suite": _suite_name}

    def run(self) -> list[nodes.Node]:
        """A section per suite and a subsection per check."""
        from harness.certify import SUITES, all_checks

        wanted = self.options.get("suite")
        if wanted is not None and wanted not in SUITES:
            raise self.error(f"cdk-checklist: unknown suite {wanted!r} (one of {list(SUITES)})")
        checks = all_checks()
        out: list[nodes.Node] = []
        for suite, proves in SUITES.items():
            if wanted is not None and suite != wanted:
                continue
            section = self._section(f"suite-{suite}", f"{suite} \N{EM DASH} {proves}")
            for c in (c for c in checks if c.suite == suite):
                self._note_source(c.run)
                sub = self._section(c.id, f"{c.id}: {c.title}")
                sub += self._facts(
                    c.kinds,
                    c.needs,
                    required=c.required,
                    once=c.per_project,
                    capabilities=c.capabilities,
                    source_kind=c.source_kind,
                )
                sub += self._rst(c.description or "(no description)", f"{c.id} description")
                if c.fix:
                    sub += nodes.rubric(text="How to fix a failure")
                    sub += self._rst(c.fix, f"{c.id} fix")
                section += sub
            out.append(section)
        return out

    def _section(self, name: str, title: str) -> nodes.section:
        node_id = make_id(self.env, self.state.document, "", name)
        section = nodes.section(ids=[node_id])
        section["names"].append(nodes.fully_normalize_name(name))
        section += nodes.title(text=title)
        self.state.document.note_implicit_target(section, section)
        # a label too, so that other pages link a check with :ref:`OFF-01`
        std = cast(StandardDomain, self.env.get_domain("std"))
        std.note_hyperlink_target(name.lower(), self.env.docname, node_id, title)
        return section

    def _note_source(self, fn: Callable[..., object]) -> None:
        path = inspect.getsourcefile(fn)
        if path:
            self.env.note_dependency(path)

    def _facts(
        self,
        kinds: frozenset[str],
        needs: frozenset[str],
        *,
        required: bool,
        once: bool,
        capabilities: tuple[str, ...] = (),
        source_kind: str | None = None,
    ) -> nodes.paragraph:
        applies = ", ".join(sorted(kinds)) + (" (once per project)" if once else "")
        if source_kind is not None:
            applies = f"{source_kind} {applies}s only"
        status = "required" if required else "optional (reported only)"
        text = f"Applies to: {applies} · needs: {', '.join(sorted(needs)) or 'nothing'} · {status}"
        if capabilities:
            text += f" · from the driver: {', '.join(capabilities)} (not verified without)"
        return nodes.paragraph(text=text, classes=["cdk-check-facts"])

    def _rst(self, text: str, source: str) -> nodes.container:
        container = nodes.container()
        self.state.nested_parse(
            StringList(text.splitlines(), source=f"<{source}>"), self.content_offset, container
        )
        return container


class SkipReasonsDirective(SphinxDirective):
    """``.. cdk-skip-reasons::``: the only reasons a check may be skipped, from the code."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        """A bullet list, one item per reason (``harness.certify.NOT_APPLICABLE``)."""
        from harness.certify import NOT_APPLICABLE

        items = nodes.bullet_list(classes=["cdk-skip-reasons"])
        for key, text in NOT_APPLICABLE.items():
            item = nodes.list_item(ids=[make_id(self.env, self.state.document, "skip", key)])
            container = nodes.container()
            self.state.nested_parse(
                StringList([f"``{key}``: {text}"], source=f"<skip reason {key}>"),
                self.content_offset,
                container,
            )
            item += container.children
            items += item
        return [items]


def setup(app: Sphinx) -> ExtensionMetadata:
    """Register the directives (Sphinx calls this for ``extensions = ["cdk.sphinxext"]``)."""
    app.add_directive("cdk-config", ConfigDirective)
    app.add_directive("cdk-checklist", ChecklistDirective)
    app.add_directive("cdk-skip-reasons", SkipReasonsDirective)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
