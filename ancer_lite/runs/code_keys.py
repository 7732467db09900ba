"""One cache-key scheme for every cached result: the code a result depends on is found, not listed.

A cached result (a certification log, a RANCER run, a trained UCAN model, a quick-profile base classifier) is
named by a hash of everything that determines it: its inputs and settings, and the code that computes it. That
code is the module that computes it together with every `ancer_lite` module it imports, directly or through
others (`module_closure`, read from the sources' import statements, those inside functions included), so a
change to any of them, and only to them, gives new keys.

A module's code is its syntax tree without docstrings (`code_text`): comments, blank lines, layout and the
docstrings of the module, its classes and functions do not count; every other statement, expression, name and
literal (a default value, a string that is not a docstring) does. The tree's printed form is Python's
(`ast.dump`), so a Python version that prints it differently gives new keys too.
"""
from __future__ import annotations

import ast
import functools
import hashlib
import json
from pathlib import Path

from ..core.files import PACKAGE_DIR

PACKAGE = "ancer_lite"


def _source(name: str, root: Path) -> Path:
    """The file of module `name` ("core.certify", "proof_checks.ancer", "proof_checks") below the package root."""
    path = root.joinpath(*name.split("."))
    if path.is_dir():
        return path / "__init__.py"
    return path.with_suffix(".py")


def _imports(name: str, root: Path) -> set[str]:
    """The package's modules that module `name` imports anywhere in its source (relative or absolute)."""
    path = _source(name, root)
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name.split(".")[:-1] if path.name != "__init__.py" else name.split(".")
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == PACKAGE and len(parts) > 1:
                    found.add(".".join(parts[1:]))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)] if node.level > 1 else list(package)
                parts = base + (node.module.split(".") if node.module else [])
            elif node.module and node.module.split(".")[0] == PACKAGE:
                parts = node.module.split(".")[1:]
            else:
                continue
            # `from . import logs` names modules; `from .certify import Smooth` names a module's contents
            for alias in node.names:
                candidate = ".".join(parts + [alias.name])
                if candidate and _source(candidate, root).exists():
                    found.add(candidate)
                elif parts:
                    found.add(".".join(parts))
    return {m for m in found if _source(m, root).exists()}


@functools.lru_cache(maxsize=None)
def _closure(modules: tuple[str, ...], root: Path) -> tuple[str, ...]:
    seen: set[str] = set()
    todo = list(modules)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(_imports(name, root) - seen)
    return tuple(sorted(seen))


def module_closure(*modules: str, root: str | Path = PACKAGE_DIR) -> tuple[str, ...]:
    """The named modules of the package ("runs.experiment", "methods.ucan", ...) and every package module they import,
    directly or through others, sorted.

    Parameters
    ----------
    *modules : str
        Dotted module names below the package ("core.certify", "proof_checks"); at least one (ValueError when
        none is given or one names no module file below `root`).
    root : str or pathlib.Path, optional
        The package's folder (another copy of it, in the tests); default: this package's folder.

    Returns
    -------
    tuple of str
        The dotted names of the named modules and all package modules they import, directly or indirectly,
        sorted.
    """
    root = Path(root).resolve()
    if not modules:
        raise ValueError("modules must name at least one module of the package, got none")
    for name in modules:
        if not isinstance(name, str) or not _source(name, root).exists():
            raise ValueError(f"modules must name modules of {PACKAGE} (e.g. 'core.certify'), got {name!r}: no "
                             f"{_source(str(name), root)}")
    return _closure(tuple(sorted(set(modules))), root)


_DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def _is_docstring(statement: ast.stmt) -> bool:
    return (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
            and isinstance(statement.value.value, str))


@functools.lru_cache(maxsize=256)
def _code_text(source: bytes, filename: str) -> str:
    tree = ast.parse(source, filename=filename)
    for node in ast.walk(tree):
        if isinstance(node, _DOCUMENTED) and node.body and _is_docstring(node.body[0]):
            node.body = node.body[1:]
    return ast.dump(tree, annotate_fields=True, include_attributes=False)


def code_text(path: str | Path) -> str:
    """What of the Python source at `path` a cache key depends on: `ast.dump` of its syntax tree (no line or
    column numbers) without the docstrings of the module, its classes and functions (a first statement that is
    a string constant), so comments, layout and docstrings do not count and everything else does.

    Parameters
    ----------
    path : str or pathlib.Path
        A Python source file.

    Returns
    -------
    str
        The `ast.dump` text (fields annotated, no positions) of the docstring-free syntax tree.
    """
    path = Path(path)
    return _code_text(path.read_bytes(), str(path))


def code_version(*modules: str, root: str | Path = PACKAGE_DIR) -> str:
    """A short hash (12 hex digits) of the names and code (`code_text`) of `module_closure(*modules)`: the code
    that a result computed by those modules depends on.

    Parameters
    ----------
    *modules, root : as in `module_closure`

    Returns
    -------
    str
        The first 12 hex digits of the SHA-256 of each closure module's name and `code_text`, in sorted order.
    """
    root = Path(root).resolve()
    h = hashlib.sha256()
    for name in module_closure(*modules, root=root):
        h.update(name.encode() + b"\0")
        h.update(code_text(_source(name, root)).encode() + b"\0")
    return h.hexdigest()[:12]


def cache_key(code: str, **parts: object) -> str:
    """The name (10 hex digits) of a cached result: a hash of `code` (a `code_version`) and every other part
    that determines it (settings, model fingerprints, inputs, ...; JSON, keys sorted, str() for the rest).

    Parameters
    ----------
    code : str
        A `code_version` of the modules that compute the result.
    **parts : object
        Every other part that determines the result; JSON-encoded with keys sorted, str() for values JSON
        cannot encode.

    Returns
    -------
    str
        The first 10 hex digits of the SHA-256 of the JSON of `code` and `parts`.
    """
    key = json.dumps(dict(code=code, **parts), sort_keys=True, default=str)
    return hashlib.sha256(key.encode()).hexdigest()[:10]
