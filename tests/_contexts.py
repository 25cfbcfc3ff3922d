"""A sink task context for unit tests that call a task directly, without a worker."""

from __future__ import annotations

from typing import Any

from typing_extensions import override

from cdk import TopicPartition
from cdk.api import ErrantRecordReporter, SinkTaskContext


class StubSinkTaskContext(SinkTaskContext):
    """Records the timeouts a task asks for; hands out ``reporter``; everything else is a no-op.

    Args:
        reporter: what ``errant_record_reporter()`` returns.
    """

    def __init__(self, reporter: ErrantRecordReporter | None = None) -> None:
        self.reporter = reporter
        self.timeouts: list[int] = []

    @override
    def configs(self) -> dict[str, str]:
        return {}

    @override
    def offset(self, target: Any, offset: int | None = None, /) -> None:
        pass

    @override
    def timeout(self, timeout_ms: int) -> None:
        self.timeouts.append(timeout_ms)

    @override
    def assignment(self) -> set[TopicPartition]:
        return set()

    @override
    def pause(self, *partitions: TopicPartition) -> None:
        pass

    @override
    def resume(self, *partitions: TopicPartition) -> None:
        pass

    @override
    def request_commit(self) -> None:
        pass

    @override
    def errant_record_reporter(self) -> ErrantRecordReporter | None:
        return self.reporter
