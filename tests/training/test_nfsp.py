"""NFSP (``twilight_env.training.nfsp``, Heinrich & Silver 2016) on the 1-trick games: a line
stopped and resumed ends with the weights of an unstopped line (bitwise), seeded lines
reproduce, checkpoints and buffers that were edited are refused, the reservoir keeps a
uniform sample (Algorithm R), observations pack exactly, the average policy learns (NashConv
falls), and the ``nfsp`` agent plays the same distribution as the trainer's network.
"""

import json

import numpy as np
import pytest

from twilight_env.agents.base import make_agent
from twilight_env.obs.encoding import encode_infoset, observation_and_mask
from twilight_env.rules.engine import ReducedState
from twilight_env.rules.infoset import InfoSet
from twilight_env.obs.layout import NUM_SCALARS
from twilight_env.training.nfsp.buffers import PACKED_BITS, Reservoir, bits_mask, mask_bits, pack_obs, unpack_obs
from twilight_env.training.nfsp.config import NfspConfig
from twilight_env.training.nfsp.run import main
from twilight_env.training.nfsp.store import load_line

SMALL = ["--tricks", "1", "--games", "16", "--batch", "32", "--min-buffer", "200", "--hidden", "32",
         "--learn-every", "16", "--eval-every", "1500"]


def _run(out, players=4, decisions=3000, seed=3, extra=()):
    main(["--players", str(players), "--decisions", str(decisions), "--seed", str(seed), "--out", str(out),
          *SMALL, *extra])


def _curve(out):
    return [json.loads(x) for x in (out / "curve.jsonl").read_text().splitlines()]


def _weights(out):
    line, _ = load_line(out)
    return {k: v.numpy().copy() for k, v in line.avgnet.state_dict().items()}, line


@pytest.mark.parametrize("players", [3, 4])
def test_resumed_line_equals_unstopped_line(tmp_path, players):
    _run(tmp_path / "a", players, 4000)
    _run(tmp_path / "b", players, 1800)
    main(["--out", str(tmp_path / "b"), "--resume", "--decisions", "4000", "--eval-every", "1500"])
    wa, la = _weights(tmp_path / "a")
    wb, lb = _weights(tmp_path / "b")
    assert la.counts == lb.counts and la.counts["sl_steps"] > 0 and la.counts["rl_steps"] > 0
    for k in wa:
        assert np.array_equal(wa[k], wb[k]), k
    for net in ("qnet", "qtarget"):
        for k, v in getattr(la, net).state_dict().items():
            assert np.array_equal(v.numpy(), getattr(lb, net).state_dict()[k].numpy())
    assert la.rng.bit_generator.state == lb.rng.bit_generator.state
    assert la.reservoir.offered == lb.reservoir.offered and la.replay.cursor == lb.replay.cursor
    assert (tmp_path / "a" / "avg_policy.npz").read_bytes() == (tmp_path / "b" / "avg_policy.npz").read_bytes()
    ca = {r["decisions"]: r["nash_conv"] for r in _curve(tmp_path / "a")}
    cb = {r["decisions"]: r["nash_conv"] for r in _curve(tmp_path / "b")}
    shared = set(ca) & set(cb)
    assert len(shared) >= 3 and all(ca[d] == cb[d] for d in shared)


def test_seeded_lines_reproduce(tmp_path):
    _run(tmp_path / "a", 3, 1500, seed=7)
    _run(tmp_path / "b", 3, 1500, seed=7)
    _run(tmp_path / "c", 3, 1500, seed=8)
    a, b, c = ((tmp_path / x / "avg_policy.npz").read_bytes() for x in "abc")
    assert a == b and a != c
    assert [r["nash_conv"] for r in _curve(tmp_path / "a")] == [r["nash_conv"] for r in _curve(tmp_path / "b")]


def test_nash_conv_falls_on_the_1_trick_4_player_game(tmp_path):
    main(["--players", "4", "--tricks", "1", "--decisions", "12000", "--eval-every", "12000", "--seed", "1",
          "--min-buffer", "500", "--out", str(tmp_path / "r")])
    curve = _curve(tmp_path / "r")
    assert curve[0]["decisions"] == 0 and curve[-1]["decisions"] >= 12000
    assert curve[-1]["nash_conv"] < 0.6 * curve[0]["nash_conv"]  # 21.6 -> 9.4 with these settings
    assert len(curve[-1]["per_player"]) == 4 and min(curve[-1]["per_player"]) >= -1e-9


def test_edited_checkpoint_or_buffers_are_refused(tmp_path):
    out = tmp_path / "r"
    _run(out, 3, 600)
    ck = out / "checkpoint.pt"
    data = bytearray(ck.read_bytes())
    good = bytes(data)
    data[len(data) // 2] ^= 0x10
    ck.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="digest|cannot be read"):
        load_line(out)
    ck.write_bytes(good)
    load_line(out)
    buf = next(out.glob("buffers_*.npz"))
    raw = bytearray(buf.read_bytes())
    raw[-100] ^= 0x01
    buf.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match="SHA-256"):
        load_line(out)
    with pytest.raises(SystemExit):
        _run(out, 3, 600)  # a folder that holds a line needs --resume


