"""Documentation renderers: Kafka's exact output, and our Markdown."""

from __future__ import annotations

import pytest

from cdk.config import (
    NO_DEFAULT,
    ConfigDef,
    Importance,
    Type,
    Width,
    nice_memory_units,
    nice_time_units,
)
from cdk.config import validators as v


def test_to_rst() -> None:
    d = (
        ConfigDef()
        .define("opt1", Type.STRING, "a", v.ValidString.of("a", "b", "c"), Importance.HIGH, "docs1")
        .define("opt2", Type.INT, importance=Importance.MEDIUM, documentation="docs2")
        .define("opt3", Type.LIST, ["a", "b"], None, Importance.LOW, "docs3")
        .define("opt4", Type.BOOLEAN, False, None, Importance.LOW, None)
    )
    expected = (
        "``opt2``\n"
        "  docs2\n"
        "\n"
        "  * Type: int\n"
        "  * Importance: medium\n"
        "\n"
        "``opt1``\n"
        "  docs1\n"
        "\n"
        "  * Type: string\n"
        "  * Default: a\n"
        "  * Valid Values: [a, b, c]\n"
        "  * Importance: high\n"
        "\n"
        "``opt3``\n"
        "  docs3\n"
        "\n"
        "  * Type: list\n"
        "  * Default: a,b\n"
        "  * Importance: low\n"
        "\n"
        "``opt4``\n"
        "\n"
        "  * Type: boolean\n"
        "  * Default: false\n"
        "  * Importance: low\n"
        "\n"
    )
    assert d.to_rst() == expected


def test_to_enriched_rst() -> None:
    d = (
        ConfigDef()
        .define(
            "opt1.of.group1",
            Type.STRING,
            "a",
            v.ValidString.of("a", "b", "c"),
            Importance.HIGH,
            "Doc doc.",
            group="Group One",
            order_in_group=0,
            width=Width.NONE,
            display_name="..",
        )
        .define(
            "opt2.of.group1",
            Type.INT,
            NO_DEFAULT,
            None,
            Importance.MEDIUM,
            "Doc doc doc.",
            group="Group One",
            order_in_group=1,
            display_name="..",
            dependents=["some.option1", "some.option2"],
        )
        .define(
            "opt2.of.group2",
            Type.BOOLEAN,
            False,
            None,
            Importance.HIGH,
            "Doc doc doc doc.",
            group="Group Two",
            order_in_group=1,
            display_name="..",
        )
        .define(
            "opt1.of.group2",
            Type.BOOLEAN,
            False,
            None,
            Importance.HIGH,
            "Doc doc doc doc doc.",
            group="Group Two",
            order_in_group=0,
            display_name="..",
            dependents=["some.option"],
        )
        .define("poor.opt", Type.STRING, "foo", None, Importance.HIGH, "Doc doc doc doc.")
    )
    expected = (
        "``poor.opt``\n"
        "  Doc doc doc doc.\n"
        "\n"
        "  * Type: string\n"
        "  * Default: foo\n"
        "  * Importance: high\n"
        "\n"
        "Group One\n"
        "^^^^^^^^^\n"
        "\n"
        "``opt1.of.group1``\n"
        "  Doc doc.\n"
        "\n"
        "  * Type: string\n"
        "  * Default: a\n"
        "  * Valid Values: [a, b, c]\n"
        "  * Importance: high\n"
        "\n"
        "``opt2.of.group1``\n"
        "  Doc doc doc.\n"
        "\n"
        "  * Type: int\n"
        "  * Importance: medium\n"
        "  * Dependents: ``some.option1``, ``some.option2``\n"
        "\n"
        "Group Two\n"
        "^^^^^^^^^\n"
        "\n"
        "``opt1.of.group2``\n"
        "  Doc doc doc doc doc.\n"
        "\n"
        "  * Type: boolean\n"
        "  * Default: false\n"
        "  * Importance: high\n"
        "  * Dependents: ``some.option``\n"
        "\n"
        "``opt2.of.group2``\n"
        "  Doc doc doc doc.\n"
        "\n"
        "  * Type: boolean\n"
        "  * Default: false\n"
        "  * Importance: high\n"
        "\n"
    )
    assert d.to_enriched_rst() == expected


