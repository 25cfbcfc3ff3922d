"""The ACK suite proves itself: acknowledging sources are checked, replayable ones are not.

A replayable source (FileStream) gets the ACK checks SKIPPED as not applicable; an
acknowledging one (the RabbitMQ reference, against the machine's RabbitMQ server) passes them
and gets the replay checks SKIPPED; each broken RabbitMQ source of
``tests/certify/broken/ack.py`` fails the check written for it, naming the message ids. ACK-01
stalls the broker, so its runs start a broker of their own (``kafka="embedded"``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typing_extensions import override

from cdk import SourceRecord, SourceTask
from harness import ConnectorDriver, SourceKind
from harness.certify import CertificationRun, Outcome, certify
from reference_connectors.filestream.certify import FileStreamSourceDriver
from reference_connectors.rabbitmq import RabbitMQSourceConnector, RabbitMQSourceTask
from reference_connectors.rabbitmq._source import Delivery
from reference_connectors.rabbitmq.certify import RabbitMQSourceDriver
from tests.certify import _support
from tests.certify.broken import ack as broken
from tests.reference_connectors.rabbitmq._support import rabbit_problem

ACK_IDS = ["ACK-01", "ACK-02", "ACK-03", "ACK-04"]
#: The checks that replay a source from its offsets: not applicable to an acknowledging one.
REPLAY_IDS = ["OFF-02", "OFF-03", "OFF-04", "OFF-08"]

BROKEN = [
    ("ACK-01", broken.AckOnPollDriver, ["acknowledged in poll() or stop()", "(ids "]),
    ("ACK-02", broken.AckOnPollDriver, ["are in neither", "(ids "]),
    ("ACK-01", broken.AckOnStopDriver, ["acknowledged in poll() or stop()", "(ids "]),
    ("ACK-03", broken.NeverAckDriver, ["still holds", "that Kafka has (ids "]),
    ("ACK-04", broken.NoAckOnDropDriver, ["records dropped by a transformation", "(ids "]),
]


@pytest.fixture(scope="module")
def rabbitmq() -> None:
    problem = rabbit_problem()
    if problem is not None:
        pytest.skip(problem)


def _run(
    tmp_path: Path, only: list[str], driver: type[ConnectorDriver], kafka: str
) -> CertificationRun:
    project = _support.project_for(tmp_path, driver)
    return certify(project, kafka=kafka, only=only, workdir=tmp_path / "run")


def test_a_replayable_source_skips_the_ack_checks(kafka_bootstrap: str, tmp_path: Path) -> None:
    project = _support.project_for(tmp_path, FileStreamSourceDriver)
    run = _support.run_checks(project, ACK_IDS, kafka_bootstrap, tmp_path)
    assert [r.id for r in run.results] == ACK_IDS, _support.describe(run)
    for result in run.results:
        assert result.outcome is Outcome.SKIPPED, _support.describe(run)
        assert "FileStreamSourceDriver is replayable" in result.message, result.message


def test_the_rabbitmq_source_passes_the_ack_checks_and_skips_the_replay_checks(
    rabbitmq: None, tmp_path: Path
) -> None:
    run = _run(tmp_path, ACK_IDS + REPLAY_IDS, RabbitMQSourceDriver, "embedded")
    outcomes = {r.id: r for r in run.results}
    assert set(outcomes) == set(ACK_IDS + REPLAY_IDS), _support.describe(run)
    for check_id in ACK_IDS:
        assert outcomes[check_id].outcome is Outcome.PASSED, _support.describe(run)
    for check_id in REPLAY_IDS:
        result = outcomes[check_id]
        assert result.outcome is Outcome.SKIPPED, _support.describe(run)
        assert "declares source_kind = ACKNOWLEDGING" in result.message, result.message
    evidence = outcomes["ACK-01"].evidence
    assert evidence["polled while the broker was stopped"] > 0, evidence
    assert evidence["acknowledged before Kafka had them"] == 0, evidence


@pytest.mark.parametrize(
    ("check_id", "driver", "fragments"),
    BROKEN,
    ids=[f"{check_id}-{driver.__name__}" for check_id, driver, _ in BROKEN],
)
def test_broken_acknowledging_source_fails(
    rabbitmq: None,
    kafka_bootstrap: str,
    tmp_path: Path,
    check_id: str,
    driver: type[ConnectorDriver],
    fragments: list[str],
) -> None:
    kafka = "embedded" if check_id == "ACK-01" else kafka_bootstrap
    run = _run(tmp_path, [check_id], driver, kafka)
    _support.assert_outcome(run, check_id, Outcome.FAILED)
    (result,) = run.results
    for fragment in fragments:
        assert fragment in result.message, _support.describe(run)


# ---------------------------------------------------------------------------------------------
# OFF-02 takes nothing from the worker it checks.


class _CountingQueueSource(RabbitMQSourceTask):
    """A queue source whose records carry offsets that cannot replay (the partner's mistake).

    Each record says ``{"consumed": n}`` for its queue: a count, not a position the queue can
    go back to. Declared replayable (the default), it gets OFF-02.
    """

    def __init__(self) -> None:
        super().__init__()
        self._consumed = 0

    @override
    def _record(self, delivery: Delivery) -> SourceRecord:
        self._consumed += 1
        return (
            super()
            ._record(delivery)
            .new_record(
                source_partition={"queue": delivery.queue},
                source_offset={"consumed": self._consumed},
            )
        )


class _CountingQueueConnector(RabbitMQSourceConnector):
    @override
    def task_class(self) -> type[SourceTask]:
        return _CountingQueueSource


class _LingeringQueueDriver(RabbitMQSourceDriver):
    """The queue, declared replayable, with a producer that lingers 3 s (records in flight)."""

    connector = _CountingQueueConnector
    source_kind = SourceKind.REPLAYABLE
    records_carry_offsets = True

    @override
    def example_config(self, topic: str) -> dict[str, str]:
        return {**super().example_config(topic), "producer.override.linger.ms": "3000"}


def test_off02_never_takes_the_messages_the_restarted_worker_must_read(
    rabbitmq: None, kafka_bootstrap: str, tmp_path: Path
) -> None:
    # Before: between the kill and the restart OFF-02 ran the connector in-process to learn
    # what the committed offsets cover; on a queue it received the messages RabbitMQ had just
    # redelivered and acknowledged them, so the restarted worker never saw them ("5 missing").
    run = _support.run_checks(
        _support.project_for(tmp_path, _LingeringQueueDriver), ["OFF-02"], kafka_bootstrap, tmp_path
    )
    (result,) = run.results
    assert result.outcome is Outcome.PASSED, _support.describe(run)
    assert "missing" not in result.message
