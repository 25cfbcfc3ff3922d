"""Headers the REST API adds to its responses: ``response.http.headers.config`` and CORS.

``response.http.headers.config`` is Kafka's list of rules ``[action] [name]:[value]``, comma
separated (a rule with a comma in its value is double-quoted), with Jetty's actions: ``set``
(replace), ``add`` (one more), ``setDate``/``addDate`` (the value is a number of milliseconds
after now, sent as an HTTP date). ``access.control.allow.origin`` and
``access.control.allow.methods`` answer cross-origin requests as Kafka's Jetty
``CrossOriginFilter`` does.
"""

from __future__ import annotations

import email.utils
import fnmatch
import time
from collections.abc import Mapping
from typing import NamedTuple

from cdk.errors import ConfigException

__all__ = ["Cors", "HeaderRule", "apply_header_rules", "parse_header_rules"]

_ACTIONS = ("set", "add", "setDate", "addDate")
_CORS_DEFAULT_METHODS = "GET,POST,HEAD"
_CORS_ALLOWED_HEADERS = "X-Requested-With,Content-Type,Accept,Origin"
_CORS_MAX_AGE_S = "1800"


class HeaderRule(NamedTuple):
    """One rule of ``response.http.headers.config``."""

    action: str
    name: str
    value: str


def _split_rules(text: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    quoted = False
    for char in text:
        if char == '"':
            quoted = not quoted
        elif char == "," and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


def parse_header_rules(key: str, text: str) -> list[HeaderRule]:
    """Parse ``response.http.headers.config`` (Kafka's format and error texts).

    Raises:
        ConfigException: a rule is malformed or its action unknown; names the rule.
    """
    rules: list[HeaderRule] = []
    for rule in _split_rules(text):
        tokens = rule.split(None, 1)
        if len(tokens) != 2:
            raise ConfigException(
                key,
                text,
                f"Invalid format of header config '{rule}'. Expected: "
                "'[action] [header name]:[header value]'",
            )
        action = next((a for a in _ACTIONS if a.lower() == tokens[0].lower()), None)
        if action is None:
            raise ConfigException(
                key,
                text,
                f"Invalid header config action: '{tokens[0]}'. Expected one of "
                f"[{', '.join(_ACTIONS)}]",
            )
        pair = tokens[1].strip().split(":")
        if len(pair) > 2:
            raise ConfigException(
                key,
                text,
                f"Invalid format of header name and header value pair '{tokens[1]}'. Expected: "
                "'[header name]:[header value]'",
            )
        name = pair[0].strip()
        if not name or any(c.isspace() for c in name):
            raise ConfigException(key, text, f"Invalid header name '{pair[0]}'")
        value = pair[1].strip() if len(pair) == 2 else ""
        if action.endswith("Date"):
            try:
                int(value)
            except ValueError:
                raise ConfigException(
                    key, text, f"Invalid date header value '{value}': milliseconds expected"
                ) from None
        rules.append(HeaderRule(action, name, value))
    return rules


def apply_header_rules(
    headers: list[tuple[str, str]], rules: list[HeaderRule]
) -> list[tuple[str, str]]:
    """``headers`` (a response's, in order) after the rules."""
    out = list(headers)
    for rule in rules:
        value = rule.value
        if rule.action.endswith("Date"):
            value = email.utils.formatdate(time.time() + int(value) / 1000.0, usegmt=True)
        if rule.action.startswith("set"):
            out = [(k, v) for k, v in out if k.lower() != rule.name.lower()]
        out.append((rule.name, value))
    return out


class Cors:
    """Kafka's cross-origin answers (Jetty's ``CrossOriginFilter``, preflight not chained).

    Args:
        origins: ``access.control.allow.origin``: ``*``, or comma-separated origins (``*``
            wildcards allowed); empty: cross-origin requests get no CORS headers.
        methods: ``access.control.allow.methods`` (``GET,POST,HEAD`` when empty).
    """

    def __init__(self, origins: str, methods: str) -> None:
        self._origins = [o.strip() for o in origins.split(",") if o.strip()]
        self.methods = methods.strip() or _CORS_DEFAULT_METHODS

    @property
    def enabled(self) -> bool:
        """Whether any origin is allowed."""
        return bool(self._origins)

    def allows(self, origin: str | None) -> bool:
        """Whether ``origin`` may make cross-origin requests."""
        if not origin or not self._origins:
            return False
        return any(o == "*" or fnmatch.fnmatchcase(origin, o) for o in self._origins)

    def is_preflight(self, method: str, request: Mapping[str, str]) -> bool:
        """Whether the request is a CORS preflight this filter answers itself."""
        return (
            method == "OPTIONS"
            and self.allows(request.get("Origin"))
            and bool(request.get("Access-Control-Request-Method"))
        )

    def headers(self, method: str, request: Mapping[str, str]) -> list[tuple[str, str]]:
        """The CORS headers of the answer to a request (none for a disallowed origin)."""
        origin = request.get("Origin")
        if not self.allows(origin):
            return []
        assert origin is not None
        out = [
            ("Access-Control-Allow-Origin", origin),
            ("Access-Control-Allow-Credentials", "true"),
        ]
        if self.is_preflight(method, request):
            out += [
                ("Access-Control-Allow-Methods", self.methods),
                ("Access-Control-Allow-Headers", _CORS_ALLOWED_HEADERS),
                ("Access-Control-Max-Age", _CORS_MAX_AGE_S),
            ]
        return out
