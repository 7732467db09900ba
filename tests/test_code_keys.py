"""One cache-key scheme (issue "One engine"): a cached result's key changes with the source of every module its
computation imports, directly or not, and with no other module; the closures are those of the imports."""
import shutil
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
    assert {"methods.rancer", "core.rotated_memory", "core.rotated", "methods.hessian", "methods.optimize"} \
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
        path.write_bytes(original + b"\n# an edit\n")
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
