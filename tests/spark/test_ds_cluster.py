"""The cdk format on a 2-worker standalone cluster (harness.providers.spark), in a subprocess."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [
    pytest.mark.xdist_group("spark-ds-cluster"),
    pytest.mark.slow,
    pytest.mark.timeout(900),
]

ROOT = Path(__file__).resolve().parents[2]
IDS = {"a": range(1, 301), "b": range(1001, 1201)}


def test_batch_and_stream_on_a_standalone_cluster(spark_cluster: Any, tmp_path: Path) -> None:
    source, sink = tmp_path / "src.db", tmp_path / "out.db"
    with sqlite3.connect(source) as db:
        for table, ids in IDS.items():  # distinct ids: the sink upserts by id
            db.execute(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, name TEXT)")
            db.executemany(f"INSERT INTO {table} VALUES (?, ?)", [(i, f"{table}{i}") for i in ids])
    properties = {
        **spark_cluster.spark_properties(),
        "spark.executorEnv.PYTHONPATH": str(ROOT),
        "spark.sql.shuffle.partitions": "2",
    }
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYSPARK_PYTHON": sys.executable}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.spark._cluster_job",
            json.dumps(properties),
            str(source),
            str(sink),
            str(tmp_path / "chk"),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert sorted(summary["partition_rows"]) == [200, 300]  # one task config per partition
    with sqlite3.connect(sink) as db:
        for table in ("batch_out", "stream_out"):
            names = sorted(n for (n,) in db.execute(f"SELECT name FROM {table}"))
            expected = [f"{t}{i}" for t, ids in IDS.items() for i in ids]
            assert names == sorted(expected), table