def test_reservoir_keeps_a_uniform_sample():
    """Algorithm R: after n offers each offer is held with probability capacity / n."""
    n, cap, runs = 40, 10, 2000
    held = np.zeros(n)
    rows = {"flags": np.zeros((n, PACKED_BITS), np.uint8), "scalars": np.zeros((n, NUM_SCALARS), np.float32),
            "legal": np.ones(n, np.int64), "action": np.arange(n, dtype=np.int8)}
    for seed in range(runs):
        r = Reservoir(cap)
        r.add(rows, np.random.default_rng(seed))
        held[r.data["action"][:r.size].astype(int)] += 1
        assert r.size == cap and r.offered == n
    freq = held / runs
    assert np.abs(freq - cap / n).max() < 4 * np.sqrt(0.25 * 0.75 / runs)


def test_observations_and_masks_pack_exactly():
    rng = np.random.default_rng(0)
    obs, masks = [], []
    for _ in range(20):
        st = ReducedState.random(rng, 0, 3, 2)
        while not st.done:
            o, m = observation_and_mask(st, st.deciding_seat)
            obs.append(o)
            masks.append(m != 0)
            st.apply(int(rng.choice(st.legal_actions())))
    obs, masks = np.stack(obs), np.stack(masks)
    assert np.array_equal(unpack_obs(*pack_obs(obs)), obs)
    assert np.array_equal(bits_mask(mask_bits(masks)), masks)


def test_agent_plays_the_trained_average_policy(tmp_path):
    out = tmp_path / "r"
    _run(out, 3, 1200)
    line, _ = load_line(out)
    agent = make_agent(f"nfsp:path={out / 'avg_policy.npz'}")
    greedy = make_agent(f"nfsp:path={out},temperature=0")
    rng = np.random.default_rng(1)
    st = ReducedState.random(rng, 0, 3, 1)
    while not st.done:
        seat = st.deciding_seat
        info = InfoSet(st, seat)
        legal = st.legal_actions()
        o, m = observation_and_mask(st, seat)
        assert np.array_equal(encode_infoset(info), o)
        want = line.probs_fn(o[None], (m != 0)[None])[0]
        got = agent.action_probs(info, legal)
        np.testing.assert_allclose(got, want, atol=1e-6)
        assert got[[a for a in range(31) if a not in legal]].sum() == 0
        assert greedy.act(info, legal) == int(np.argmax(want))
        a = agent.act(info, legal, np.random.default_rng(2))
        assert a in legal and a == agent.act(info, legal, np.random.default_rng(2))
        st.apply(a)
    full = ReducedState.random(rng, 0, 4, 1)
    with pytest.raises(ValueError, match="3 players"):
        agent.action_probs(InfoSet(full, full.deciding_seat), full.legal_actions())


def test_bad_settings_are_refused(tmp_path):
    with pytest.raises(ValueError, match="eta"):
        NfspConfig(eta=1.5).validate()
    with pytest.raises(ValueError, match="tricks"):
        NfspConfig(tricks=0).validate()
    with pytest.raises(ValueError, match="min_buffer"):
        NfspConfig(batch=64, min_buffer=10).validate()
    with pytest.raises(SystemExit):
        main(["--out", str(tmp_path / "x"), "--players", "3"])  # no budget
    with pytest.raises(ValueError, match="nfsp"):
        make_agent("nfsp")


def test_saved_policies_evaluate_as_in_training(tmp_path):
    from twilight_env.training.nfsp.evaluate import main as evaluate

    out = tmp_path / "r"
    main(["--players", "3", "--decisions", "3000", "--seed", "3", "--out", str(out), "--keep-policies", *SMALL])
    kept = sorted(out.glob("avg_policy_*.npz"), key=lambda p: int(p.stem.split("_")[-1]))
    curve = {r["decisions"]: r["nash_conv"] for r in _curve(out)}
    assert len(kept) == len(curve) >= 3
    evaluate(["--players", "3", "--tricks", "1", "--out", str(tmp_path / "e.json"), *map(str, kept)])
    rows = json.loads((tmp_path / "e.json").read_text())["rows"]
    for r in rows:  # the NumPy forward pass of the agent's file, the torch one in training: float32 apart
        assert r["nash_conv"] == pytest.approx(curve[r["decisions"]], abs=1e-4)
    with pytest.raises(SystemExit, match="3 players and 1 tricks"):
        evaluate(["--players", "4", "--tricks", "1", "--out", str(tmp_path / "x.json"), str(kept[0])])


def test_plot_writes_a_png_and_refuses_a_bad_curve(tmp_path):
    from twilight_env.training.nfsp.plot import main as plot, read_curve

    out = tmp_path / "r"
    _run(out, 4, 1600)
    plot([str(out / "curve.jsonl"), "--sizes", "1:4", "--exact", "results/reduced_decks/reduced_decks.json",
          "--out", str(tmp_path / "c.png")])
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    (tmp_path / "bad.jsonl").write_text('{"seconds": 1}\n[1, 2]\n')
    with pytest.raises(ValueError, match="bad.jsonl:2: not a JSON object"):
        read_curve(tmp_path / "bad.jsonl")
