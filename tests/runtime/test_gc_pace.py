"""Tasks raise the garbage collector's first-generation threshold, never lower it."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from cdk.runtime._gc import GEN0_THRESHOLD, pace_gc_for_records


@pytest.fixture(autouse=True)
def _restore_threshold() -> Iterator[None]:
    saved = gc.get_threshold()
    yield
    gc.set_threshold(*saved)


def test_raises_the_default_threshold_and_keeps_the_older_generations() -> None:
    gc.set_threshold(700, 11, 12)
    pace_gc_for_records()
    assert gc.get_threshold() == (GEN0_THRESHOLD, 11, 12)
    pace_gc_for_records()
    assert gc.get_threshold() == (GEN0_THRESHOLD, 11, 12)


def test_never_lowers_a_higher_threshold_nor_switches_the_collector_on() -> None:
    gc.set_threshold(GEN0_THRESHOLD * 5, 10, 10)
    pace_gc_for_records()
    assert gc.get_threshold()[0] == GEN0_THRESHOLD * 5
    gc.set_threshold(0)
    pace_gc_for_records()
    assert gc.get_threshold()[0] == 0
