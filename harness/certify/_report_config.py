"""The configuration reference of a connector as the HTML report shows it: every text escaped.

``ConfigDef.to_html()`` reproduces Kafka's output, which inserts each key's documentation, name,
default and valid values as HTML, unescaped: a documentation string such as ``"Prepended to
<topic.prefix>"`` loses ``<topic.prefix>`` as an unknown tag, and ``<script>`` becomes markup.
A connector's texts are not trusted markup, so the report renders its own reference from the
:class:`~cdk.ConfigDef` with every text escaped: the keys by group (as ``to_enriched_rst``),
each with its documentation (line breaks kept) and a table of type, default, valid values,
importance, display name and dependents. PASSWORD defaults show as ``[hidden]``.
"""

from __future__ import annotations

from html import escape

from cdk.config import ConfigDef, ConfigKey, Type, convert_to_string

__all__ = ["config_reference_html"]


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _default(key: ConfigKey) -> str | None:
    if not key.has_default():
        return None
    if key.default_value is None:
        return "null"
    if key.type is Type.PASSWORD:
        return "[hidden]"
    text = convert_to_string(key.default_value, key.type) or ""
    return text or '""'


def _key(key: ConfigKey, header_depth: int) -> str:
    doc = "" if key.documentation is None else key.documentation
    paragraph = "<br>".join(_e(line) for line in doc.replace("\r\n", "\n").split("\n"))
    rows: list[tuple[str, str]] = [("Type", key.type.name.lower())]
    default = _default(key)
    rows.append(("Default", "(required)" if default is None else default))
    if key.validator is not None:
        rows.append(("Valid Values", str(key.validator)))
    rows.append(("Importance", "" if key.importance is None else key.importance.name.lower()))
    if key.display_name and key.display_name != key.name:
        rows.append(("Display name", key.display_name))
    if key.dependents:
        rows.append(("Dependents", ", ".join(key.dependents)))
    cells = "".join(f"<tr><th>{_e(name)}:</th><td>{_e(value)}</td></tr>" for name, value in rows)
    return (
        f'<li><h{header_depth}><a id="{_e(key.name)}" href="#{_e(key.name)}">{_e(key.name)}</a>'
        f"</h{header_depth}><p>{paragraph}</p><table><tbody>{cells}</tbody></table></li>"
    )


def config_reference_html(definition: ConfigDef, header_depth: int = 4) -> str:
    """The keys of ``definition`` (internal ones left out) as escaped HTML, by group."""
    out: list[str] = []
    current: object = object()
    for key in definition.sorted_keys():
        if key.internal_config:
            continue
        if key.group != current:
            if out:
                out.append("</ul>")
            if key.group is not None:
                out.append(f'<p class="config-group"><strong>{_e(key.group)}</strong></p>')
            out.append('<ul class="config-list">')
            current = key.group
        out.append(_key(key, header_depth))
    if out:
        out.append("</ul>")
    return "".join(out)
