"""Magnetic Mirror Descent (``training/mmd``): a stopped and resumed run equals an unstopped
one, a seed reproduces a run, the exact NashConv reads the network at every information set
of the 1-trick games (R2.5, R7.1, R7.3) and agrees with ``reduced_policy``'s, the training
lowers it, and the ``mmd`` agent plays and exposes the distribution it learned."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from twilight_env.agents.base import make_agent, play_deal  # noqa: E402
from twilight_env.agents.nn.features import state_row  # noqa: E402
from twilight_env.envs.vector import VectorEngine  # noqa: E402
from twilight_env.rules.engine import State  # noqa: E402
from twilight_env.rules.infoset import InfoSet  # noqa: E402
from twilight_env.training.mmd import checkpoint as ckpt_io  # noqa: E402
from twilight_env.training.mmd.config import MMDConfig  # noqa: E402
from twilight_env.training.mmd.evaluate import ReducedEvaluator, node_state  # noqa: E402
from twilight_env.training.mmd.learner import mmd_loss, move_magnet  # noqa: E402
from twilight_env.training.mmd.rollout import behaviour_sample, play, policy_probs  # noqa: E402
from twilight_env.training.mmd.run import CURVE_NAME, train  # noqa: E402
from twilight_env.training.reduced_policy import infoset_observations, learned_nash_conv  # noqa: E402
from twilight_env.training.reduced_solve import nash_conv, uniform_policy  # noqa: E402
from twilight_env.training.search_response import TargetPolicy  # noqa: E402


def small(players=3, **kw) -> MMDConfig:
    """A small, fast configuration of the 1-trick game."""
    base = dict(players=players, tricks=1, deals=32, trunk=(32,), head=(16,), eval_every=2, checkpoint_every=2,
                magnet_every=2, lr_decay=3, seed=5)
    return MMDConfig(**{**base, **kw})


def state_of(out):
    """Everything a resume restores, as plain values."""
    model, magnet, opt, cfg, counters, rng = ckpt_io.restore(ckpt_io.load(out))
    counters.pop("seconds")
    return model.state_dict(), magnet.state_dict(), opt.state_dict(), counters, rng.bit_generator.state


def assert_same(a, b):
    for x, y in zip(a[:2], b[:2]):
        assert x.keys() == y.keys() and all(torch.equal(x[k], y[k]) for k in x)
    sa, sb = a[2]["state"], b[2]["state"]
    assert sa.keys() == sb.keys() and all(torch.equal(sa[i][k], sb[i][k]) for i in sa for k in sa[i])
    assert a[3] == b[3] and a[4] == b[4]


def curve(out):
    return [json.loads(ln) for ln in (out / CURVE_NAME).read_text().splitlines()]


@pytest.mark.parametrize("players,state_dtype", [(3, "bfloat16"), (4, "bfloat16"), (3, "float32")])
def test_a_stopped_and_resumed_run_equals_an_unstopped_one(tmp_path, players, state_dtype):
    a, b = tmp_path / "a", tmp_path / "b"
    train(a, small(players, state_dtype=state_dtype), steps=7, log=lambda _: None)
    train(b, small(players, state_dtype=state_dtype), steps=3, log=lambda _: None)
    train(b, resume=True, steps=7, log=lambda _: None)
    assert_same(state_of(a), state_of(b))
    nc_a = {p["steps"]: p["nash_conv"] for p in curve(a)}
    nc_b = {p["steps"]: p["nash_conv"] for p in curve(b)}
    assert nc_a == {k: v for k, v in nc_b.items() if k != 3}  # b adds its stop point, step 3
    assert sorted(nc_a) == [0, 2, 4, 6, 7]


def test_a_bfloat16_checkpoint_stores_the_rounded_state_the_line_goes_on_from(tmp_path):
    """``state_dtype="bfloat16"``: magnet and Adam moments stored in 2 bytes a number (the
    weights whole); the live line rounds to the same values at each checkpoint, and a
    float32 line switched on resume writes the small form from then on."""
    big, small_run = tmp_path / "f32", tmp_path / "b16"
    cfg = dict(trunk=(64, 64), head=(32,), magnet_every=1)
    train(big, small(state_dtype="float32", **cfg), steps=2, log=lambda _: None)
    train(small_run, small(state_dtype="bfloat16", **cfg), steps=2, log=lambda _: None)
    raw = torch.load(small_run / "checkpoint.pt", weights_only=False)
    assert all(v.dtype == torch.bfloat16 for v in raw["magnet"].values())
    assert all(st[k].dtype == torch.bfloat16 for st in raw["optimizer"]["state"].values() for k in ("exp_avg", "exp_avg_sq"))
    assert all(v.dtype == torch.float32 for v in raw["model"].values())
    ratio = (small_run / "checkpoint.pt").stat().st_size / (big / "checkpoint.pt").stat().st_size
    assert 0.55 < ratio < 0.7  # weights 4 + magnet 2 + moments 2 + 2 bytes, against 16
    _, magnet, opt, *_ = ckpt_io.restore(ckpt_io.load(small_run))
    for v in magnet.state_dict().values():  # read back as float32 holding bfloat16 values
        assert v.dtype == torch.float32 and torch.equal(v, v.to(torch.bfloat16).float())
    f32 = ckpt_io.restore(ckpt_io.load(big))[1].state_dict()
    assert any(not torch.equal(v, v.to(torch.bfloat16).float()) for v in f32.values())  # float32 is not rounded
    train(big, resume=True, steps=3, state_dtype="bfloat16", log=lambda _: None)  # off a checkpoint step: whole
    assert all(v.dtype == torch.float32 for v in torch.load(big / "checkpoint.pt", weights_only=False)["magnet"].values())
    train(big, resume=True, steps=4, log=lambda _: None)  # a checkpoint step: the small form
    raw = torch.load(big / "checkpoint.pt", weights_only=False)
    assert raw["config"]["state_dtype"] == "bfloat16" and all(v.dtype == torch.bfloat16 for v in raw["magnet"].values())
    with pytest.raises(ValueError, match="state_dtype must be one of bfloat16, float32, got 'float16'"):
        small(state_dtype="float16").validate()


def test_a_folder_that_keeps_the_checkpoint_alone_exports_the_agents_policy(tmp_path):
    out = tmp_path / "kept"
    train(out, small(), steps=2, log=lambda _: None)
    before = (out / "policy.npz").read_bytes()
    (out / "policy.npz").unlink()
    with pytest.raises(ValueError, match="keeps its checkpoint alone.*--export"):
        make_agent(f"mmd:{out}")
    r = subprocess.run([sys.executable, "-m", "twilight_env.training.mmd", "--out", str(out), "--export"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    after = np.load(out / "policy.npz")
    ref = np.load(io.BytesIO(before))
    assert sorted(after.files) == sorted(ref.files)
    assert all(np.array_equal(after[k], ref[k]) for k in ref.files if ref[k].dtype != object)
    assert make_agent(f"mmd:{out}").name == f"mmd:{out}"


def test_policy_npz_records_the_deck_and_mmd_refuses_a_deal_of_another_deck(tmp_path):
    """A network trained on the 1-trick deck (R2.3 with a reduced deck) plays 1-trick deals;
    on a full 7-trick deal every decision path refuses, naming both decks. A policy.npz
    written before the deck was recorded reads as a full-deck network."""
    from twilight_env.agents.nn.npz_file import read_weights_npz, write_weights_npz
    from twilight_env.rules.engine import ReducedState, random_hands

    out = tmp_path / "one"
    train(out, small(tricks=1), steps=1, log=lambda _: None)
    meta, params = read_weights_npz(out / "policy.npz")
    assert meta["tricks"] == 1
    agent, greedy = make_agent(f"mmd:{out}"), make_agent(f"mmd:{out},temperature=0")
    assert agent.tricks == greedy.tricks == 1
    rng = np.random.default_rng(3)
    assert play_deal(ReducedState(random_hands(rng, 1), 0, 3), [agent] * 4, rng).done  # its own deck: plays
    full = State.random(np.random.default_rng(4), num_players=3)
    info = InfoSet(full, full.deciding_seat)
    said = (f"mmd: the network '{re.escape(str(out))}' was trained on a reduced deck of 1 trick \\(4 cards\\), but this deal is "
            r"played with the full deck \(7 tricks, 28 cards\)")
    for call in (lambda: agent.act(info, info.legal_actions, rng), lambda: greedy.act(info, info.legal_actions),
                 lambda: agent.action_probs(info, info.legal_actions),
                 lambda: greedy.act_batch([info], [info.legal_actions])):
        with pytest.raises(ValueError, match=said):
            call()
    with pytest.raises(ValueError, match="trained on a reduced deck of 1 trick .*serves full-deck play"):
        agent.model_for(3)
    # the same file read as policy:PATH keeps to its deck; the shipped full-deck network plays reduced decks
    as_policy = make_agent(f"policy:{out / 'policy.npz'}")
    for call in (lambda: as_policy.act(info, info.legal_actions), lambda: as_policy.action_probs(info, info.legal_actions),
                 lambda: as_policy.act_batch([info], [info.legal_actions])):
        with pytest.raises(ValueError, match="policy: the network .* was trained on a reduced deck of 1 trick"):
            call()
    assert play_deal(ReducedState(random_hands(rng, 1), 0, 3), [as_policy] * 4, rng).done
    assert play_deal(ReducedState(random_hands(rng, 1), 0, 3), [make_agent("policy:default")] * 4, rng).done
    # the export from the checkpoint alone records the deck too
    (out / "policy.npz").unlink()
    ckpt_io.export_policy(out)
    assert read_weights_npz(out / "policy.npz")[0]["tricks"] == 1
    # a file without "tricks" (written before it was recorded): a full-deck network, as before
    del meta["tricks"]
    write_weights_npz(out / "old.npz", meta, params)
    old = make_agent(f"mmd:{out / 'old.npz'}")
    assert old.tricks == 7 and old.action_probs(info, info.legal_actions).sum() == pytest.approx(1.0)
    with pytest.raises(ValueError, match=r"trained on the full deck \(7 tricks, 28 cards\), but this deal is played "
                                         r"with a reduced deck of 1 trick \(4 cards\).*--tricks 1"):
        play_deal(ReducedState(random_hands(rng, 1), 0, 3), [old] * 4, rng)


def test_a_minutes_budget_ends_at_a_checkpoint_step(tmp_path):
    """The budget spent, the line plays on to its next checkpoint step, so the call leaves
    the small (rounded) checkpoint."""
    out = tmp_path / "m"
    train(out, small(eval_every=3, checkpoint_every=3), steps=1, log=lambda _: None)
    counters = train(out, resume=True, minutes=1e-6, log=lambda _: None)
    assert counters["steps"] == 3
    raw = torch.load(out / "checkpoint.pt", weights_only=False)
    assert all(v.dtype == torch.bfloat16 for v in raw["magnet"].values())


def test_a_seed_reproduces_a_run_and_another_seed_does_not(tmp_path):
    for name, seed in (("a", 1), ("b", 1), ("c", 2)):
        train(tmp_path / name, small(seed=seed), steps=4, log=lambda _: None)
    a, b, c = (state_of(tmp_path / n) for n in "abc")
    assert_same(a, b)
    assert not torch.equal(a[0]["trunk.0.weight"], c[0]["trunk.0.weight"])


def test_resume_drops_curve_lines_after_the_checkpoint_and_refuses_a_damaged_one(tmp_path):
    out = tmp_path / "r"
    train(out, small(checkpoint_every=4, eval_every=1), steps=3, log=lambda _: None)
    with open(out / CURVE_NAME, "a") as f:  # a point written after the checkpoint (a crash before the save)
        f.write(json.dumps({"steps": 9, "nash_conv": 1.0}) + "\n")
    train(out, resume=True, steps=4, log=lambda _: None)
    assert [p["steps"] for p in curve(out)] == [0, 1, 2, 3, 4]
    data = bytearray((out / "checkpoint.pt").read_bytes())
    data[len(data) // 2] ^= 0x10
    (out / "checkpoint.pt").write_bytes(bytes(data))
    with pytest.raises(ValueError, match="does not match its sha256 digest"):
        train(out, resume=True, steps=5, log=lambda _: None)
    (out / "checkpoint.pt").write_bytes(bytes(data[:1000]))  # cut short, as by a full disk
    with pytest.raises(ValueError, match=r"the file is corrupt, truncated or not a checkpoint written by .*; "
                                         r"restore it from a copy, or start a new line in another folder") as e:
        train(out, resume=True, steps=5, log=lambda _: None)
    assert "'default'" not in str(e.value)
    with pytest.raises(ValueError, match="already holds a run"):
        train(out, small(), steps=1, log=lambda _: None)


@pytest.mark.parametrize("players", [3, 4])
def test_every_node_of_an_information_set_gives_the_same_network_input(players):
    ev = ReducedEvaluator(players, 1)
    nodes = np.flatnonzero(ev.model.iset >= 0)
    rows = np.array([state_row(node_state(ev.tree, n)) for n in nodes])
    assert np.array_equal(rows, ev.rows[ev.model.iset[nodes]])
    assert len({r.tobytes() for r in ev.rows}) == len(ev.rows)  # two sets, two inputs


def test_nash_conv_of_the_uniform_network_is_the_uniform_policys():
    """A network whose policy heads output 0 plays uniformly: its NashConv is that of the
    uniform table of ``reduced_solve`` (the slot order is the solver's)."""
    for players in (3, 4):
        ev = ReducedEvaluator(players, 1)
        net = ckpt_io.build({"num_roles": 4 if players == 3 else 1, "trunk": [8], "head": [4]}, players)
        with torch.no_grad():
            for head in net.policy_heads:
                head[-1].weight.zero_()
                head[-1].bias.zero_()
        want, _, _ = nash_conv(ev.tree, ev.model, uniform_policy(ev.model))
        assert ev.nash_conv(net)[0] == pytest.approx(want, abs=1e-9)
        assert want > 1.0


def test_in_three_players_the_figure_is_reduced_policys_learned_nash_conv():
    """Each 3-player set has its own observation: the evaluator of ``reduced_policy``, asked by
    observation, gives the same NashConv for a trained-looking (random) network."""
    ev = ReducedEvaluator(3, 1)
    torch.manual_seed(3)
    net = ckpt_io.build({"num_roles": 4, "trunk": [16], "head": [8]}, 3)
    by_obs = {}
    for nodes, obs, _ in infoset_observations(ev.tree, ev.model):
        for n, o in zip(nodes, obs):
            st = node_state(ev.tree, n)
            by_obs[o.tobytes()] = (state_row(st), st.acting_seat)

    def probs_fn(obs, mask):
        pairs = [by_obs[o.tobytes()] for o in obs]
        return policy_probs(net, np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs]), mask)

    want, per = learned_nash_conv(ev.tree, ev.model, probs_fn)
    got, got_per = ev.nash_conv(net)
    assert got == pytest.approx(want, abs=1e-9) and got_per == pytest.approx(list(per), abs=1e-9)


