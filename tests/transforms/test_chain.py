"""TransformationChain: building the SMT chain from connector properties, end to end.

The scenarios follow Kafka's TransformationIntegrationTest (without a broker) and the config
errors follow ConnectorValidationIntegrationTest.
"""

from __future__ import annotations

from typing import Any

import pytest

from cdk.api import Headers, SinkRecord, SourceRecord
from cdk.data import Schema
from cdk.errors import ConfigException
from cdk.transforms import (
    Filter,
    HasHeaderKey,
    RecordIsTombstone,
    TransformationChain,
    TransformationStage,
)


def _records(count: int, topic: str = "foo", **kwargs: Any) -> list[SourceRecord]:
    return [
        SourceRecord({"p": 0}, {"o": i}, topic, 0, None, f"k{i}", None, f"v{i}", 1000 + i, **kwargs)
        for i in range(count)
    ]


def _run(chain: TransformationChain[Any], records: list[Any]) -> list[Any]:
    out = []
    for record in records:
        result = chain.apply(record)
        if result is not None:
            out.append(result)
    return out


# -- TransformationIntegrationTest scenarios -------------------------------------------------------
def test_filter_on_topic_name_with_sink_records() -> None:
    chain = TransformationChain.from_config(
        {
            "transforms": "filter",
            "transforms.filter.type": "org.apache.kafka.connect.transforms.Filter",
            "transforms.filter.predicate": "barPredicate",
            "predicates": "barPredicate",
            "predicates.barPredicate.type": (
                "org.apache.kafka.connect.transforms.predicates.TopicNameMatches"
            ),
            "predicates.barPredicate.pattern": "bar",
        }
    )
    foo = [SinkRecord("foo", 0, None, None, None, i, i) for i in range(5)]
    bar = [SinkRecord("bar", 0, None, None, None, i, i) for i in range(5)]
    assert _run(chain, foo + bar) == foo


def test_filter_on_topic_name_negated() -> None:
    chain = TransformationChain.from_config(
        {
            "transforms": "filter",
            "transforms.filter.type": "Filter",
            "transforms.filter.predicate": "barPredicate",
            "transforms.filter.negate": "true",
            "predicates": "barPredicate",
            "predicates.barPredicate.type": "TopicNameMatches",
            "predicates.barPredicate.pattern": "bar",
        }
    )
    foo = _records(3, "foo")
    bar = _records(3, "bar")
    assert _run(chain, foo + bar) == bar


def test_filter_on_tombstones() -> None:
    chain = TransformationChain.from_config(
        {
            "transforms": "filter",
            "transforms.filter.type": "Filter",
            "transforms.filter.predicate": "barPredicate",
            "predicates": "barPredicate",
            "predicates.barPredicate.type": "RecordIsTombstone",
        }
    )
    live = _records(4)
    tombstones = [r.new_record(value=None) for r in _records(4)]
    assert _run(chain, [x for pair in zip(live, tombstones, strict=True) for x in pair]) == live


def test_filter_on_has_header_key_then_other_smts() -> None:
    chain = TransformationChain.from_config(
        {
            "transforms": "filter, renameTopic, dropHeader",
            "transforms.filter.type": "Filter",
            "transforms.filter.predicate": "headerPredicate",
            "transforms.filter.negate": "true",
            "transforms.renameTopic.type": "RegexRouter",
            "transforms.renameTopic.regex": "(.*)",
            "transforms.renameTopic.replacement": "renamed-$1",
            "transforms.dropHeader.type": "DropHeaders",
            "transforms.dropHeader.headers": "header-8",
            "predicates": "headerPredicate",
            "predicates.headerPredicate.type": "HasHeaderKey",
            "predicates.headerPredicate.name": "header-8",
        }
    )
    with_header = _records(3, headers=Headers().add_string("header-8", "x").add_string("o", "y"))
    without = _records(3)
    out = _run(chain, with_header + without)
    assert len(out) == 3
    assert all(r.topic == "renamed-foo" for r in out)
    assert all([h.key for h in r.headers] == ["o"] for r in out)
    assert [r.value for r in out] == [r.value for r in with_header]


def test_predicate_limits_a_non_dropping_smt() -> None:
    chain = TransformationChain.from_config(
        {
            "transforms": "stamp",
            "transforms.stamp.type": "InsertHeader",
            "transforms.stamp.header": "seen",
            "transforms.stamp.value.literal": "true",
            "transforms.stamp.predicate": "isFoo",
            "predicates": "isFoo",
            "predicates.isFoo.type": "TopicNameMatches",
            "predicates.isFoo.pattern": "fo+",
        }
    )
    foo, bar = _records(1, "foo")[0], _records(1, "bar")[0]
    out_foo, out_bar = chain.apply(foo), chain.apply(bar)
    assert out_foo is not None
    assert out_bar is bar
    header = out_foo.headers.last_with_name("seen")
    assert header is not None
    assert (header.schema, header.value) == (Schema.BOOLEAN_SCHEMA, True)


