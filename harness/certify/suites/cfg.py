"""The CFG suite: the connector's configuration, as users and the runtime meet it.

The checks read the connector's :class:`~cdk.config.ConfigDef` (documentation, required keys,
types, PASSWORD keys), call ``validate``/``start``/``task_configs`` directly on fresh connector
instances, and go through the worker's REST API where operators see configs (validation
results, connector and task configs, status). Secrets are checked with canary values that the
report never shows.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import random
import traceback
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

from cdk.api import (
    Connector,
    OffsetStorageReader,
    SinkConnector,
    SinkConnectorContext,
    SourceConnector,
    SourceConnectorContext,
)
from cdk.config import Config, ConfigDef, ConfigKey, Type
from cdk.errors import ConnectException
from harness.certify._checks import CheckFailed, CheckNotVerified, CheckSkipped, check
from harness.certify._context import CheckContext
from harness.certify.suites._hypothesis import hypothesis_home

__all__: list[str] = []

#: How many fuzzed configs CFG-04 gives ``validate`` (drawn with the run's seed).
FUZZ_EXAMPLES = 50
#: How many more hostile values each text key gets alone (besides the core ones), by seed.
SWEEP_SAMPLE = 2
#: The ``max_tasks`` values CFG-06 asks ``task_configs`` for.
MAX_TASKS = range(1, 9)
#: The most invalid configs CFG-05 starts the connector with.
MAX_INVALID_CASES = 12

_WRONG_TYPED = {
    Type.INT: "not-a-number",
    Type.SHORT: "not-a-number",
    Type.LONG: "not-a-number",
    Type.DOUBLE: "not-a-double",
    Type.BOOLEAN: "not-a-boolean",
    Type.CLASS: "no.such.Class",
}


# ---------------------------------------------------------------------------------------------
# CFG-01


@check(
    "CFG-01",
    "config() returns a ConfigDef that documents every key",
    needs=(),
    fix=(
        "Pass a ``documentation`` string to every ``define()`` call of the connector's "
        "``ConfigDef``; the report names the keys without one."
    ),
)
def config_documented(ctx: CheckContext) -> None:
    """config() returns a ConfigDef in which every key a user can set is documented.

    The generated config reference, the REST API and UIs show each key's documentation string,
    so none may be empty (internal keys with a default are exempt). The report names the
    undocumented keys.
    """
    definition = _config_def(ctx)
    undocumented = [
        key.name
        for key in definition.config_keys().values()
        if _user_facing(key) and not (key.documentation or "").strip()
    ]
    ctx.evidence("keys", len(definition))
    ctx.evidence("undocumented", len(undocumented))
    if undocumented:
        raise CheckFailed(
            "every config key to have a documentation string",
            f"{len(undocumented)} of {len(definition)} keys have none: {', '.join(undocumented)}",
        )


# ---------------------------------------------------------------------------------------------
# CFG-02


@check(
    "CFG-02",
    "validate({}) reports every missing required key without raising",
    needs=(),
    fix=(
        "Let ``validate`` return the ConfigDef's result (the default implementation does) "
        "instead of raising, and declare required keys without a default so that they are "
        "reported as missing."
    ),
)
def validate_empty(ctx: CheckContext) -> None:
    """validate({}) returns errors for every required key instead of raising.

    An empty config is what a UI sends first. ``validate({})`` must return a result (not
    raise), and the result must carry an error on every required key (a key without a
    default).
    """
    definition = _config_def(ctx)
    connector = _new_connector(ctx)
    try:
        result = connector.validate({})
    except Exception as exc:  # noqa: BLE001 - the check is about this exception
        raise CheckFailed(
            "validate({}) to return a Config with errors, not to raise",
            f"it raised {_describe(exc)}",
            details=_trace(exc),
        ) from None
    errors = _errors_by_key(ctx, result, "validate({})")
    required = [k.name for k in definition.config_keys().values() if not k.has_default()]
    silent = [name for name in required if not errors.get(name)]
    ctx.evidence("required keys", required)
    ctx.evidence("keys with an error", sorted(k for k, v in errors.items() if v))
    if silent:
        raise CheckFailed(
            f"validate({{}}) to report an error on each required key ({', '.join(required)})",
            f"it reports none on {', '.join(silent)} "
            f"(errors reported: {_error_summary(errors) or 'none'})",
        )


# ---------------------------------------------------------------------------------------------
# CFG-03


@check(
    "CFG-03",
    "The example config validates with no errors",
    fix=(
        "Make the driver's example config complete and valid: set every required key, with "
        "values the keys' validators accept. The report lists each error by key."
    ),
)
def example_validates(ctx: CheckContext) -> None:
    """The driver's example config validates with zero errors.

    Both the connector's own ``validate`` and the worker's ``PUT
    /connector-plugins/{class}/config/validate`` (which adds the framework's keys: name,
    tasks.max, converters, transforms, topics) must report no error.
    """
    definition = _config_def(ctx)
    with ctx.driver() as driver:
        name = ctx.unique("cfg")
        config = _full_config(ctx, driver, name)
        connector = _new_connector(ctx)
        try:
            result = connector.validate(dict(config))
        except Exception as exc:  # noqa: BLE001 - the check is about this exception
            raise CheckFailed(
                "validate() of the example config to return no errors",
                f"it raised {_describe(exc)}",
                details=_trace(exc),
            ) from None
        own = {k: v for k, v in _errors_by_key(ctx, result, "validate()").items() if v}
        ctx.evidence_config(config)
        ctx.evidence("validate() errors", sum(len(v) for v in own.values()))
        if own:
            raise CheckFailed(
                "connector.validate() of the example config to return no errors",
                f"it returns {sum(len(v) for v in own.values())}: {_error_summary(own)}",
                details=_config_text(config, definition),
            )
        with ctx.worker() as worker:
            path = f"/connector-plugins/{quote(ctx.connector_class_name, safe='')}/config/validate"
            answer = worker.rest.put(path, config)
        if answer.status != 200 or not isinstance(answer.json, Mapping):
            raise CheckFailed(
                f"PUT {path} to validate the example config",
                f"the worker answered {answer.status}: {answer.text[:500]}",
            )
        rest_errors = _rest_errors(answer.json)
        count = answer.json.get("error_count")
        ctx.evidence("REST validation error_count", count)
        if count or rest_errors:
            raise CheckFailed(
                "the REST validation of the example config to report error_count 0",
                f"it reports error_count {count}: {_error_summary(rest_errors)}",
                details=_config_text(config, definition),
            )


# ---------------------------------------------------------------------------------------------
# CFG-04


@check(
    "CFG-04",
    "validate() never raises on generated configs",
    needs=(),
    fix=(
        "Never raise from ``validate``: report a problem as an error on the key's "
        "``ConfigValue`` (``add_error_message``) and guard custom checks against missing or "
        "mistyped values. Re-run with the smallest failing config from the report."
    ),
)
def validate_fuzzed(ctx: CheckContext) -> None:
    """validate() returns a result, never raises, for configs generated from the ConfigDef.

    First the example config with one text key at a time (a STRING, PASSWORD, LIST or CLASS
    that takes any text) set to a hostile value: each of
    :data:`~harness.strategies.HOSTILE_CONFIG_CORE` (empty, 300 characters, which a file name
    or URL cannot be, non-ASCII, NUL, an unresolvable ``${env:...}``, a 400-digit number) and a
    few of the others. Then configs from :func:`harness.strategies.configs_for`: every key
    missing, valid for its type, or invalid or hostile (not of its type; empty, blank, padded,
    non-ASCII, with control characters or metacharacters; 300-character values, broken URLs,
    paths, huge numbers, unresolvable config provider references), starting from nothing or
    from the
    example config. The samples and configs are drawn with the run's seed: ``cdk certify --seed
    N`` draws the same ones again. The report names the key and value, or shows the smallest
    config, that makes ``validate`` raise.
    """
    try:
        from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
        from hypothesis import strategies as st

        from harness.strategies import configs_for
    except ImportError as exc:
        raise CheckNotVerified(
            f"hypothesis is not installed ({exc}); install connect-cdk[certify] to fuzz configs"
        ) from None
    definition = _config_def(ctx)
    with ctx.driver() as driver:
        example = _example_config(ctx, driver)
    failures: list[tuple[dict[str, str], str, str]] = []
    tried = 0
    swept = _sweep(ctx, definition, example)
    ctx.evidence("configs of one hostile value", swept.tried)
    if swept.failure is not None:
        config, what, trace, key = swept.failure
        raise CheckFailed(
            "validate() to return a Config for any config, reporting problems as errors",
            f"with the example config and {key} = {_brief(config[key])} {what} "
            f"({swept.failed} failing of {swept.tried} such configs; seed {ctx.seed})",
            details=trace or None,
        )

    @seed(ctx.seed)
    @settings(
        max_examples=FUZZ_EXAMPLES,
        derandomize=False,
        database=None,
        deadline=None,
        report_multiple_bugs=False,
        verbosity=Verbosity.quiet,
        phases=(Phase.explicit, Phase.generate, Phase.shrink),
        suppress_health_check=list(HealthCheck),
    )
    @given(
        st.one_of(
            configs_for(definition),
            configs_for(definition, base=example),
        )
    )
    def fuzz(config: dict[str, str]) -> None:
        nonlocal tried
        tried += 1
        connector = ctx.connector_class()
        try:
            result: Any = connector.validate(dict(config))
        except Exception as exc:
            failures.append((config, _describe(exc), _trace(exc)))
            raise _Raised from exc
        if not isinstance(result, Config):
            failures.append((config, f"it returned {type(result).__name__}, not a Config", ""))
            raise _Raised

    try:
        with hypothesis_home(ctx.workdir / "hypothesis"):
            fuzz()
    except Exception:
        if not failures:
            raise
        config, what, trace = failures[-1]
        raise CheckFailed(
            "validate() to return a Config for any config, reporting problems as errors",
            f"with {_config_text(config, definition, limit=300)} {what} "
            f"({len(failures)} failing of {tried} configs tried; seed {ctx.seed})",
            details=trace or None,
        ) from None
    finally:
        ctx.evidence("values drawn with seed", ctx.seed)
        ctx.evidence("configs tried", tried)
        ctx.evidence("failing configs", len(failures))


class _Raised(Exception):
    """validate() failed on a generated config (hypothesis shrinks it)."""


@dataclasses.dataclass
class _Sweep:
    tried: int = 0
    failed: int = 0
    failure: tuple[dict[str, str], str, str, str] | None = None


def _sweep(ctx: CheckContext, definition: ConfigDef, example: Mapping[str, str]) -> _Sweep:
    """The example config with each free-text key set to each of a sample of hostile values.

    The sample is :data:`~harness.strategies.HOSTILE_CONFIG_CORE` and ``SWEEP_SAMPLE`` more,
    drawn with the run's seed; the first failure (in key order) is kept.
    """
    from harness.strategies import HOSTILE_CONFIG_CORE, free_text, hostile_config_values

    chooser = random.Random(ctx.seed)
    out = _Sweep()
    for key in definition.config_keys().values():
        if not free_text(key):
            continue  # the typed keys: the generated configs try their hostile values
        values = hostile_config_values(key)
        rest = values[len(HOSTILE_CONFIG_CORE) :]
        sample = values[: len(HOSTILE_CONFIG_CORE)] + chooser.sample(
            rest, min(SWEEP_SAMPLE, len(rest))
        )
        for value in sample:
            config = {**example, key.name: value}
            out.tried += 1
            try:
                result: Any = ctx.connector_class().validate(dict(config))
            except Exception as exc:  # noqa: BLE001 - the check is about this exception
                out.failed += 1
                if out.failure is None:
                    out.failure = (config, _describe(exc), _trace(exc), key.name)
                continue
            if not isinstance(result, Config):
                out.failed += 1
                if out.failure is None:
                    what = f"it returned {type(result).__name__}, not a Config"
                    out.failure = (config, what, "", key.name)
    return out


def _brief(value: str) -> str:
    return repr(value) if len(value) <= 60 else f"{value[:40]!r}… ({len(value)} characters)"


# ---------------------------------------------------------------------------------------------
# CFG-05


@check(
    "CFG-05",
    "start() rejects an invalid config with a ConnectException",
    needs=(),
    fix=(
        "Parse the config in ``start()`` with the ConfigDef (``config().parse(props)`` or an "
        "``AbstractConfig`` subclass), which raises ``ConfigException``; raise "
        "``ConfigException`` with a message from any further check of the values."
    ),
)
def start_invalid(ctx: CheckContext) -> None:
    """start() rejects an invalid config with a ConnectException, not a raw Python error.

    The invalid configs: the empty one, the example without each required key, and the
    example with a value of the wrong type or outside what the key's validator allows. For
    each, ``start()`` must raise a ``ConfigException`` (or another ``ConnectException``) with
    a message: never a KeyError, TypeError, ValueError..., and never start as if the config
    were fine.
    """
    definition = _config_def(ctx)
    with ctx.driver() as driver:
        full = _full_config(ctx, driver, ctx.unique("cfg"))
        cases = _invalid_cases(definition, full)
        if not cases:
            raise CheckSkipped(
                "the ConfigDef has no required key and no key a value can be invalid for "
                "(every key is a STRING with a default and no validator)",
                because="no-invalid-config",
            )
        problems: list[str] = []
        traces: list[str] = []
        for label, config in cases:
            connector = ctx.connector_class()
            connector.initialize(_context_for(connector))
            try:
                connector.start(dict(config))
            except ConnectException as exc:
                if not str(exc).strip():
                    problems.append(f"{label}: {type(exc).__name__} without a message")
                continue
            except Exception as exc:  # noqa: BLE001 - the check is about this exception
                problems.append(f"{label}: raised {_describe(exc)}")
                traces.append(f"{label}:\n{_trace(exc)}")
                continue
            with contextlib.suppress(Exception):
                connector.stop()
            problems.append(f"{label}: start() accepted it")
    ctx.evidence("invalid configs", [label for label, _ in cases])
    ctx.evidence("rejected with a ConnectException", len(cases) - len(problems))
    if problems:
        raise CheckFailed(
            "start() to raise a ConfigException (or another ConnectException) naming the "
            f"problem, for each of {len(cases)} invalid configs",
            f"{len(problems)} of {len(cases)} did not: " + "; ".join(problems),
            details="\n\n".join(traces) or None,
        )


def _invalid_cases(definition: ConfigDef, full: dict[str, str]) -> list[tuple[str, dict[str, str]]]:
    """Configs that the ConfigDef itself rejects, each with a label."""
    candidates: list[tuple[str, dict[str, str]]] = [("the empty config", {})]
    keys = list(definition.config_keys().values())
    for key in keys:
        if not key.has_default() and key.name in full:
            without = {k: v for k, v in full.items() if k != key.name}
            candidates.append((f"without the required key {key.name!r}", without))
    for key in keys:
        for value in _bad_values(key):
            shown = "[hidden]" if key.type is Type.PASSWORD else repr(value)
            candidates.append((f"{key.name}={shown}", {**full, key.name: value}))
    out: list[tuple[str, dict[str, str]]] = []
    for label, config in candidates:
        if any(v.error_messages for v in definition.validate(config)):
            out.append((label, config))
        if len(out) >= MAX_INVALID_CASES:
            break
    return out


def _bad_values(key: ConfigKey) -> list[str]:
    values = []
    if key.type in _WRONG_TYPED:
        values.append(_WRONG_TYPED[key.type])
    if key.type in (Type.STRING, Type.LIST, Type.PASSWORD) and key.validator is not None:
        values.append("")
        values.append("not-a-valid-choice")
    low = getattr(key.validator, "min", None)
    if key.type in (Type.INT, Type.SHORT, Type.LONG) and isinstance(low, (int, float)):
        values.append(str(int(low) - 1))
    return values


# ---------------------------------------------------------------------------------------------
# CFG-06


@check(
    "CFG-06",
    "task_configs(n) returns at most n string maps",
    needs=(),
    fix=(
        "Return at most ``max_tasks`` configs from ``task_configs`` (``group_partitions`` "
        "splits the work), each a ``dict`` whose keys and values are all ``str``."
    ),
)
def task_configs_bounded(ctx: CheckContext) -> None:
    """task_configs(n) returns a list of at most n maps of str to str, for n from 1 to 8.

    The connector is started with the example config (a source with data in every input
    stream the driver offers). The runtime fails a connector that asks for more tasks than
    tasks.max, and task configs travel as string maps.
    """
    with ctx.driver() as driver:
        if ctx.kind == "source":
            for stream in range(max(1, driver.streams)):
                driver.write_records(ctx.ids(3), stream=stream)
        config = _full_config(ctx, driver, ctx.unique("cfg"))
        connector = ctx.connector_class()
        connector.initialize(_context_for(connector))
        try:
            connector.start(dict(config))
        except Exception as exc:  # noqa: BLE001 - reported as the failure
            raise CheckFailed(
                "start() to accept the example config",
                f"it raised {_describe(exc)}",
                details=_trace(exc),
            ) from None
        problems: list[str] = []
        try:
            for max_tasks in MAX_TASKS:
                problem = _task_config_problem(connector, max_tasks)
                if problem:
                    problems.append(problem)
        finally:
            with contextlib.suppress(Exception):
                connector.stop()
    ctx.evidence_config(config)
    ctx.evidence("max_tasks tried", list(MAX_TASKS))
    ctx.evidence("calls with a problem", len(problems))
    if problems:
        shown = "; ".join(problems[:3]) + (
            f"; … ({len(problems) - 3} more)" if len(problems) > 3 else ""
        )
        raise CheckFailed(
            "task_configs(n) to return a list of at most n maps of str to str, n = 1..8",
            f"{len(problems)} of {len(MAX_TASKS)} calls did not: {shown}",
            details="\n".join(problems),
        )


def _task_config_problem(connector: Connector, max_tasks: int) -> str | None:
    try:
        configs: Any = connector.task_configs(max_tasks)
    except Exception as exc:  # noqa: BLE001 - reported as the failure
        return f"task_configs({max_tasks}) raised {_describe(exc)}"
    if not isinstance(configs, list):
        return f"task_configs({max_tasks}) returned a {type(configs).__name__}, not a list"
    if len(configs) > max_tasks:
        return f"task_configs({max_tasks}) returned {len(configs)} configs"
    for index, task_config in enumerate(configs):
        if not isinstance(task_config, Mapping):
            return f"task_configs({max_tasks})[{index}] is a {type(task_config).__name__}"
        for key, value in task_config.items():
            if not isinstance(key, str) or not isinstance(value, str):
                return (
                    f"task_configs({max_tasks})[{index}] maps {key!r} "
                    f"({type(key).__name__}) to a {type(value).__name__}, not a str"
                )
    return None


# ---------------------------------------------------------------------------------------------
# CFG-07


@check(
    "CFG-07",
    "The class is named *SourceConnector/*SinkConnector and has a version",
    needs=(),
    fix=(
        "Name the class ``<Name>SourceConnector`` or ``<Name>SinkConnector``, derive it from "
        "``SourceConnector`` or ``SinkConnector``, and return the package's version from "
        "``version()``."
    ),
)
def naming_and_version(ctx: CheckContext) -> None:
    """The class is named ``*SourceConnector`` or ``*SinkConnector``; ``version()`` is non-empty.

    Kafka Connect's plugin aliases and operators rely on the suffix; the class must also derive
    from the matching base class, and ``version()`` must return a non-empty string (the REST
    API and the report show it).
    """
    cls = ctx.connector_class
    base: type[Connector] = SourceConnector if ctx.kind == "source" else SinkConnector
    suffix = base.__name__
    problems = []
    if not cls.__name__.endswith(suffix) or cls.__name__ == suffix:
        problems.append(f"the class is named {cls.__name__!r}, which does not end in {suffix!r}")
    if not issubclass(cls, base):
        problems.append(f"{cls.__name__} is not a {base.__name__}")
    try:
        version: Any = _new_connector(ctx).version()
    except Exception as exc:  # noqa: BLE001 - reported as the failure
        problems.append(f"version() raised {_describe(exc)}")
    else:
        ctx.evidence("version()", repr(version))
        if not isinstance(version, str):
            problems.append(f"version() returned a {type(version).__name__}: {version!r}")
        elif not version.strip():
            problems.append(f"version() returned the empty string {version!r}")
    ctx.evidence("class", f"{cls.__module__}.{cls.__qualname__}")
    if problems:
        raise CheckFailed(
            f"a class named *{suffix} deriving from {base.__name__}, with a non-empty version()",
            "; ".join(problems),
        )


# ---------------------------------------------------------------------------------------------
# CFG-08


@check(
    "CFG-08",
    "PASSWORD values never appear in logs or REST responses",
    fix=(
        "Declare every secret as ``Type.PASSWORD``, hand secrets to tasks only under PASSWORD "
        "keys, and never log or format raw config values (a ``Password`` prints as "
        "``[hidden]``; call ``value()`` only where the secret is used)."
    ),
)
def secrets_hidden(ctx: CheckContext) -> None:
    """PASSWORD values never appear in logs, REST responses or task configs shown by REST.

    Every PASSWORD key gets a canary value (or the driver's own secret) and the connector runs
    on a worker with logging at DEBUG. The values must appear in no log line and in no REST
    response: validation, create, connector info, config, status, tasks (the task configs),
    tasks-config, ``/connectors?expand=info&expand=status``, task status, offsets and a config
    update. A connector that copies a secret into a task config key that is not a PASSWORD, or
    logs it, fails. Skipped when the ConfigDef has no PASSWORD key.
    """
    definition = _config_def(ctx)
    secret_keys = [k.name for k in definition.config_keys().values() if k.type is Type.PASSWORD]
    if not secret_keys:
        raise CheckSkipped(
            "the connector's ConfigDef has no PASSWORD key, so nothing to leak",
            because="no-password",
        )
    leaks: list[str] = []
    with ctx.driver() as driver, _debug_logging():
        name = ctx.unique("cfg")
        config = _full_config(ctx, driver, name)
        secrets: list[str] = []
        for key in secret_keys:
            given = config.get(key, "")
            if len(given) < 8:  # too short to search for: use a canary
                given = f"cdk-canary-{uuid.uuid4().hex}"
                config[key] = given
            secrets.append(ctx.secret(given))
        if ctx.kind == "source":
            driver.write_records(ctx.ids(5))
        with ctx.worker() as worker:
            rest = worker.rest
            encoded = quote(ctx.connector_class_name, safe="")
            responses = [
                (
                    "PUT /connector-plugins/…/config/validate",
                    rest.put(f"/connector-plugins/{encoded}/config/validate", config),
                )
            ]
            created = rest.post("/connectors", {"name": name, "config": config})
            responses.append(("POST /connectors", created))
            if created.status != 201:
                leaks.extend(_leaks_in(responses, secrets))
                raise CheckFailed(
                    "the worker to accept the example config with secrets set",
                    f"POST /connectors answered {created.status}: {created.text[:300]}",
                    details="; ".join(leaks) or None,
                )
            ctx.wait_for(
                lambda: _tasks_settled(worker.status(name)),
                60,
                expected=f"connector {name} to start its tasks",
                actual=lambda: f"the status is {worker.status(name)}",
            )
            base = f"/connectors/{quote(name, safe='')}"
            for path in (
                base,
                f"{base}/config",
                f"{base}/status",
                f"{base}/tasks",
                f"{base}/tasks-config",
                f"{base}/tasks/0/status",
                f"{base}/offsets",
                "/connectors?expand=info&expand=status",
            ):
                responses.append((f"GET {path}", rest.get(path)))
            responses.append((f"PUT {base}/config", rest.put(f"{base}/config", config)))
            leaks.extend(_leaks_in(responses, secrets))
    logged = [line for line in ctx.log_lines if any(s in line for s in secrets)]
    ctx.evidence("PASSWORD keys", secret_keys)
    ctx.evidence("REST responses searched", [where for where, _ in responses])
    ctx.evidence("log lines searched", len(ctx.log_lines))
    ctx.evidence("places the values appear", len(leaks) + (1 if logged else 0))
    if logged:
        shown = "; ".join(_clip(line) for line in logged[:3])
        leaks.append(f"{len(logged)} log lines, e.g. {shown}")
    if leaks:
        raise CheckFailed(
            f"the values of the PASSWORD keys ({', '.join(secret_keys)}) to appear nowhere",
            "they appear in " + "; ".join(leaks),
        )


def _tasks_settled(status: Mapping[str, Any]) -> bool:
    if not status:
        return False
    if status["connector"]["state"] == "FAILED":
        return True
    tasks = status.get("tasks", [])
    return bool(tasks) and all(t["state"] in ("RUNNING", "FAILED") for t in tasks)


def _leaks_in(responses: list[tuple[str, Any]], secrets: list[str]) -> list[str]:
    out = []
    for where, answer in responses:
        if not any(s in answer.text for s in secrets):
            continue
        paths = _json_paths(answer.json, secrets) if answer.text.strip() else []
        out.append(f"{where}" + (f" (at {', '.join(paths[:5])})" if paths else ""))
    return out


def _json_paths(data: Any, secrets: list[str], prefix: str = "") -> list[str]:
    if isinstance(data, Mapping):
        return [
            path
            for key, value in data.items()
            for path in _json_paths(value, secrets, f"{prefix}.{key}" if prefix else str(key))
        ]
    if isinstance(data, list):
        return [
            path
            for index, value in enumerate(data)
            for path in _json_paths(value, secrets, f"{prefix}[{index}]")
        ]
    if isinstance(data, str) and any(s in data for s in secrets):
        return [prefix or "the body"]
    return []


@contextlib.contextmanager
def _debug_logging() -> Iterator[None]:
    root = logging.getLogger()
    old = root.level
    root.setLevel(logging.DEBUG)
    try:
        yield
    finally:
        root.setLevel(old)


# ---------------------------------------------------------------------------------------------
# Shared helpers


def _new_connector(ctx: CheckContext) -> Connector:
    try:
        return ctx.connector_class()
    except Exception as exc:  # noqa: BLE001 - reported as the failure
        raise CheckFailed(
            "the connector class to be instantiable without arguments",
            f"{ctx.connector_class_name}() raised {_describe(exc)}",
            details=_trace(exc),
        ) from None


def _config_def(ctx: CheckContext) -> ConfigDef:
    connector = _new_connector(ctx)
    try:
        definition: Any = connector.config()
    except Exception as exc:  # noqa: BLE001 - reported as the failure
        raise CheckFailed(
            "config() to return the connector's ConfigDef",
            f"it raised {_describe(exc)}",
            details=_trace(exc),
        ) from None
    if not isinstance(definition, ConfigDef):
        raise CheckFailed(
            "config() to return a cdk.config.ConfigDef",
            f"it returned a {type(definition).__name__}: {definition!r:.200}",
        )
    return definition


def _user_facing(key: ConfigKey) -> bool:
    return not key.internal_config or not key.has_default()


def _example_config(ctx: CheckContext, driver: Any) -> dict[str, str]:
    return dict(driver.example_config(ctx.topic()))


def _full_config(ctx: CheckContext, driver: Any, name: str) -> dict[str, str]:
    """What a worker hands the connector: the example config, class, tasks.max and name."""
    return {"name": name, **ctx.connector_config(driver, ctx.topic())}


def _errors_by_key(ctx: CheckContext, result: Any, call: str) -> dict[str, list[str]]:
    if not isinstance(result, Config):
        raise CheckFailed(
            f"{call} to return a cdk.config.Config",
            f"it returned a {type(result).__name__}: {result!r:.200}",
        )
    errors: dict[str, list[str]] = {}
    for value in result.config_values:
        errors.setdefault(value.name, []).extend(value.error_messages)
    return errors


def _rest_errors(body: Mapping[str, Any]) -> dict[str, list[str]]:
    errors: dict[str, list[str]] = {}
    for entry in body.get("configs") or []:
        value = entry.get("value") or {}
        if value.get("errors"):
            errors.setdefault(str(value.get("name")), []).extend(map(str, value["errors"]))
    return errors


def _error_summary(errors: Mapping[str, list[str]]) -> str:
    return "; ".join(
        f"{key}: {' / '.join(messages)}" for key, messages in errors.items() if messages
    )


def _context_for(connector: Connector) -> SourceConnectorContext | SinkConnectorContext:
    if isinstance(connector, SourceConnector):
        return _SourceContext()
    return _SinkContext()


class _NoOffsets(OffsetStorageReader):
    def offset(self, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        return None

    def offsets(self, partitions: Any) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        return [(dict(p), None) for p in partitions]


class _SourceContext(SourceConnectorContext):
    def request_task_reconfiguration(self) -> None:
        """Nothing to reconfigure: the checks call task_configs themselves."""

    def raise_error(self, error: BaseException) -> None:
        """Errors from connector threads do not concern these checks."""

    @property
    def offset_storage_reader(self) -> OffsetStorageReader:
        return _NoOffsets()


class _SinkContext(SinkConnectorContext):
    def request_task_reconfiguration(self) -> None:
        """Nothing to reconfigure: the checks call task_configs themselves."""

    def raise_error(self, error: BaseException) -> None:
        """Errors from connector threads do not concern these checks."""


def _describe(exc: BaseException) -> str:
    """``KeyError: 'file' (at _source.py:88 in start)``."""
    text = f"{type(exc).__name__}: {exc}"
    frames = traceback.extract_tb(exc.__traceback__)
    if frames:
        last = frames[-1]
        text += f" (at {Path(last.filename).name}:{last.lineno} in {last.name})"
    return _clip(text)


def _trace(exc: BaseException) -> str:
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-3000:]


def _config_text(config: Mapping[str, str], definition: ConfigDef, limit: int = 1000) -> str:
    """The config as JSON for the report, with the values of PASSWORD keys hidden."""
    shown = {
        k: "[hidden]"
        if (key := definition.find(k)) is not None and key.type is Type.PASSWORD
        else v
        for k, v in config.items()
    }
    return _clip(json.dumps(shown, ensure_ascii=False, sort_keys=True), limit)


def _clip(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
