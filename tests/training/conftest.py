"""Shared helpers for the training tests: a small random-weight checkpoint per variant."""

import pytest
import torch

from twilight_env.agents.nn.checkpoint import FORMAT, VERSION, save_checkpoint
from twilight_env.agents.nn.features import num_roles
from twilight_env.agents.nn.network import NetConfig, QNetwork


def write_random_checkpoint(path, num_players: int, seed: int = 0, trunk=(32,), head=(16,)) -> str:
    """A valid inference checkpoint with random weights (small, for fast tests)."""
    torch.manual_seed(seed)
    net = NetConfig(num_roles=num_roles(num_players), trunk=trunk, head=head)
    model = QNetwork(net)
    save_checkpoint({"format": FORMAT, "version": VERSION, "num_players": num_players,
                     "net": net.to_dict(), "model": model.state_dict()}, path)
    return str(path)


@pytest.fixture
def random_ckpt(tmp_path):
    """Factory: ``random_ckpt(num_players, seed=0)`` -> path of a random-weight checkpoint."""
    def make(num_players, seed=0):
        return write_random_checkpoint(tmp_path / f"rand_{num_players}p_{seed}.pt", num_players, seed)
    return make