def _html_def() -> ConfigDef:
    return (
        ConfigDef()
        .define("poor.opt", Type.STRING, "foo", None, Importance.HIGH, "Doc doc\ndoc doc.")
        .define("opt.ms", Type.LONG, 60000, v.Range.at_least(0), Importance.LOW, "Wait time.")
        .define("opt.bytes", Type.INT, 1048576, None, Importance.MEDIUM, None)
        .define("alt", Type.LONG, 0, None, Importance.LOW, "Alt.", alternative_string="none")
    )


def test_to_html() -> None:
    expected = (
        '<ul class="config-list">\n'
        "<li>\n"
        '<h4><a id="poor.opt"></a><a id="poor.opt" href="#poor.opt">poor.opt</a></h4>\n'
        "<p>Doc doc<br>doc doc.</p>\n"
        "<table><tbody>\n"
        "<tr><th>Type:</th><td>string</td></tr>\n"
        "<tr><th>Default:</th><td>foo</td></tr>\n"
        "<tr><th>Valid Values:</th><td></td></tr>\n"
        "<tr><th>Importance:</th><td>high</td></tr>\n"
        "</tbody></table>\n"
        "</li>\n"
        "<li>\n"
        '<h4><a id="opt.bytes"></a><a id="opt.bytes" href="#opt.bytes">opt.bytes</a></h4>\n'
        "<p></p>\n"
        "<table><tbody>\n"
        "<tr><th>Type:</th><td>int</td></tr>\n"
        "<tr><th>Default:</th><td>1048576 (1 mebibyte)</td></tr>\n"
        "<tr><th>Valid Values:</th><td></td></tr>\n"
        "<tr><th>Importance:</th><td>medium</td></tr>\n"
        "</tbody></table>\n"
        "</li>\n"
        "<li>\n"
        '<h4><a id="alt"></a><a id="alt" href="#alt">alt</a></h4>\n'
        "<p>Alt.</p>\n"
        "<table><tbody>\n"
        "<tr><th>Type:</th><td>long</td></tr>\n"
        "<tr><th>Default:</th><td>none</td></tr>\n"
        "<tr><th>Valid Values:</th><td></td></tr>\n"
        "<tr><th>Importance:</th><td>low</td></tr>\n"
        "</tbody></table>\n"
        "</li>\n"
        "<li>\n"
        '<h4><a id="opt.ms"></a><a id="opt.ms" href="#opt.ms">opt.ms</a></h4>\n'
        "<p>Wait time.</p>\n"
        "<table><tbody>\n"
        "<tr><th>Type:</th><td>long</td></tr>\n"
        "<tr><th>Default:</th><td>60000 (1 minute)</td></tr>\n"
        "<tr><th>Valid Values:</th><td>[0,...]</td></tr>\n"
        "<tr><th>Importance:</th><td>low</td></tr>\n"
        "</tbody></table>\n"
        "</li>\n"
        "</ul>\n"
    )
    assert _html_def().to_html() == expected


def test_to_html_with_depth_ids_and_update_modes() -> None:
    d = ConfigDef().define("a.b", Type.INT, 1, None, Importance.LOW, "doc")
    html = d.to_html(6, lambda name: "sinkconnectorconfigs_" + name, {"x": "per-broker"})
    assert (
        '<h6><a id="a.b"></a><a id="sinkconnectorconfigs_a.b" '
        'href="#sinkconnectorconfigs_a.b">a.b</a></h6>\n'
    ) in html
    assert "<tr><th>Update Mode:</th><td>read-only</td></tr>\n</tbody>" in html
    assert "Update Mode" not in d.to_html()


