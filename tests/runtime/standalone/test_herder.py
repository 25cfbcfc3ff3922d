"""The standalone herder with the real Worker on the embedded broker, and tiny connectors."""

from __future__ import annotations

import itertools
import logging
import threading
import uuid
from collections.abc import Iterable, Iterator
from typing import Any

import pytest

from cdk.api import SourceConnector, SourceRecord, SourceTask, Task
from cdk.config import ConfigData, ConfigDef, ConfigProvider, Importance, Type
from cdk.errors import AlreadyExistsException, ConnectException, NotFoundException
from cdk.runtime._status import ConnectorTaskId, State, TargetState
from cdk.runtime.rest._requests import BadRequestException
from cdk.runtime.standalone._herder import StandaloneHerder
from cdk.runtime.standalone._worker import EmbeddedWorker
from tests._wait import wait_until

SECRET = "hunter2-very-secret"

# what TinySourceConnector.task_configs hands out, per connector name (changed by tests)
GENERATIONS: dict[str, str] = {}

TINY_CONFIG = (
    ConfigDef()
    .define("topic", Type.STRING, None, None, Importance.HIGH, "Topic to write to.")
    .define("password", Type.PASSWORD, None, None, Importance.HIGH, "A secret.")
    .define("fail.task", Type.BOOLEAN, False, None, Importance.LOW, "Fail on task start.")
    .define("required.thing", Type.STRING, "x", None, Importance.LOW, "Must not be 'bad'.")
)


class TinySourceTask(SourceTask):
    def start(self, props: dict[str, str]) -> None:
        if props.get("fail.task") == "true":
            raise ConnectException("tiny task refuses to start")
        self._stop = threading.Event()
        self._topic = props.get("topic") or "tiny"
        self._sent = False

    def poll(self) -> list[SourceRecord] | None:
        if self._sent:
            self._stop.wait(0.05)
            return None
        self._sent = True
        return [SourceRecord({"p": 0}, {"n": 1}, self._topic, value="hello")]

    def stop(self) -> None:
        self._stop.set()


# the value of required.thing each TinySourceConnector started with, per connector name
STARTS: dict[str, list[str]] = {}


class TtlProvider(ConfigProvider):
    """A config provider whose values change on every read and expire after 200 ms."""

    reads = itertools.count()

    def get(self, path: str, keys: Iterable[str] | None = None) -> ConfigData:
        n = next(TtlProvider.reads)
        return ConfigData(dict.fromkeys(keys or (), f"v{n}"), ttl=200)


