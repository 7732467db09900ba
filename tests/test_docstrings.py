"""Every public function and method of the package documents its arguments and its result in numpydoc sections:
`Parameters` when it takes an argument, and `Returns` (or `Yields`) when it returns (or yields) a value."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import ancer_lite

PACKAGE = Path(ancer_lite.__file__).parent
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def has_section(doc: str, *titles: str) -> bool:
    """Whether the numpydoc docstring `doc` has a section called one of `titles` (the title, then a dashed line)."""
    lines = [line.strip() for line in doc.splitlines()]
    return any(a in titles and b and set(b) == {"-"} for a, b in zip(lines, lines[1:]))


def produces_value(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[bool, bool]:
    """(returns a value, yields) for the body of `fn` itself, nested functions and classes left out."""
    returns = yields = False
    todo = list(fn.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Return) and node.value is not None:
            returns = True
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            yields = True
        todo.extend(ast.iter_child_nodes(node))
    return returns, yields


def public_functions(path: Path):
    """(qualified name, node) of every public function and method of the module at `path` that takes an argument
    (properties left out: they read as attributes)."""
    def visit(nodes, prefix):
        for node in nodes:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                yield from visit(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
                if any(isinstance(d, ast.Name) and d.id == "property" for d in node.decorator_list):
                    continue
                a = node.args
                if [x for x in a.posonlyargs + a.args + a.kwonlyargs if x.arg not in ("self", "cls")] \
                        or a.vararg or a.kwarg:
                    yield f"{prefix}{node.name}", node
    yield from visit(ast.parse(path.read_text()).body, "")


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_public_functions_have_numpydoc_parameters_and_returns(path):
    missing = []
    for name, node in public_functions(path):
        doc = ast.get_docstring(node) or ""
        returns, yields = produces_value(node)
        need = ["Parameters"] + (["Yields"] if yields else ["Returns"] if returns else [])
        lacking = [t for t in need if not has_section(doc, t, *(("Returns",) if t == "Yields" else ()))]
        if lacking:
            missing.append(f"{name} (line {node.lineno}): no {' / '.join(lacking)} section")
    assert not missing, f"{path.relative_to(PACKAGE)}: " + "; ".join(missing)


def test_the_check_sees_a_missing_section():
    fn = ast.parse('def f(x):\n    """Sum.\n\n    Parameters\n    ----------\n    x : int\n        A number.\n    """\n'
                   '    return x + 1\n').body[0]
    doc = ast.get_docstring(fn)
    assert has_section(doc, "Parameters") and not has_section(doc, "Returns")
    assert produces_value(fn) == (True, False)
