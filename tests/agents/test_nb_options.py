"""The kernels' helpers compile without reference counting where numba knows the option,
and with it (not failing) where it does not (agents/_nb_options.py)."""

import importlib
import sys

import numpy as np
import pytest

numba = pytest.importorskip("numba")


def test_this_numba_knows_the_option():
    from twilight_env.agents._nb_options import NO_REFCOUNT

    assert NO_REFCOUNT == {"_nrt": False}
    f = numba.njit(**NO_REFCOUNT)(lambda a, i: a[i] + 1)
    assert f(np.arange(3), 2) == 3


def test_an_unknown_option_falls_back_to_plain_compilation(monkeypatch):
    from numba.core import cpu

    monkeypatch.setattr(cpu, "CPUTargetOptions", type("OptionsWithoutNrt", (), {}))
    monkeypatch.delitem(sys.modules, "twilight_env.agents._nb_options")
    mod = importlib.import_module("twilight_env.agents._nb_options")
    assert mod.NO_REFCOUNT == {}
    f = numba.njit(**mod.NO_REFCOUNT)(lambda a, i: a[i] + 1)
    assert f(np.arange(3), 0) == 1
