"""The CFG suite proves itself: the reference connectors pass it, each broken connector fails.

The broken connectors (tests/certify/broken/cfg.py) get one configuration thing wrong each; the
test asserts that the check about it fails with a message naming the defect.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import ConnectorDriver
from harness.certify import Outcome
from reference_connectors.filestream.certify import FileStreamSinkDriver, FileStreamSourceDriver
from tests.certify import _support
from tests.certify.broken import cfg as broken
from tests.certify.broken._sqlite_base.certify import SqliteSinkDriver, SqliteSourceDriver

CFG_IDS = [f"CFG-0{n}" for n in range(1, 9)]

#: Checks the correct connectors skip, with why (anything else must pass).
EXPECTED_SKIPS = {
    ("CFG-08", "FileStreamSourceDriver"),  # no PASSWORD key
    ("CFG-08", "FileStreamSinkDriver"),  # no PASSWORD key
    ("CFG-05", "FileStreamSinkDriver"),  # one STRING key with a default: nothing is invalid
    ("CFG-08", "SqliteSourceDriver"),  # no PASSWORD key
    ("CFG-08", "SqliteSinkDriver"),  # no PASSWORD key
}


def test_correct_connectors_pass(kafka_bootstrap: str, tmp_path: Path) -> None:
    drivers: list[type[ConnectorDriver]] = [
        FileStreamSourceDriver,
        FileStreamSinkDriver,
        SqliteSourceDriver,
        SqliteSinkDriver,
        broken.SecretSourceDriver,
    ]
    project = _support.project_for(tmp_path, *drivers)
    run = _support.run_checks(project, ["CFG"], kafka_bootstrap, tmp_path)
    assert len(run.results) == len(CFG_IDS) * len(drivers), _support.describe(run)
    for result in run.results:
        skip = (result.id, result.subject) in EXPECTED_SKIPS
        expected = Outcome.SKIPPED if skip else Outcome.PASSED
        _support.assert_outcome(run, result.id, expected, subject=result.subject)
        if skip:
            assert result.message, _support.describe(run)


BROKEN = [
    ("CFG-01", broken.UndocumentedKeyDriver, ["poll.interval.ms"]),
    ("CFG-02", broken.RaisingValidateDriver, ["raised KeyError", "'topic'"]),
    ("CFG-02", broken.SilentValidateDriver, ["reports none on topic"]),
    ("CFG-03", broken.InvalidExampleDriver, ["batch.size", "at least 1"]),
    ("CFG-04", broken.FragileValidateDriver, ["ValueError", "batch.size"]),
    # as SqlSinkConnector.validate() did with a 300-character connection.url
    (
        "CFG-04",
        broken.PathProbingDriver,
        ["file = 'xxxxxxxx", "(300 characters) OSError: [Errno 36] File name too long"],
    ),
    ("CFG-05", broken.RawErrorStartDriver, ["KeyError", "ValueError"]),
    ("CFG-06", broken.TooManyTasksDriver, ["task_configs(1) returned 2 configs"]),
    ("CFG-07", broken.BadNameDriver, ["'FileStreamSourceThing'", "SourceConnector"]),
    ("CFG-07", broken.EmptyVersionDriver, ["version() returned the empty string"]),
    ("CFG-08", broken.TaskConfigLeakDriver, ["/tasks", "file.credential"]),
    ("CFG-08", broken.LogLeakDriver, ["log lines", "password [hidden]"]),
]


@pytest.mark.parametrize(
    ("check_id", "driver", "fragments"),
    BROKEN,
    ids=[f"{check_id}-{driver.__name__}" for check_id, driver, _ in BROKEN],
)
def test_broken_connector_fails(
    check_id: str,
    driver: type[ConnectorDriver],
    fragments: list[str],
    kafka_bootstrap: str,
    tmp_path: Path,
) -> None:
    result = _support.assert_broken_fails(check_id, driver, fragments, kafka_bootstrap, tmp_path)
    assert "cdk-canary" not in (result.message + (result.details or ""))


def test_broken_drivers_are_all_tested() -> None:
    tested = {(check_id, driver) for check_id, driver, _ in BROKEN}
    for check_id, drivers in broken.broken_drivers().items():
        for driver in drivers:
            assert (check_id, driver) in tested
    assert {check_id for check_id, _, _ in BROKEN} == set(CFG_IDS)


def test_configs_for_draws_missing_valid_and_invalid_values() -> None:
    from hypothesis import HealthCheck, given, settings

    from cdk.config import ConfigDef, Importance, Type, validators
    from harness.strategies import configs_for

    definition = (
        ConfigDef()
        .define("name", Type.STRING, None, None, Importance.HIGH, "a name")
        .define("size", Type.INT, 1, validators.Range.between(1, 10), Importance.LOW, "a size")
        .define("mode", Type.STRING, "a", validators.ValidString.of("a", "b"), Importance.LOW, "m")
        .define("on", Type.BOOLEAN, True, None, Importance.LOW, "a switch")
    )
    seen: dict[str, set[str]] = {"missing": set(), "valid": set(), "invalid": set()}

    @settings(
        max_examples=200,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(configs_for(definition))
    def collect(config: dict[str, str]) -> None:
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in config.items())
        for value in definition.validate(config):
            if value.name not in config:
                seen["missing"].add(value.name)
            elif value.error_messages:
                seen["invalid"].add(value.name)
            else:
                seen["valid"].add(value.name)

    collect()
    assert seen["missing"] == {"name", "size", "mode", "on"}
    assert seen["valid"] == {"name", "size", "mode", "on"}
    assert {"size", "mode", "on"} <= seen["invalid"]
