"""A sink task context for unit tests that call a task directly, without a worker."""

from __future__ import annotations

from harness import FakeSinkTaskContext

#: The kit's tests call it by its old name; partners use :class:`harness.FakeSinkTaskContext`.
StubSinkTaskContext = FakeSinkTaskContext

__all__ = ["StubSinkTaskContext"]
