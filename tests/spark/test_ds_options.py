"""The cdk format's options (no JVM): the connector config, the kit's cdk.* options, refusals."""

from __future__ import annotations

import pytest

from cdk.errors import ConfigException
from cdk.spark._datasource_options import parse_options


def test_connector_keys_and_kit_options_are_split() -> None:
    options = parse_options(
        {
            "connector.class": "FileStreamSource",
            "File": "/tmp/in.txt",  # Spark lower-cases option names; Kafka's keys are lower-case
            "cdk.batch.size": "50",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "transforms": "",  # empty: nothing to apply
        }
    )
    assert options.connector_class == "FileStreamSource"
    assert options.config["file"] == "/tmp/in.txt"
    assert "cdk.batch.size" not in options.config
    assert options.batch_size == 50
    assert options.exactly_once  # the default delivery


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"file": "x"}, r"Missing required option connector\.class"),
        ({"connector.class": "C", "cdk.nope": "1"}, r"Unknown option\(s\) cdk\.nope"),
        ({"connector.class": "C", "cdk.batch.size": "0"}, r"cdk\.batch\.size.*at least 1"),
        ({"connector.class": "C", "cdk.delivery": "maybe"}, r"exactly-once or at-least-once"),
        (
            {"connector.class": "C", "transforms": "mask", "transforms.mask.type": "x"},
            r"transforms, transforms\.mask\.type: the cdk format does not apply transforms",
        ),
        ({"connector.class": "C", "predicates": "p"}, r"Option\(s\) predicates:"),
    ],
)
def test_bad_options_are_named(options: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigException, match=message):
        parse_options(options)
