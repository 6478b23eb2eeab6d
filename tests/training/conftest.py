"""Shared helpers for the training tests: a small random-weight checkpoint per variant, and
a local Ray cluster (2 CPUs) for the tests of Ray actors."""

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


@pytest.fixture(scope="module")
def cluster():
    """A local Ray cluster of 2 CPUs for one test module (skips without the ``dist`` extra)."""
    ray = pytest.importorskip("ray")
    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False,
                 object_store_memory=80 * 1024 * 1024)
    yield
    ray.shutdown()
