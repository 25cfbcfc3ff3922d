"""The providers' public names, and the modules kept importable from before the move."""

from __future__ import annotations

import importlib

import pytest

import harness.providers


@pytest.mark.parametrize("kind", ["kafka", "spark"])
def test_the_earlier_modules_give_the_same_objects(kind: str) -> None:
    earlier = importlib.import_module(f"harness.{kind}")
    current = importlib.import_module(f"harness.providers.{kind}")
    assert sorted(earlier.__all__) == sorted(current.__all__)
    for name in current.__all__:
        assert getattr(earlier, name) is getattr(current, name), name


def test_the_package_names_the_two_pickers() -> None:
    assert harness.providers.kafka_provider("embedded").__class__.__name__ == "EmbeddedKafka"
    assert harness.providers.spark_provider("local[1]").__class__.__name__ == "LocalSpark"
    for name in harness.providers.__all__:
        assert getattr(harness.providers, name).__module__.startswith("harness.providers")
