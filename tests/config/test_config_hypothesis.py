"""Properties: validate() never raises; every parse() failure names its key."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from cdk.config import ConfigDef, Importance, Password, Recommender, Type
from cdk.config import validators as v
from cdk.errors import ConfigException


class ModeRecommender(Recommender):
    def valid_values(self, name: str, parsed: Any) -> list[Any]:
        return ["a", "b"] if parsed.get("flag") else ["c"]

    def visible(self, name: str, parsed: Any) -> bool:
        return bool(parsed.get("flag"))


def _fails(name: str, value: Any) -> None:
    if value == "boom":
        raise RuntimeError("user validator bug")


FULL = (
    ConfigDef()
    .define("flag", Type.BOOLEAN, False, None, Importance.HIGH, "d", dependents=["mode", "count"])
    .define(
        "mode",
        Type.STRING,
        "a",
        v.CaseInsensitiveValidString.of("a", "b", "c"),
        Importance.HIGH,
        "d",
        recommender=ModeRecommender(),
    )
    .define("count", Type.INT, 1, v.Range.between(0, 100), Importance.MEDIUM, "d")
    .define("small", Type.SHORT, 0, None, Importance.LOW, "d")
    .define("big", Type.LONG, importance=Importance.HIGH, documentation="required")
    .define("ratio", Type.DOUBLE, 0.5, v.Range.between(0, 1), Importance.LOW, "d")
    .define(
        "names",
        Type.LIST,
        "x",
        v.CompositeValidator.of(v.ListSize.at_most(3), v.ValidList.of("x", "y", "z", "")),
        Importance.LOW,
        "d",
    )
    .define("cls", Type.CLASS, None, None, Importance.LOW, "d")
    .define("secret", Type.PASSWORD, "pw", v.NonNullValidator(), Importance.LOW, "d")
    .define(
        "text",
        Type.STRING,
        "t",
        v.CompositeValidator.of(
            v.NonEmptyStringWithoutControlChars(), v.LambdaValidator.of(_fails, "no boom")
        ),
        Importance.LOW,
        "d",
    )
)
KEYS = sorted(FULL.names())

interesting = st.sampled_from(
    [
        "",
        " ",
        "true",
        "FALSE",
        "0",
        "-1",
        "101",
        "32768",
        "1e3",
        "0.25",
        "NaN",
        "x,y",
        "x,,y",
        "a",
        "B",
        "boom",
        "collections.OrderedDict",
        "no.Such",
        "\x00",
        "9" * 30,
    ]
)
values = st.one_of(interesting, st.text(max_size=20))
props_strategy = st.dictionaries(
    st.one_of(st.sampled_from(KEYS), st.text(max_size=5)), values, max_size=12
)


@settings(max_examples=300, deadline=None)
@given(props_strategy)
def test_validate_never_raises(props: dict[str, str]) -> None:
    result = FULL.validate_all(props)
    assert set(result) == set(KEYS)
    for name, value in result.items():
        assert value.name == name
        assert all(isinstance(m, str) for m in value.error_messages)
        if value.error_messages:
            assert any(name in m for m in value.error_messages)
    secret = result["secret"]
    assert secret.value is None or isinstance(secret.value, Password)
    if secret.value is not None:
        assert repr(secret).startswith("[secret,[hidden],")


@settings(max_examples=300, deadline=None)
@given(props_strategy)
def test_parse_failures_name_the_key(props: dict[str, str]) -> None:
    failure: ConfigException | None = None
    try:
        parsed = FULL.parse(props)
    except ConfigException as exc:
        failure = exc
    errors = [e for values in FULL.validate(props) for e in values.error_messages]
    if failure is None:
        assert set(parsed) == set(KEYS)
        assert errors == []
    else:
        text = str(failure)
        assert failure.name in KEYS or any(f'"{k}"' in text for k in KEYS)
        if failure.name is not None:
            assert f"for configuration {failure.name}" in text
        assert text in errors
