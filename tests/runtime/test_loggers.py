"""Kafka (log4j) level names and Python's logging levels, both ways."""

from __future__ import annotations

import logging

import pytest

from cdk.runtime._loggers import KAFKA_LEVELS, kafka_level_name, to_python_level


@pytest.mark.parametrize("name", list(KAFKA_LEVELS))
def test_every_kafka_level_round_trips(name: str) -> None:
    level = to_python_level(name.lower())
    assert level is not None
    assert kafka_level_name(level) == name


@pytest.mark.parametrize(
    ("python_level", "kafka"),
    [
        (logging.NOTSET, "ALL"),
        (logging.DEBUG + 5, "DEBUG"),  # between two Kafka levels: the lower one
        (logging.WARNING, "WARN"),
        (logging.ERROR + 1, "ERROR"),
        (logging.CRITICAL, "FATAL"),
        (logging.CRITICAL + 1, "OFF"),
        (100, "OFF"),
    ],
)
def test_python_levels_read_as_kafka_levels(python_level: int, kafka: str) -> None:
    assert kafka_level_name(python_level) == kafka


@pytest.mark.parametrize("name", ["", " ", "WARNING", "CRITICAL", "VERBOSE", "10"])
def test_other_names_are_not_levels(name: str) -> None:
    assert to_python_level(name) is None
