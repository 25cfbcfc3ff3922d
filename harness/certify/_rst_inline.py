"""A tiny renderer of the RST that check descriptions are written in, to escaped HTML.

Check descriptions and fixes are written once, as RST, in the check definitions. Sphinx renders
them on the docs' checklist page; the HTML report renders them with :func:`render_rst`, which
needs no dependency. It understands what the descriptions use: paragraphs, bullet lists
(``-``, ``*`` or ``+`` items), literal blocks after a paragraph ending in ``::``, and inline
markup: double-backquoted literals, emphasis, strong emphasis, interpreted text, external
links (``text <https://...>`` in backquotes, with a trailing underscore) and roles such as
``:class:`` (shown as code, as Sphinx shows them). Anything else is text.

Every piece of text is HTML-escaped; only the tags above are produced, and a link's target must
be an ``http`` or ``https`` URL to become an ``href``.
"""

from __future__ import annotations

import re
from html import escape

__all__ = ["render_inline", "render_rst"]

_INLINE = re.compile(
    r"""
    (?<![\w\\])
    (?:
        ``(?P<literal>\S(?:.*?\S)?)``
      | :(?P<role>[A-Za-z][\w.+-]*(?::[\w.+-]+)?):`(?P<role_text>[^`]+)`
      | `(?P<link_text>[^`<]*?)\s*<(?P<link_url>[^`<>]+)>`__?
      | `(?P<interpreted>[^`]+)`(?!_)
      | \*\*(?P<strong>\S(?:.*?\S)?)\*\*
      | \*(?P<emphasis>[^\s*](?:[^*]*?[^\s*])?)\*
    )
    (?!\w)
    """,
    re.VERBOSE,
)
_ESCAPED = re.compile(r"\\(.)")
_BULLET = re.compile(r"^([-*+])\s+(.*)$")
#: Roles whose text Sphinx shows as code; :func: and :meth: get ``()`` as Sphinx adds them.
_CODE_ROLES = frozenset(
    {"attr", "class", "const", "data", "exc", "func", "meth", "mod", "obj", "py:class", "code"}
)


def _text(raw: str) -> str:
    """Plain text: backslash escapes resolved, then HTML-escaped."""
    return escape(_ESCAPED.sub(r"\1", raw))


def _role(role: str, text: str) -> str:
    title = text
    target = re.fullmatch(r"(.*?)\s*<([^<>]+)>", text)
    if target is not None and target[1]:
        title = target[1]
    else:
        title = title.lstrip("!")
        if title.startswith("~"):
            title = title[1:].rsplit(".", 1)[-1]
        name = role.rsplit(":", 1)[-1]
        if name in ("func", "meth") and not title.endswith(")"):
            title += "()"
    name = role.removeprefix("py:")
    if name in _CODE_ROLES or role in _CODE_ROLES:
        return f"<code>{escape(title)}</code>"
    return _text(title)


def render_inline(text: str) -> str:
    """One paragraph's inline RST as HTML (every piece of text escaped)."""
    out: list[str] = []
    position = 0
    for match in _INLINE.finditer(text):
        out.append(_text(text[position : match.start()]))
        position = match.end()
        if match["literal"] is not None:
            out.append(f"<code>{escape(match['literal'])}</code>")
        elif match["role"] is not None:
            out.append(_role(match["role"], match["role_text"]))
        elif match["link_url"] is not None:
            url = match["link_url"].strip()
            label = _text(match["link_text"] or url)
            if re.match(r"https?://", url):
                out.append(f'<a href="{escape(url, quote=True)}">{label}</a>')
            else:
                out.append(label)
        elif match["interpreted"] is not None:
            out.append(f"<cite>{_text(match['interpreted'])}</cite>")
        elif match["strong"] is not None:
            out.append(f"<strong>{_text(match['strong'])}</strong>")
        else:
            out.append(f"<em>{_text(match['emphasis'])}</em>")
    out.append(_text(text[position:]))
    return "".join(out)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def render_rst(text: str) -> str:
    """Paragraphs, bullet lists, literal blocks and inline markup as HTML (escaped)."""
    lines = text.expandtabs().splitlines()
    out: list[str] = []
    i = 0
    literal_next = False
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        if literal_next and _indent(lines[i]) > 0:
            block: list[str] = []
            while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > 0):
                block.append(lines[i])
                i += 1
            while block and not block[-1].strip():
                block.pop()
            margin = min(_indent(line) for line in block if line.strip())
            body = "\n".join(line[margin:] for line in block)
            out.append(f"<pre>{escape(body)}</pre>")
            literal_next = False
            continue
        literal_next = False
        if _BULLET.match(lines[i]) and _indent(lines[i]) == 0:
            items: list[list[str]] = []
            while i < len(lines):
                bullet = _BULLET.match(lines[i]) if _indent(lines[i]) == 0 else None
                if bullet is not None:
                    items.append([bullet[2]])
                elif lines[i].strip() and _indent(lines[i]) > 0 and items:
                    items[-1].append(lines[i].strip())
                elif not lines[i].strip():
                    following = lines[i + 1] if i + 1 < len(lines) else ""
                    if not (_BULLET.match(following) or _indent(following) > 0):
                        break
                else:
                    break
                i += 1
            rendered = "".join(f"<li>{render_inline(' '.join(item))}</li>" for item in items)
            out.append(f"<ul>{rendered}</ul>")
            continue
        paragraph: list[str] = []
        while i < len(lines) and lines[i].strip():
            paragraph.append(lines[i].strip())
            i += 1
        joined = " ".join(paragraph)
        if joined.endswith("::"):
            literal_next = True
            joined = joined[:-2].rstrip() if joined[:-2].endswith(" ") else joined[:-1]
            if not joined:
                continue
        out.append(f"<p>{render_inline(joined)}</p>")
    return "".join(out)
