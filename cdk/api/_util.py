"""Helpers for connector authors (Kafka's ``ConnectorUtils``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

__all__ = ["group_partitions"]

T = TypeVar("T")


def group_partitions(elements: Sequence[T], num_groups: int) -> list[list[T]]:
    """Split ``elements`` into ``num_groups`` contiguous groups of near-equal size.

    As Kafka's ``ConnectorUtils.groupPartitions``: the first ``len(elements) % num_groups`` groups
    hold one element more than the rest, order is kept, and groups may be empty when there are
    fewer elements than groups. A connector typically turns each group into one task config.

    Args:
        elements: the units of work (tables, files, source partitions...).
        num_groups: how many groups to make, usually ``max_tasks``.

    Returns:
        ``num_groups`` lists whose concatenation is ``elements``.

    Raises:
        ValueError: when ``num_groups`` is not positive.
    """
    if num_groups <= 0:
        raise ValueError(f"Number of groups must be positive, got {num_groups}")
    per_group, leftover = divmod(len(elements), num_groups)
    groups: list[list[T]] = []
    start = 0
    for index in range(num_groups):
        size = per_group + (1 if index < leftover else 0)
        groups.append(list(elements[start : start + size]))
        start += size
    return groups