def test_key_value_smts_chain_in_order() -> None:
    chain = TransformationChain.from_config(
        {
            "transforms": "toHeader,rename,route",
            "transforms.toHeader.type": "org.apache.kafka.connect.transforms.HeaderFrom$Value",
            "transforms.toHeader.fields": "id",
            "transforms.toHeader.headers": "record-id",
            "transforms.toHeader.operation": "move",
            "transforms.rename.type": "cdk.transforms:TimestampConverter.Value",
            "transforms.rename.field": "ts",
            "transforms.rename.target.type": "string",
            "transforms.rename.format": "yyyy-MM-dd",
            "transforms.route.type": "TimestampRouter",
            "transforms.route.topic.format": "${topic}_${timestamp}",
            "transforms.route.timestamp.format": "yyyyMM",
        }
    )
    record = SourceRecord(
        None, None, "events", 0, None, None, None, {"id": 7, "ts": 0}, 86_400_000 * 40
    )
    out = chain.apply(record)
    assert out is not None
    assert out.value == {"ts": "1970-01-01"}
    assert out.topic == "events_197002"
    header = out.headers.last_with_name("record-id")
    assert header is not None
    assert header.value == 7


def test_chain_stops_at_first_drop() -> None:
    calls: list[str] = []

    class Spy(Filter[Any]):
        def apply(self, record: Any) -> Any:
            calls.append(record.topic)
            return record

    chain: TransformationChain[SourceRecord] = TransformationChain(
        [TransformationStage("drop", Filter()), TransformationStage("spy", Spy())]
    )
    assert chain.apply(_records(1)[0]) is None
    assert calls == []
    assert len(chain) == 2
    assert [s.alias for s in chain] == ["drop", "spy"]


def test_empty_chain_passes_records() -> None:
    chain = TransformationChain.from_config({})
    record = _records(1)[0]
    assert chain.apply(record) is record
    assert len(TransformationChain.from_config({"transforms": ""})) == 0


def test_each_stage_gets_its_own_predicate_and_close_closes_all() -> None:
    closed: list[str] = []

    class ClosingTombstone(RecordIsTombstone[Any]):
        def close(self) -> None:
            closed.append("predicate")

    props = {
        "transforms": "a,b",
        "transforms.a.type": "Filter",
        "transforms.a.predicate": "p",
        "transforms.b.type": "Filter",
        "transforms.b.predicate": "p",
        "transforms.b.negate": "false",
        "predicates": "p",
        "predicates.p.type": ClosingTombstone,
    }
    chain = TransformationChain.from_config(props)
    first, second = chain.stages
    assert first.predicate is not second.predicate
    assert isinstance(first.predicate, ClosingTombstone)
    assert not second.negate
    chain.close()
    assert closed == ["predicate", "predicate"]


def test_smt_receives_only_its_own_keys() -> None:
    seen: dict[str, Any] = {}

    class Recorder(Filter[Any]):
        def configure(self, configs: Any) -> None:
            seen.update(configs)

    TransformationChain.from_config(
        {
            "transforms": "r",
            "transforms.r.type": Recorder,
            "transforms.r.a": "1",
            "transforms.r.predicate": "p",
            "transforms.r.negate": "true",
            "transforms.other.b": "2",
            "predicates": "p",
            "predicates.p.type": "RecordIsTombstone",
        }
    )
    assert {k: v for k, v in seen.items() if k != "type"} == {"a": "1"}


# -- ConnectorValidationIntegrationTest cases ------------------------------------------------------
def _error(props: dict[str, Any]) -> ConfigException:
    with pytest.raises(ConfigException) as info:
        TransformationChain.from_config(props)
    return info.value


def test_duplicate_transformations() -> None:
    error = _error({"transforms": "t, t", "transforms.t.type": "Filter"})
    assert (
        str(error) == "Invalid value [t, t] for configuration transforms: Duplicate alias provided."
    )


def test_missing_transform_type() -> None:
    error = _error({"transforms": "t"})
    assert str(error) == (
        'Missing required configuration "transforms.t.type" which has no default value.'
    )


