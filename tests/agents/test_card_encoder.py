"""The card-set encoder of the policy/value network (agents/nn/card_encoder.py, ``PVConfig(encoder="cards")``):
one token per card from that card's bits only, information-set inputs only (R2.5, R7.1),
illegal actions masked (R3.2), checkpoints, and the NumPy forward pass refusing it."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from twilight_env.agents.base import make_agent, play_deal  # noqa: E402
from twilight_env.agents.exit import PolicyValueNet, PVConfig, new_checkpoint, policy_value  # noqa: E402
from twilight_env.agents.nn.card_encoder import CARD_MASKS, CardSetEncoder  # noqa: E402
from twilight_env.agents.nn.checkpoint import save_checkpoint  # noqa: E402
from twilight_env.agents.nn.features import num_roles  # noqa: E402
from twilight_env.rules.engine import NUM_ACTIONS, State  # noqa: E402
from twilight_env.rules.infoset import InfoSet  # noqa: E402

from tests.agents.test_exit import decisions  # noqa: E402


def cards_net(num_players, seed=0):
    torch.manual_seed(seed)
    model = PolicyValueNet(PVConfig(num_roles=num_roles(num_players), trunk=(32,), head=(16,), encoder="cards",
                                    card_width=8)).eval()
    with torch.no_grad():
        for head in model.value_heads:
            head[-1].weight.mul_(20)
    return model


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


@pytest.mark.parametrize("num_players", [3, 4])
def test_r2_5_cards_net_never_sees_hidden_cards(num_players):
    """R2.5, R7.1: redealing the cards the deciding seat cannot see gives the same policy and value."""
    model = cards_net(num_players)
    rng = np.random.default_rng(4)
    changed, values = 0, set()
    for st, info in decisions(num_players, 12, 10):
        p0, v0 = policy_value(model, [info], [info.legal_actions])
        values.add(round(float(v0[0]), 6))
        for _ in range(3):
            other = info.sample_state(rng)
            changed += other.hands != st.hands
            info2 = InfoSet(other, info.seat)
            p1, v1 = policy_value(model, [info2], [info2.legal_actions])
            assert np.array_equal(p0, p1) and np.array_equal(v0, v1)
    assert changed >= 15 and len(values) > 1  # hidden cards moved; the net's output does depend on what is seen


@pytest.mark.parametrize("num_players", [3, 4])
def test_r3_2_cards_net_masks_illegal_actions(num_players):
    model = cards_net(num_players)
    infos = [i for _, i in decisions(num_players, 2, 16)]
    probs, values = policy_value(model, infos, [i.legal_actions for i in infos])
    assert probs.shape == (16, NUM_ACTIONS) and values.shape == (16,)
    for p, info in zip(probs, infos):
        illegal = [a for a in range(NUM_ACTIONS) if a not in info.legal_actions]
        assert np.all(p[illegal] == 0) and abs(p.sum() - 1) < 1e-5
    assert np.all(np.abs(values) <= 1)


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
    save_checkpoint(new_checkpoint(cards_net(3), 3), path)
    st = State.random(np.random.default_rng(2), 0, 3)
    play_deal(st, [make_agent(f"exit:{path}")] * 4, np.random.default_rng(2))
    assert st.done
    with pytest.raises(ValueError, match="NumPy forward pass is for the 'mlp' encoder only.*exit:PATH"):
        agent = make_agent(f"policy:{path}")
        st = State.random(np.random.default_rng(2), 0, 3)
        play_deal(st, [agent] * 4, np.random.default_rng(2))