class TinySourceConnector(SourceConnector):
    def start(self, props: dict[str, str]) -> None:
        self._props = dict(props)
        STARTS.setdefault(props["name"], []).append(props.get("required.thing", ""))

    def task_class(self) -> type[Task]:
        return TinySourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        generation = GENERATIONS.get(self._props["name"], "1")
        return [{**self._props, "generation": generation, "n": str(i)} for i in range(max_tasks)]

    def stop(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return TINY_CONFIG

    def validate(self, props: dict[str, str]) -> Any:
        result = super().validate(props)
        for value in result.config_values:
            if value.name == "required.thing" and props.get("required.thing") == "bad":
                value.add_error_message("required.thing may not be 'bad'")
        return result


def source_config(**extra: str) -> dict[str, str]:
    return {
        "connector.class": f"{__name__}:TinySourceConnector",
        "topic": f"tiny-{uuid.uuid4().hex[:8]}",
        "tasks.max": "1",
        **extra,
    }


@pytest.fixture
def embedded(kafka_bootstrap: str) -> Iterator[EmbeddedWorker]:
    props = {
        "bootstrap.servers": kafka_bootstrap,
        "key.converter": "StringConverter",
        "value.converter": "StringConverter",
        "offset.flush.interval.ms": "100",
        "config.providers": "ttl",
        "config.providers.ttl.class": f"{__name__}:TtlProvider",
    }
    with EmbeddedWorker(props, rest=False, extra_plugins=[TinySourceConnector]) as worker:
        yield worker


@pytest.fixture
def herder(embedded: EmbeddedWorker) -> StandaloneHerder:
    return embedded.herder


def running(herder: StandaloneHerder, name: str, tasks: int) -> bool:
    try:
        status = herder.connector_status(name)
    except NotFoundException:
        return False
    return (
        status["connector"]["state"] == "RUNNING"
        and [t["state"] for t in status["tasks"]] == ["RUNNING"] * tasks
    )


def test_create_runs_connector_and_tasks(herder: StandaloneHerder) -> None:
    info = herder.create_connector("c1", source_config(**{"tasks.max": "2"}))
    assert info["name"] == "c1"
    assert info["type"] == "source"
    assert info["config"]["name"] == "c1"
    assert info["tasks"] == [{"connector": "c1", "task": 0}, {"connector": "c1", "task": 1}]
    wait_until(lambda: running(herder, "c1", 2), 20, message="c1 running with 2 tasks")
    assert herder.connectors() == ["c1"]
    tasks = herder.tasks("c1")
    assert tasks[1]["id"] == {"connector": "c1", "task": 1}
    assert tasks[1]["config"]["task.class"].endswith("TinySourceTask")
    assert herder.task_status("c1", 0)["state"] == "RUNNING"


def test_duplicate_and_unknown_connectors(herder: StandaloneHerder) -> None:
    herder.create_connector("dup", source_config())
    with pytest.raises(AlreadyExistsException, match=r"^Connector dup already exists$"):
        herder.create_connector("dup", source_config())
    with pytest.raises(NotFoundException, match=r"^No status found for connector nope$"):
        herder.connector_status("nope")
    with pytest.raises(NotFoundException, match=r"^Unknown connector nope$"):
        herder.pause_connector("nope")
    with pytest.raises(NotFoundException, match=r"^Connector nope not found$"):
        herder.connector_info("nope")
    with pytest.raises(NotFoundException, match=r"^No status found for task dup-7$"):
        herder.task_status("dup", 7)
    with pytest.raises(NotFoundException, match=r"^Task dup-7 not found$"):
        herder.restart_task("dup", 7)


def test_invalid_config_is_rejected_with_every_error(herder: StandaloneHerder) -> None:
    config = source_config(**{"tasks.max": "0", "required.thing": "bad"})
    with pytest.raises(BadRequestException) as info:
        herder.create_connector("bad", config)
    message = str(info.value)
    assert message.startswith(
        "Connector configuration is invalid and contains the following 2 error(s):\n"
    )
    assert "Invalid value 0 for configuration tasks.max: Value must be at least 1" in message
    assert "required.thing may not be 'bad'" in message
    assert message.endswith(
        "You can also find the above list of errors at the endpoint "
        "`/connector-plugins/{connectorType}/config/validate`"
    )
    assert herder.connectors() == []
    with pytest.raises(BadRequestException, match=r"doesn't match connector name in the URL"):
        herder.put_connector_config("x", {**config, "name": "y"})


def test_a_key_no_config_def_knows_is_warned_about_as_kafka_does(
    herder: StandaloneHerder, caplog: pytest.LogCaptureFixture
) -> None:
    config = source_config(
        **{
            "topik": "typo",  # the connector defines "topic"
            "pasword": SECRET,  # a misspelt secret: its value must not be logged
            "password": SECRET,
            "errors.tolerance": "all",  # a framework key
            "value.converter": "JsonConverter",
            "value.converter.schemas.enable": "false",  # the converter's own key
            "transforms": "route",
            "transforms.route.type": "RegexRouter",
            "transforms.route.regex": "(.*)",
            "transforms.route.replacement": "$1-x",
            "producer.override.linger.ms": "5",  # a client override
        }
    )
    with caplog.at_level(logging.WARNING, logger="cdk.runtime.config"):
        herder.create_connector("typos", config)
    warnings = [r for r in caplog.records if r.name == "cdk.runtime.config"]
    assert [r.getMessage() for r in warnings] == [
        "[typos|worker] The configuration 'pasword' was supplied but isn't a known config; "
        "did you mean 'password'?",
        "[typos|worker] The configuration 'topik' was supplied but isn't a known config; "
        "did you mean 'topic'?",
    ]
    assert all(r.levelno == logging.WARNING for r in warnings)
    assert SECRET not in caplog.text
    # validating alone (the REST validate endpoint) does not log
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="cdk.runtime.config"):
        herder.validate_connector_config(config)
    assert not [r for r in caplog.records if r.name == "cdk.runtime.config"]


