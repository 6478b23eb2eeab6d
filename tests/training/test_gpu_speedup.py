"""``benchmarks/gpu_speedup.py`` runs its CPU legs anywhere and says when no GPU is there."""

import pytest

torch = pytest.importorskip("torch")


def test_the_gpu_script_measures_every_leg_on_the_cpu(capsys):
    from benchmarks import gpu_speedup

    assert gpu_speedup.main(["--quick"]) == 0
    out = capsys.readouterr().out
    lines = {line.split("  ")[0]: line for line in out.splitlines()}
    for leg in ("batch engine, B=256", "self-play, 64 deals", "learner, batch 128", "exit training, batch 256",
                "exit training, batch 4096", "guided search, leaf batch 32", "guided search, leaf batch 128"):
        row = next(v for k, v in lines.items() if k.startswith(leg))
        cpu = float(row.split()[-3].replace(",", ""))  # CPU, CUDA ("-" without a GPU), ratio
        assert cpu > 0, row
    if not torch.cuda.is_available():
        assert "no CUDA device is usable here" in out


def test_the_torch_forward_of_the_guided_leg_equals_the_numpy_forward():
    """The ``cuda`` leg of the guided search evaluates leaves with the torch network (here on
    the CPU): the same probabilities and values as the NumPy forward pass it is compared with."""
    import numpy as np

    from benchmarks import gpu_speedup
    from twilight_env.agents.exit import legal_mask
    from twilight_env.agents.nn.features import infoset_row, role_of

    model, numpy_net = gpu_speedup._shipped_pv("cpu")
    decisions = gpu_speedup._decisions(40)
    rows = np.array([infoset_row(i) for i, _ in decisions])
    roles = np.array([role_of(3, i.acting_seat) for i, _ in decisions])
    legal = np.stack([legal_mask(a) for _, a in decisions])
    p, v = numpy_net.forward(rows, roles, legal)
    q, w = gpu_speedup.TorchForward(model, "cpu").forward(rows, roles, legal)
    assert len(set(roles.tolist())) > 1 and p.shape == q.shape == (40, 31)
    assert np.allclose(p, q, atol=1e-5) and np.allclose(v, w, atol=1e-5)