def test_to_html_table() -> None:
    d = ConfigDef().define("a", Type.INT, 5, v.Range.at_least(1), Importance.HIGH, "docs a")
    assert d.to_html_table() == (
        '<table class="data-table"><tbody>\n'
        "<tr>\n"
        "<th>Name</th>\n<th>Description</th>\n<th>Type</th>\n<th>Default</th>\n"
        "<th>Valid Values</th>\n<th>Importance</th>\n"
        "</tr>\n"
        "<tr>\n"
        "<td>a</td></td><td>docs a</td></td><td>int</td></td><td>5</td></td>"
        "<td>[1,...]</td></td><td>high</td></td>"
        "</tr>\n"
        "</tbody></table>"
    )


def test_dynamic_update_mode_in_html_table() -> None:
    d = (
        ConfigDef()
        .define("my.broker.config", Type.LONG, importance=Importance.HIGH, documentation="docs")
        .define("my.cluster.config", Type.LONG, importance=Importance.HIGH, documentation="docs")
        .define("my.readonly.config", Type.LONG, importance=Importance.HIGH, documentation="docs")
    )
    html = d.to_html_table({"my.broker.config": "per-broker", "my.cluster.config": "cluster-wide"})
    assert "<th>Dynamic Update Mode</th>\n" in html
    found = set()
    for line in html.split("\n"):
        for name, mode in (
            ("my.broker.config", "per-broker"),
            ("my.cluster.config", "cluster-wide"),
            ("my.readonly.config", "read-only"),
        ):
            if name in line:
                assert f"<td>{mode}</td>" in line
                found.add(name)
    assert found == d.names()


def test_internal_config_does_not_show_up_in_docs() -> None:
    d = ConfigDef().define_internal("my.config", Type.STRING, "", importance=Importance.LOW)
    d.define_internal("my.other.config", Type.STRING, "", None, Importance.LOW, None)
    for text in (d.to_html_table(), d.to_enriched_rst(), d.to_rst(), d.to_html(), d.to_markdown()):
        assert "my.config" not in text
        assert "my.other.config" not in text


def test_sort_order() -> None:
    d = (
        ConfigDef()
        .define("z.grouped", Type.INT, 1, None, Importance.HIGH, "d", group="G", order_in_group=1)
        .define("y.grouped", Type.INT, 1, None, Importance.HIGH, "d", group="G", order_in_group=0)
        .define("c.low", Type.INT, 1, None, Importance.LOW, "d")
        .define("b.high", Type.INT, 1, None, Importance.HIGH, "d")
        .define("a.high", Type.INT, 1, None, Importance.HIGH, "d")
        .define("d.required", Type.INT, importance=Importance.LOW, documentation="d")
        .define("x.first", Type.INT, 1, None, Importance.LOW, "d", group="F")
    )
    assert [k.name for k in d.sorted_keys()] == [
        "d.required",
        "a.high",
        "b.high",
        "c.low",
        "y.grouped",
        "z.grouped",
        "x.first",
    ]


@pytest.mark.parametrize(
    ("default", "type_", "shown"),
    [
        ("", Type.STRING, '""'),
        (None, Type.STRING, "null"),
        ("secret", Type.PASSWORD, "[hidden]"),
        (["a", "b"], Type.LIST, "a,b"),
        ([], Type.LIST, '""'),
        (1.5, Type.DOUBLE, "1.5"),
        (True, Type.BOOLEAN, "true"),
    ],
)
def test_default_rendering(default: object, type_: Type, shown: str) -> None:
    d = ConfigDef().define("k", type_, default, None, Importance.LOW, "d")
    assert f"  * Default: {shown}\n" in d.to_rst()
    assert f"<tr><th>Default:</th><td>{shown}</td></tr>" in d.to_html()
    if type_ is Type.PASSWORD:
        for text in (
            d.to_rst(),
            d.to_enriched_rst(),
            d.to_html(),
            d.to_html_table(),
            d.to_markdown(),
        ):
            assert "secret" not in text


