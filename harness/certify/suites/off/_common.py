"""What the OFF checks share: batch sizes and deadlines, the offsets REST API, wording."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from harness.certify._checks import CheckFailed
from harness.certify._context import CheckContext, WorkerHandle
from harness.certify._rest import RestClient

__all__: list[str] = []


#: Records per batch in the checks (small: each check runs in seconds on a correct connector).
_BATCH = 40
#: How long a check waits for records that a correct connector delivers in a few seconds.
_DELIVERY_TIMEOUT = 40.0
#: Resume points OFF-03 tries at most.
_RESUME_SAMPLES = 8


def _rest_offsets(rest: RestClient, name: str) -> list[dict[str, Any]]:
    answer = rest.get(f"/connectors/{name}/offsets")
    body = answer.json
    if answer.status != 200 or not isinstance(body, dict):
        return []
    entries = body.get("offsets")
    return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []


def _fail_on_failed_task(rest: RestClient, name: str, expected: str) -> None:
    """Fail the check if the connector or one of its tasks is FAILED (with its trace).

    Raises:
        CheckFailed: naming what failed and the first lines of its trace.
    """
    answer = rest.get(f"/connectors/{name}/status")
    status = answer.json if answer.status == 200 else None
    if not isinstance(status, dict):
        return
    states = [("the connector", status.get("connector") or {})]
    states += [(f"task {t.get('id')}", t) for t in status.get("tasks") or []]
    for what, state in states:
        if isinstance(state, dict) and state.get("state") == "FAILED":
            trace = str(state.get("trace") or "")
            raise CheckFailed(
                expected,
                f"{what} of {name} FAILED: {_brief(' | '.join(trace.splitlines()[-3:]))}",
                details=trace or None,
            )


def _put(ctx: CheckContext, rest: RestClient, path: str) -> None:
    answer = rest.put(path)
    if answer.status not in (200, 202, 204):
        raise CheckFailed(
            f"PUT {path} to be accepted", f"it answered {answer.status}: {_brief(answer.text)}"
        )


def _wait_offsets_shown(ctx: CheckContext, rest: RestClient, name: str) -> list[dict[str, Any]]:
    def shown() -> list[dict[str, Any]]:
        return [
            e
            for e in _rest_offsets(rest, name)
            if isinstance(e.get("partition"), dict) and isinstance(e.get("offset"), dict)
        ]

    return ctx.wait_for(
        shown,
        _DELIVERY_TIMEOUT,
        expected=f"GET /connectors/{name}/offsets to list the committed offsets (a partition "
        "and an offset each) once records were delivered",
        actual=lambda: f"it answers {_brief(rest.get(f'/connectors/{name}/offsets').text)}",
        interval=0.3,
    )


def _stop_and_reset(ctx: CheckContext, w: WorkerHandle, name: str) -> None:
    """PUT .../stop, wait for STOPPED, DELETE .../offsets, and check GET lists none."""
    _put(ctx, w.rest, f"/connectors/{name}/stop")
    w.wait_state(name, "STOPPED", timeout=_DELIVERY_TIMEOUT)
    answer = w.rest.delete(f"/connectors/{name}/offsets")
    if answer.status != 200:
        raise CheckFailed(
            f"DELETE /connectors/{name}/offsets to reset the offsets of the stopped connector",
            f"it answered {answer.status}: {_brief(answer.text)}",
        )
    left = _rest_offsets(w.rest, name)
    if left:
        raise CheckFailed(
            f"GET /connectors/{name}/offsets to list no offsets after the reset",
            f"it lists {_show(left)}",
        )


def _norm(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _show(value: Any, limit: int = 200) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _brief(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _ids(ids: Sequence[Any], limit: int = 10) -> str:
    shown = ", ".join(repr(i) for i in ids[:limit])
    return shown + (f", … ({len(ids) - limit} more)" if len(ids) > limit else "")
