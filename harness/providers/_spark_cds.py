"""A class-data archive of Spark's classes, so that the JVMs the harness starts load them faster.

Every Spark JVM (a driver, a standalone master or worker, an executor) loads and verifies some
thousands of classes from the pyspark wheel's jars before it does anything; on a 2-core machine
that is most of a short-lived JVM's CPU. Java's class-data sharing (CDS) maps classes parsed and
verified once from an archive instead. :func:`class_data_archive` makes one (a JDK 17+ dynamic
archive, ``-XX:ArchiveClassesAtExit``) by running a small ``local[2]`` job once per machine, Java
and pyspark, and keeps it in ``$XDG_CACHE_HOME/connect-cdk/spark-cds``; :func:`archive_options`
gives the JVM options that use it.

Using it is safe by construction: a JVM checks the archive against its own class path and Java
and ignores it when they differ (``-Xshare:auto``, the default), so a stale or foreign archive
only costs the time it would have saved. Measured on 2 cores (a ``local[2]`` session and two
small jobs): 8.2 s of CPU without, 5.2 s with; a standalone cluster running a job and a killed
worker rejoining: 31.3 s of CPU and 21.6 s wall without, 21.9 s and 16.0 s with; the test
suite's Spark session on a clean clone: 648 core-s and 432 s without, 492 core-s and 359 s with.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

from cdk.errors import MissingExtraError
from harness._cache import cache_folder
from harness.providers._spark_base import spark_home

__all__ = ["archive_options", "class_data_archive"]

log = logging.getLogger(__name__)

#: The longest the job that writes the archive may take (it takes ~20 s on 2 cores).
ARCHIVE_TIMEOUT_S = 180.0

#: The job whose classes go into the archive: a SQL query, Python functions on an RDD, Arrow
#: batches into Python and a streaming query, the kinds of work the kit's Spark JVMs do. The JVM
#: writes the archive as it exits, after the gateway's stdin is closed; the job waits for that.
_JOB = """
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master("local[2]").appName("cdk-class-data-archive")
         .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
         .config("spark.driver.bindAddress", "127.0.0.1").getOrCreate())
spark.range(1000).selectExpr("sum(id)", "count(*)").collect()
spark.sparkContext.parallelize(range(100), 2).map(lambda x: x * 2).sum()
try:
    spark.range(100).mapInArrow(lambda batches: batches, "id long").count()
except Exception:
    pass
query = (spark.readStream.format("rate").option("rowsPerSecond", 10).load()
         .writeStream.format("memory").queryName("cds").trigger(once=True).start())
query.awaitTermination(60)
gateway = spark.sparkContext._gateway
spark.stop()
proc = getattr(gateway, "proc", None)
if proc is not None:
    proc.stdin.close()
    proc.wait(120)
"""


def _key(home: Path) -> str:
    """What the archive is valid for: the Java binary, and the jars of this pyspark where they are.

    (A JVM checks the class path it runs with against the archive's, paths included: another
    virtualenv's pyspark, the same version, needs an archive of its own.)
    """
    java_home = os.environ.get("JAVA_HOME")
    java = str(Path(java_home) / "bin" / "java") if java_home else shutil.which("java") or ""
    digest = hashlib.sha256(os.path.realpath(java).encode())
    digest.update(str(home).encode())
    modules = Path(os.path.realpath(java)).parent.parent / "lib" / "modules"
    with contextlib.suppress(OSError):
        stat = modules.stat()
        digest.update(f"{stat.st_size}:{stat.st_mtime_ns}".encode())
    for jar in sorted((home / "jars").glob("*.jar")):
        digest.update(f"{jar.name}:{jar.stat().st_size}".encode())
    return digest.hexdigest()[:16]


def class_data_archive(java_options: str = "") -> Path | None:
    """The archive of Spark's classes for this Java and pyspark, made on the first call.

    ``java_options`` are the options the Spark JVMs will run with (``JAVA_TOOL_OPTIONS``); the
    archive is made under the same ones. Processes that ask at once wait for the one making
    it. None when pyspark or Java is missing, the cache folder cannot be written, or the job
    fails (logged): the JVMs then start as they would without.
    """
    try:
        home = spark_home()
    except MissingExtraError:  # no pyspark: nothing to archive
        return None
    root = cache_folder("spark-cds")
    try:
        root.mkdir(parents=True, exist_ok=True)
        key = _key(home)
    except OSError:
        return None
    archive = root / f"spark-{key}.jsa"
    if archive.is_file():
        return archive
    with open(root / f"spark-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if archive.is_file():  # made while this one waited
            return archive
        return _make(archive, java_options)


def _make(archive: Path, java_options: str) -> Path | None:
    partial = archive.with_name(f"{archive.stem}.{os.getpid()}.partial")
    env = {
        **os.environ,
        "JAVA_TOOL_OPTIONS": f"{java_options} -XX:ArchiveClassesAtExit={partial}".strip(),
    }
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _JOB],
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=ARCHIVE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("No Spark class-data archive (the JVMs start without one): %s", exc)
        partial.unlink(missing_ok=True)
        return None
    if proc.returncode != 0 or not partial.is_file() or partial.stat().st_size == 0:
        tail = proc.stderr.decode(errors="replace").strip().splitlines()[-3:]
        log.warning(
            "No Spark class-data archive (the JVMs start without one): the job exited %s%s",
            proc.returncode,
            f": {' / '.join(tail)}" if tail else "",
        )
        partial.unlink(missing_ok=True)
        return None
    partial.replace(archive)
    return archive


def archive_options(archive: Path) -> str:
    """JVM options that use ``archive`` (and never print that a JVM could not use it)."""
    # The launcher JVMs of spark-submit and spark-class have another class path: they ignore
    # the archive, and the warning they would print is not wanted on their output.
    return f"-XX:SharedArchiveFile={archive} -Xlog:cds=off -Xlog:cds+dynamic=off"
