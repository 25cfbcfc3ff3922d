"""The kit's dependency direction (DESIGN §1), checked on the import graph of its modules.

Every ``import`` and ``from ... import`` statement of every module under ``cdk/`` is read with
:mod:`ast` (including those inside functions and ``TYPE_CHECKING`` blocks, which run lazily but
still make a dependency), resolved to the kit's modules, and followed transitively. So a module
of ``cdk/runtime`` that reaches ``cdk.spark`` through any chain of imports fails, however it
spells the import.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "cdk"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@functools.cache
def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _resolve(importer: str, is_package: bool, module: str | None, level: int) -> str:
    if level == 0:
        return module or ""
    base = importer.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, module] if module else base)


def _imports(name: str) -> Iterator[str]:
    """The kit modules ``name`` imports directly (a package's ``__init__`` counts as imported)."""
    path = _modules()[name]
    modules = _modules()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(name, path.name == "__init__.py", node.module, node.level)
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        for target in targets:
            parts = target.split(".")
            # importing a.b.c runs a, a.b and a.b.c
            for end in range(1, len(parts) + 1):
                prefix = ".".join(parts[:end])
                if prefix in modules and prefix != name:
                    yield prefix


@functools.cache
def _graph() -> dict[str, frozenset[str]]:
    return {name: frozenset(_imports(name)) for name in _modules()}


def _path_to(start: str, banned: str) -> list[str] | None:
    """An import chain from ``start`` into package ``banned`` (None when there is none)."""
    graph = _graph()
    seen = {start}
    stack: list[list[str]] = [[start]]
    while stack:
        chain = stack.pop()
        for nxt in sorted(graph[chain[-1]]):
            if nxt == banned or nxt.startswith(banned + "."):
                return [*chain, nxt]
            # the package cdk itself re-exports everything; only follow real dependencies
            if nxt not in seen and nxt != "cdk":
                seen.add(nxt)
                stack.append([*chain, nxt])
    return None


def _in(package: str) -> list[str]:
    return sorted(m for m in _modules() if m == package or m.startswith(package + "."))


def test_the_graph_sees_lazy_imports() -> None:
    """The reader finds an import made inside a function (the kind this test exists for)."""
    assert "cdk.spark._placement" in _graph()["cdk.spark._driver"]
    assert _path_to("cdk.cli._distributed", "cdk.spark") is not None


@pytest.mark.parametrize("module", _in("cdk.runtime"))
def test_no_runtime_module_reaches_spark(module: str) -> None:
    chain = _path_to(module, "cdk.spark")
    assert chain is None, "cdk.runtime must not depend on cdk.spark: " + " -> ".join(chain or [])


# DESIGN §1: what each layer may not depend on.
_FORBIDDEN = {
    "cdk.api": ["cdk.runtime", "cdk.spark", "cdk.cli", "cdk.converters", "cdk.transforms"],
    "cdk.config": ["cdk.runtime", "cdk.spark", "cdk.cli", "cdk.converters", "cdk.transforms"],
    "cdk.data": ["cdk.runtime", "cdk.spark", "cdk.cli", "cdk.converters", "cdk.transforms"],
    "cdk.converters": ["cdk.runtime", "cdk.spark", "cdk.cli"],
    "cdk.transforms": ["cdk.runtime", "cdk.spark", "cdk.cli"],
    "cdk.kafka": ["cdk.runtime", "cdk.spark", "cdk.cli"],
    # a connector's building blocks: the public API (api, config, data, errors) only
    "cdk.http": ["cdk.runtime", "cdk.spark", "cdk.cli", "cdk.kafka", "harness"],
}


@pytest.mark.parametrize(
    ("layer", "banned"),
    [(layer, banned) for layer, bans in _FORBIDDEN.items() for banned in bans],
)
def test_lower_layers_do_not_reach_upper_ones(layer: str, banned: str) -> None:
    for module in _in(layer):
        chain = _path_to(module, banned)
        assert chain is None, f"{layer} must not depend on {banned}: " + " -> ".join(chain or [])
