r"""Reference documentation renderers for a :class:`~cdk.config.ConfigDef`.

``to_rst``, ``to_enriched_rst``, ``to_html`` and ``to_html_table`` reproduce Kafka's output byte
for byte (including the stray ``</td>`` of ``toHtmlTable``). ``to_markdown`` is connect-cdk's own
format: an optional table of ungrouped keys, then a ``## Group`` section with a table per group::

    | Name | Description | Type | Default | Valid Values | Importance |
    |------|-------------|------|---------|--------------|------------|
    | `batch.size` | Records per batch. | int | `100` | [1,...] | medium |

In Markdown, ``|`` is escaped as ``\\|``, newlines in descriptions become ``<br>``, a required
key's Default cell reads ``(required)``, and code spans are used for names and defaults. Internal
keys are omitted from every format, and a PASSWORD default is always shown as ``[hidden]``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from cdk.config._types import Type, convert_to_string

if TYPE_CHECKING:
    from cdk.config._def import ConfigDef, ConfigKey

__all__ = [
    "config_value",
    "nice_memory_units",
    "nice_time_units",
    "to_enriched_rst",
    "to_html",
    "to_html_table",
    "to_markdown",
    "to_rst",
]

_HEADERS = ("Name", "Description", "Type", "Default", "Valid Values", "Importance")


def nice_memory_units(num_bytes: int) -> str:
    """The suffix Kafka adds to a ``.bytes`` default, e.g. ``" (1 mebibyte)"`` (or ``""``)."""
    value = num_bytes
    i = 0
    while value != 0 and i < 4 and _java_rem(value, 1024) == 0:
        value = _java_div(value, 1024)
        i += 1
    if i == 0:
        return ""
    unit = ("kibibyte", "mebibyte", "gibibyte", "tebibyte")[i - 1]
    return f" ({value} {unit}{')' if value == 1 else 's)'}"


def nice_time_units(millis: int) -> str:
    """The suffix Kafka adds to a ``.ms`` default, e.g. ``" (1 minute)"`` (or ``""``)."""
    value = millis
    divisors = (1000, 60, 60, 24)
    units = ("second", "minute", "hour", "day")
    i = 0
    while value != 0 and i < 4 and _java_rem(value, divisors[i]) == 0:
        value = _java_div(value, divisors[i])
        i += 1
    if i == 0:
        return ""
    return f" ({value} {units[i - 1]}{'s)' if value > 1 else ')'}"


def _java_rem(a: int, b: int) -> int:
    return a - b * _java_div(a, b)


def _java_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _java_long(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float):
        if value != value:  # NaN
            return 0
        if value in (float("inf"), float("-inf")):
            return 2**63 - 1 if value > 0 else -(2**63)
        return int(value)
    return value


def config_value(key: ConfigKey, header: str) -> str:
    """One documentation cell of ``key``, as Kafka's ``ConfigDef.getConfigValue``."""
    if header == "Name":
        return key.name
    if header == "Description":
        return "null" if key.documentation is None else key.documentation
    if header == "Type":
        return key.type.name.lower()
    if header == "Default":
        if not key.has_default():
            return ""
        if key.default_value is None:
            return "null"
        text = convert_to_string(key.default_value, key.type) or ""
        if not text:
            return '""'
        suffix = ""
        number = _java_long(key.default_value)
        if number is not None and key.type is not Type.PASSWORD:
            if key.name.endswith(".bytes"):
                suffix = nice_memory_units(number)
            elif key.name.endswith(".ms"):
                suffix = nice_time_units(number)
        return text + suffix
    if header == "Valid Values":
        return str(key.validator) if key.validator is not None else ""
    if header == "Importance":
        return "" if key.importance is None else key.importance.name.lower()
    raise ValueError(f"Can't find value for header '{header}' in {key.name}")


def _visible(definition: ConfigDef) -> list[ConfigKey]:
    return [k for k in definition.sorted_keys() if not k.internal_config]


def _key_rst(key: ConfigKey, out: list[str]) -> None:
    out.append(f"``{key.name}``\n")
    if key.documentation is not None:
        for line in key.documentation.split("\n"):
            if line:
                out.append(f"  {line}\n\n")
    else:
        out.append("\n")
    out.append(f"  * Type: {config_value(key, 'Type')}\n")
    if key.has_default():
        out.append(f"  * Default: {config_value(key, 'Default')}\n")
    if key.validator is not None:
        out.append(f"  * Valid Values: {config_value(key, 'Valid Values')}\n")
    out.append(f"  * Importance: {config_value(key, 'Importance')}\n")


