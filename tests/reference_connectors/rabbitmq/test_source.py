"""The RabbitMQ source against the real server: acknowledged only in commit_record, redelivered
otherwise, reconnecting after a cut connection, and clear errors."""

from __future__ import annotations

import threading
import time

import pytest

from cdk import (
    ConfigException,
    ConnectException,
    DataException,
    RetriableException,
)
from reference_connectors.rabbitmq import RabbitMQSourceConnector, RabbitMQSourceTask
from tests._wait import wait_until
from tests.reference_connectors.rabbitmq._support import (
    Rabbit,
    commit_all,
    poll_until,
    source_task,
)


def _poll_while_none(task: RabbitMQSourceTask, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert not task.poll()


def _errors(props: dict[str, str]) -> dict[str, list[str]]:
    config = RabbitMQSourceConnector().validate(props)
    return {v.name: v.error_messages for v in config.config_values if v.error_messages}


def test_records_carry_the_message(rabbit: Rabbit) -> None:
    queue = rabbit.queue()
    rabbit.publish(queue, [1, 2, 3])
    with source_task(rabbit.source_config(queue)) as task:
        records = poll_until(task, 3)
        assert [r.key for r in records] == ["1", "2", "3"]
        assert [r.value for r in records] == [b"record-1", b"record-2", b"record-3"]
        first = records[0]
        assert first.topic == "t"
        assert first.source_partition is None
        assert first.source_offset is None
        headers = {h.key: h.value for h in first.headers}
        assert headers == {
            "rabbitmq.queue": queue,
            "rabbitmq.exchange": "",
            "rabbitmq.routing.key": queue,
            "rabbitmq.message.id": "1",
            "rabbitmq.redelivered": False,
        }


def test_string_values_and_bodies_that_are_not_utf8(rabbit: Rabbit) -> None:
    queue = rabbit.queue()
    rabbit.publish(queue, [1], body="caf\u00e9 {}")
    rabbit.channel.basic_publish("", queue, b"\xff\xfe", mandatory=True)
    with source_task({**rabbit.source_config(queue), "rabbitmq.value.format": "string"}) as task:
        [record] = poll_until(task, 1)
        assert record.value == "caf\u00e9 1"
        commit_all(task, [record])
        with pytest.raises(DataException, match=r"is not UTF-8 text"):
            wait_until(lambda: task.poll(), 10, 0.0, "the body that is not UTF-8")
    rabbit.wait_ready(queue, 1, "the bad message back in the queue")


def test_acknowledged_only_in_commit_record(rabbit: Rabbit) -> None:
    queue = rabbit.queue()
    rabbit.publish(queue, range(10))
    props = rabbit.source_config(queue)
    with source_task(props) as task:
        records = poll_until(task, 10)
        assert rabbit.ready(queue) == 0  # delivered, unacknowledged
        commit_all(task, records[:4])
        task.commit_record(records[4], None)  # dropped by a transformation: acknowledged too
    # stop() closed the connection: the 5 messages without commit_record come back
    rabbit.wait_ready(queue, 5, "the messages without commit_record requeued")
    with source_task(props) as task:
        again = poll_until(task, 5)
        assert sorted(int(r.key) for r in again) == [5, 6, 7, 8, 9]
        assert all({h.key: h.value for h in r.headers}["rabbitmq.redelivered"] for r in again)
        commit_all(task, again)
    rabbit.wait_no_consumer(queue)
    assert rabbit.ready(queue) == 0


def test_stop_requeues_what_poll_never_returned(rabbit: Rabbit) -> None:
    queue = rabbit.queue()
    rabbit.publish(queue, range(20))
    with source_task({**rabbit.source_config(queue), "rabbitmq.batch.size": "5"}) as task:
        records = poll_until(task, 5)
        assert len(records) == 5  # 15 more delivered to the task's buffer (prefetch 1000)
        commit_all(task, records)
    rabbit.wait_ready(queue, 15, "the buffered messages requeued")


def test_a_stop_from_another_thread_winds_down_on_the_task_thread(rabbit: Rabbit) -> None:
    queue = rabbit.queue()
    rabbit.publish(queue, range(6))
    with source_task({**rabbit.source_config(queue), "rabbitmq.batch.size": "2"}) as task:
        records = poll_until(task, 2)
        stopper = threading.Thread(target=task.stop)
        stopper.start()
        stopper.join(5)
        assert task.poll() is None  # winds down: the 4 buffered messages go back
        rabbit.wait_ready(queue, 4, "the buffered messages requeued")
        commit_all(task, records)  # the final flush's acknowledgements still go through
        rabbit.wait_no_consumer(queue)  # and then the connection closes
    assert rabbit.ready(queue) == 4


def test_reconnects_after_a_cut_and_never_acks_a_tag_of_the_old_channel(rabbit: Rabbit) -> None:
    queue = rabbit.queue()
    rabbit.publish(queue, range(5))
    proxy = rabbit.proxy()
    props = {**rabbit.source_config(queue, proxy.port), "rabbitmq.retry.backoff.ms": "50"}
    with source_task(props) as task:
        before = poll_until(task, 5)
        proxy.cut()
        with pytest.raises(RetriableException, match=r"reconnecting"):
            _poll_while_none(task)
        # the old channel is gone: its messages are redelivered, its records acknowledge nothing
        commit_all(task, before)
        rabbit.wait_ready(queue, 5, "the old channel's messages requeued")
        proxy.restore()
        after = poll_until(task, 5)
        assert sorted(int(r.key) for r in after) == [0, 1, 2, 3, 4]
        commit_all(task, after)
    rabbit.wait_no_consumer(queue)
    assert rabbit.ready(queue) == 0


def test_a_deleted_queue_fails_the_task_saying_so(rabbit: Rabbit) -> None:
    queue = rabbit.queue()
    with source_task(rabbit.source_config(queue)) as task:
        assert task.poll() is None
        rabbit.channel.queue_delete(queue)
        with pytest.raises(ConnectException, match=rf"queue '{queue}' was deleted"):
            wait_until(lambda: task.poll(), 10, 0.0, "the task to notice")


def test_a_missing_queue_fails_the_task(rabbit: Rabbit) -> None:
    props = rabbit.source_config("cdk_test_never_made")
    with source_task(props) as task, pytest.raises(ConnectException, match="does not exist"):
        task.poll()


def test_tasks_split_the_queues() -> None:
    connector = RabbitMQSourceConnector()
    connector.start({"rabbitmq.queue": "a,b,c", "kafka.topic": "t"})
    assert [c["rabbitmq.queue"] for c in connector.task_configs(2)] == ["a,c", "b"]
    assert [c["rabbitmq.queue"] for c in connector.task_configs(5)] == ["a", "b", "c"]


@pytest.mark.parametrize(
    ("props", "key"),
    [
        ({"kafka.topic": "t"}, "rabbitmq.queue"),
        ({"rabbitmq.queue": "a", "kafka.topic": "t", "rabbitmq.port": "0"}, "rabbitmq.port"),
        (
            {"rabbitmq.queue": "a", "kafka.topic": "t", "rabbitmq.value.format": "x"},
            "rabbitmq.value.format",
        ),
        (
            {"rabbitmq.queue": "a", "kafka.topic": "t", "rabbitmq.retry.backoff.max.ms": "1"},
            "rabbitmq.retry.backoff.max.ms",
        ),
    ],
)
def test_bad_config_is_refused_naming_the_key(props: dict[str, str], key: str) -> None:
    with pytest.raises(ConfigException, match=key.replace(".", r"\.")):
        RabbitMQSourceConnector().start(props)


def test_validate_reports_the_broker_and_the_queues(rabbit: Rabbit) -> None:
    queue = rabbit.queue()
    good = rabbit.source_config(queue)
    assert _errors(good) == {}
    missing = _errors({**good, "rabbitmq.queue": f"{queue},cdk_test_nope"})
    assert list(missing) == ["rabbitmq.queue"]
    assert "'cdk_test_nope' does not exist" in missing["rabbitmq.queue"][0]
    proxy = rabbit.proxy()
    proxy.cut()
    unreachable = _errors({**good, "rabbitmq.port": str(proxy.port)})
    assert list(unreachable) == ["rabbitmq.host"]
    assert f":{proxy.port}" in unreachable["rabbitmq.host"][0]
    refused = _errors({**good, "rabbitmq.password": "never-shown-pw"})
    assert list(refused) == ["rabbitmq.username"]
    assert "never-shown-pw" not in str(refused)
    vhost = _errors({**good, "rabbitmq.virtual.host": "cdk_test_no_such_vhost"})
    assert list(vhost) == ["rabbitmq.virtual.host"]


def test_an_unreachable_broker_is_retried_after_the_backoff(rabbit: Rabbit) -> None:
    proxy = rabbit.proxy()
    proxy.cut()
    props = {**rabbit.source_config(rabbit.queue(), proxy.port), "rabbitmq.retry.backoff.ms": "400"}
    failures: list[str] = []
    with source_task(props) as task:
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            try:
                assert task.poll() is None
            except RetriableException as exc:
                failures.append(str(exc))
    # attempts at 0 s, then 0.4 s (0.8 s after that is past the second): no busy loop
    assert 1 <= len(failures) <= 2
    assert all(f":{proxy.port}" in failure for failure in failures)
