"""examples/spark_pipeline.py runs as documented and its results match plain SQL."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.xdist_group("spark-ds-example"),
    pytest.mark.slow,
    pytest.mark.timeout(1800),
]

ROOT = Path(__file__).resolve().parents[2]


def _run(workdir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "examples" / "spark_pipeline.py"), str(workdir)],
        env={**os.environ, "PYSPARK_PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_the_spark_pipeline_example(tmp_path: Path) -> None:
    done = _run(tmp_path)
    assert done.returncode == 0, done.stderr[-4000:]
    with sqlite3.connect(tmp_path / "orders.db") as conn:
        expected = dict(
            conn.execute("SELECT customer, ROUND(SUM(amount), 2) FROM orders GROUP BY customer")
        )
    with sqlite3.connect(tmp_path / "totals.db") as conn:
        assert dict(conn.execute("SELECT customer, total FROM totals")) == expected
    assert "customer-0:" in done.stdout

    # New orders, run again: the totals follow and the stream copies only the new rows.
    with sqlite3.connect(tmp_path / "orders.db") as conn:
        conn.executemany(
            "INSERT INTO orders VALUES (?, ?, ?)",
            [(i, "customer-9", 1.0) for i in range(1001, 1011)],
        )
    done = _run(tmp_path)
    assert done.returncode == 0, done.stderr[-4000:]
    with sqlite3.connect(tmp_path / "totals.db") as conn:
        assert dict(conn.execute("SELECT customer, total FROM totals"))["customer-9"] == 10.0
    with sqlite3.connect(tmp_path / "copy.db") as conn:
        ids = [i for (i,) in conn.execute("SELECT id FROM orders_copy ORDER BY id")]
    assert ids == list(range(1, 1011))
