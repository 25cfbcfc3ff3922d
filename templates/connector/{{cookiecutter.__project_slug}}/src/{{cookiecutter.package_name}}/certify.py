"""Certification drivers: what ``cdk certify`` needs to know about the external system.

``pyproject.toml`` names them under ``[tool.cdk] drivers``. A driver instance owns one fresh
instance of the external system, here a directory in its working directory, and can put
records into it (source) or read back what the connector stored (sink), evolve its schema and
inject failures:

- ``outage()``: the directory is moved away while the block runs, as a network mount that
  disappears; the connector must retry and lose nothing.
- ``break_external_system()``: a regular file takes the directory's place for good; the connector
  must fail its task with a ConnectException that says so.

TODO(partner): when you replace the example's directories with your system, make these drivers
create, fill, read, evolve and break an instance of it (a test database, a container...).
"""

from __future__ import annotations

import contextlib
import json
import shutil
{% if cookiecutter.kind == 'sink' -%}
from collections.abc import Hashable, Iterator, Mapping
{%- elif cookiecutter.kind == 'both' -%}
from collections.abc import Hashable, Iterator, Mapping, Sequence
{%- else -%}
from collections.abc import Hashable, Iterator, Sequence
{%- endif %}
from pathlib import Path
from typing import Any, ClassVar

from cdk import Connector{% if cookiecutter.kind != 'sink' %}, Schema, SchemaBuilder{% endif %}
from harness import Delivery, {% if cookiecutter.kind != 'source' %}SinkDriver{% endif %}{% if cookiecutter.kind == 'both' %}, {% endif %}{% if cookiecutter.kind != 'sink' %}SourceDriver{% endif %}

{% if cookiecutter.kind != 'source' -%}
from {{ cookiecutter.package_name }}._jsonl import from_json, schema_from_json
from {{ cookiecutter.package_name }}._sink import (
    {{ cookiecutter.__class_prefix }}SinkConnector,
    schema_file,
)
{% endif -%}
{% if cookiecutter.kind != 'sink' -%}
from {{ cookiecutter.package_name }}._source import (
    {{ cookiecutter.__class_prefix }}SourceConnector,
)
{% endif %}
__all__ = [{% if cookiecutter.kind != 'source' %}"{{ cookiecutter.__class_prefix }}SinkDriver"{% endif %}{% if cookiecutter.kind == 'both' %}, {% endif %}{% if cookiecutter.kind != 'sink' %}"{{ cookiecutter.__class_prefix }}SourceDriver"{% endif %}]


