"""sink.tasks.leave.mode: the worker config key and the decision ``auto`` takes from the broker."""

from __future__ import annotations

import pytest

from cdk.errors import ConfigException
from cdk.kafka import EmbeddedKafka, free_port
from cdk.runtime._leave_order import KAFKA_COORDINATOR_CONFIG, decide_leave_mode, probe_broker
from cdk.runtime._worker_config import WorkerConfig

JSON = "org.apache.kafka.connect.json.JsonConverter"
BASE = {"bootstrap.servers": "127.0.0.1:9", "key.converter": JSON, "value.converter": JSON}


def test_the_mode_defaults_to_auto_and_ignores_case() -> None:
    assert WorkerConfig(BASE).sink_tasks_leave_mode == "auto"
    config = WorkerConfig({**BASE, "sink.tasks.leave.mode": "Sequential"})
    assert config.sink_tasks_leave_mode == "sequential"


def test_an_unknown_mode_is_named_with_the_valid_ones() -> None:
    with pytest.raises(ConfigException, match=r"sink\.tasks\.leave\.mode") as info:
        WorkerConfig({**BASE, "sink.tasks.leave.mode": "serial"})
    assert "serial" in str(info.value)
    assert "CONCURRENT" in str(info.value)


@pytest.mark.parametrize(("mode", "sequential"), [("sequential", True), ("concurrent", False)])
def test_a_forced_mode_does_not_ask_the_cluster(mode: str, sequential: bool) -> None:
    # an address nobody listens on: asking it would take the probe's timeout and say sequential
    decision = decide_leave_mode(mode, {"bootstrap.servers": f"127.0.0.1:{free_port()}"})
    assert decision.sequential is sequential
    assert mode in decision.reason


def test_auto_on_the_embedded_broker_is_sequential(kafka: EmbeddedKafka) -> None:
    decision = decide_leave_mode("auto", {"bootstrap.servers": kafka.bootstrap_servers})
    assert decision.sequential
    assert KAFKA_COORDINATOR_CONFIG in decision.reason
    assert "0 broker configs" in decision.reason
    assert decision.final


def test_a_cluster_that_cannot_be_asked_gets_the_safe_order() -> None:
    decision = probe_broker({"bootstrap.servers": f"127.0.0.1:{free_port()}"}, timeout=0.5)
    assert decision.sequential
    assert not decision.final  # asked again next time
    assert "could not be read" in decision.reason