def to_rst(definition: ConfigDef) -> str:
    """Kafka's ``toRst`` output for ``definition``."""
    out: list[str] = []
    for key in _visible(definition):
        _key_rst(key, out)
        out.append("\n")
    return "".join(out)


def to_enriched_rst(definition: ConfigDef) -> str:
    """Kafka's ``toEnrichedRst`` output for ``definition``."""
    out: list[str] = []
    last_group = ""
    for key in _visible(definition):
        if key.group is not None:
            if last_group.lower() != key.group.lower():
                out.append(f"{key.group}\n{'^' * len(key.group)}\n\n")
            last_group = key.group
        _key_rst(key, out)
        if key.dependents:
            out.append("  * Dependents: " + ", ".join(f"``{d}``" for d in key.dependents) + "\n")
        out.append("\n")
    return "".join(out)


def _detail(out: list[str], name: str, value: str) -> None:
    out.append(f"<tr><th>{name}:</th><td>{value}</td></tr>\n")


def to_html(
    definition: ConfigDef,
    header_depth: int = 4,
    id_generator: Callable[[str], str] | None = None,
    dynamic_update_modes: Mapping[str, str] | None = None,
) -> str:
    """Kafka's ``toHtml(headerDepth, idGenerator, dynamicUpdateModes)`` output."""
    modes = dict(dynamic_update_modes or {})
    make_id = id_generator if id_generator is not None else (lambda name: name)
    out = ['<ul class="config-list">\n']
    for key in _visible(definition):
        anchor = make_id(key.name)
        out.append("<li>\n")
        out.append(
            f'<h{header_depth}><a id="{key.name}"></a>'
            f'<a id="{anchor}" href="#{anchor}">{key.name}</a></h{header_depth}>\n'
        )
        doc = "" if key.documentation is None else key.documentation.replace("\n", "<br>")
        out.append(f"<p>{doc}</p>\n")
        out.append("<table><tbody>\n")
        for header in _HEADERS[2:]:
            if header == "Default" and key.alternative_string is not None:
                _detail(out, header, key.alternative_string)
            else:
                _detail(out, header, config_value(key, header))
        if modes:
            _detail(out, "Update Mode", modes.get(key.name, "read-only"))
        out.append("</tbody></table>\n")
        out.append("</li>\n")
    out.append("</ul>\n")
    return "".join(out)


def to_html_table(
    definition: ConfigDef, dynamic_update_modes: Mapping[str, str] | None = None
) -> str:
    """Kafka's ``toHtmlTable(dynamicUpdateModes)`` output (with its doubled ``</td>``)."""
    modes = dict(dynamic_update_modes or {})
    out = ['<table class="data-table"><tbody>\n', "<tr>\n"]
    headers = list(_HEADERS) + (["Dynamic Update Mode"] if modes else [])
    out.extend(f"<th>{h}</th>\n" for h in headers)
    out.append("</tr>\n")
    for key in _visible(definition):
        out.append("<tr>\n")
        out.extend(f"<td>{config_value(key, h)}</td></td>" for h in _HEADERS)
        if modes:
            out.append(f"<td>{modes.get(key.name, 'read-only')}</td>")
        out.append("</tr>\n")
    out.append("</tbody></table>")
    return "".join(out)


def _md(text: str) -> str:
    # HTML-escaped, so that "<topic.prefix>" shows as written instead of vanishing as a tag
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = text.replace("\\", "\\\\").replace("|", "\\|").replace("*", "\\*")
    return text.replace("\r\n", "\n").replace("\n", "<br>")


def _md_code(text: str) -> str:
    if not text:
        return ""
    return "`" + text.replace("|", "\\|").replace("`", "'").replace("\n", " ") + "`"


def to_markdown(definition: ConfigDef) -> str:
    """connect-cdk's Markdown reference: a table per group (see the module docstring)."""
    out: list[str] = []
    current: object = object()
    header = (
        "| Name | Description | Type | Default | Valid Values | Importance |\n"
        "|------|-------------|------|---------|--------------|------------|\n"
    )
    for key in _visible(definition):
        if key.group != current:
            if out:
                out.append("\n")
            if key.group is not None:
                out.append(f"## {_md(key.group)}\n\n")
            out.append(header)
            current = key.group
        default = config_value(key, "Default")
        default_cell = "(required)" if not key.has_default() else _md_code(default)
        doc = "" if key.documentation is None else _md(key.documentation)
        cells = [
            _md_code(key.name),
            doc,
            key.type.name.lower(),
            default_cell,
            _md(config_value(key, "Valid Values")),
            "" if key.importance is None else key.importance.name.lower(),
        ]
        out.append("| " + " | ".join(cells) + " |\n")
    return "".join(out)
