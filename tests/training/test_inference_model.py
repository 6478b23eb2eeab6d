"""Card-location model: sees only the information set, loads by name in the search agents,
trains, resumes and refuses damaged checkpoints (agents/inference.py, training/*_inference*)."""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

torch = pytest.importorskip("torch")

from twilight_env.agents.base import make_agent, play_deal  # noqa: E402
from twilight_env.agents.inference import (PROB_FLOOR, CardLocationNet, allowed_from_features, card_probs,  # noqa: E402
                              checkpoint_dict, default_weights, load_model, model_sampler, read_checkpoint,
                              save_checkpoint)
from twilight_env.agents.worlds import allowed_seats, infoset_features  # noqa: E402
from twilight_env.training import eval_inference, inference_data, train_inference  # noqa: E402
from twilight_env.rules.engine import State  # noqa: E402
from twilight_env.rules.infoset import InfoSet  # noqa: E402

from positions import PLAYED, Spec, positions, viewer_seats  # noqa: E402


@pytest.fixture(scope="module")
def random_model():
    torch.manual_seed(0)
    return CardLocationNet(32).eval()


@pytest.mark.parametrize("players", [3, 4])
def test_shipped_weights_exist_and_are_small(players):
    path = default_weights(players)
    assert path.stat().st_size < 2 * 1024 * 1024
    assert read_checkpoint(path, players)["num_players"] == players


@pytest.mark.parametrize("players", [3, 4])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_model_never_sees_a_hidden_card(players, seed):
    """Counterfactual: re-deal the hidden cards consistently with the information set; the
    features and the shipped model's output stay the same."""
    model = load_model(None, players)
    rng = np.random.default_rng(seed)
    state = positions(Spec(players, seed, steps=int(rng.integers(0, 26)), heuristic=PLAYED))[0]
    for viewer in viewer_seats(state.num_players):
        info = InfoSet(state, viewer)
        probs = card_probs(model, info)
        for _ in range(3):
            other = info.world_state(info.sample_hands(rng))  # another deal, same information set
            if other.hands == state.hands:
                continue
            again = InfoSet(other, viewer)
            assert np.array_equal(infoset_features(again), infoset_features(info))
            assert np.array_equal(card_probs(model, again), probs)


@pytest.mark.parametrize("players", [3, 4])
def test_probabilities_cover_exactly_the_allowed_seats(players, random_model):
    state = positions(Spec(players, 7, steps=11, heuristic=PLAYED))[0]
    for viewer in viewer_seats(state.num_players):
        info = InfoSet(state, viewer)
        p = card_probs(random_model, info)
        allowed = allowed_seats(info)
        assert np.all(p[~allowed] == 0) and np.all(p[allowed] >= PROB_FLOOR * 0.5)
        rows = allowed.any(axis=1)
        assert np.allclose(p[rows].sum(axis=1), 1.0)
        feats = torch.from_numpy(infoset_features(info))[None]
        assert np.array_equal(allowed_from_features(feats)[0].numpy(), allowed)


@pytest.mark.parametrize("spec", ["pimc:inference=model,worlds=3", "ismcts:inference=model,iterations=12"])
@pytest.mark.parametrize("players", [3, 4])
def test_search_agents_play_a_deal_with_the_model(spec, players):
    agent = make_agent(spec)
    assert agent.inference == "model" and "inference=model" in agent.name
    rng = np.random.default_rng(players)
    state = play_deal(State.random(rng, 0, players), [agent] * 4, rng)
    assert state.done and len(state.history) == 28


def test_uniform_stays_the_default_and_bad_values_are_refused():
    assert make_agent("pimc").inference == "uniform"
    assert make_agent("ismcts").inference == "uniform"
    with pytest.raises(ValueError, match="uniform"):
        make_agent("pimc:inference=bayes")
    with pytest.raises(ValueError, match="uniform"):
        make_agent("ismcts:inference=3")


@settings(max_examples=20)
@given(seed=st.integers(0, 10_000), players=st.sampled_from([3, 4]), steps=st.integers(0, 27))
def test_model_sampler_draws_consistent_worlds(seed, players, steps):
    """With the shipped model's probabilities, every world passes the uniform sampler's
    consistency check and leaves every viewer's information set unchanged."""
    state = positions(Spec(players, seed, steps=steps, heuristic=PLAYED))[0]
    rng = np.random.default_rng(seed)
    for viewer in viewer_seats(state.num_players):
        info = InfoSet(state, viewer)
        sampler = model_sampler(info)
        for _ in range(4):
            hands = sampler.sample_hands(rng)
            world = info.world_state(hands)  # raises on seen hands, counts (R2.5) or played cards
            again = InfoSet(world, viewer)
            assert again.known_masks == info.known_masks and again.hand_counts == info.hand_counts
            assert again.legal_actions == info.legal_actions
            assert hands[0] | hands[1] | hands[2] | hands[3] == ((1 << 28) - 1) & ~info.played
        assert math.isfinite(sampler.log_prob(state.hands))


