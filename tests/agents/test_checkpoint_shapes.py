"""A checkpoint whose declared network is larger than the weights it stores is refused
before that network is built: an edited ``net`` (two layers of 16,384 in a 1.9 MB file,
within the per-layer caps) made a resume allocate 1.36 GB before the shapes were compared."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("torch")

SCRIPT = textwrap.dedent('''
    import resource
    import torch
    from twilight_env.agents.nn.checkpoint import model_from_checkpoint
    from twilight_env.agents.nn.network import NetConfig, QNetwork

    net = NetConfig.from_dict({"num_roles": 1, "trunk": [8, 8], "head": [4]})
    ckpt = {"num_players": 4, "net": {"num_roles": 1, "trunk": [16384, 16384], "head": [4]},
            "model": QNetwork(net).state_dict()}
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        model_from_checkpoint(ckpt, "edited.pt")
        print("BUILT")
    except ValueError as e:
        print("REFUSED", e)
    grew = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    print(f"GREW {grew:.0f}")
''')


def test_a_declared_network_larger_than_its_weights_is_refused_without_building_it():
    p = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120)
    out = p.stdout
    assert "REFUSED" in out, out + p.stderr[-2000:]
    line = next(s for s in out.splitlines() if s.startswith("REFUSED"))
    assert "'edited.pt'" in line and "trunk.0.weight" in line and "16384" in line, line
    grew = float(out.rsplit("GREW ", 1)[1])
    assert grew < 100, f"the peak memory grew by {grew:.0f} MiB before the refusal"


def test_a_checkpoint_whose_weights_fit_still_loads():
    from twilight_env.agents.nn.checkpoint import model_from_checkpoint
    from twilight_env.agents.nn.network import NetConfig, QNetwork

    net = NetConfig.from_dict({"num_roles": 1, "trunk": [8, 8], "head": [4]})
    model = QNetwork(net)
    back = model_from_checkpoint({"num_players": 4, "net": {"num_roles": 1, "trunk": [8, 8], "head": [4]},
                                  "model": model.state_dict()})
    assert all((a == b).all() for a, b in zip(back.state_dict().values(), model.state_dict().values()))
