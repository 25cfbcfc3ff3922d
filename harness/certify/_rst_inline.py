"""A tiny renderer of the RST that check descriptions are written in, to escaped HTML.

Check descriptions and fixes are written once, as RST, in the check definitions. Sphinx renders
them on the docs' checklist page; the HTML report renders them with :func:`render_rst`, which
needs no dependency. It understands what the descriptions use: paragraphs, bullet lists
(``-``, ``*`` or ``+`` items), enumerated lists (``1.``, ``2)``, ``#.``), literal blocks after a
paragraph ending in ``::``, directives such as ``.. note::`` (an admonition's text becomes a
paragraph headed by its name; any other directive's options are dropped), comments (``..``),
section underlines, and inline markup: double-backquoted literals, emphasis, strong emphasis,
interpreted text, external links (``text <https://...>`` in backquotes, with a trailing
underscore), substitutions (``|name|``, shown as the name) and roles such as ``:class:`` (shown
as code, as Sphinx shows them; ``:ref:`` and other roles as their text). Anything else is text.

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
      | \|(?P<substitution>[^|\s](?:[^|]*?[^|\s])?)\|
    )
    (?!\w)
    """,
    re.VERBOSE,
)
_ESCAPED = re.compile(r"\\(.)")
_BULLET = re.compile(r"^([-*+])\s+(.*)$")
_ENUMERATED = re.compile(r"^(\d+|#)[.)]\s+(.*)$")
_DIRECTIVE = re.compile(r"^\.\.\s+([A-Za-z][\w-]*)::\s*(.*)$")
_UNDERLINE = re.compile(r"^([=\-`:'\"~^_*+#<>])\1{2,}\s*$")
_ADMONITIONS = frozenset(
    {"attention", "caution", "danger", "error", "hint", "important", "note", "tip", "warning"}
)
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
        elif match["substitution"] is not None:
            out.append(_text(match["substitution"]))
        else:
            out.append(f"<em>{_text(match['emphasis'])}</em>")
    out.append(_text(text[position:]))
    return "".join(out)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _block(lines: list[str], i: int) -> tuple[list[str], int]:
    """The indented block from line ``i`` on (blank lines inside kept), dedented; the next line."""
    block: list[str] = []
    while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > 0):
        block.append(lines[i])
        i += 1
    while block and not block[-1].strip():
        block.pop()
    margin = min((_indent(line) for line in block if line.strip()), default=0)
    return [line[margin:] for line in block], i


def _list_item(line: str) -> tuple[str, str] | None:
    """(``ul`` or ``ol``, the item's first line) when ``line`` starts a list item."""
    if _indent(line) > 0:
        return None
    bullet = _BULLET.match(line)
    if bullet is not None:
        return "ul", bullet[2]
    number = _ENUMERATED.match(line)
    if number is not None:
        return "ol", number[2]
    return None


def _directive(name: str, argument: str, body: list[str]) -> str:
    while body and re.match(r"^:[\w-]+:", body[0]):  # options
        body = body[1:]
    if name in ("code", "code-block", "sourcecode", "literalinclude"):
        return f"<pre>{escape(chr(10).join(body).strip(chr(10)))}</pre>" if body else ""
    if name in _ADMONITIONS or name == "admonition":
        # an admonition's argument is its first line of text; a generic one's is its title
        label = argument if name == "admonition" and argument else name.capitalize()
        text = body if name == "admonition" or not argument else [argument, *body]
        inner = render_rst("\n".join(text))
        heading = f"<strong>{_text(label)}:</strong> "
        if inner.startswith("<p>"):
            return "<p>" + heading + inner[3:]
        return f"<p>{heading}</p>{inner}"
    return render_rst("\n".join([argument, "", *body]) if argument else "\n".join(body))


def render_rst(text: str) -> str:
    """Paragraphs, lists, literal blocks, directives and inline markup as HTML (escaped)."""
    lines = text.expandtabs().splitlines()
    out: list[str] = []
    i = 0
    literal_next = False
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        if literal_next and _indent(lines[i]) > 0:
            block, i = _block(lines, i)
            out.append(f"<pre>{escape(chr(10).join(block))}</pre>")
            literal_next = False
            continue
        literal_next = False
        if _indent(lines[i]) == 0 and lines[i].startswith(".."):
            directive = _DIRECTIVE.match(lines[i])
            body, i = _block(lines, i + 1)
            if directive is not None:  # anything else is a comment (or a link target): dropped
                out.append(_directive(directive[1].lower(), directive[2].strip(), body))
            continue
        if _UNDERLINE.match(lines[i]):  # an overline or a stray transition
            i += 1
            continue
        first = _list_item(lines[i])
        if first is not None:
            tag = first[0]
            items: list[list[str]] = []
            while i < len(lines):
                item = _list_item(lines[i])
                if item is not None and item[0] == tag:
                    items.append([item[1]])
                elif item is None and lines[i].strip() and _indent(lines[i]) > 0 and items:
                    items[-1].append(lines[i].strip())
                elif not lines[i].strip():
                    following = lines[i + 1] if i + 1 < len(lines) else ""
                    same = _list_item(following)
                    if not ((same is not None and same[0] == tag) or _indent(following) > 0):
                        break
                else:
                    break
                i += 1
            rendered = "".join(f"<li>{render_inline(' '.join(item))}</li>" for item in items)
            out.append(f"<{tag}>{rendered}</{tag}>")
            continue
        paragraph: list[str] = []
        while i < len(lines) and lines[i].strip():
            if _UNDERLINE.match(lines[i]) and len(paragraph) == 1:  # a section title
                break
            paragraph.append(lines[i].strip())
            i += 1
        if i < len(lines) and lines[i].strip() and _UNDERLINE.match(lines[i]):
            i += 1
            out.append(f"<p><strong>{render_inline(paragraph[0])}</strong></p>")
            continue
        joined = " ".join(paragraph)
        if joined.endswith("::"):
            literal_next = True
            joined = joined[:-2].rstrip() if joined[:-2].endswith(" ") else joined[:-1]
            if not joined:
                continue
        out.append(f"<p>{render_inline(joined)}</p>")
    return "".join(out)
