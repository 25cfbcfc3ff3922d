"""Embedding generated HTML (the config reference) in the report, safely.

``ConfigDef.to_html()`` reproduces Kafka's output, which inserts each key's documentation as
HTML, unescaped. A connector's documentation is not trusted markup: :func:`sanitize` keeps a
small set of text tags, re-escapes all text, drops scripts, styles, event handlers and every
link that leaves the page, and prefixes ``id``/``#`` anchors so that several connectors'
references (which share key names such as ``topic``) can sit on one page. Something that only
looks like a tag (``<topic.prefix>``, ``<my_key>``: no HTML element has such a name) is text,
shown as written. The report renders its own, fully escaped, reference
(:mod:`harness.certify._report_config`); this is for HTML it did not make.
"""

from __future__ import annotations

import re
from html import escape
from html.parser import HTMLParser

__all__ = ["sanitize"]

_ALLOWED = frozenset(
    [
        "a",
        "b",
        "br",
        "code",
        "dd",
        "div",
        "dl",
        "dt",
        "em",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "i",
        "li",
        "ol",
        "p",
        "pre",
        "span",
        "strong",
        "sub",
        "sup",
        "table",
        "tbody",
        "td",
        "tfoot",
        "th",
        "thead",
        "tr",
        "tt",
        "u",
        "ul",
    ]
)
_VOID = frozenset({"br"})
_DROP_CONTENT = frozenset({"script", "style", "iframe", "object", "embed", "template", "noscript"})
#: What an HTML element's name looks like (anything else between < and > is text).
_ELEMENT = re.compile(r"^[a-z][a-z0-9]*$")


class _Sanitizer(HTMLParser):
    def __init__(self, anchor_prefix: str) -> None:
        super().__init__(convert_charrefs=True)
        self.prefix = anchor_prefix
        self.out: list[str] = []
        self.open: list[str] = []
        self.dropping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _DROP_CONTENT:
            self.dropping += 1
            return
        if self.dropping:
            return
        if not _ELEMENT.match(tag):
            self.out.append(escape(self.get_starttag_text() or f"<{tag}>", quote=False))
            return
        if tag not in _ALLOWED:
            return
        kept = []
        for name, value in attrs:
            if value is None:
                continue
            if name == "id":
                kept.append(f' id="{escape(self.prefix + value)}"')
            elif name == "class":
                kept.append(f' class="{escape(value)}"')
            elif name == "href" and tag == "a" and value.startswith("#"):
                kept.append(f' href="#{escape(self.prefix + value[1:])}"')
        self.out.append(f"<{tag}{''.join(kept)}>")
        if tag not in _VOID:
            self.open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag in self.open and self.open[-1] == tag:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in _DROP_CONTENT:
            self.dropping = max(0, self.dropping - 1)
            return
        if not self.dropping and not _ELEMENT.match(tag):
            self.out.append(escape(f"</{tag}>", quote=False))
            return
        if self.dropping or tag not in self.open:
            return  # a stray end tag (Kafka's doubled </td>) or one of a dropped element
        while self.open:
            top = self.open.pop()
            self.out.append(f"</{top}>")
            if top == tag:
                break

    def handle_data(self, data: str) -> None:
        if not self.dropping:
            self.out.append(escape(data, quote=False))

    def result(self) -> str:
        self.close()
        self.out.extend(f"</{tag}>" for tag in reversed(self.open))
        self.open.clear()
        return "".join(self.out)


def sanitize(markup: str, anchor_prefix: str = "") -> str:
    """``markup`` reduced to safe text markup, with ``anchor_prefix`` added to its anchors."""
    parser = _Sanitizer(anchor_prefix)
    parser.feed(markup)
    return parser.result()
