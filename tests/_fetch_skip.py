"""A real consumer whose fetches once skip records, as the embedded broker's sometimes do.

Tansu now and then answers a fetch with records that begin past the offset asked for (the
records in between are on the broker; ``tests/stress/fetch_gap.py`` catches it under load, not
on demand). :class:`SkippingConsumer` makes that happen deterministically: it is a plain
confluent-kafka consumer of the real broker that leaves a range of offsets out of what it hands
to the application, the first time it fetches them, exactly as such a fetch would. Reading the
partition again from the first offset left out (a seek) finds them: the broker has them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from confluent_kafka import Consumer

__all__ = ["SkippingConsumer", "skipping_factory"]

#: (topic, partition, first offset left out, how many)
Skip = tuple[str, int, int, int]


class SkippingConsumer(Consumer):
    """A consumer that once leaves out ``count`` offsets from ``first`` of one partition.

    Each skip ends (for good) when the consumer hands out the first record past the range, so
    a re-read of the range gets every record.

    Args:
        config: the consumer's librdkafka config.
        skips: the ranges to leave out once: (topic, partition, first offset, count).
    """

    def __init__(self, config: Mapping[str, Any], skips: Sequence[Skip]) -> None:
        super().__init__(dict(config))
        self.pending = list(skips)
        self.left_out: list[tuple[str, int, int]] = []

    def _filter(self, messages: list[Any]) -> list[Any]:
        if not self.pending:
            return messages
        out = []
        for msg in messages:
            skip = self._skip_for(msg)
            if skip is not None:
                topic, partition, first, count = skip
                if msg.offset() < first + count:
                    self.left_out.append((topic, partition, msg.offset()))
                    continue
                self.pending.remove(skip)  # past the range: later fetches are honest
            out.append(msg)
        return out

    def _skip_for(self, msg: Any) -> Skip | None:
        if msg.error() is not None:
            return None
        for skip in self.pending:
            topic, partition, first, _count = skip
            if msg.topic() == topic and msg.partition() == partition and msg.offset() >= first:
                return skip
        return None

    def consume(self, num_messages: int = 1, timeout: float = -1) -> list[Any]:  # type: ignore[override]
        """What ``Consumer.consume`` returns, less the offsets left out."""
        return self._filter(super().consume(num_messages, timeout))

    def poll(self, timeout: float | None = None) -> Any:  # type: ignore[override]
        """What ``Consumer.poll`` returns, or None when it is an offset left out."""
        msg = super().poll(-1 if timeout is None else timeout)
        if msg is None:
            return None
        kept = self._filter([msg])
        return kept[0] if kept else None


def skipping_factory(
    skips: Sequence[Skip], made: list[SkippingConsumer] | None = None
) -> Callable[[Mapping[str, Any]], Consumer]:
    """A consumer factory (the sink runner's ``consumer_factory``) of skipping consumers."""

    def factory(config: Mapping[str, Any]) -> Consumer:
        consumer = SkippingConsumer(config, skips)
        if made is not None:
            made.append(consumer)
        return consumer

    return factory