def _tiny_data(tmp_path, players=3, deals=24, seed=5):
    arrays = inference_data.generate(inference_data.DataConfig(players, deals, "heuristic", seed, 0.5, 8))
    path = str(tmp_path / f"d{players}.npz")
    inference_data.save(arrays, path)
    return path, arrays


def test_record_file_round_trip_and_labels(tmp_path):
    path, arrays = _tiny_data(tmp_path)
    x, y, deal, meta = inference_data.load(path)
    assert meta["num_players"] == 3 and meta["agents"] == "heuristic" and len(x) == len(y) > 50
    allowed = allowed_from_features(torch.from_numpy(x)).numpy()
    for i in range(len(y)):
        for c in range(28):
            assert (y[i, c] >= 0) == allowed[i, c].any()
            if y[i, c] >= 0:
                assert allowed[i, c, y[i, c]]
    assert set(deal.tolist()) <= set(range(24))


def test_heldout_seeds_are_refused():
    with pytest.raises(ValueError, match="held-out"):
        inference_data.check_seed(2_026_120_101)
    with pytest.raises(ValueError, match="held-out"):
        eval_inference.evaluate(3, 1, 2_026_000_000)


def test_training_resumes_from_its_checkpoint(tmp_path):
    data, _ = _tiny_data(tmp_path)
    out = tmp_path / "ck.pt"
    logs = []
    settings = train_inference.InferenceTrainSettings
    train_inference.train(data, str(out), settings(minutes=0.02, hidden=16, batch=32, eval_every=0.2,
                                                   logdir=str(tmp_path / "tb")), log=logs.append)
    first = read_checkpoint(out, 3)
    assert first["step"] > 0 and first["best_model"] is not None and "optimizer" in first
    with pytest.raises(ValueError, match="--resume"):
        train_inference.train(data, str(out), settings(minutes=0.04, hidden=16), log=logs.append)
    train_inference.train(data, str(out), settings(minutes=0.04, hidden=16, batch=32, eval_every=0.2), resume=True,
                          log=logs.append)
    second = read_checkpoint(out, 3)
    assert any(line.startswith(f"resumed {out} at step {first['step']}") for line in logs)
    assert second["step"] > first["step"] and second["seconds"] >= 0.04 * 60
    assert second["logdir"] == first["logdir"]
    assert list((tmp_path / "tb").iterdir())  # tensorboard events written
    small = tmp_path / "small.pt"
    train_inference.export(second, str(small))
    assert "optimizer" not in read_checkpoint(small, 3)
    assert load_model(small, 3).hidden == 16
    with pytest.raises(ValueError, match="weights only"):
        train_inference.train(data, str(small), settings(minutes=0.1), resume=True, log=logs.append)
    with pytest.raises(ValueError, match="--minutes must be > 0"):
        train_inference.train(data, str(tmp_path / "new.pt"), settings(minutes=0))
    assert not (tmp_path / "new.pt").exists()


def test_corrupt_checkpoint_gives_a_clear_error(tmp_path):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint at all")
    with pytest.raises(ValueError, match="corrupt"):
        read_checkpoint(bad)
    with pytest.raises(ValueError, match="corrupt"):
        load_model(bad, 3)
    good = tmp_path / "good.pt"
    save_checkpoint(checkpoint_dict(CardLocationNet(8), 3), good)
    truncated = tmp_path / "cut.pt"
    truncated.write_bytes(good.read_bytes()[:200])
    with pytest.raises(ValueError, match="corrupt"):
        read_checkpoint(truncated)
    with pytest.raises(ValueError, match="3 players"):
        read_checkpoint(good, 4)
    wrong = tmp_path / "wrong.pt"
    torch.save({"format": "twilight-dmc"}, wrong)
    with pytest.raises(ValueError, match="not a card-location checkpoint"):
        read_checkpoint(wrong)
    with pytest.raises(ValueError, match="not found"):
        read_checkpoint(tmp_path / "missing.pt")
    # the agents load the file when they are built, and name the option and the damaged file
    with pytest.raises(ValueError, match=r"inference=.*bad\.pt.*corrupt"):
        make_agent(f"pimc:inference={bad},worlds=2")


def test_corrupt_record_file_gives_a_clear_error(tmp_path):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"garbage")
    with pytest.raises(ValueError, match="corrupt"):
        inference_data.load(str(bad))
    np.savez(tmp_path / "other.npz", x=np.zeros(3), y=np.zeros(3), deal=np.zeros(3), meta=json.dumps({"format": "x"}))
    with pytest.raises(ValueError, match="not a"):
        inference_data.load(str(tmp_path / "other.npz"))


def test_evaluation_prints_both_samplers(tmp_path):
    res = eval_inference.evaluate(3, 2, 77, agents="heuristic", keep=1.0)
    d = res["deal"]
    assert d[:, 2].sum() > 0 and np.all(d[:, 0] <= 0) and np.all(d[:, 1] <= 0)
    assert np.allclose(res["trick"].sum(axis=0), d.sum(axis=0))
    text = eval_inference.report(res)
    assert "uniform" in text and "model" in text
