"""Which optional accelerators the kit finds in this environment (``make bench`` prints it first).

The figures of the benchmarks depend on them, so each run of ``make bench`` says what it ran
with:

- orjson: JsonConverter parses payloads with it (a core dependency since issue 23; missing only
  in an environment that removed it);
- psycopg's implementation: ``binary``/``c`` (libpq bindings in C, the ``sql`` extra's
  ``psycopg[binary]``) or ``python`` (ctypes, much slower per row);
- pyarrow: Spark reads and writes of the ``cdk`` format hand Spark Arrow record batches (the
  ``spark`` extra);
- fastavro's compiled reader and writer (the ``avro`` extra) for the AvroConverter.

Run with ``.venv/bin/python bench/accelerators.py``.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _orjson() -> str:
    from cdk.converters import _json

    version = _version("orjson")
    if _json._orjson is None:
        return "MISSING: JsonConverter parses with the stdlib json (slower sink reads)"
    return f"{version}: JsonConverter parses payloads with it"


def _psycopg() -> str:
    version = _version("psycopg")
    if version is None:
        return "not installed (the sql extra's PostgreSQL driver)"
    import psycopg

    impl = psycopg.pq.__impl__
    note = "C" if impl in ("binary", "c") else "pure Python (ctypes): install psycopg[binary]"
    return f"{version}, libpq bindings: {impl} ({note})"


def _pyarrow() -> str:
    version = _version("pyarrow")
    if version is None:
        return "not installed (the spark extra): no Spark reads or writes"
    return f"{version}: cdk format reads and writes hand Spark Arrow record batches"


def _fastavro() -> str:
    version = _version("fastavro")
    if version is None:
        return "not installed (the avro extra)"
    try:
        importlib.import_module("fastavro._write")
    except ImportError:
        return f"{version}, pure Python (no compiled extension)"
    return f"{version}, compiled"


def report() -> list[tuple[str, str]]:
    """(accelerator, what was found) pairs."""
    return [
        ("orjson", _orjson()),
        ("psycopg", _psycopg()),
        ("pyarrow", _pyarrow()),
        ("fastavro", _fastavro()),
    ]


def main() -> None:
    import argparse

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import _results

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _results.add_option(parser, "accelerators")
    args = parser.parse_args()
    found = report()
    print(f"Accelerators found (Python {sys.version.split()[0]}, {sys.executable}):")
    for name, text in found:
        print(f"  {name:<9} {text}")
    if args.results:  # for the benchmark page (bench/report.py)
        path = Path(args.results)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {
            "schema": _results.SCHEMA,
            "bench": "accelerators",
            "machine": _results.machine(),
            "git": _results.git_commit(),
            "accelerators": [list(pair) for pair in found],
            "figures": [],
        }
        path.write_text(json.dumps(data, indent=1) + "\n")


if __name__ == "__main__":
    main()
