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