def test_config_action_reload_restarts_a_connector_when_its_values_expire(
    herder: StandaloneHerder,
) -> None:
    variable = {"required.thing": "${ttl:secrets:thing}"}
    herder.create_connector("reloads", source_config(**variable))
    herder.create_connector("keeps", source_config(**variable, **{"config.action.reload": "none"}))
    wait_until(lambda: running(herder, "keeps", 1), 20, message="keeps running")
    # restart (the default): restarted with the provider's new values each time they expire
    wait_until(lambda: len(STARTS.get("reloads", [])) >= 3, 20, message="reloads restarted twice")
    values = STARTS["reloads"]
    assert len(set(values)) == len(values), values
    wait_until(lambda: running(herder, "reloads", 1), 20, message="reloads running")
    # the stored config keeps the reference, never the resolved value
    assert herder.raw_connector_config("reloads")["required.thing"] == "${ttl:secrets:thing}"
    # none: the values expired as often, and the connector kept running with the old ones
    assert len(STARTS["keeps"]) == 1
    herder.delete_connector("reloads")
    restarts = len(STARTS["reloads"])
    herder.create_connector("after", source_config())  # the herder thread has moved on
    wait_until(lambda: running(herder, "after", 1), 20, message="after running")
    assert len(STARTS["reloads"]) <= restarts + 1  # a restart in flight at the delete at most


def test_put_patch_and_reconfiguration(embedded: EmbeddedWorker) -> None:
    herder = embedded.herder
    created, _ = herder.put_connector_config("rc", source_config())
    assert created
    wait_until(lambda: running(herder, "rc", 1), 20, message="rc running")
    thread = embedded.worker.task_thread(ConnectorTaskId("rc", 0))
    # unchanged task configs: the task keeps running
    herder.request_task_reconfiguration("rc")
    herder.request_task_reconfiguration("rc")
    GENERATIONS["rc"] = "2"
    herder.request_task_reconfiguration("rc")
    wait_until(
        lambda: herder.task_configs("rc")[0]["generation"] == "2", 20, message="new generation"
    )
    wait_until(lambda: running(herder, "rc", 1), 20, message="rc running again")
    assert embedded.worker.task_thread(ConnectorTaskId("rc", 0)) is not thread
    created, info = herder.put_connector_config(
        "rc", {**herder.raw_connector_config("rc"), "tasks.max": "2"}
    )
    assert not created
    assert len(info["tasks"]) == 2
    info = herder.patch_connector_config("rc", {"tasks.max": None, "extra": "1"})
    assert "tasks.max" not in info["config"]
    assert info["config"]["extra"] == "1"
    assert len(info["tasks"]) == 1


def test_pause_resume_stop_and_initial_states(herder: StandaloneHerder) -> None:
    herder.create_connector("p", source_config())
    wait_until(lambda: running(herder, "p", 1), 20, message="p running")
    herder.pause_connector("p")
    wait_until(
        lambda: [t["state"] for t in herder.connector_status("p")["tasks"]] == ["PAUSED"],
        20,
        message="p paused",
    )
    assert herder.connector_status("p")["connector"]["state"] == "PAUSED"
    herder.resume_connector("p")
    wait_until(lambda: running(herder, "p", 1), 20, message="p resumed")
    herder.stop_connector("p")
    status = herder.connector_status("p")
    assert status["connector"]["state"] == "STOPPED"
    assert status["tasks"] == []
    assert herder.connector_info("p")["tasks"] == []
    herder.resume_connector("p")
    wait_until(lambda: running(herder, "p", 1), 20, message="p restarted after stop")

    herder.create_connector("s", source_config(), initial_state="STOPPED")
    assert herder.connector_status("s")["connector"]["state"] == "STOPPED"
    assert herder.target_state("s") is TargetState.STOPPED
    herder.create_connector("z", source_config(), initial_state="PAUSED")
    wait_until(
        lambda: herder.connector_status("z")["connector"]["state"] == "PAUSED", 20, message="z"
    )
    # As Kafka: a connector created PAUSED is not started, so it has no task configs yet; the
    # resume starts it and then generates them.
    assert herder.connector_status("z")["tasks"] == []
    assert herder.task_configs("z") == []
    herder.resume_connector("z")
    wait_until(lambda: running(herder, "z", 1), 20, message="z resumed with its task")
    with pytest.raises(BadRequestException, match=r"Invalid initial state"):
        herder.create_connector("w", source_config(), initial_state="SLEEPING")


def test_failed_task_restart_only_failed(herder: StandaloneHerder) -> None:
    herder.create_connector("f", source_config(**{"fail.task": "true"}))
    wait_until(
        lambda: [t["state"] for t in herder.connector_status("f")["tasks"]] == ["FAILED"],
        20,
        message="task failed",
    )
    task = herder.connector_status("f")["tasks"][0]
    assert "tiny task refuses to start" in task["trace"]
    plan = herder.restart_connector_and_tasks("f", only_failed=True, include_tasks=True)
    assert plan["connector"]["state"] == "RUNNING"
    assert plan["tasks"][0]["state"] == "RESTARTING"
    assert "trace" not in plan["tasks"][0]
    with pytest.raises(NotFoundException, match=r"Unknown connector: nope"):
        herder.restart_connector_and_tasks("nope", include_tasks=True)
    herder.restart_connector("f")
    herder.restart_task("f", 0)