def test_training_lowers_the_nash_conv_of_the_three_player_one_trick_game(tmp_path):
    train(tmp_path / "t", small(deals=256, trunk=(256, 256), head=(128,), lr_decay=0, eval_every=50,
                                magnet_every=10, magnet_tau=0.1, seed=0), steps=100, log=lambda _: None)
    points = curve(tmp_path / "t")
    assert points[0]["nash_conv"] > 30 and points[-1]["nash_conv"] < 5, points


def test_the_loss_has_no_magnet_term_at_the_magnet_and_the_magnet_moves_by_tau():
    cfg = small()
    net = ckpt_io.build({"num_roles": 4, "trunk": [16], "head": [8]}, 3)
    magnet = ckpt_io.build({"num_roles": 4, "trunk": [16], "head": [8]}, 3)
    traj = play(net, 3, 1, 16, np.random.default_rng(0))
    magnet.load_state_dict(net.state_dict())
    _, fig = mmd_loss(net, magnet, traj, alpha=1.0)
    assert fig["kl"] == pytest.approx(0.0, abs=1e-6)
    before = magnet.trunk[0].weight.clone()
    with torch.no_grad():
        net.trunk[0].weight.add_(1.0)
    move_magnet(magnet, net, 0.25)
    assert torch.allclose(magnet.trunk[0].weight, before + 0.25)
    _, fig = mmd_loss(net, magnet, traj, alpha=1.0)
    assert fig["kl"] > 0
    assert cfg.lr_at(0) == cfg.lr and cfg.lr_at(3) == cfg.lr / 2