class _Directory:
    """A directory that can go away for a while, or be broken for good."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offline = path.with_name(path.name + ".offline")

    @property
    def current(self) -> Path:
        """Where the files are now (the offline place during an outage)."""
        return self.offline if self.offline.exists() else self.path

    def create(self) -> None:
        self.path.mkdir(parents=True, exist_ok=True)

    def remove(self) -> None:
        for path in (self.path, self.offline):
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)

    @contextlib.contextmanager
    def outage(self) -> Iterator[None]:
        self.path.rename(self.offline)
        try:
            yield
        finally:
            self.offline.rename(self.path)

    def break_for_good(self) -> None:
        self.path.rename(self.offline)
        self.path.write_text("not a directory any more\n", encoding="utf-8")
{%- if cookiecutter.kind != 'sink' %}


class {{ cookiecutter.__class_prefix }}SourceDriver(SourceDriver):
    """Input streams are files ``stream-<n>.jsonl`` in the driver's input directory."""

    connector: ClassVar[type[Connector] | str] = {{ cookiecutter.__class_prefix }}SourceConnector
    delivery: ClassVar[Delivery] = Delivery.AT_LEAST_ONCE
    streams: ClassVar[int] = 4
    detects_new_streams: ClassVar[bool] = True

    def __init__(self, workdir: Path) -> None:
        super().__init__(workdir)
        self.directory = _Directory(Path(workdir).absolute() / "input")
        self._added: dict[int, list[str]] = {}
        self._written: dict[int, dict[str, Any]] = {}

    def setup(self) -> None:
        self.directory.create()

    def teardown(self) -> None:
        self.directory.remove()

    def example_config(self, topic: str) -> dict[str, str]:
        return {
            "input.dir": str(self.directory.path),
            "topic.prefix": topic,
            "poll.interval.ms": "100",
            "file.poll.interval.ms": "300",
            "auth.token": "example-secret-token",
        }

    def write_records(self, ids: Sequence[int], *, stream: int = 0) -> None:
        added = self._added.get(stream, [])
        values: list[dict[str, Any]] = [
            {
                "id": i,
                "name": f"name-{i}",
                "amount": i * 1.25,
                "active": i % 2 == 0,
                **{name: f"{name}-{i}" for name in added},
            }
            for i in ids
        ]
        self._append(values, stream)

    def value_schema(self) -> Schema:
        # What the connector infers from the lines write_values() writes: JSON numbers with a
        # fraction are FLOAT64, integers INT64; every field is optional (a line may lack it).
        return (
            SchemaBuilder.struct()
            .field("id", Schema.OPTIONAL_INT64_SCHEMA)
            .field("name", Schema.OPTIONAL_STRING_SCHEMA)
            .field("amount", Schema.OPTIONAL_FLOAT64_SCHEMA)
            .field("active", Schema.OPTIONAL_BOOLEAN_SCHEMA)
            .build()
        )

    def write_values(self, values: Sequence[Any], *, stream: int = 0) -> list[Hashable]:
        # SCH-09's values of value_schema(), each written as it is; "id" is the harness's id.
        rows = [{f.name: value.get(f.name) for f in value.schema.fields} for value in values]
        self._append(rows, stream)
        return [row["id"] for row in rows]

    def _append(self, values: Sequence[dict[str, Any]], stream: int) -> None:
        path = self.directory.current / f"stream-{stream}.jsonl"
        with path.open("a", encoding="utf-8", newline="") as out:
            out.write("".join(json.dumps(value) + "\n" for value in values))
        self._written.update((value["id"], value) for value in values)

    def expected_value(self, record_id: int) -> dict[str, Any]:
        return self._written[record_id]

    def evolve_schema(self, *, stream: int = 0) -> str:
        added = self._added.setdefault(stream, [])
        added.append(f"note{len(added) + 1}")
        return added[-1]

    def break_external_system(self) -> None:
        self.directory.break_for_good()

    def outage(self) -> contextlib.AbstractContextManager[None]:
        return self.directory.outage()
{%- endif %}
{%- if cookiecutter.kind != 'source' %}


class {{ cookiecutter.__class_prefix }}SinkDriver(SinkDriver):
    """The sink writes to the driver's output directory; the driver reads the files back."""

    connector: ClassVar[type[Connector] | str] = {{ cookiecutter.__class_prefix }}SinkConnector
    delivery: ClassVar[Delivery] = Delivery.AT_LEAST_ONCE

    def __init__(self, workdir: Path) -> None:
        super().__init__(workdir)
        self.directory = _Directory(Path(workdir).absolute() / "output")

    def setup(self) -> None:
        self.directory.create()

    def teardown(self) -> None:
        self.directory.remove()

    def example_config(self, topics: str) -> dict[str, str]:
        return {
            "output.dir": str(self.directory.path),
            "topics": topics,
            "retry.backoff.ms": "200",
            "auth.token": "example-secret-token",
        }

    def _rows(self) -> Iterator[dict[str, Any]]:
        """Every stored record as Connect values, decoded by its file's schema."""
        folder = self.directory.current
        if not folder.is_dir():
            return
        for data in sorted(folder.glob("*.jsonl")):
            schema_path = schema_file(data)
            if not schema_path.exists():
                continue
            schema = schema_from_json(json.loads(schema_path.read_text("utf-8")))
            # The bytes as they are: only \n ends a line (the sink writes U+2028 and the like
            # unescaped), and the last line may still be half written.
            text = data.read_bytes().decode("utf-8")
            for line in text.split("\n")[:-1]:
                struct = from_json(schema, json.loads(line))
                yield {f.name: struct.get(f.name) for f in schema.fields}

    def read_back(self) -> list[Hashable]:
        return [row["id"] for row in self._rows()]

    def read_values(self) -> dict[Hashable, Mapping[str, Any]]:
        return {row["id"]: row for row in self._rows()}

    def break_external_system(self) -> None:
        self.directory.break_for_good()

    def outage(self) -> contextlib.AbstractContextManager[None]:
        return self.directory.outage()
{%- endif %}