def test_delete_removes_everything(embedded: EmbeddedWorker) -> None:
    herder = embedded.herder
    herder.create_connector("d", source_config())
    wait_until(lambda: running(herder, "d", 1), 20, message="d running")
    herder.delete_connector("d")
    assert herder.connectors() == []
    assert embedded.status.connector("d") is None
    assert embedded.status.tasks("d") == {}
    assert not [t for t in embedded.worker.task_ids() if t.connector == "d"]
    with pytest.raises(NotFoundException):
        herder.delete_connector("d")


def test_passwords_are_masked_everywhere(herder: StandaloneHerder) -> None:
    herder.create_connector("sec", source_config(password=SECRET))
    texts = [
        herder.connector_info("sec"),
        herder.connector_config("sec"),
        herder.tasks("sec"),
        herder.validate_connector_config({**source_config(password=SECRET), "name": "sec"}),
    ]
    for text in texts:
        assert SECRET not in repr(text)
    assert herder.connector_config("sec")["password"] == "[hidden]"
    assert herder.raw_connector_config("sec")["password"] == SECRET


def test_source_offsets_need_stopped(herder: StandaloneHerder) -> None:
    herder.create_connector("o", source_config())
    wait_until(lambda: herder.connector_offsets("o")["offsets"], 20, message="offsets committed")
    assert herder.connector_offsets("o") == {
        "offsets": [{"partition": {"p": 0}, "offset": {"n": 1}}]
    }
    body = [{"partition": {"p": 0}, "offset": {"n": 5}}]
    with pytest.raises(BadRequestException, match=r"must be in the STOPPED state"):
        herder.alter_connector_offsets("o", body)
    herder.stop_connector("o")
    with pytest.raises(BadRequestException, match=r"may not be null or empty"):
        herder.alter_connector_offsets("o", [])
    result = herder.alter_connector_offsets("o", body)
    assert result["message"].startswith("The Connect framework-managed offsets")
    assert herder.connector_offsets("o")["offsets"] == body
    herder.reset_connector_offsets("o")
    assert herder.connector_offsets("o") == {"offsets": []}


def test_validate_shape_and_plugin_endpoints(herder: StandaloneHerder) -> None:
    result = herder.validate_connector_config(
        {"connector.class": "TinySource", "transforms": "x", "transforms.x.type": "Nope"}
    )
    assert result["name"] == f"{__name__}.TinySourceConnector"
    assert set(result) == {"name", "error_count", "groups", "configs"}
    assert result["error_count"] == 2  # name missing, transform unknown
    entry = next(c for c in result["configs"] if c["definition"]["name"] == "tasks.max")
    assert set(entry["definition"]) == {
        "name",
        "type",
        "required",
        "default_value",
        "importance",
        "documentation",
        "group",
        "order",
        "width",
        "display_name",
        "dependents",
    }
    assert set(entry["value"]) == {"name", "value", "recommended_values", "errors", "visible"}
    assert entry["value"]["value"] == "1"
    with pytest.raises(BadRequestException, match=r"contains no connector type"):
        herder.validate_connector_config({"topic": "x"})
    plugins = herder.connector_plugins()
    assert {
        "class": f"{__name__}.TinySourceConnector",
        "type": "source",
        "version": "unknown",
    } in plugins
    assert all(p["type"] in ("source", "sink") for p in plugins)
    assert any(p["type"] == "transformation" for p in herder.connector_plugins(False))
    keys = [k["name"] for k in herder.connector_plugin_config("TinySource")]
    assert keys[:4] == ["topic", "password", "fail.task", "required.thing"]
    assert "tasks.max" in keys
    assert [k["name"] for k in herder.connector_plugin_config("RegexRouter")] == [
        "regex",
        "replacement",
    ]
    with pytest.raises(NotFoundException, match=r"^Unknown plugin Nope\.$"):
        herder.connector_plugin_config("Nope")
    with pytest.raises(BadRequestException, match=r"Invalid plugin class"):
        herder.connector_plugin_config("FileConfigProvider")
    assert State.RUNNING.value == "RUNNING"
