"""The compiled kernels sit below their callers: the lower module of each pair imports
nothing of the higher one (top level or inside a function). That is stricter than "no
circle", which ``tests/test_layers.py`` checks for the whole package with the same scan."""

import pytest

from tests.test_layers import ROOT, imports_of, package_files, resolve

MODULES = package_files(ROOT)


def imported(name: str) -> set[str]:
    """Package modules that module ``name`` imports anywhere in its text."""
    found = {resolve(target, MODULES) for _, target, _ in imports_of(ROOT / MODULES[name], name)}
    return found - {None, name}


@pytest.mark.parametrize("lower,higher", [
    ("twilight_env.agents._solver_nb", "twilight_env.agents.solver"),
    ("twilight_env.agents.fast_ismcts", "twilight_env.agents.ismcts"),
    ("twilight_env.obs._encoding_nb", "twilight_env.obs.encoding"),
])
def test_lower_module_does_not_import_the_higher(lower, higher):
    assert lower in MODULES and higher in MODULES
    assert higher not in imported(lower), f"{lower} imports {higher}"
    assert lower in imported(higher), f"{higher} no longer uses {lower}: drop the pair"
