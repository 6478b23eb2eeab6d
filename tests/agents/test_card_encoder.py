"""The card-set encoder of the policy/value network (agents/nn/card_encoder.py, ``PVConfig(encoder="cards")``):
one token per card from that card's bits only, configs, checkpoints, and the NumPy forward
pass refusing it. Information-set inputs only (R2.5, R7.1) and masks (R3.2) are tested for
both encoders in ``tests/agents/test_exit.py``."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from twilight_env.agents.base import make_agent, play_deal  # noqa: E402
from twilight_env.agents.exit import PVConfig, new_checkpoint  # noqa: E402
from twilight_env.agents.nn.card_encoder import CARD_MASKS, CardSetEncoder  # noqa: E402
from twilight_env.agents.nn.checkpoint import save_checkpoint  # noqa: E402
from twilight_env.rules.engine import State  # noqa: E402

from tests.agents.test_exit import small_net  # noqa: E402


def test_a_cards_token_reads_only_that_cards_bits():
    """Flipping the mask bits of card 5 moves card 5's token and no other card's."""
    torch.manual_seed(1)
    enc = CardSetEncoder(8, (16,))
    bits = (torch.rand(6, 25, 28) < 0.3).float()
    _, t0 = enc(bits)
    flipped = bits.clone()
    flipped[:, :CARD_MASKS, 5] = 1 - flipped[:, :CARD_MASKS, 5]
    _, t1 = enc(flipped)
    others = [c for c in range(28) if c != 5]
    assert torch.equal(t0[:, others], t1[:, others])
    assert not torch.equal(t0[:, 5], t1[:, 5])


def test_configs_round_trip_and_bad_ones_are_refused():
    assert set(PVConfig(num_roles=1).to_dict()) == {"num_roles", "trunk", "head"}  # mlp files as before
    cfg = PVConfig(num_roles=4, encoder="cards", card_width=12)
    assert PVConfig.from_dict(cfg.to_dict()) == cfg
    assert PVConfig.from_dict({"num_roles": 1, "trunk": [8], "head": [4]}).encoder == "mlp"
    with pytest.raises(ValueError, match=r"encoder must be one of \('mlp', 'cards'\), got 'set'"):
        PVConfig(encoder="set")
    with pytest.raises(ValueError, match="card_width must be an integer >= 1"):
        PVConfig(encoder="cards", card_width=0)


def test_a_cards_checkpoint_plays_by_name_with_torch_and_numpy_refuses_it(tmp_path):
    path = tmp_path / "cards.pt"
    save_checkpoint(new_checkpoint(small_net(3, encoder="cards"), 3), path)
    st = State.random(np.random.default_rng(2), 0, 3)
    play_deal(st, [make_agent(f"exit:{path}")] * 4, np.random.default_rng(2))
    assert st.done
    with pytest.raises(ValueError, match="NumPy forward pass is for the 'mlp' encoder only.*exit:PATH"):
        agent = make_agent(f"policy:{path}")
        st = State.random(np.random.default_rng(2), 0, 3)
        play_deal(st, [agent] * 4, np.random.default_rng(2))
