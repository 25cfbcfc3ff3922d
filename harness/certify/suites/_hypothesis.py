"""Hypothesis inside a check: its caches shared out of the project, seeded draws."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

from harness._cache import cache_folder

__all__ = ["cache_directory", "draw_examples", "hypothesis_home"]

T = TypeVar("T")


@contextlib.contextmanager
def hypothesis_home(directory: Path) -> Iterator[None]:
    """Keep hypothesis's files out of the project: in the user's cache, else in ``directory``.

    Hypothesis writes no examples here (the checks run without its database), only what it
    derives and caches: the Unicode tables its text strategies need and the constants it
    collects from the loaded modules' source. Both cost seconds of CPU to build, so every
    check of every run shares one copy, in :func:`cache_directory` (written atomically by
    hypothesis, so concurrent checks may share it); ``directory`` is used when that cannot be
    created.
    """
    from hypothesis import configuration

    previous = getattr(configuration, "__hypothesis_home_directory", None)
    configuration.set_hypothesis_home_dir(cache_directory() or directory)
    try:
        yield
    finally:
        configuration.set_hypothesis_home_dir(previous)


def cache_directory() -> Path | None:
    """``$XDG_CACHE_HOME/connect-cdk/hypothesis`` (``~/.cache`` by default), if it can be made."""
    path = cache_folder("hypothesis")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return path if os.access(path, os.W_OK) else None


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