def test_exploring_play_draws_from_the_mixture_and_records_its_probability():
    probs = np.zeros((20000, 31))
    probs[:, 3], probs[:, 29] = 0.9, 0.1
    legal = probs > 0
    legal[:, 7] = True  # a legal action the policy never plays
    acts, mu = behaviour_sample(probs, legal, 0.3, np.random.default_rng(0))
    want = {3: 0.7 * 0.9 + 0.1, 29: 0.7 * 0.1 + 0.1, 7: 0.1}
    assert set(np.unique(acts)) == set(want)
    for a, p in want.items():
        assert np.allclose(mu[acts == a], p) and abs(np.mean(acts == a) - p) < 0.01
    same, mu0 = behaviour_sample(probs, legal, 0.0, np.random.default_rng(0))
    assert set(np.unique(same)) == {3, 29} and np.allclose(mu0, probs[np.arange(len(same)), same])


@pytest.mark.parametrize("players", [3, 4])
def test_full_deck_deals_record_legal_sampled_actions_and_returns(players):
    net = ckpt_io.build({"num_roles": 4 if players == 3 else 1, "trunk": [16], "head": [8]}, players)
    t = play(net, players, 7, 8, np.random.default_rng(1))
    assert t.deals == 8 and t.decisions >= 8 * 28 and len(t.actions) > 8
    assert t.legal[np.arange(len(t.actions)), t.actions].all() and (t.legal.sum(1) > 1).all()
    assert np.all(np.abs(t.returns) <= 1) and np.allclose(t.returns * 360, np.round(t.returns * 360), atol=1e-3)


