"""cdk.spark's public names."""

from __future__ import annotations

import cdk.spark


def test_all_names_exist_and_come_from_cdk() -> None:
    assert {
        "register",
        "session_conf",
        "FORMAT",
        "KAFKA_FORMAT",
        "kafka_decoder",
        "kafka_encoder",
        "connect_to_spark",
        "spark_to_connect",
    } <= set(cdk.spark.__all__)
    for name in cdk.spark.__all__:
        obj = getattr(cdk.spark, name)
        assert (getattr(obj, "__module__", "cdk") or "cdk").startswith("cdk"), name
