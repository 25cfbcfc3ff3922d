"""``plugin.path`` (wheels and installed trees), where plugins come from, and requirement checks.

The distributions are made here, as ``pip install --target`` and ``pip wheel`` would leave
them; the real ``cdk`` CLI runs them.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import httpx
import pytest

from cdk.errors import ConfigException
from cdk.runtime.isolation._plugin_path import (
    PluginDistribution,
    check_requirements,
    plugin_path_roots,
)
from tests._wait import wait_until
from tests.cli.test_standalone import standalone, write_worker

CDK = Path(sys.executable).with_name("cdk")

SOURCE = """
import threading

from cdk import ConfigDef, SourceConnector, SourceRecord, SourceTask


class AcmeTask(SourceTask):
    def start(self, props):
        self._topic = props["topic"]
        self._sent = False
        self._stop = threading.Event()

    def poll(self):
        if self._sent:
            self._stop.wait(0.05)
            return None
        self._sent = True
        return [SourceRecord({"p": 0}, {"o": 1}, self._topic, value="from the wheel")]

    def stop(self):
        self._stop.set()


class AcmeSourceConnector(SourceConnector):
    def version(self):
        return "{version}"

    def config(self):
        return ConfigDef()

    def start(self, props):
        self._props = dict(props)

    def task_class(self):
        return AcmeTask

    def task_configs(self, max_tasks):
        return [dict(self._props)]

    def stop(self):
        pass
"""


def _files(name: str, version: str, module: str, requires: tuple[str, ...]) -> dict[str, str]:
    dist_info = f"{name.replace('-', '_')}-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(
        f"Requires-Dist: {r}\n" for r in requires
    )
    entry_points = f"[cdk.plugins]\n{module.title()}Source = {module}:AcmeSourceConnector\n"
    return {
        f"{module}/__init__.py": SOURCE.replace("{version}", version),
        f"{dist_info}/METADATA": metadata,
        f"{dist_info}/entry_points.txt": entry_points,
        f"{dist_info}/WHEEL": "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{dist_info}/RECORD": "",
    }


def installed_tree(
    where: Path, name: str, version: str, module: str, requires: tuple[str, ...] = ()
) -> Path:
    """A folder as ``pip install --target`` leaves it."""
    for relative, text in _files(name, version, module, requires).items():
        path = where / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return where


def wheel(
    where: Path, name: str, version: str, module: str, requires: tuple[str, ...] = ()
) -> Path:
    """A pure-Python wheel of one source connector."""
    where.mkdir(parents=True, exist_ok=True)
    path = where / f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for relative, text in _files(name, version, module, requires).items():
            archive.writestr(relative, text)
    return path


def cdk(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CDK), *map(str, args)], capture_output=True, text=True, timeout=120, check=False
    )


def test_cdk_plugins_lists_plugin_path_wheels_and_trees_with_where_they_came_from(
    tmp_path: Path,
) -> None:
    plugins = tmp_path / "plugins"
    wheel(plugins, "acme-wheel", "1.2.0", "acme_wheel")
    installed_tree(plugins / "acme-tree", "acme-tree", "3.4.0", "acme_tree")
    result = cdk("plugins", "--type", "source", "--plugin-path", plugins)
    assert result.returncode == 0, result.stderr
    rows = {line.split()[1]: line.split() for line in result.stdout.splitlines()[1:]}
    assert rows["acme_wheel.AcmeSourceConnector"][2:4] == [
        "1.2.0",
        f"acme-wheel==1.2.0@plugin.path:{plugins}",
    ]
    assert rows["acme_tree.AcmeSourceConnector"][2:4] == [
        "3.4.0",
        f"acme-tree==3.4.0@plugin.path:{plugins}",
    ]
    assert rows["reference_connectors.filestream.FileStreamSourceConnector"][3] == (
        "connect-cdk==0.1.0"
    )
    # without plugin.path, they are not there
    assert "acme_wheel" not in cdk("plugins", "--type", "source").stdout


def test_a_connector_from_a_plugin_path_wheel_runs_on_cdk_standalone(
    tmp_path: Path, kafka_bootstrap: str
) -> None:
    plugins = tmp_path / "plugins"
    wheel(plugins, "acme-runs", "1.0.0", "acme_runs")
    connector = tmp_path / "acme.properties"
    connector.write_text(
        "name=acme\nconnector.class=Acme_RunsSource\ntopic=acme-from-wheel\n", encoding="utf-8"
    )
    worker = write_worker(tmp_path, kafka_bootstrap, **{"plugin.path": str(plugins)})
    with standalone(worker, connector, env={**os.environ}) as running:
        banner = running.banner()
        assert "connectors: acme" in banner, running.output
        match = re.search(r"REST API at (http://\S+);", banner)
        assert match, banner
        wait_until(
            lambda: (
                httpx.get(f"{match.group(1)}/connectors/acme/status", timeout=10).json()["tasks"][
                    0
                ]["state"]
                == "RUNNING"
            ),
            30,
            message=lambda: "the wheel's task RUNNING; stderr:\n" + running.output,
        )
        assert running.stop() == 0


def test_conflicting_plugin_requirements_refuse_the_worker_before_any_task_runs(
    tmp_path: Path, kafka_bootstrap: str
) -> None:
    plugins = tmp_path / "plugins"
    wheel(plugins, "acme-old", "1.0.0", "acme_old", ("packaging<1",))
    installed_tree(plugins / "new", "acme-new", "2.0.0", "acme_new", ("packaging>=20",))
    connector = tmp_path / "acme.properties"
    connector.write_text(
        "name=acme\nconnector.class=Acme_NewSource\ntopic=never\n", encoding="utf-8"
    )
    worker = write_worker(tmp_path, kafka_bootstrap, **{"plugin.path": str(plugins)})
    result = cdk("standalone", worker, connector)
    assert result.returncode == 1
    (line,) = [x for x in result.stderr.splitlines() if "Plugin conflict" in x]
    assert "acme-old 1.0.0 (plugin.path:" in line
    assert "requires packaging<1 but packaging " in line
    assert "acme-new 2.0.0 (plugin.path:" in line
    assert "requires packaging>=20" in line
    assert "Creating task" not in result.stderr
    assert "Created connector" not in result.stderr


def test_a_missing_requirement_names_the_plugin() -> None:
    dist = PluginDistribution("acme", "1.0", ("no-such-distribution-xyz>=1",), "installed:/x")
    with pytest.raises(ConfigException) as info:
        check_requirements([dist])
    assert str(info.value).startswith(
        "Plugin acme 1.0 (installed:/x) requires no-such-distribution-xyz>=1, which is not "
        "installed"
    )
    marker = PluginDistribution("acme", "1.0", ('nothing-here; extra == "x"',), "installed:/x")
    check_requirements([marker])  # an extra's requirement is not the plugin's


def test_bad_plugin_path_entries_are_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigException, match="not a directory"):
        plugin_path_roots(str(tmp_path / "missing"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigException, match="holds no connector distribution"):
        plugin_path_roots(str(tmp_path / "empty"))