def test_missing_transform_class() -> None:
    error = _error({"transforms": "t", "transforms.t.type": "WheresTheFruit"})
    assert error.name == "transforms.t.type"
    assert "Class WheresTheFruit could not be found." in str(error)


def test_invalid_transform_class() -> None:
    error = _error({"transforms": "t", "transforms.t.type": "cdk.data:Schema"})
    assert str(error) == (
        "Invalid value cdk.data:Schema for configuration transforms.t.type: Not a Transformation"
    )


def test_abstract_transform_suggests_variants() -> None:
    error = _error({"transforms": "t", "transforms.t.type": "cdk.transforms:HeaderFrom"})
    assert error.name == "transforms.t.type"
    assert str(error).endswith(
        "Transformation is abstract and cannot be created. Did you mean "
        "cdk.transforms:HeaderFrom.Key, cdk.transforms:HeaderFrom.Value?"
    )


def test_predicate_class_as_transformation() -> None:
    error = _error({"transforms": "t", "transforms.t.type": "RecordIsTombstone"})
    assert str(error).endswith("Not a Transformation")


def test_negation_for_undefined_predicate() -> None:
    error = _error(
        {"transforms": "t", "transforms.t.type": "Filter", "transforms.t.negate": "true"}
    )
    assert str(error) == (
        "Config 'transforms.t.negate' was provided but there is no config "
        "'transforms.t.predicate' defining a predicate to be negated."
    )


def test_predicate_alias_not_listed() -> None:
    error = _error(
        {"transforms": "t", "transforms.t.type": "Filter", "transforms.t.predicate": "nope"}
    )
    assert error.name == "transforms.t.predicate"
    assert "nope" in str(error)


def test_bad_negate_value() -> None:
    error = _error(
        {
            "transforms": "t",
            "transforms.t.type": "Filter",
            "transforms.t.predicate": "p",
            "transforms.t.negate": "yes",
            "predicates": "p",
            "predicates.p.type": "RecordIsTombstone",
        }
    )
    assert error.name == "transforms.t.negate"


def test_duplicate_predicates() -> None:
    error = _error({"predicates": "p, p", "predicates.p.type": "RecordIsTombstone"})
    assert (
        str(error) == "Invalid value [p, p] for configuration predicates: Duplicate alias provided."
    )


def test_missing_predicate_class() -> None:
    error = _error({"predicates": "p", "predicates.p.type": "WheresTheFruit"})
    assert error.name == "predicates.p.type"


def test_missing_predicate_type() -> None:
    error = _error({"predicates": "p"})
    assert '"predicates.p.type"' in str(error)


def test_invalid_predicate_class() -> None:
    error = _error({"predicates": "p", "predicates.p.type": "Filter"})
    assert str(error) == "Invalid value Filter for configuration predicates.p.type: Not a Predicate"


def test_smt_config_errors_name_the_full_key() -> None:
    error = _error(
        {
            "transforms": "route",
            "transforms.route.type": "RegexRouter",
            "transforms.route.regex": "(",
        }
    )
    assert error.name == "transforms.route.regex"
    assert "for configuration transforms.route.regex: Invalid regex" in str(error)
    error = _error({"transforms": "route", "transforms.route.type": "RegexRouter"})
    assert 'Missing required configuration "transforms.route.regex"' in str(error)


def test_predicate_config_errors_name_the_full_key() -> None:
    error = _error(
        {
            "transforms": "f",
            "transforms.f.type": "Filter",
            "transforms.f.predicate": "p",
            "predicates": "p",
            "predicates.p.type": "HasHeaderKey",
        }
    )
    assert 'Missing required configuration "predicates.p.name"' in str(error)


def test_smt_errors_without_a_key_name_the_alias() -> None:
    error = _error({"transforms": "meta", "transforms.meta.type": "SetSchemaMetadata$Value"})
    assert str(error) == "transforms.meta: Neither schema name nor version configured"


def test_unused_predicates_are_still_validated() -> None:
    error = _error(
        {
            "transforms": "f",
            "transforms.f.type": "Filter",
            "predicates": "p",
            "predicates.p.type": "X",
        }
    )
    assert error.name == "predicates.p.type"


def test_has_header_key_class_given_directly() -> None:
    chain = TransformationChain.from_config(
        {
            "transforms": "f",
            "transforms.f.type": Filter,
            "transforms.f.predicate": "h",
            "predicates": ["h"],
            "predicates.h.type": HasHeaderKey,
            "predicates.h.name": "drop-me",
        }
    )
    keep, drop = _records(2)
    drop.headers.add_string("drop-me", "1")
    assert _run(chain, [keep, drop]) == [keep]