def test_the_mmd_agent_plays_its_distribution_and_the_responder_simulates_it(tmp_path):
    out = tmp_path / "run"
    train(out, small(players=3, tricks=7, deals=4), steps=1, log=lambda _: None)
    agent = make_agent(f"mmd:{out}")
    assert agent.temperature == 1.0 and make_agent(f"mmd:{out},temperature=0").temperature == 0
    rng = np.random.default_rng(0)
    st = play_deal(State.random(rng, num_players=3), [agent] * 4, rng)
    assert st.done
    target = TargetPolicy(f"mmd:{out}")
    assert not target.deterministic
    net = agent.net_for(3)
    for seed in range(5):
        s = State.random(np.random.default_rng(seed), num_players=3)
        for a in (s.legal_actions()[0], s.legal_actions()[-1]):
            s.apply(a)
        info = InfoSet(s, s.deciding_seat)
        probs = agent.action_probs(info, info.legal_actions)
        row = np.array([state_row(s)])
        legal = np.zeros((1, 31), bool)
        legal[0, list(info.legal_actions)] = True
        want, _ = net.forward(row, np.array([s.acting_seat]), legal)
        assert probs == pytest.approx(want[0], abs=1e-6) and probs.sum() == pytest.approx(1.0)
        eng = VectorEngine(1, 3)
        eng.set_states([s])
        assert target.probs(eng, np.array([0]))[0] == pytest.approx(probs, abs=1e-5)


