"""JsonConverter throughput against raw json/orjson encoding of the equivalent dict; then the
Schema Registry converters (Avro, Protobuf, JSON Schema) against JsonConverter with schemas,
for the same 5-field struct, schemas cached (a ``mock://`` registry, registered before timing).

Run with ``make bench`` (or ``.venv/bin/python bench/json_converter.py [--seconds S]``);
``--profile`` prints where an Avro, a Protobuf and a JSON Schema record's time goes (cProfile),
with their compiled plans and on the general path (``use_plans=False``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import decimal
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cdk.converters import (
    AvroConverter,
    Converter,
    JsonConverter,
    JsonSchemaConverter,
    ProtobufConverter,
)
from cdk.data import Decimal, Schema, SchemaBuilder, Struct, Timestamp

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _results

try:
    import orjson
except ImportError:  # pragma: no cover
    orjson = None  # type: ignore[assignment]


def build_record() -> tuple[Schema, Struct]:
    """A 20-field struct: strings, ints, floats, booleans, a timestamp and a decimal."""
    builder = SchemaBuilder.struct().name("bench.Order")
    fields: list[tuple[str, Schema, Any]] = [
        ("id", Schema.INT64_SCHEMA, 1234567890123),
        ("customer", Schema.STRING_SCHEMA, "ACME Corporation"),
        ("email", Schema.OPTIONAL_STRING_SCHEMA, "buyer@example.com"),
        ("country", Schema.STRING_SCHEMA, "NL"),
        ("city", Schema.OPTIONAL_STRING_SCHEMA, None),
        ("quantity", Schema.INT32_SCHEMA, 42),
        ("line", Schema.INT16_SCHEMA, 3),
        ("flags", Schema.INT8_SCHEMA, 7),
        ("warehouse", Schema.INT32_SCHEMA, 17),
        ("price", Schema.FLOAT64_SCHEMA, 19.99),
        ("discount", Schema.FLOAT64_SCHEMA, 0.15),
        ("weight", Schema.FLOAT32_SCHEMA, 2.5),
        ("tax", Schema.OPTIONAL_FLOAT64_SCHEMA, 3.7981),
        ("paid", Schema.BOOLEAN_SCHEMA, True),
        ("shipped", Schema.BOOLEAN_SCHEMA, False),
        ("gift", Schema.OPTIONAL_BOOLEAN_SCHEMA, None),
        ("status", Schema.STRING_SCHEMA, "CONFIRMED"),
        ("note", Schema.OPTIONAL_STRING_SCHEMA, "leave at the door, ring twice"),
        ("created", Timestamp.SCHEMA, dt.datetime(2024, 5, 17, 12, 30, 5, 123000, dt.timezone.utc)),
        ("total", Decimal.schema(2), decimal.Decimal("839.58")),
    ]
    for name, schema, _ in fields:
        builder.field(name, schema)
    schema = builder.build()
    struct = Struct(schema)
    for name, _, value in fields:
        struct.put(name, value)
    return schema, struct


def plain_dict(struct: Struct) -> dict[str, Any]:
    """The equivalent JSON-ready dict (what a hand-written producer would serialize)."""
    out = {}
    for f in struct.schema.fields:
        value = struct.get(f)
        if isinstance(value, dt.datetime):
            value = Timestamp.from_logical(f.schema, value)
        elif isinstance(value, decimal.Decimal):
            value = "AUZS"  # base64 of the unscaled bytes, as the converter writes it
        out[f.name] = value
    return out


def rate(fn: Callable[[], Any], seconds: float) -> float:
    """Calls per second of ``fn`` over about ``seconds``."""
    batch = 1000
    for _ in range(200):
        fn()
    calls = 0
    start = time.perf_counter()
    while True:
        for _ in range(batch):
            fn()
        calls += batch
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return calls / elapsed


def build_small_record() -> tuple[Schema, Struct]:
    """The 5-field struct the registry converters are compared on."""
    schema = (
        SchemaBuilder.struct()
        .name("bench.User")
        .field("id", Schema.INT64_SCHEMA)
        .field("name", Schema.STRING_SCHEMA)
        .field("email", Schema.OPTIONAL_STRING_SCHEMA)
        .field("score", Schema.FLOAT64_SCHEMA)
        .field("active", Schema.BOOLEAN_SCHEMA)
        .build()
    )
    struct = (
        Struct(schema)
        .put("id", 1234567890123)
        .put("name", "Ada Lovelace")
        .put("email", "ada@example.com")
        .put("score", 97.5)
        .put("active", True)
    )
    return schema, struct


def registry_converters(seconds: float, profile: bool) -> list[tuple[str, float, float]]:
    """Print and return (converter, serialize rec/s, deserialize rec/s) of each."""
    schema, struct = build_small_record()
    made: list[tuple[str, Converter]] = []
    json_conv = JsonConverter()
    json_conv.configure({"schemas.enable": "true"}, is_key=False)
    made.append(("JsonConverter (schemas)", json_conv))
    for name, cls in (
        ("AvroConverter", AvroConverter),
        ("ProtobufConverter", ProtobufConverter),
        ("JsonSchemaConverter", JsonSchemaConverter),
    ):
        conv = cls()
        conv.configure({"schema.registry.url": f"mock://bench-{name}"}, is_key=False)
        made.append((name, conv))
    for name, cls in (
        ("AvroConverter", AvroConverter),
        ("ProtobufConverter", ProtobufConverter),
        ("JsonSchemaConverter", JsonSchemaConverter),
    ):
        general = cls()
        general.use_plans = False  # the general path, as schemas without a plan take
        general.configure({"schema.registry.url": f"mock://bench-{name}"}, is_key=False)
        made.append((f"{name} (general)", general))
    print()
    print("5-field struct, schema cached (mock:// registry), one run")
    print(
        f"{'converter':<30}{'bytes':>6}{'ser rec/s':>12}{'us':>7}{'de rec/s':>12}{'us':>7}"
        f"{'ser x':>7}{'de x':>6}"
    )
    base: tuple[float, float] | None = None
    measured: list[tuple[str, float, float]] = []
    for name, conv in made:
        data = conv.from_connect_data("t", schema, struct)  # registers and caches the schema
        assert data is not None
        back = conv.to_connect_data("t", data).value
        assert all(back.get(f.name) == struct.get(f.name) for f in schema.fields), name
        ser = rate(lambda c=conv: c.from_connect_data("t", schema, struct), seconds)
        de = rate(lambda c=conv, d=data: c.to_connect_data("t", d), seconds)
        if base is None:
            base = (ser, de)
        measured.append((name, ser, de))
        print(
            f"{name:<30}{len(data):>6}{ser:>12,.0f}{1e6 / ser:>7.2f}{de:>12,.0f}{1e6 / de:>7.2f}"
            f"{base[0] / ser:>7.2f}{base[1] / de:>6.2f}"
        )
    print("(x: cost per record relative to JsonConverter with schemas; aim <= 2 for Protobuf and")
    print(' JSON Schema; "general": with use_plans=False, the path of schemas without a plan)')
    if profile:
        import cProfile
        import pstats

        for name, conv in made[1:]:
            data = conv.from_connect_data("t", schema, struct)
            prof = cProfile.Profile()
            prof.enable()
            for _ in range(20000):
                conv.to_connect_data("t", conv.from_connect_data("t", schema, struct))
            prof.disable()
            print(f"\n{name}: 20000 round trips, by own time")
            pstats.Stats(prof).sort_stats("tottime").print_stats(12)
    return measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=1.0, help="time per measurement")
    parser.add_argument("--runs", type=int, default=3, help="runs of the 20-field part (medians)")
    parser.add_argument("--profile", action="store_true", help="profile the registry converters")
    _results.add_option(parser, "json_converter")
    args = parser.parse_args()
    results = _results.Results.from_args("json_converter", args)
    schema, struct = build_record()
    converter = JsonConverter()
    converter.configure({}, is_key=False)
    data = converter.from_connect_data("t", schema, struct)
    assert converter.to_connect_data("t", data).value == struct
    body = plain_dict(struct)
    raw = json.dumps(body, separators=(",", ":")).encode()

    runs: dict[str, list[float]] = {}
    s = args.seconds
    for _ in range(args.runs):
        results.run()
        rows: list[tuple[str, float]] = []
        rows.append(("json.dumps(dict)", rate(lambda: json.dumps(body, separators=(",", ":")), s)))
        if orjson is not None:
            rows.append(("orjson.dumps(dict)", rate(lambda: orjson.dumps(body), s)))
        rows.append(
            ("from_connect_data", rate(lambda: converter.from_connect_data("t", schema, struct), s))
        )
        rows.append(("json.loads(bytes)", rate(lambda: json.loads(raw), s)))
        if orjson is not None:
            rows.append(("orjson.loads(bytes)", rate(lambda: orjson.loads(raw), s)))
        rows.append(("to_connect_data", rate(lambda: converter.to_connect_data("t", data), s)))
        JsonConverter.use_orjson = False
        rows.append(
            ("to_connect_data (stdlib)", rate(lambda: converter.to_connect_data("t", data), s))
        )
        JsonConverter.use_orjson = True
        for name, r in rows:
            runs.setdefault(name, []).append(r)

    by_name = {name: statistics.median(rates) for name, rates in runs.items()}
    print(f"JsonConverter, 20-field struct, envelope {len(data)} bytes, payload ~{len(raw)} bytes")
    print(f"(medians of {args.runs} run(s))")
    print(f"{'operation':<28}{'records/s':>12}{'us/record':>11}")
    for name, r in by_name.items():
        print(f"{name:<28}{r:>12,.0f}{1e6 / r:>11.2f}")
    print()
    print("cost ratio (converter time / raw time; lower is better, target <= 3):")
    pairs = [
        ("from_connect_data", "json.dumps(dict)"),
        ("to_connect_data (stdlib)", "json.loads(bytes)"),
    ]
    if orjson is not None:
        pairs += [
            ("from_connect_data", "orjson.dumps(dict)"),
            ("to_connect_data", "orjson.loads(bytes)"),
        ]
    for conv, raw_name in pairs:
        print(f"  {conv:<26} vs {raw_name:<20} {by_name[raw_name] / by_name[conv]:5.2f}x")
    # The benchmark page (bench/report.py): time per record, kit / baseline is the cost ratio.
    for conv, raw_name, figure, aim in (
        ("from_connect_data", "json.dumps(dict)", "from_connect_data", 3.0),
        ("to_connect_data (stdlib)", "json.loads(bytes)", "to_connect_data_stdlib", 3.0),
        ("from_connect_data", "orjson.dumps(dict)", "from_connect_data_orjson", None),
        ("to_connect_data", "orjson.loads(bytes)", "to_connect_data_orjson", None),
    ):
        if raw_name not in runs:
            continue
        results.figure(
            f"json_converter.{figure}",
            f"JsonConverter.{conv} / {raw_name} (cost)",
            "us/record",
            [1e6 / r for r in runs[conv]],
            baseline=[1e6 / r for r in runs[raw_name]],
            baseline_name=raw_name,
            kit_name=conv,
            aim=_results.ratio_aim("<=", aim) if aim else None,
            higher_is_better=False,
            note="20-field struct; the baseline handles only the payload dict"
            + ("" if aim else "; orjson is Rust, shown for the headroom, no aim"),
        )
    results.run()
    for name, ser, de in registry_converters(args.seconds, args.profile):
        if name == "JsonConverter (schemas)":
            base = (ser, de)
            continue
        aim = 2.0 if name in ("ProtobufConverter", "JsonSchemaConverter") else None
        key = name.replace(" (general)", "_general").replace("Converter", "").lower()
        for direction, kit_rate, base_rate in (("ser", ser, base[0]), ("de", de, base[1])):
            results.figure(
                f"json_converter.registry.{key}.{direction}",
                f"{name} {'from' if direction == 'ser' else 'to'}_connect_data / "
                "JsonConverter with schemas (cost)",
                "us/record",
                [1e6 / kit_rate],
                baseline=[1e6 / base_rate],
                baseline_name="JsonConverter (schemas)",
                kit_name=name,
                aim=_results.ratio_aim("<=", aim) if aim else None,
                higher_is_better=False,
                runs=[args.runs],
                note="5-field struct, schema cached (mock:// registry), one run",
            )
    results.write()


if __name__ == "__main__":
    main()
