"""The package's layers: each sub-package imports only itself and the layers below it, no
module imports another module's private names, and the bottom layer needs nothing beyond NumPy, SciPy and torch.

Read from the sources' import statements (those inside functions included), so a lazy import cannot hide an
upward dependency."""
import ast
import sys
import tomllib
from pathlib import Path

import pytest

import ancer_lite

PACKAGE = Path(ancer_lite.__file__).resolve().parent
REPO = PACKAGE.parent
# bottom to top; a module may import its own layer and any layer below it
LAYERS = ("core", "models", "methods", "evaluation", "runs", "report", "studies", "tooling")
# notebook 01's falsifiable checks read the core's geometry only; they sit with the studies; `python -m ancer_lite`
# (the package's __main__) is the command line's entry point and sits with the tooling
LAYER_OF_SUBPACKAGE = {**{name: name for name in LAYERS}, "proof_checks": "studies", "__main__": "tooling"}
# what the core may import besides the standard library and itself
CORE_THIRD_PARTY = {"numpy", "scipy", "torch"}


def modules() -> dict[str, Path]:
    """Every module of the package by its dotted name below `ancer_lite` ("core.certify", "core", ...)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = modules()


def layer(name: str) -> str | None:
    """The layer of module `name` (None for the package's own __init__, which re-exports the public API)."""
    return LAYER_OF_SUBPACKAGE[name.split(".")[0]] if name else None


def imports(name: str) -> list[tuple[int, str, list[str]]]:
    """(line, imported package module, imported names) for each import of module `name` that targets the
    package; third-party imports as (line, "!" + top-level name, [])."""
    path = MODULES[name]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")
                if top[0] == "ancer_lite":
                    out.append((node.lineno, ".".join(top[1:]), []))
                else:
                    out.append((node.lineno, "!" + top[0], []))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                target = base + (node.module.split(".") if node.module else [])
            elif node.module and node.module.split(".")[0] == "ancer_lite":
                target = node.module.split(".")[1:]
            else:
                if node.module:
                    out.append((node.lineno, "!" + node.module.split(".")[0], []))
                continue
            names = [a.name for a in node.names]
            target_name = ".".join(target)
            if target_name in MODULES and MODULES[target_name].name == "__init__.py":
                # `from ..core import certify`: the names are modules of that sub-package
                for n in names:
                    sub = f"{target_name}.{n}" if target_name else n
                    out.append((node.lineno, sub if sub in MODULES else target_name, [] if sub in MODULES else [n]))
            else:
                out.append((node.lineno, target_name, names))
    return out


def test_every_module_sits_in_a_layer():
    stray = [n for n in MODULES if n and n.split(".")[0] not in LAYER_OF_SUBPACKAGE]
    assert not stray, f"modules outside the layers {LAYERS}: {stray}"


@pytest.mark.parametrize("name", [n for n in MODULES if n])
def test_no_layer_imports_a_higher_one(name):
    mine = LAYERS.index(layer(name))
    upward = [(line, target) for line, target, _ in imports(name)
              if not target.startswith("!") and (not target or LAYERS.index(layer(target)) > mine)]
    assert not upward, (f"ancer_lite.{name} (layer {layer(name)}) imports higher layers: "
                        + ", ".join(f"line {line}: {t or 'ancer_lite'} ({layer(t)})" for line, t in upward))


@pytest.mark.parametrize("name", [n for n in MODULES if n])
def test_no_private_names_cross_modules(name):
    private = [(line, target, n) for line, target, names in imports(name) if not target.startswith("!")
               for n in names if n.startswith("_") and not n.startswith("__")]
    assert not private, f"ancer_lite.{name} imports private names: {private}"


@pytest.mark.parametrize("name", [n for n in MODULES if n.split(".")[0] == "core"])
def test_the_core_needs_only_numpy_scipy_and_torch(name):
    third = {t[1:] for _, t, _ in imports(name) if t.startswith("!")}
    extra = {t for t in third if t not in sys.stdlib_module_names and t not in CORE_THIRD_PARTY and t != "__future__"}
    assert not extra, f"ancer_lite.{name} (core) imports {sorted(extra)}"


def test_the_check_sees_upward_imports():
    """The parser resolves relative imports, sub-package imports and imports inside functions."""
    seen = {t for _, t, _ in imports("studies.rancer_study")}
    assert {"methods.rancer", "runs.selection", "studies.runtime"} <= seen
    assert {t for _, t, _ in imports("tooling.execute")} >= {"report.figures", "core.stages"}  # inside functions
    assert layer("proof_checks.ancer") == "studies" and layer("core.certify") == "core"


def test_every_subpackage_is_installed():
    packages = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    expected = {"ancer_lite." + n if n else "ancer_lite" for n, p in MODULES.items() if p.name == "__init__.py"}
    assert packages == expected