def test_the_command_line_trains_resumes_and_refuses_settings_on_resume(tmp_path):
    out = tmp_path / "cli"
    cmd = [sys.executable, "-m", "twilight_env.training.mmd", "--out", str(out)]
    small_args = ["--players", "4", "--tricks", "1", "--deals", "16", "--trunk", "16", "--head", "8",
                  "--eval-every", "2"]
    r = subprocess.run(cmd + small_args + ["--steps", "2"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert [json.loads(ln)["steps"] for ln in r.stdout.splitlines()] == [0, 2]
    r = subprocess.run(cmd + ["--resume", "--steps", "3", "--deals", "8"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "--resume continues with the checkpoint's settings; drop --deals" in r.stderr
    r = subprocess.run(cmd + ["--resume", "--steps", "3"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert [p["steps"] for p in curve(out)] == [0, 2, 3] and (out / "policy.npz").is_file()


def test_the_report_summarises_a_run_from_its_curve(tmp_path):
    from twilight_env.training.mmd.report import main, summarise

    run = tmp_path / "rep"
    train(run, small(eval_every=1), steps=4, log=lambda _: None)
    points = curve(run)
    s = summarise(run)
    assert s["last"] == points[-1] and s["lowest"]["nash_conv"] == min(p["nash_conv"] for p in points)
    for level, hit in s["first_at_or_below"].items():
        below = [p for p in points if p["nash_conv"] <= float(level)]
        assert hit == (None if not below else {"seconds": below[0]["seconds"], "steps": below[0]["steps"]})
    assert s["config"]["explore"] == small().explore
    assert main([str(run), "--out", str(tmp_path / "out")]) == 0
    saved = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert saved["runs"][0]["last"] == points[-1] and (tmp_path / "out" / "curve_rep.jsonl").is_file()


def test_mmd_refuses_default_and_a_checkpoint_path_naming_what_it_plays(tmp_path):
    with pytest.raises(ValueError, match="no MMD network is shipped"):
        make_agent("mmd:default")
    out = tmp_path / "r"
    train(out, small(), steps=2, log=lambda _: None)
    with pytest.raises(ValueError, match="not its checkpoint.*give the run directory"):
        make_agent(f"mmd:{out}/checkpoint.pt")
    said = []
    train(out, resume=True, steps=1, log=said.append)
    assert said == ["the line was already at 2 updates (--steps 1 is the total to reach): nothing to do"]
    one = tmp_path / "one"
    train(one, small(), steps=1, log=lambda _: None)
    said = []
    train(one, resume=True, steps=1, log=said.append)
    assert said == ["the line was already at 1 update (--steps 1 is the total to reach): nothing to do"]


@pytest.mark.parametrize("template", ["policy:path={}", "exit:path={}", "guided:path={}"])
def test_a_network_agent_given_an_mmd_run_names_the_checkpoints_format(tmp_path, template):
    """policy, exit and guided read an MMD run's policy.npz, not its folder (whose
    checkpoint.pt is another format): the refusal says which format the file is."""
    out = tmp_path / "r"
    train(out, small(), steps=1, log=lambda _: None)
    with pytest.raises(ValueError, match=r"checkpoint\.pt' is not a twilight-exit checkpoint .*its format is "
                                         r"'twilight-mmd'"):
        make_agent(template.format(out))


def test_the_command_line_refuses_new_user_mistakes_in_one_line_and_writes_nothing(tmp_path, capsys):
    """Each mistake exits 2 with one line saying what is wrong and what is allowed (no
    traceback), and leaves no new folder or file behind."""
    from twilight_env.training.mmd.run import main

    run = tmp_path / "run"
    train(run, small(), steps=1, log=lambda _: None)
    note, empty, new = tmp_path / "note.txt", tmp_path / "empty", tmp_path / "new"
    note.write_text("not a run\n")
    empty.mkdir()
    tiny = ["--steps", "1", "--deals", "4", "--trunk", "8", "--head", "8"]
    cases = [
        (["--out", str(note), *tiny], r"--out .*note\.txt' is a file, not a folder"),
        (["--out", str(note / "sub"), *tiny], r"cannot make the run folder .*note\.txt/sub'"),
        (["--out", "", *tiny], r"--out is empty: give the run folder"),
        (["--out", str(empty), "--resume", "--steps", "2"],
         r"no MMD run in .*empty' to resume: no checkpoint\.pt; --resume takes the --out folder of a run .*leave out --resume"),
        (["--out", str(tmp_path / "none"), "--export"],
         r"no MMD run in .*none': the folder does not exist; give the --out folder of a run"),
        (["--out", str(run), "--export", "--steps", "3", "--lr", "0.1"],
         r"--export only writes .*policy\.npz' from the checkpoint; drop --steps, --lr"),
        (["--out", str(run), "--export", "--resume"], r"--export only writes .*; drop --resume"),
        (["--out", str(new), "--steps", "1", "--init-weights", "default", "--trunk", "8"],
         r"--init-weights keeps its network's shape; drop --trunk"),
        (["--out", str(new), "--steps", "1", "--init-weights", " "], r"--init-weights is empty: give 'default'"),
        (["--out", str(new), "--steps", "1", "--init-weights", str(run)],
         r"is an MMD run's checkpoint: --init-weights reads its policy, .*run/policy\.npz"),
        (["--out", str(run / "checkpoint.pt"), "--resume", "--steps", "2"],
         r"--out .*run/checkpoint\.pt' is a file, not a folder: give the run folder, .*run'"),
        (["--out", str(run / "checkpoint.pt"), "--export"],
         r"--out .*run/checkpoint\.pt' is a file, not a folder: give the run folder, .*run'"),
        (["--out", str(note), "--resume", "--steps", "2"], r"--out .*note\.txt' is a file, not a folder"),
    ]
    for argv, message in cases:
        before = sorted(tmp_path.rglob("*"))
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("error: ") and re.search(message, err), (argv, err)
        assert sorted(tmp_path.rglob("*")) == before, argv
    assert main(["--out", str(new), "--players", "3", "--steps", "1", "--deals", "4",
                 "--init-weights", str(run / "policy.npz")]) == 0  # the policy the message names starts a line


def test_mmd_names_what_it_plays_for_a_missing_path_or_a_file_that_is_no_npz(tmp_path):
    """Not the expert-iteration loader's words ('exit train', 'default'), which mmd does not take."""
    note = tmp_path / "note.txt"
    note.write_text("not weights\n")
    for path, message in ((tmp_path / "none", r"mmd: .*none' does not exist; give an MMD run directory \(the --out "
                                               r"of python -m twilight_env\.training\.mmd\) or its policy\.npz"),
                          (note, r"mmd: .*note\.txt' is not a \.npz file; give an MMD run directory .* or its policy\.npz")):
        with pytest.raises(ValueError, match=message) as e:
            make_agent(f"mmd:{path}")
        assert "exit train" not in str(e.value) and "'default'" not in str(e.value)


def test_the_report_refuses_a_bad_run_in_one_line_and_writes_nothing(tmp_path, capsys):
    """Each run is checked before ``--out`` is made: a missing run, a damaged or missing curve,
    two runs of one folder name (one ``curve_<run>.jsonl`` for both) and an ``--out`` that is
    a file each exit 2 with one line, no traceback."""
    import shutil

    from twilight_env.training.mmd.report import main

    run, other = tmp_path / "a" / "run", tmp_path / "b" / "run"
    for r in (run, other):
        train(r, small(), steps=1, log=lambda _: None)
    damaged, no_curve, note = tmp_path / "damaged", tmp_path / "no_curve", tmp_path / "note.txt"
    shutil.copytree(run, damaged)
    with open(damaged / CURVE_NAME, "a") as f:
        f.write('{"steps": 2, "nash\n')
    not_utf8 = tmp_path / "not_utf8"
    shutil.copytree(run, not_utf8)
    with open(not_utf8 / CURVE_NAME, "ab") as f:
        f.write(b'{"steps": 2, "load": \xff}\n')
    shutil.copytree(run, no_curve)
    (no_curve / CURVE_NAME).unlink()
    note.write_text("not a folder\n")
    out = tmp_path / "out"
    cases = [([str(tmp_path / "none"), "--out", str(out)], r"no MMD run in .*none': the folder does not exist"),
             ([str(damaged), "--out", str(out)], r"damaged/curve\.jsonl' line 3 is not a curve point \(JSON with "),
             ([str(not_utf8), "--out", str(out)], r"not_utf8/curve\.jsonl' line 3 is not a curve point \(JSON with "),
             ([str(no_curve), "--out", str(out)], r"no_curve' holds no curve\.jsonl"),
             ([str(run), str(other), "--out", str(out)], r"two runs are named 'run' .*curve_run\.jsonl"),
             ([str(run), "--out", str(note)], r"--out .*note\.txt' is a file, not a folder")]
    for argv, message in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("error: ") and re.search(message, err), (argv, err)
        assert not out.exists(), argv
    assert main([str(run), "--out", str(out)]) == 0 and (out / "curve_run.jsonl").is_file()


def test_resume_drops_a_last_curve_line_cut_short_and_names_a_damaged_one(tmp_path):
    """A stop while a curve line is written leaves it cut short, after the checkpoint: resume
    drops it. A damaged line before the end is refused naming the file and the line."""
    out = tmp_path / "r"
    train(out, small(eval_every=1), steps=2, log=lambda _: None)
    with open(out / CURVE_NAME, "a") as f:
        f.write('{"seconds": 3.1, "ste')
    train(out, resume=True, steps=3, log=lambda _: None)
    assert [p["steps"] for p in curve(out)] == [0, 1, 2, 3]
    lines = (out / CURVE_NAME).read_text().splitlines()
    (out / CURVE_NAME).write_text("\n".join([lines[0], '{"seconds": 1}', *lines[1:]]) + "\n")
    with pytest.raises(ValueError, match=r"curve\.jsonl' line 2 is not a curve point .*remove that line"):
        train(out, resume=True, steps=4, log=lambda _: None)
    (out / CURVE_NAME).write_bytes(b"\n".join([lines[0].encode(), b'{"steps": \xff1}', *map(str.encode, lines[1:])]))
    with pytest.raises(ValueError, match=r"curve\.jsonl' line 2 is not a curve point .*remove that line"):
        train(out, resume=True, steps=4, log=lambda _: None)  # a byte that is not UTF-8: the line is named too


def test_a_full_deck_command_refuses_a_reduced_deck_network_before_making_its_folder(tmp_path, capsys):
    """A network trained on the 1-trick deck (``--tricks 1``, the trainer's default) plays only
    that deck (R2.3): the arena, edge and ladder deal the full deck, so they refuse it (as the
    agent, a responder's target, or through ``policy``) in one line before any folder is made."""
    from twilight_env.cli import main

    run = tmp_path / "run"
    train(run, small(), steps=1, log=lambda _: None)
    out = tmp_path / "out"
    common = ["--deals", "2", "--out", str(out), "--workers", "1", "--quiet"]
    for argv in (["arena", f"mmd:{run}", "random", "--players", "3", *common],
                 ["arena", f"policy:{run}/policy.npz", "random", "--players", "3", *common],
                 ["edge", "--solo", f"respond:target=mmd:{run},exact_tricks=2", "--sun", "random", *common],
                 ["ladder", "random", f"mmd:{run},temperature=0", "--players", "3", *common]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err, (argv, err)
        assert re.search(r"trained on a reduced deck of 1 trick \(4 cards\).* the full deck \(7 tricks, 28 cards\)",
                         err), (argv, err)
        assert not out.exists(), argv


@pytest.mark.parametrize("template", ["guided:path={},iterations=4", "exit:path={}", "exit-search:path={},iterations=4"])
def test_every_agent_reading_a_reduced_deck_npz_says_its_deck(tmp_path, template):
    """guided, exit and exit-search read an MMD run's policy.npz too: they say its deck
    (``tricks``, R2.3), so the full-deck commands' check refuses it before any deal instead
    of playing a 1-trick network on full deals."""
    from twilight_env.agents.base import check_specs

    run = tmp_path / "run"
    train(run, small(), steps=1, log=lambda _: None)
    spec = template.format(run / "policy.npz")
    agent = make_agent(spec)
    assert agent.tricks == 1
    (run / "policy.npz").rename(run / "moved.npz")  # read once: a second ask does not open the file again
    assert agent.tricks == 1
    (run / "moved.npz").rename(run / "policy.npz")
    with pytest.raises(ValueError, match=r"trained on a reduced deck of 1 trick \(4 cards\)"):
        check_specs([spec], num_players=3)
    assert make_agent(template.format("default")).tricks == 7


@pytest.mark.parametrize("flag,value,allowed", [("--magnet-tau", "-1", r"a number in \[0\.0, 1\.0\]"),
                                                ("--alpha", "nan", r"a number in \[0\.0, 100\.0\]"),
                                                ("--lr", "inf", r"a number in \[1e-08, 1\.0\]"),
                                                ("--entropy", "x", r"a number in \[0\.0, 100\.0\]"),
                                                ("--players", "5", r"an integer in 3\.\.4"),
                                                ("--tricks", "0", r"an integer in 1\.\.7")])
def test_a_setting_out_of_range_is_named_by_its_flag(tmp_path, capsys, flag, value, allowed):
    from twilight_env.training.mmd.run import main

    with pytest.raises(SystemExit) as e:
        main(["--out", str(tmp_path / "r"), "--steps", "1", flag, value])
    err = capsys.readouterr().err
    assert e.value.code == 2 and re.search(rf"argument {flag}: must be {allowed}, got '{value}'", err), err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("flag,values,bad", [("--trunk", ["0"], "0"), ("--trunk", ["64", "4097"], "4097"),
                                              ("--head", ["64", "x"], "x"), ("--head", ["-3"], "-3")])
def test_a_layer_width_out_of_range_is_named_by_its_flag(tmp_path, capsys, flag, values, bad):
    from twilight_env.training.mmd.run import main

    with pytest.raises(SystemExit) as e:
        main(["--out", str(tmp_path / "r"), "--steps", "1", flag, *values])
    err = capsys.readouterr().err
    assert e.value.code == 2 and f"argument {flag}: must be an integer in 1..4096 (each layer width), got '{bad}'" in err, err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("kwargs,message", [
    (dict(cfg=None), r"a new line needs cfg, an MMDConfig \(or resume=True\), got None"),
    (dict(cfg={"players": 3}), r"a new line needs cfg, an MMDConfig \(or resume=True\), got a dict"),
    (dict(steps=0), r"steps must be an integer >= 1 \(updates in all\) or None, got 0"),
    (dict(steps=2.5), r"steps must be an integer >= 1 \(updates in all\) or None, got 2\.5"),
    (dict(minutes=-1), r"minutes must be a finite number > 0 or None, got -1"),
    (dict(minutes=float("nan")), r"minutes must be a finite number > 0 or None, got nan"),
])
def test_train_refuses_a_bad_argument_before_making_the_folder(tmp_path, kwargs, message):
    args = {"cfg": small(), "steps": 1, **kwargs}
    with pytest.raises(ValueError, match=message):
        train(tmp_path / "r", log=lambda _: None, **args)
    assert not (tmp_path / "r").exists()


def test_training_treats_subnormals_as_zero_while_it_runs_and_puts_the_setting_back(tmp_path, monkeypatch):
    """run.py's docstring: the updates run with subnormal floats as 0 (several times faster
    from the shipped weights); the caller's arithmetic is as before once train returns."""
    from twilight_env.training.mmd import run

    seen, step = [], run._step
    monkeypatch.setattr(run, "_step", lambda *a: (seen.append(run.flushes_subnormals()), step(*a))[1])
    assert not run.flushes_subnormals()
    train(tmp_path / "r", small(), steps=2, log=lambda _: None)
    assert seen == [True, True] and not run.flushes_subnormals()


def test_training_puts_back_a_flush_setting_the_caller_had_turned_on(tmp_path):
    """The setting is put back as the caller had it, not turned off: a caller computing with
    subnormals as 0 on purpose still does after train returns."""
    from twilight_env.training.mmd import run

    torch = pytest.importorskip("torch")
    torch.set_flush_denormal(True)
    try:
        train(tmp_path / "r", small(), steps=1, log=lambda _: None)
        assert run.flushes_subnormals()
    finally:
        torch.set_flush_denormal(False)
    assert not run.flushes_subnormals()
