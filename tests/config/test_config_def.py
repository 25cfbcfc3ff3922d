"""ConfigDef: definition, parsing and validation (ported from Kafka's ConfigDefTest)."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from cdk.config import (
    NO_DEFAULT,
    ConfigDef,
    ConfigKey,
    ConfigValue,
    Importance,
    Password,
    Recommender,
    Type,
    Width,
    convert_to_string,
    parse_type,
)
from cdk.config import validators as v
from cdk.errors import ConfigException


class NestedClass:
    class Inner:
        pass


def test_basic_types() -> None:
    d = (
        ConfigDef()
        .define("a", Type.INT, 5, v.Range.between(0, 14), Importance.HIGH, "docs")
        .define("b", Type.LONG, importance=Importance.HIGH, documentation="docs")
        .define("c", Type.STRING, "hello", None, Importance.HIGH, "docs")
        .define("d", Type.LIST, importance=Importance.HIGH, documentation="docs")
        .define("e", Type.DOUBLE, importance=Importance.HIGH, documentation="docs")
        .define("f", Type.CLASS, importance=Importance.HIGH, documentation="docs")
        .define("g", Type.BOOLEAN, importance=Importance.HIGH, documentation="docs")
        .define("h", Type.BOOLEAN, importance=Importance.HIGH, documentation="docs")
        .define("i", Type.BOOLEAN, importance=Importance.HIGH, documentation="docs")
        .define("j", Type.PASSWORD, importance=Importance.HIGH, documentation="docs")
        .define("k", Type.SHORT, importance=Importance.HIGH, documentation="docs")
    )
    vals = d.parse(
        {
            "a": "1   ",
            "b": 2,
            "d": " a , b, c",
            "e": 42.5,
            "f": "collections.OrderedDict",
            "g": "true",
            "h": "FalSE",
            "i": "TRUE",
            "j": "password",
            "k": " -7 ",
            "unknown": "ignored",
        }
    )
    assert vals["a"] == 1
    assert vals["b"] == 2
    assert vals["c"] == "hello"
    assert vals["d"] == ["a", "b", "c"]
    assert vals["e"] == 42.5
    import collections

    assert vals["f"] is collections.OrderedDict
    assert vals["g"] is True
    assert vals["h"] is False
    assert vals["i"] is True
    assert vals["j"] == Password("password")
    assert str(vals["j"]) == "[hidden]"
    assert vals["k"] == -7
    assert "unknown" not in vals


def test_invalid_default() -> None:
    with pytest.raises(ConfigException, match="Not a number of type INT"):
        ConfigDef().define("a", Type.INT, "hello", None, Importance.HIGH, "docs")


def test_null_default() -> None:
    # Kafka's ConfigDefTest.testNullDefault: no default, no validator and no importance.
    d = ConfigDef().define("a", Type.INT, None, None, None, "docs")
    assert d.parse({}) == {"a": None}
    assert d.config_keys()["a"].importance is None


def test_a_key_with_no_importance_renders_and_sorts_last() -> None:
    d = (
        ConfigDef()
        .define("a", Type.INT, 1, None, None, "no importance")
        .define("b", Type.INT, 1, None, Importance.LOW, "low")
    )
    assert [k.name for k in d.sorted_keys()] == ["b", "a"]
    assert "  * Importance: \n" in d.to_rst()
    assert "| no importance | int | `1` |  |  |" in d.to_markdown()
    d.to_html()
    d.to_enriched_rst()


def test_missing_required() -> None:
    d = ConfigDef().define("a", Type.INT, importance=Importance.HIGH, documentation="docs")
    with pytest.raises(ConfigException) as info:
        d.parse({})
    assert str(info.value) == 'Missing required configuration "a" which has no default value.'


def test_empty_default_for_string_parses() -> None:
    assert ConfigDef().define("a", Type.STRING, "", None, Importance.HIGH, "docs").parse({}) == {
        "a": ""
    }


def test_defined_twice() -> None:
    d = ConfigDef().define("a", Type.STRING, importance=Importance.HIGH, documentation="docs")
    with pytest.raises(ConfigException, match=r"^Configuration a is defined twice\.$"):
        d.define("a", Type.INT, importance=Importance.HIGH, documentation="docs")


@pytest.mark.parametrize(
    ("type_", "value"),
    [
        (Type.INT, "hello"),
        (Type.INT, "42.5"),
        (Type.INT, 42.5),
        (Type.INT, 2**63 - 1),
        (Type.INT, str(2**63 - 1)),
        (Type.INT, object()),
        (Type.INT, True),
        (Type.INT, "1_000"),
        (Type.SHORT, "40000"),
        (Type.LONG, "hello"),
        (Type.LONG, "42.5"),
        (Type.LONG, str(2**63 - 1) + "00"),
        (Type.LONG, object()),
        (Type.DOUBLE, "hello"),
        (Type.DOUBLE, object()),
        (Type.DOUBLE, "inf"),
        (Type.STRING, object()),
        (Type.STRING, 5),
        (Type.LIST, 53),
        (Type.LIST, object()),
        (Type.BOOLEAN, "hello"),
        (Type.BOOLEAN, "truee"),
        (Type.BOOLEAN, "fals"),
        (Type.BOOLEAN, 1),
        (Type.CLASS, "ClassDoesNotExist"),
        (Type.CLASS, 5),
        (Type.PASSWORD, 5),
    ],
)
def test_bad_inputs(type_: Type, value: Any) -> None:
    d = ConfigDef().define("name", type_, importance=Importance.HIGH, documentation="docs")
    with pytest.raises(ConfigException) as info:
        d.parse({"name": value})
    assert info.value.name == "name"
    assert "for configuration name" in str(info.value)


@pytest.mark.parametrize(
    ("type_", "value", "message"),
    [
        (Type.INT, "x", "Invalid value x for configuration k: Not a number of type INT"),
        (Type.SHORT, "x", "Invalid value x for configuration k: Not a number of type SHORT"),
        (Type.LONG, "x", "Invalid value x for configuration k: Not a number of type LONG"),
        (Type.DOUBLE, "x", "Invalid value x for configuration k: Not a number of type DOUBLE"),
        (
            Type.BOOLEAN,
            "yes",
            "Invalid value yes for configuration k: Expected value to be either true or false",
        ),
        (
            Type.STRING,
            5,
            "Invalid value 5 for configuration k: Expected value to be a string, but it was a int",
        ),
        (
            Type.INT,
            1.5,
            "Invalid value 1.5 for configuration k: "
            "Expected value to be a 32-bit integer, but it was a float",
        ),
        (Type.LIST, 5, "Invalid value 5 for configuration k: Expected a comma separated list."),
        (
            Type.CLASS,
            "no.such.Thing",
            "Invalid value no.such.Thing for configuration k: "
            "Class no.such.Thing could not be found.",
        ),
        (
            Type.CLASS,
            5,
            "Invalid value 5 for configuration k: Expected a Class instance or class name.",
        ),
    ],
)
def test_parse_error_texts(type_: Type, value: Any, message: str) -> None:
    with pytest.raises(ConfigException) as info:
        parse_type("k", value, type_)
    assert str(info.value) == message


def test_password_type_errors_hide_the_value() -> None:
    with pytest.raises(ConfigException) as info:
        parse_type("secret", 12345, Type.PASSWORD)
    assert "12345" not in str(info.value)
    assert "[hidden]" in str(info.value)


def test_range_checks_of_integer_types() -> None:
    assert parse_type("k", str(2**31 - 1), Type.INT) == 2**31 - 1
    assert parse_type("k", str(-(2**31)), Type.INT) == -(2**31)
    assert parse_type("k", "+5", Type.INT) == 5
    for bad in (str(2**31), str(-(2**31) - 1)):
        with pytest.raises(ConfigException, match="Not a number of type INT"):
            parse_type("k", bad, Type.INT)
    assert parse_type("k", "32767", Type.SHORT) == 32767
    with pytest.raises(ConfigException, match="Not a number of type SHORT"):
        parse_type("k", "32768", Type.SHORT)
    assert parse_type("k", str(2**63 - 1), Type.LONG) == 2**63 - 1
    with pytest.raises(ConfigException, match="Not a number of type INT"):
        parse_type("k", 2**31, Type.INT)


def test_double_parsing_follows_java() -> None:
    assert parse_type("k", " 1e3 ", Type.DOUBLE) == 1000.0
    assert parse_type("k", "1.5f", Type.DOUBLE) == 1.5
    assert parse_type("k", ".5", Type.DOUBLE) == 0.5
    assert parse_type("k", "-Infinity", Type.DOUBLE) == float("-inf")
    assert parse_type("k", 3, Type.DOUBLE) == 3.0
    assert isinstance(parse_type("k", 3, Type.DOUBLE), float)


def test_list_parsing() -> None:
    assert parse_type("k", "", Type.LIST) == []
    assert parse_type("k", "   ", Type.LIST) == []
    assert parse_type("k", "a,b,", Type.LIST) == ["a", "b", ""]
    assert parse_type("k", "a , ,b", Type.LIST) == ["a", "", "b"]
    assert parse_type("k", ("x", "y"), Type.LIST) == ["x", "y"]


def test_strings_are_trimmed_like_java() -> None:
    assert parse_type("k", "\t hi \n\r", Type.STRING) == "hi"
    assert parse_type("k", " s3cret ", Type.PASSWORD).value() == "s3cret"
    assert parse_type("k", None, Type.INT) is None


def test_invalid_default_range() -> None:
    with pytest.raises(ConfigException, match="Value must be at least 0"):
        ConfigDef().define("name", Type.INT, -1, v.Range.between(0, 10), Importance.HIGH, "docs")


def test_invalid_default_string() -> None:
    with pytest.raises(ConfigException, match="String must be one of: valid, values"):
        ConfigDef().define(
            "name", Type.STRING, "bad", v.ValidString.of("valid", "values"), Importance.HIGH, "d"
        )


def test_nested_class() -> None:
    d = ConfigDef().define("name", Type.CLASS, importance=Importance.HIGH, documentation="docs")
    name = f"{__name__}.NestedClass.Inner"
    assert d.parse({"name": name})["name"] is NestedClass.Inner
    assert d.parse({"name": f"{__name__}:NestedClass.Inner"})["name"] is NestedClass.Inner
    assert d.parse({"name": f"{__name__}.NestedClass$Inner"})["name"] is NestedClass.Inner
    assert d.parse({"name": NestedClass})["name"] is NestedClass


def test_null_default_with_validator() -> None:
    d = ConfigDef().define(
        "enum_test",
        Type.STRING,
        NO_DEFAULT,
        v.ValidString.of("ONE", "TWO", "THREE"),
        Importance.HIGH,
        "docs",
    )
    assert d.parse({"enum_test": "ONE"}) == {"enum_test": "ONE"}


def test_group_inference() -> None:
    def make(groups: list[str]) -> ConfigDef:
        d = ConfigDef()
        for name, group, order in zip("abc", groups, (1, 2, 2), strict=True):
            d.define(
                name,
                Type.INT,
                importance=Importance.HIGH,
                documentation="docs",
                group=group,
                order_in_group=order,
                width=Width.SHORT,
                display_name=name,
            )
        return d

    assert make(["group1", "group2", "group1"]).groups() == ["group1", "group2"]
    assert make(["group2", "group2", "group1"]).groups() == ["group2", "group1"]


def test_define_with_a_config_key_and_introspection() -> None:
    d = ConfigDef().define(ConfigKey("x", Type.INT, "3", None, Importance.LOW, "docs"))
    d.define("y", Type.STRING, importance=Importance.HIGH, documentation="y docs")
    assert d.names() == frozenset({"x", "y"})
    assert list(d.config_keys()) == ["x", "y"]
    assert d.default_values() == {"x": 3}
    key = d.config_keys()["y"]
    assert key.display_name == "y"
    assert key.width is Width.NONE
    assert key.order_in_group == -1
    assert key.group is None
    assert not key.has_default()
    assert d.find("x") is not None
    assert d.find("nope") is None
    assert "x" in d
    assert len(d) == 2
    with pytest.raises(ConfigException, match="defined twice"):
        d.define(ConfigKey("x", Type.INT, 1, None, Importance.LOW, "docs"))


def test_copy_constructor_is_independent() -> None:
    base = ConfigDef().define("a", Type.STRING, importance=Importance.LOW, documentation="docs")
    child = (
        ConfigDef(base)
        .define(
            "parent",
            Type.STRING,
            importance=Importance.HIGH,
            documentation="p",
            group="group",
            order_in_group=1,
            dependents=["child"],
        )
        .define("child", Type.STRING, importance=Importance.HIGH, documentation="docs")
    )
    assert base.names() == {"a"}
    assert child.names() == {"a", "parent", "child"}


def test_define_needs_a_type() -> None:
    with pytest.raises(ConfigException, match="needs a type"):
        ConfigDef().define("a", importance=Importance.LOW)


def test_internal_config_is_parsed_and_validated() -> None:
    d = ConfigDef().define_internal("internal.config", Type.STRING, "")
    results = d.validate({"internal.config": "value"})
    assert results[0].value == "value"
    assert results[0].name == "internal.config"
    assert d.config_keys()["internal.config"].internal_config


# --------------------------------------------------------------------------------- validate
class IntegerRecommender(Recommender):
    def __init__(self, has_parent: bool) -> None:
        self.has_parent = has_parent

    def valid_values(self, name: str, parsed: Any) -> list[Any]:
        return [4, 5] if self.has_parent else [1, 2, 3]

    def visible(self, name: str, parsed: Any) -> bool:
        return True


def _dependents_def(extra_a: tuple[str, ...] = (), with_d: bool = True) -> ConfigDef:
    d = ConfigDef()
    d.define(
        "a",
        Type.INT,
        importance=Importance.HIGH,
        documentation="docs",
        group="group",
        order_in_group=1,
        width=Width.SHORT,
        display_name="a",
        dependents=["b", "c", *extra_a],
        recommender=IntegerRecommender(False),
    )
    d.define(
        "b",
        Type.INT,
        importance=Importance.HIGH,
        documentation="docs",
        group="group",
        order_in_group=2,
        width=Width.SHORT,
        display_name="b",
        recommender=IntegerRecommender(True),
    )
    d.define(
        "c",
        Type.INT,
        importance=Importance.HIGH,
        documentation="docs",
        group="group",
        order_in_group=3,
        width=Width.SHORT,
        display_name="c",
        recommender=IntegerRecommender(True),
    )
    if with_d:
        d.define(
            "d",
            Type.INT,
            importance=Importance.HIGH,
            documentation="docs",
            group="group",
            order_in_group=4,
            width=Width.SHORT,
            display_name="d",
            dependents=["b"],
            recommender=IntegerRecommender(False),
        )
    return d


MISSING_B = 'Missing required configuration "b" which has no default value.'
MISSING_C = 'Missing required configuration "c" which has no default value.'


def test_validate_with_dependents_and_duplicate_errors() -> None:
    result = _dependents_def().validate_all({"a": "1", "d": "10"})
    assert result == {
        "a": ConfigValue("a", 1, [1, 2, 3], []),
        "b": ConfigValue("b", None, [4, 5], [MISSING_B, MISSING_B]),
        "c": ConfigValue("c", None, [4, 5], [MISSING_C]),
        "d": ConfigValue("d", 10, [1, 2, 3], []),
    }
    as_list = _dependents_def().validate({"a": "1", "d": "10"})
    assert {c.name: c for c in as_list} == result


def test_validate_missing_config_key() -> None:
    result = _dependents_def(extra_a=("d",), with_d=False).validate_all({"a": "1"})
    expected_d = ConfigValue(
        "d", None, [], ["d is referred in the dependents, but not defined."], visible=False
    )
    assert result == {
        "a": ConfigValue("a", 1, [1, 2, 3], []),
        "b": ConfigValue("b", None, [4, 5], [MISSING_B]),
        "c": ConfigValue("c", None, [4, 5], [MISSING_C]),
        "d": expected_d,
    }


def test_parse_with_missing_dependent_configs() -> None:
    d = ConfigDef().define(
        "parent",
        Type.STRING,
        importance=Importance.HIGH,
        documentation="parent docs",
        group="group",
        order_in_group=1,
        width=Width.LONG,
        display_name="Parent",
        dependents=["child"],
    )
    with pytest.raises(ConfigException) as info:
        d.parse({})
    assert str(info.value) == (
        "Some configurations in are referred in the dependents, but not defined: child"
    )


def test_validate_cannot_parse() -> None:
    d = ConfigDef().define("a", Type.INT, importance=Importance.HIGH, documentation="docs")
    assert d.validate({"a": "non_integer"}) == [
        ConfigValue(
            "a",
            None,
            [],
            ["Invalid value non_integer for configuration a: Not a number of type INT"],
        )
    ]


def test_recommended_values_intersect_on_second_visit() -> None:
    class Narrowing(Recommender):
        def __init__(self) -> None:
            self.calls = 0

        def valid_values(self, name: str, parsed: Any) -> list[Any]:
            self.calls += 1
            return [1, 2, 3] if self.calls == 1 else [2, 3, 4]

        def visible(self, name: str, parsed: Any) -> bool:
            return parsed.get("p1") == 1

    d = (
        ConfigDef()
        .define("p1", Type.INT, 1, None, Importance.LOW, "d", dependents=["x"])
        .define("p2", Type.INT, 1, None, Importance.LOW, "d", dependents=["x"])
        .define("x", Type.INT, 2, None, Importance.LOW, "d", recommender=Narrowing())
    )
    x = d.validate_all({})["x"]
    assert x.recommended_values == [2, 3]
    assert x.visible is True
    assert d.validate_all({"p1": "2"})["x"].visible is False


def test_validate_never_raises_on_failing_validators_and_recommenders() -> None:
    def boom(name: str, value: Any) -> None:
        raise RuntimeError("kaput")

    class Broken(Recommender):
        def valid_values(self, name: str, parsed: Any) -> list[Any]:
            raise ValueError("no recommendations")

        def visible(self, name: str, parsed: Any) -> bool:
            return True

    class Refusing(Recommender):
        def valid_values(self, name: str, parsed: Any) -> list[Any]:
            raise ConfigException(name, "v", "refused")

        def visible(self, name: str, parsed: Any) -> bool:
            return True

    d = (
        ConfigDef()
        .define("a", Type.STRING, "x", None, Importance.LOW, "d")
        .define("b", Type.STRING, None, None, Importance.LOW, "d", recommender=Broken())
        .define("c", Type.STRING, None, None, Importance.LOW, "d", recommender=Refusing())
    )
    d.define(
        ConfigKey("e", Type.STRING, NO_DEFAULT, v.LambdaValidator.of(boom, "never"), Importance.LOW)
    )
    result = d.validate_all({"e": "val"})
    assert result["e"].error_messages == [
        "Invalid value val for configuration e: RuntimeError: kaput"
    ]
    assert result["b"].error_messages == [
        "Recommender of configuration b failed: ValueError: no recommendations"
    ]
    assert result["c"].error_messages == ["Invalid value v for configuration c: refused"]
    with pytest.raises(ConfigException, match="configuration e: RuntimeError: kaput"):
        d.parse({"e": "val"})


def test_validate_tolerates_non_mapping() -> None:
    d = ConfigDef().define("a", Type.INT, 1, None, Importance.LOW, "d")
    assert d.validate(None) == [ConfigValue("a", 1)]  # type: ignore[arg-type]


def test_validate_hides_passwords() -> None:
    d = ConfigDef().define(
        "pw",
        Type.PASSWORD,
        importance=Importance.HIGH,
        documentation="d",
        validator=v.LambdaValidator.of(
            lambda n, val: (_ for _ in ()).throw(ConfigException(n, val, "too short")), "long"
        ),
    )
    [value] = d.validate({"pw": "hunter2"})
    assert "hunter2" not in repr(value)
    assert value.error_messages == ["Invalid value [hidden] for configuration pw: too short"]


# --------------------------------------------------------------------------------- ConfigValue
def test_config_value_equality_and_repr() -> None:
    a = ConfigValue("a", 1, [1, 2], ["bad"], True)
    assert a == ConfigValue("a", 1, [1, 2], ["bad"], True)
    assert a != ConfigValue("a", 1, [1, 2], ["bad"], False)
    assert a != ConfigValue("a", 2, [1, 2], ["bad"], True)
    assert a != ConfigValue("b", 1, [1, 2], ["bad"], True)
    assert a != ConfigValue("a", 1, [1], ["bad"], True)
    assert a != ConfigValue("a", 1, [1, 2], [], True)
    assert repr(a) == "[a,1,[1, 2],[bad],true]"
    assert repr(ConfigValue("p", Password("x"))) == "[p,[hidden],[],[],true]"
    assert repr(ConfigValue("n")) == "[n,null,[],[],true]"
    a.add_error_message("worse")
    assert a.error_messages == ["bad", "worse"]


# --------------------------------------------------------------------------------- embed
def test_embed() -> None:
    class Prefixed(Recommender):
        seen: ClassVar[list[tuple[str, dict[str, Any]]]] = []

        def valid_values(self, name: str, parsed: Any) -> list[Any]:
            Prefixed.seen.append((name, dict(parsed)))
            return ["x"]

        def visible(self, name: str, parsed: Any) -> bool:
            return True

    names_seen: list[str] = []

    def check(name: str, value: Any) -> None:
        names_seen.append(name)
        if value == "bad":
            raise ConfigException(name, value, "bad value")

    child = (
        ConfigDef()
        .define(
            "a",
            Type.STRING,
            "ok",
            v.LambdaValidator.of(check, "checked"),
            Importance.HIGH,
            "a docs",
            dependents=["b"],
        )
        .define(
            "b", Type.STRING, "y", None, Importance.LOW, "b docs", group="G", recommender=Prefixed()
        )
    )
    parent = ConfigDef().define("top", Type.INT, 1, None, Importance.LOW, "top docs")
    parent.embed("sub.", "Sub", 5, child)
    keys = parent.config_keys()
    assert list(keys) == ["top", "sub.a", "sub.b"]
    assert keys["sub.a"].group == "Sub"
    assert keys["sub.b"].group == "Sub: G"
    assert keys["sub.a"].order_in_group == 5
    assert keys["sub.b"].order_in_group == 6
    assert keys["sub.a"].dependents == ("sub.b",)
    assert str(keys["sub.a"].validator) == "checked"
    assert parent.groups() == ["Sub", "Sub: G"]
    names_seen.clear()
    with pytest.raises(ConfigException, match="Invalid value bad for configuration a: bad value"):
        parent.parse({"sub.a": "bad"})
    assert names_seen == ["a"]
    result = parent.validate_all({"sub.a": "fine", "top": "3"})
    assert result["sub.b"].recommended_values == ["x"]
    assert Prefixed.seen[-1] == ("b", {"a": "fine", "b": "y"})


# --------------------------------------------------------------------------------- conversions
def test_convert_to_string() -> None:
    assert convert_to_string(True, Type.BOOLEAN) == "true"
    assert convert_to_string(None, Type.BOOLEAN) is None
    assert convert_to_string(32767, Type.SHORT) == "32767"
    assert convert_to_string(2**31 - 1, Type.INT) == "2147483647"
    assert convert_to_string(2**63 - 1, Type.LONG) == "9223372036854775807"
    assert convert_to_string(3.125, Type.DOUBLE) == "3.125"
    assert convert_to_string(1.0, Type.DOUBLE) == "1.0"
    assert convert_to_string(1e10, Type.DOUBLE) == "1.0E10"
    assert convert_to_string("foobar", Type.STRING) == "foobar"
    assert convert_to_string(Password("foobar"), Type.PASSWORD) == "[hidden]"
    assert convert_to_string("foobar", Type.PASSWORD) == "foobar"
    assert convert_to_string(["a", "bc", "d"], Type.LIST) == "a,bc,d"
    assert convert_to_string(NestedClass.Inner, Type.CLASS) == f"{__name__}.NestedClass.Inner"
    assert parse_type("k", convert_to_string(NestedClass.Inner, Type.CLASS), Type.CLASS) is (
        NestedClass.Inner
    )


def test_class_with_kafka_alias(monkeypatch: pytest.MonkeyPatch) -> None:
    from cdk import _aliases

    monkeypatch.setitem(_aliases.KAFKA_CLASS_ALIASES, "PluginAlias", f"{__name__}:NestedClass")
    assert parse_type("Test config", "PluginAlias", Type.CLASS) is NestedClass
    with pytest.raises(ConfigException, match=r"Class OtherAlias could not be found\."):
        parse_type("Test config", "OtherAlias", Type.CLASS)


def test_types_and_enums() -> None:
    assert [t.name for t in Type] == [
        "BOOLEAN",
        "STRING",
        "INT",
        "SHORT",
        "LONG",
        "DOUBLE",
        "LIST",
        "CLASS",
        "PASSWORD",
    ]
    assert [t for t in Type if t.is_sensitive] == [Type.PASSWORD]
    assert [i.name for i in Importance] == ["HIGH", "MEDIUM", "LOW"]
    assert [w.name for w in Width] == ["NONE", "SHORT", "MEDIUM", "LONG"]
    assert repr(NO_DEFAULT) == "NO_DEFAULT"
    assert str(Type.INT) == "INT"


def test_password() -> None:
    p = Password("s3cret")
    assert str(p) == repr(p) == f"{p}" == "[hidden]"
    assert p.value() == "s3cret"
    assert p == Password("s3cret")
    assert p != Password("other")
    assert p != "s3cret"
    assert len({p, Password("s3cret")}) == 1
    assert "s3cret" not in repr([p, {"k": p}])
