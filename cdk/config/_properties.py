r"""Reading Java ``.properties`` files (the format of Kafka Connect worker and connector configs).

Implements ``java.util.Properties.load``: ``#`` and ``!`` comment lines, keys separated from values
by ``=``, ``:`` or whitespace, lines continued with a trailing backslash (leading whitespace of the
continuation is dropped), and the escapes ``\\t \\n \\r \\f \\uXXXX`` (any other escaped
character stands for itself). The last of duplicate keys wins.
"""

from __future__ import annotations

import os
from pathlib import Path

from cdk.errors import ConfigException

__all__ = ["load_properties", "parse_properties"]

_WHITESPACE = " \t\f"
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _logical_lines(text: str) -> list[str]:
    """Join continued lines; drop comments and blank lines."""
    natural = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    lines: list[str] = []
    current: str | None = None
    for raw in natural:
        line = raw.lstrip(_WHITESPACE)
        if current is None:
            if not line or line[0] in "#!":
                continue
            current = ""
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:
            current += line[:-1]
            continue
        lines.append(current + line)
        current = None
    if current is not None:
        lines.append(current)
    return lines


def _unescape(text: str, line_no: int) -> str:
    out: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        char = text[i]
        if char != "\\":
            out.append(char)
            i += 1
            continue
        i += 1
        if i >= n:
            break
        char = text[i]
        if char == "u":
            digits = text[i + 1 : i + 5]
            if len(digits) != 4 or any(c not in "0123456789abcdefABCDEF" for c in digits):
                raise ConfigException(
                    f"Malformed \\uxxxx encoding in properties line {line_no}: {text!r}"
                )
            out.append(chr(int(digits, 16)))
            i += 5
            continue
        out.append(_ESCAPES.get(char, char))
        i += 1
    return "".join(out)


def _split(line: str) -> tuple[str, str]:
    """Split a logical line into its raw (still escaped) key and value."""
    i = 0
    n = len(line)
    while i < n:
        char = line[i]
        if char == "\\":
            i += 2
            continue
        if char in "=:" or char in _WHITESPACE:
            break
        i += 1
    key = line[:i]
    j = i
    while j < n and line[j] in _WHITESPACE:
        j += 1
    if j < n and line[j] in "=:":
        j += 1
        while j < n and line[j] in _WHITESPACE:
            j += 1
    return key, line[j:]


def parse_properties(text: str) -> dict[str, str]:
    r"""Parse the text of a Java ``.properties`` file.

    Args:
        text: the file's content.

    Returns:
        The properties, in file order (a repeated key keeps its last value).

    Raises:
        ConfigException: a malformed ``\\uXXXX`` escape.
    """
    result: dict[str, str] = {}
    for number, line in enumerate(_logical_lines(text), start=1):
        raw_key, raw_value = _split(line)
        result[_unescape(raw_key, number)] = _unescape(raw_value, number)
    return result


def load_properties(source: str | os.PathLike[str]) -> dict[str, str]:
    """Read a Java ``.properties`` file (UTF-8; a ``str`` with a newline is parsed as text).

    Args:
        source: a path, or the properties text itself when it contains a line break.

    Returns:
        The properties.

    Raises:
        ConfigException: the file cannot be read or is malformed; the message names the file.
    """
    if isinstance(source, str) and ("\n" in source or "\r" in source):
        return parse_properties(source)
    path = Path(source)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        text = path.read_text(encoding="latin-1")
    except OSError as exc:
        raise ConfigException(f"Could not read properties from file {path}: {exc}") from exc
    return parse_properties(text)
