"""HasHeaderKey, RecordIsTombstone and TopicNameMatches, ported from Kafka's predicate tests."""

from __future__ import annotations

import pytest

from cdk.api import Headers, SourceRecord
from cdk.errors import ConfigException
from cdk.transforms import HasHeaderKey, RecordIsTombstone, TopicNameMatches


def _record(topic: str = "topic", value: object = "v", *header_keys: str) -> SourceRecord:
    headers = Headers()
    for key in header_keys:
        headers.add_string(key, "value")
    return SourceRecord(None, None, topic, 0, None, None, None, value, None, headers)


# -- HasHeaderKey ----------------------------------------------------------------------------------
def test_has_header_key_config_requires_name() -> None:
    with pytest.raises(ConfigException, match='"name"'):
        HasHeaderKey().configure({})


def test_has_header_key_config_rejects_empty_name() -> None:
    with pytest.raises(ConfigException, match="configuration name") as info:
        HasHeaderKey().configure({"name": ""})
    assert info.value.name == "name"


def test_has_header_key_config_def() -> None:
    key = HasHeaderKey().config().config_keys()["name"]
    assert str(key.validator) == "non-empty string"


def test_has_header_key_test() -> None:
    predicate: HasHeaderKey[SourceRecord] = HasHeaderKey()
    predicate.configure({"name": "foo"})
    assert predicate.test(_record("t", "v", "foo"))
    assert predicate.test(_record("t", "v", "foo", "bar"))
    assert predicate.test(_record("t", "v", "bar", "foo", "bar", "foo"))
    assert not predicate.test(_record("t", "v", "bar"))
    assert not predicate.test(_record("t", "v", "bar", "bar"))
    assert not predicate.test(_record("t", "v"))
    predicate.close()
    assert repr(predicate) == "HasHeaderKey{name='foo'}"


# -- RecordIsTombstone -----------------------------------------------------------------------------
def test_record_is_tombstone() -> None:
    predicate: RecordIsTombstone[SourceRecord] = RecordIsTombstone()
    predicate.configure({})
    assert predicate.test(_record(value=None))
    assert not predicate.test(_record(value="x"))
    assert not predicate.test(_record(value=b""))
    assert len(predicate.config()) == 0


# -- TopicNameMatches ------------------------------------------------------------------------------
def test_topic_name_matches_config_requires_pattern() -> None:
    with pytest.raises(ConfigException, match='"pattern"'):
        TopicNameMatches().configure({})


def test_topic_name_matches_config_rejects_empty_pattern() -> None:
    with pytest.raises(ConfigException, match="configuration pattern"):
        TopicNameMatches().configure({"pattern": ""})


def test_topic_name_matches_config_rejects_bad_regex() -> None:
    with pytest.raises(ConfigException, match="configuration pattern: Invalid regex") as info:
        TopicNameMatches().configure({"pattern": "["})
    assert info.value.name == "pattern"


def test_topic_name_matches_validator_text() -> None:
    key = TopicNameMatches().config().config_keys()["pattern"]
    assert str(key.validator) == "non-empty string, valid regex"


def test_topic_name_matches_test() -> None:
    predicate: TopicNameMatches[SourceRecord] = TopicNameMatches()
    predicate.configure({"pattern": "my-prefix-.*"})
    assert predicate.test(_record("my-prefix-"))
    assert predicate.test(_record("my-prefix-foo"))
    assert not predicate.test(_record("x-my-prefix-"))
    assert not predicate.test(_record("x-my-prefix-foo"))
    assert not predicate.test(_record("your-prefix-"))
    assert not predicate.test(_record("your-prefix-foo"))
    assert repr(predicate) == "TopicNameMatches{pattern=my-prefix-.*}"


def test_topic_name_matches_java_named_group() -> None:
    predicate: TopicNameMatches[SourceRecord] = TopicNameMatches()
    predicate.configure({"pattern": "(?<env>prod|dev)-.*"})
    assert predicate.test(_record("prod-orders"))
    assert not predicate.test(_record("test-orders"))


def test_topic_name_matches_whole_name_only() -> None:
    predicate: TopicNameMatches[SourceRecord] = TopicNameMatches()
    predicate.configure({"pattern": "foo"})
    assert not predicate.test(_record("foobar"))
    assert predicate.test(_record("foo"))
