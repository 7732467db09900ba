"""One cache-key scheme: a cached result's key changes with the code of every module its computation imports,
directly or not, and with no other module; the closures are those of the imports. A module's code is its syntax
tree without docstrings: docstring, comment and layout edits keep the key, every other edit changes it."""
import ast
import io
import shutil
import tokenize
from dataclasses import asdict

import pytest

from ancer_lite.methods import rancer
from ancer_lite.runs import code_keys, experiment
from ancer_lite.runs.code_keys import cache_key, code_version, module_closure

PACKAGE = code_keys.PACKAGE_DIR
# the modules whose results are cached, by the key functions that name them
KEYED = ("runs.experiment", "methods.rancer", "studies.ucan_study", "runs.setups")


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    root = tmp_path_factory.mktemp("pkg") / "ancer_lite"
    shutil.copytree(PACKAGE, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def test_closures_follow_the_imports():
    # what the hand-kept lists held (experiment.RESULT_MODULES), and what they missed: train under UCAN's models
    assert {"core.base_classifier", "core.certify", "runs.experiment", "core.geometry", "runs.logs", "core.memory",
            "core.noise", "methods.optimize", "core.regions", "core.validation"} <= set(module_closure("runs.experiment"))
    assert {"models.train", "methods.ucan", "core.ucan_noise", "core.ucan_radii", "studies.ucan_study", "core.certify",
            "core.memory", "core.geometry"} <= set(module_closure("studies.ucan_study"))
    assert {"methods.rancer", "core.memory", "core.rotated", "methods.hessian", "methods.optimize"} \
        <= set(module_closure("methods.rancer"))
    assert {"models.train", "models.small", "models.data", "core.noise", "models.architectures"} \
        <= set(module_closure("runs.setups"))
    # figures and notebook studies are not what a certification log depends on
    assert not {"report.figures", "report.style", "studies.image_study", "studies.ucan_study"} \
        & set(module_closure("runs.experiment"))
    # a closure is closed: every module it holds imports only modules inside it
    for name in KEYED:
        closure = set(module_closure(name))
        for member in closure:
            assert set(module_closure(member)) <= closure, (name, member)


def test_relative_imports_of_a_subpackage_resolve():
    assert {"core.geometry", "core.regions"} <= set(module_closure("proof_checks.ancer"))
    assert "proof_checks.common" in module_closure("proof_checks.ancer")


@pytest.mark.parametrize("keyed", KEYED)
def test_a_change_to_any_module_of_the_closure_changes_the_key(copy, keyed):
    before = code_version(keyed, root=copy)
    assert before == code_version(keyed)  # the copy holds the same code
    closure = set(module_closure(keyed, root=copy))
    every = {p.relative_to(copy).with_suffix("").as_posix().replace("/", ".") for p in copy.rglob("*.py")}
    outside = sorted(every - closure - {"__init__"})
    for name in sorted(closure) + outside[:3]:
        path = copy.joinpath(*name.split(".")).with_suffix(".py")
        original = path.read_bytes()
        path.write_bytes(original + b"\n_an_edit = 1\n")
        try:
            changed = code_version(keyed, root=copy) != before
        finally:
            path.write_bytes(original)
        assert changed == (name in closure), (keyed, name)
    assert code_version(keyed, root=copy) == before


def test_the_keys_of_the_runs_use_it():
    assert experiment.code_version() == code_version("runs.experiment")
    settings = rancer.RancerSettings()
    assert experiment.rancer_key("m", settings, n=3) == cache_key(code_version("methods.rancer"), model="m",
                                                                   settings=asdict(settings), n=3)


def test_cache_key_depends_on_every_part():
    base = cache_key("abc", a=1, b=[1, 2])
    assert base == cache_key("abc", b=[1, 2], a=1)  # order of the parts does not matter
    assert len({base, cache_key("abd", a=1, b=[1, 2]), cache_key("abc", a=2, b=[1, 2]),
                cache_key("abc", a=1, b=[2, 1]), cache_key("abc", a=1)}) == 5


def test_bad_module_names_are_refused():
    with pytest.raises(ValueError, match="modules"):
        module_closure("no_such_module")
    with pytest.raises(ValueError, match="modules"):
        module_closure()


# a module with a docstring of each kind, comments, a default value and string literals that are not docstrings
PROBE = '''"""A module docstring."""
import math

# a comment
LIMIT = 3  # a trailing comment


class Box:
    """A class docstring."""

    size: int = 2

    def area(self, scale: float = 1.0) -> float:
        """A method docstring."""
        return math.pi * self.size * scale


async def wait() -> None:
    """An async function docstring."""


def label(x: int) -> str:
    """A function docstring."""
    return "big" if x > LIMIT else "small"
'''


def _probe_version(tmp_path, source: str) -> str:
    """code_version of `probe`, the only module of a package under tmp_path holding `source`."""
    root = tmp_path / "ancer_lite"
    root.mkdir(exist_ok=True)
    (root / "probe.py").write_text(source, encoding="utf-8")
    return code_version("probe", root=root)


def _edit(source: str, old: str, new: str) -> str:
    assert source.count(old) == 1, old
    return source.replace(old, new)


@pytest.mark.parametrize("old, new", [
    ('"""A module docstring."""', '"""Another module docstring,\n\nover several lines."""'),
    ('"""A class docstring."""', "'A changed class docstring'"),
    ('"""A method docstring."""', '"""A changed method docstring."""'),
    ('"""An async function docstring."""', '"""A changed async docstring."""'),
    ('    """A function docstring."""\n', ""),  # a docstring removed
    ("# a comment", "# another comment"),
    ("  # a trailing comment", ""),
    ("LIMIT = 3", "# a new comment\n\n\nLIMIT = 3"),  # a comment and blank lines added
    ("return math.pi * self.size * scale", "return (math.pi\n                * self.size * scale)"),  # layout
])
def test_docstring_comment_and_layout_edits_keep_the_key(tmp_path, old, new):
    """An edit that leaves what the code does unchanged (a docstring, a comment, line breaks) keeps code_version."""
    before = _probe_version(tmp_path, PROBE)
    assert _probe_version(tmp_path, _edit(PROBE, old, new)) == before


@pytest.mark.parametrize("old, new", [
    ("LIMIT = 3", "LIMIT = 4"),  # a changed constant
    ("size: int = 2", "size: int = 3"),
    ("scale: float = 1.0", "scale: float = 2.0"),  # a changed default value
    ('"big"', '"large"'),  # a string that is not a docstring
    ('    return "big"', '    LIMIT\n    return "big"'),  # an added statement
    ('    """An async function docstring."""\n', '    """An async function docstring."""\n    return None\n'),
    ('    """A function docstring."""\n', '    x = "A function docstring."\n'),  # no longer a docstring
    ('"""A method docstring."""\n', '"""A method docstring."""\n        "A second string."\n'),
    ("x > LIMIT", "x >= LIMIT"),
    ("def label(x: int) -> str:", "def label(x: int) -> bytes:"),
])
def test_code_edits_change_the_key(tmp_path, old, new):
    """An edit to anything but a docstring, a comment or the layout changes code_version: a constant, a default
    value, a non-docstring string literal, an added statement, an operator, an annotation."""
    before = _probe_version(tmp_path, PROBE)
    assert _probe_version(tmp_path, _edit(PROBE, old, new)) != before


def _without_comments_and_with_edited_docstrings(source: str) -> str:
    """source with every comment replaced and every module, class and function docstring reworded (the tree
    found by ast, the comments by tokenize)."""
    lines = source.splitlines(keepends=True)
    edits = []  # (line, column, end column, replacement), applied from the end of the file backwards
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            edits.append((tok.start[0], tok.start[1], tok.end[1], "# an edited comment"))
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                start = first.value.col_offset
                opening = len(lines[first.lineno - 1][start:]) - len(lines[first.lineno - 1][start:].lstrip("rRuU"))
                quote = lines[first.lineno - 1][start + opening:start + opening + 3]
                at = start + opening + (3 if quote in ('"""', "'''") else 1)
                edits.append((first.lineno, at, at, "Reworded. "))
    for line, col, end, text in sorted(edits, reverse=True):
        lines[line - 1] = lines[line - 1][:col] + text + lines[line - 1][end:]
    return "".join(lines)


def test_the_package_keys_ignore_its_docstrings_and_comments(copy):
    """Rewording every docstring and every comment of every module of a closure keeps its key; the copy's
    modules are restored afterwards."""
    for keyed in KEYED:
        before = code_version(keyed, root=copy)
        originals = {}
        try:
            for name in module_closure(keyed, root=copy):
                path = code_keys._source(name, copy)
                originals[path] = path.read_bytes()
                edited = _without_comments_and_with_edited_docstrings(originals[path].decode("utf-8"))
                assert edited != originals[path].decode("utf-8") or not originals[path].strip(), name
                path.write_text(edited, encoding="utf-8")
            assert code_version(keyed, root=copy) == before, keyed
        finally:
            for path, original in originals.items():
                path.write_bytes(original)
    assert all(code_version(keyed, root=copy) == code_version(keyed) for keyed in KEYED)
