"""Hypothesis inside a check: its files kept in the check's directory, seeded draws."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["draw_examples", "hypothesis_home"]

T = TypeVar("T")


@contextlib.contextmanager
def hypothesis_home(directory: Path) -> Iterator[None]:
    """Keep hypothesis's files (constants, caches) in ``directory``, not in the project."""
    from hypothesis import configuration

    previous = getattr(configuration, "__hypothesis_home_directory", None)
    configuration.set_hypothesis_home_dir(directory)
    try:
        yield
    finally:
        configuration.set_hypothesis_home_dir(previous)


def draw_examples(strategy: Any, count: int, seed: int, home: Path) -> list[Any]:
    """Up to ``count`` distinct examples of ``strategy``, the same ones for the same ``seed``.

    Hypothesis generates them as it would for a test (no database, no shrinking): the first
    ones simple, later ones varied. Fewer come back when the strategy has fewer distinct
    values.
    """
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis import seed as seeded

    out: list[Any] = []

    @seeded(seed)
    @settings(
        max_examples=count,
        database=None,
        deadline=None,
        derandomize=False,
        phases=(Phase.generate,),
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
    )
    @given(strategy)
    def collect(value: Any) -> None:
        out.append(value)

    with hypothesis_home(home):
        collect()
    return out[:count]
