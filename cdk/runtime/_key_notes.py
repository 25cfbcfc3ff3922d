"""Kafka keys that do something else in cdk, unknown keys, and the closest known key.

Every key of Kafka 3.9's worker and connector configurations either works as in Kafka or is
listed here: :data:`WORKER_KEY_NOTES` says, for a worker key the kit accepts without acting on
it, why and what to use instead (a warning when it is set), or refuses it at start when
ignoring it would be unsafe. :data:`CONNECTOR_KEY_NOTES` does the same for connector keys (the
``validate`` endpoint reports them). The running guide's table of differences from Kafka is
tested against these two mappings.

A supplied key that no configuration defines is warned about with Kafka's text
(``AbstractConfig.logUnused``), and, unlike Kafka, with the closest known key when one is close
enough (:func:`closest_key`).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Literal, NamedTuple

__all__ = [
    "CONNECTOR_KEY_NOTES",
    "WORKER_KEY_NOTES",
    "KeyNote",
    "closest_key",
    "key_notes_rst",
    "no_effect_message",
    "unknown_key_message",
]

Mode = Literal["standalone", "distributed"]
BOTH: frozenset[Mode] = frozenset({"standalone", "distributed"})
DISTRIBUTED: frozenset[Mode] = frozenset({"distributed"})


class KeyNote(NamedTuple):
    """How a Kafka key differs in cdk.

    Attributes:
        modes: the modes where it differs (``standalone``, ``distributed``).
        refused: the worker (or ``validate``) refuses the key when it is set, rather than
            warning: ignoring it would weaken security or lose data.
        note: one sentence: why it has no effect here and what to use instead.
    """

    modes: frozenset[Mode]
    refused: bool
    note: str


_GROUP = (
    "the leading driver assigns the tasks to the workers on Spark through the assignments "
    "topic, with no Kafka group protocol; a lost worker's tasks move when its heartbeats stop "
    "for session.timeout.ms"
)
_SIGNING = (
    "drivers and workers exchange assignments through Kafka topics, not signed internal REST "
    "requests; protect the internal topics with ACLs"
)
_MEMBER_CLIENT = (
    "it configures Kafka's group-membership client, which cdk does not have; set "
    "admin.{key} for the clients of the internal topics and producer./consumer. for the tasks'"
)
_METRICS = "cdk has no JMX or Java metrics reporters; scrape GET /metrics (Prometheus text format)"

WORKER_KEY_NOTES: dict[str, KeyNote] = {
    "plugin.discovery": KeyNote(
        BOTH,
        False,
        "plugins are the 'cdk.plugins' entry points of installed distributions and of "
        "plugin.path; there is no class scanning to choose",
    ),
    "rest.extension.classes": KeyNote(
        BOTH,
        True,
        "Java REST extensions cannot run in cdk; use rest.basic.auth.user and "
        "rest.basic.auth.password, client certificates (listeners.https.ssl.client.auth), or a "
        "reverse proxy",
    ),
    "metric.reporters": KeyNote(BOTH, False, _METRICS),
    "auto.include.jmx.reporter": KeyNote(BOTH, False, _METRICS),
    "metrics.recording.level": KeyNote(
        BOTH, False, "cdk records every metric it has at any level; nothing to choose"
    ),
    "client.dns.lookup": KeyNote(
        BOTH,
        False,
        "the worker's clients take their settings from prefixed keys; set "
        "admin.client.dns.lookup, producer.client.dns.lookup and consumer.client.dns.lookup",
    ),
    **{
        key: KeyNote(
            BOTH,
            False,
            "a JVM setting; Python's ssl module and librdkafka use OpenSSL's algorithms and "
            "random source, nothing to choose",
        )
        for key in (
            "ssl.keymanager.algorithm",
            "ssl.trustmanager.algorithm",
            "ssl.secure.random.implementation",
            "ssl.provider",
        )
    },
    "rebalance.timeout.ms": KeyNote(DISTRIBUTED, False, _GROUP),
    "worker.sync.timeout.ms": KeyNote(DISTRIBUTED, False, _GROUP),
    "worker.unsync.backoff.ms": KeyNote(DISTRIBUTED, False, _GROUP),
    "scheduled.rebalance.max.delay.ms": KeyNote(DISTRIBUTED, False, _GROUP),
    "connect.protocol": KeyNote(DISTRIBUTED, False, _GROUP),
    **{
        key: KeyNote(DISTRIBUTED, False, _SIGNING)
        for key in (
            "inter.worker.key.generation.algorithm",
            "inter.worker.key.size",
            "inter.worker.key.ttl.ms",
            "inter.worker.signature.algorithm",
            "inter.worker.verification.algorithms",
        )
    },
    **{
        key: KeyNote(DISTRIBUTED, False, _MEMBER_CLIENT.format(key=key))
        for key in (
            "client.id",
            "metadata.max.age.ms",
            "send.buffer.bytes",
            "receive.buffer.bytes",
            "reconnect.backoff.ms",
            "reconnect.backoff.max.ms",
            "retry.backoff.ms",
            "retry.backoff.max.ms",
            "request.timeout.ms",
            "socket.connection.setup.timeout.ms",
            "socket.connection.setup.timeout.max.ms",
            "connections.max.idle.ms",
        )
    },
}
"""Kafka worker keys that have no effect in cdk (warned about when set) or are refused."""

CONNECTOR_KEY_NOTES: dict[str, KeyNote] = {
    "offsets.storage.topic": KeyNote(
        BOTH,
        True,
        "cdk keeps every connector's source offsets in the worker's offsets storage (its "
        "offset.storage.topic in distributed mode, offset.storage.file.filename in standalone "
        "mode), not in a topic of the connector's own; remove the key (or run the connector on "
        "a worker whose offset.storage.topic is that topic)",
    ),
}
"""Kafka connector keys that differ in cdk (``validate`` reports them when set)."""


def no_effect_message(key: str, note: KeyNote, mode: str) -> str:
    """The one line said when ``key`` is set: what it does not do here and what to use."""
    verb = "is not supported" if note.refused else "has no effect"
    return f"The configuration '{key}' {verb} in cdk {mode}: {note.note}."


def closest_key(key: str, known: Iterable[str]) -> str | None:
    """The known key closest to ``key`` when one is close enough to be a likely typo."""
    matches = difflib.get_close_matches(key, list(known), n=1, cutoff=0.8)
    return matches[0] if matches else None


def unknown_key_message(key: str, known: Iterable[str]) -> str:
    """Kafka's warning for an unknown key, with the closest known key when there is one."""
    text = f"The configuration '{key}' was supplied but isn't a known config."
    suggestion = closest_key(key, known)
    if suggestion is not None:
        text = f"{text[:-1]}; did you mean '{suggestion}'?"
    return text


def key_notes_rst() -> str:
    """The running guide's table of the keys that differ from Kafka (a test keeps them equal)."""
    lines = [
        ".. list-table::",
        "   :header-rows: 1",
        "   :widths: 25 10 15 50",
        "",
        "   * - Key",
        "     - Of",
        "     - Modes",
        "     - In cdk",
    ]
    for scope, notes in (("worker", WORKER_KEY_NOTES), ("connector", CONNECTOR_KEY_NOTES)):
        for key, note in sorted(notes.items()):
            modes = ", ".join(sorted(note.modes))
            what = "refused" if note.refused else "no effect, warned at start"
            if scope == "connector":
                what = "refused by validate" if note.refused else "no effect, warned by validate"
            lines += [
                f"   * - ``{key}``",
                f"     - {scope}",
                f"     - {modes}",
                f"     - {what}: {note.note}.",
            ]
    return "\n".join(lines) + "\n"