@pytest.mark.parametrize(
    ("name", "default", "shown"),
    [
        ("offset.flush.interval.ms", 60000, "60000 (1 minute)"),
        ("offset.flush.timeout.ms", 5000, "5000 (5 seconds)"),
        ("retention.ms", 604800000, "604800000 (7 days)"),
        ("buffer.bytes", 1048576, "1048576 (1 mebibyte)"),
        ("odd.ms", 1500, "1500"),
        ("zero.ms", 0, "0"),
        ("double.ms", 2000.0, "2000.0 (2 seconds)"),
    ],
)
def test_nice_units_in_defaults(name: str, default: float, shown: str) -> None:
    type_ = Type.DOUBLE if isinstance(default, float) else Type.LONG
    d = ConfigDef().define(name, type_, default, None, Importance.LOW, "d")
    assert f"  * Default: {shown}\n" in d.to_rst()


def test_nice_memory_units() -> None:
    assert nice_memory_units(0) == ""
    assert nice_memory_units(1023) == ""
    assert nice_memory_units(1024) == " (1 kibibyte)"
    assert nice_memory_units(1025) == ""
    assert nice_memory_units(2 * 1024) == " (2 kibibytes)"
    assert nice_memory_units(1024**2) == " (1 mebibyte)"
    assert nice_memory_units(2 * 1024**2) == " (2 mebibytes)"
    assert nice_memory_units(1024**3) == " (1 gibibyte)"
    assert nice_memory_units(2 * 1024**3) == " (2 gibibytes)"
    assert nice_memory_units(1024**4) == " (1 tebibyte)"
    assert nice_memory_units(2 * 1024**4) == " (2 tebibytes)"
    assert nice_memory_units(1024**5) == " (1024 tebibytes)"
    assert nice_memory_units(2 * 1024**5) == " (2048 tebibytes)"


def test_nice_time_units() -> None:
    assert nice_time_units(0) == ""
    assert nice_time_units(999) == ""
    assert nice_time_units(1000) == " (1 second)"
    assert nice_time_units(1001) == ""
    assert nice_time_units(2000) == " (2 seconds)"
    assert nice_time_units(60_000) == " (1 minute)"
    assert nice_time_units(120_000) == " (2 minutes)"
    assert nice_time_units(3_600_000) == " (1 hour)"
    assert nice_time_units(7_200_000) == " (2 hours)"
    assert nice_time_units(86_400_000) == " (1 day)"
    assert nice_time_units(2 * 86_400_000) == " (2 days)"
    assert nice_time_units(7 * 86_400_000) == " (7 days)"
    assert nice_time_units(365 * 86_400_000) == " (365 days)"
    assert nice_time_units(-60_000) == " (-1 minute)"  # Java's arithmetic


def test_to_markdown() -> None:
    d = (
        ConfigDef()
        .define("plain", Type.STRING, "a|b", None, Importance.HIGH, "Pipes | and\nnew lines.")
        .define("req", Type.INT, importance=Importance.MEDIUM, documentation="Required.")
        .define(
            "g.opt",
            Type.LIST,
            ["x", "y"],
            v.ValidList.of("x", "y"),
            Importance.LOW,
            "Doc.",
            group="Group One",
        )
        .define("pw", Type.PASSWORD, "secret", None, Importance.LOW, None, group="Group One")
    )
    assert d.to_markdown() == (
        "| Name | Description | Type | Default | Valid Values | Importance |\n"
        "|------|-------------|------|---------|--------------|------------|\n"
        "| `req` | Required. | int | (required) |  | medium |\n"
        "| `plain` | Pipes \\| and<br>new lines. | string | `a\\|b` |  | high |\n"
        "\n"
        "## Group One\n"
        "\n"
        "| Name | Description | Type | Default | Valid Values | Importance |\n"
        "|------|-------------|------|---------|--------------|------------|\n"
        "| `g.opt` | Doc. | list | `x,y` | [x, y] | low |\n"
        "| `pw` |  | password | `[hidden]` |  | low |\n"
    )
    assert ConfigDef().to_markdown() == ""


def test_to_markdown_shows_markup_characters_as_written() -> None:
    d = ConfigDef().define(
        "p", Type.STRING, "*.jsonl", None, Importance.LOW, "Topic <prefix>name, *all* & more."
    )
    row = d.to_markdown().splitlines()[-1]
    assert row == (
        "| `p` | Topic &lt;prefix&gt;name, \\*all\\* &amp; more. | string | `*.jsonl` |  | low |"
    )
