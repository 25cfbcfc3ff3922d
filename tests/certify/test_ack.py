"""The ACK suite proves itself: acknowledging sources are checked, replayable ones are not.

A replayable source (FileStream) gets the ACK checks SKIPPED as not applicable; an
acknowledging one (the RabbitMQ reference, against the machine's RabbitMQ server) passes them
and gets the replay checks SKIPPED; each broken RabbitMQ source of
``tests/certify/broken/ack.py`` fails the check written for it, naming the message ids.
"""

from __future__ import annotations

from pathlib import Path

from harness.certify import Outcome
from reference_connectors.filestream.certify import FileStreamSourceDriver
from tests.certify import _support

ACK_IDS = ["ACK-01", "ACK-02", "ACK-03", "ACK-04"]


def test_a_replayable_source_skips_the_ack_checks(kafka_bootstrap: str, tmp_path: Path) -> None:
    project = _support.project_for(tmp_path, FileStreamSourceDriver)
    run = _support.run_checks(project, ACK_IDS, kafka_bootstrap, tmp_path)
    assert [r.id for r in run.results] == ACK_IDS, _support.describe(run)
    for result in run.results:
        assert result.outcome is Outcome.SKIPPED, _support.describe(run)
        assert "FileStreamSourceDriver is replayable" in result.message, result.message
