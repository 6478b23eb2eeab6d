"""Expert-iteration data and training (training/exit.py): generate, train, resume, iterate."""

import json
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from twilight_env.agents.base import make_agent, play_deal  # noqa: E402
from twilight_env.agents.exit import load_exit_checkpoint, resolve_backend  # noqa: E402
from twilight_env.agents.nn.features import infoset_row  # noqa: E402
from twilight_env.training import exit as ex  # noqa: E402
from twilight_env.rules.engine import State  # noqa: E402
from twilight_env.rules.heldout import HELDOUT_SEEDS  # noqa: E402
from twilight_env.rules.infoset import InfoSet  # noqa: E402

SMALL = {"trunk": (32,), "head": (16,)}


def gen(out, players=3, deals=2, agent="ismcts:iterations=15", seed=3, **kw):
    settings = ex.GenerateSettings(players, deals, agent, seed, chunk_deals=kw.pop("chunk_deals", 1), **kw)
    return ex.generate(out, settings, progress=False)


def fit(data, run, resume=False, init=None, **kw):
    """``ex.train`` with small networks and no progress bar; ``kw`` are :class:`FitSettings` fields."""
    return ex.train(data, run, ex.FitSettings(**{**SMALL, **kw}), init=init, resume=resume, progress=False)


@pytest.fixture(scope="module")
def data3(tmp_path_factory):
    out = tmp_path_factory.mktemp("exit") / "d3"
    gen(out, 3, 3)
    return out


def load_chunks(folder):
    data, _ = ex.load_data([folder])
    return data


def test_records_hold_the_search_and_the_outcome(data3):
    d = load_chunks(data3)
    n = len(d["rows"])
    assert n > 30 and sorted(set(d["deal"])) == [0, 1, 2]
    assert np.allclose(d["visits"].sum(1), 1.0, atol=1e-5)
    assert np.all(d["visits"][~d["legal"]] == 0) and np.all(d["legal"].sum(1) >= 2)
    for deal in range(3):
        sel = d["deal"] == deal
        st = ex.deal_state(3, deal, 3)
        # the first recorded decision is the deal's first decision with a choice, from its deciding seat's view
        while len(st.legal_actions()) == 1:
            st.apply(st.legal_actions()[0])
        assert list(d["rows"][sel][0]) == infoset_row(InfoSet(st, st.deciding_seat))
        # R5: one outcome per side, opposite signs, in deal points / 360
        outs = {int(s): set(np.round(d["outcome"][sel & (d["side"] == s)] * 360).astype(int)) for s in (0, 1)}
        assert len(outs[0]) == 1 and len(outs[1]) == 1
        assert next(iter(outs[0])) == -next(iter(outs[1]))


def test_generate_refuses_heldout_seeds(tmp_path):
    for name, seed in HELDOUT_SEEDS.items():
        with pytest.raises(ValueError, match=name):
            gen(tmp_path / "h", seed=seed)
    assert not (tmp_path / "h").exists()
    assert ex.main(["generate", "--out", str(tmp_path / "h"), "--players", "3", "--deals", "1",
                    "--seed", str(HELDOUT_SEEDS["heldout-2"]), "--no-progress"]) == 2


def test_generate_refuses_agents_without_root_visits(tmp_path):
    with pytest.raises(ValueError, match="search agent"):
        gen(tmp_path / "x", agent="heuristic")


def test_rerun_skips_finished_chunks_and_replays_missing_or_damaged_ones(tmp_path):
    out = tmp_path / "d"
    r = gen(out, 4, 3)
    assert (r["chunks"], r["skipped"]) == (3, 0)
    files = sorted(out.glob("chunk_*.npz"))
    assert len(files) == 3
    stamps = {f: f.stat().st_mtime_ns for f in files}
    first = {f: np.load(f)["visits"] for f in files}
    r = gen(out, 4, 3)
    assert (r["chunks"], r["skipped"], r["decisions"]) == (0, 3, 0)
    assert {f: f.stat().st_mtime_ns for f in files} == stamps
    files[1].unlink()
    files[2].write_bytes(files[2].read_bytes()[:100])  # a damaged chunk counts as missing
    r = gen(out, 4, 4)  # and one more deal
    assert (r["chunks"], r["skipped"]) == (3, 1)
    assert files[0].stat().st_mtime_ns == stamps[files[0]]
    for f in files:  # the same deals and searches again
        assert np.array_equal(np.load(f)["visits"], first[f])
    assert len(list(out.glob("chunk_*.npz"))) == 4 and not list(out.glob("*.tmp*"))
    with pytest.raises(ValueError, match="other settings.*seed"):
        gen(out, 4, 4, seed=4)


def test_workers_write_the_same_chunks(tmp_path):
    gen(tmp_path / "one", 4, 2)
    gen(tmp_path / "two", 4, 2, workers=2)
    for k in range(2):
        a, b = np.load(ex.chunk_path(tmp_path / "one", k)), np.load(ex.chunk_path(tmp_path / "two", k))
        for key in ex.KEYS:
            assert np.array_equal(a[key], b[key])


def test_train_resume_and_load_as_agent(data3, tmp_path):
    run = tmp_path / "run"
    last = fit([data3], run, epochs=1, batch_size=16, holdout=0.34)
    assert last["epoch"] == 1 and set(last) >= {"train_policy_loss", "val_policy_loss", "val_value_loss"}
    ck = load_exit_checkpoint(run / "checkpoint.pt", 3)
    assert ck["epoch"] == 1 and "optimizer" in ck
    assert list(run.glob("events.out.tfevents.*"))
    with pytest.raises(ValueError, match="exists; continue it with --resume"):
        fit([data3], run, epochs=2)
    fit([data3], run, epochs=2, resume=True)
    resumed = load_exit_checkpoint(run / "checkpoint.pt")
    assert resumed["epoch"] == 2
    # one run of 2 epochs gives the same weights as 1 epoch + resume
    straight = tmp_path / "straight"
    fit([data3], straight, epochs=2, batch_size=16, holdout=0.34)
    other = load_exit_checkpoint(straight / "checkpoint.pt")
    for k, v in resumed["model"].items():
        assert torch.equal(v, other["model"][k]), k
    assert not torch.equal(resumed["model"]["trunk.0.weight"], ck["model"]["trunk.0.weight"])
    # the trained network plays by name, greedy and as a search prior
    for spec in (f"exit:{run}", f"exit-search:{run / 'checkpoint.pt'},iterations=10,backend=python"):
        st = State.random(np.random.default_rng(1), 0, 3)
        play_deal(st, [make_agent(spec)] * 4, np.random.default_rng(1))
        assert st.done
    # warm start from it; export an inference-only copy
    warm = tmp_path / "warm"
    fit([data3], warm, epochs=1, init=str(run / "checkpoint.pt"), lr=1e-12)
    w = load_exit_checkpoint(warm / "checkpoint.pt")
    assert torch.allclose(w["model"]["trunk.0.weight"], resumed["model"]["trunk.0.weight"], atol=1e-6)
    small = ex.export(run / "checkpoint.pt", tmp_path / "exit_3p.pt")
    assert "optimizer" not in small and make_agent(f"exit:{tmp_path / 'exit_3p.pt'}").path


def test_training_lowers_the_loss(data3, tmp_path):
    first = fit([data3], tmp_path / "a", epochs=1, holdout=0.0, batch_size=8)
    later = fit([data3], tmp_path / "a", epochs=15, holdout=0.0, resume=True)
    assert later["train_policy_loss"] < first["train_policy_loss"]
    assert later["train_value_loss"] < first["train_value_loss"]


def test_resume_of_a_corrupt_checkpoint_names_the_file(data3, tmp_path):
    run = tmp_path / "r"
    run.mkdir()
    (run / "checkpoint.pt").write_bytes(b"\x00" * 64)
    with pytest.raises(ValueError, match="checkpoint.pt.*corrupt"):
        fit([data3], run, epochs=2, resume=True)


def test_train_refuses_a_folder_without_data(tmp_path):
    with pytest.raises(ValueError, match="no meta.json"):
        fit([tmp_path], tmp_path / "r", epochs=1)


@pytest.mark.skipif(resolve_backend("auto") != "numba", reason="numba / twilight_env.agents.fast_ismcts not available")
def test_generate_with_the_compiled_search(tmp_path):
    r = gen(tmp_path / "nb", 3, 1, agent="ismcts:iterations=30,backend=numba")
    d = load_chunks(tmp_path / "nb")
    assert r["decisions"] == len(d["rows"]) > 10
    assert np.all(d["visits"][~d["legal"]] == 0) and np.allclose(d["visits"].sum(1), 1.0, atol=1e-5)


@pytest.mark.skipif(resolve_backend("auto") != "numba", reason="numba / twilight_env.agents.fast_ismcts not available")
def test_generate_with_the_network_guided_search(tmp_path):
    """``guided`` labels the data: the recorded visits are its own search's, the ones its move is chosen by."""
    r = gen(tmp_path / "g", 4, 1, agent="guided:default,iterations=24,batch=8")
    d = load_chunks(tmp_path / "g")
    assert r["decisions"] == len(d["rows"]) > 10
    assert np.all(d["visits"][~d["legal"]] == 0) and np.allclose(d["visits"].sum(1), 1.0, atol=1e-5)
    st = ex.deal_state(3, 0, 4)
    while len(st.legal_actions()) == 1:
        st.apply(st.legal_actions()[0])
    info = InfoSet(st, st.deciding_seat)
    agent = make_agent("guided:default,iterations=24,batch=8")
    rec = ex.search_visits(agent, info, info.legal_actions, np.random.default_rng(4))
    assert rec.dtype == np.int64 and rec.sum() == 24
    assert agent.act(info, info.legal_actions, np.random.default_rng(4)) == ex.most_visited(rec, info.legal_actions)


@pytest.mark.skipif(resolve_backend("auto") != "numba", reason="numba / twilight_env.agents.fast_ismcts not available")
def test_recorded_visits_are_those_of_the_agents_own_search_with_its_trees():
    """``trees=K`` (and the other search options) reach the recorded search: the visits are
    the K-tree ensemble's, the ones ``act`` picks its move by, not a single tree's."""
    from twilight_env.agents.fast_ismcts import search
    st = ex.deal_state(5, 0, 4)
    while len(st.legal_actions()) == 1:
        st.apply(st.legal_actions()[0])
    info = InfoSet(st, st.deciding_seat)
    agent = make_agent("ismcts:backend=numba,iterations=40,trees=4")
    rec = ex.search_visits(agent, info, info.legal_actions, np.random.default_rng(9))
    four = search(info, 40, agent.c, np.random.default_rng(9), trees=4)[0]
    one = search(info, 40, agent.c, np.random.default_rng(9), trees=1)[0]
    assert np.array_equal(rec, four) and rec.sum() == 40
    assert not np.array_equal(four, one)
    assert agent.act(info, info.legal_actions, np.random.default_rng(9)) == ex.most_visited(rec, info.legal_actions)


def test_iterate_uses_the_last_net_as_prior(tmp_path):
    out = tmp_path / "it"
    settings = ex.IterateSettings(4, 2, deals=1, search_iterations=8, backend="python",
                                  fit=ex.FitSettings(epochs=1, trunk=(16,), head=(8,), holdout=0.0))
    nets = ex.iterate(out, settings, progress=False)
    assert [n.name for n in nets] == ["net_1", "net_2"]
    meta1 = json.loads((out / "data_1" / "meta.json").read_text())
    meta2 = json.loads((out / "data_2" / "meta.json").read_text())
    assert meta1["agent"].startswith("ismcts:") and meta1["seed"] == 1
    assert meta2["agent"].startswith(f"exit-search:{out / 'net_1' / 'checkpoint.pt'},") and meta2["seed"] == 2
    ck = load_exit_checkpoint(out / "net_2" / "checkpoint.pt", 4)
    assert ck["config"]["init"] == str(out / "net_1" / "checkpoint.pt")
    assert ck["config"]["data"] == [str(out / "data_1"), str(out / "data_2")]
    stamp = os.stat(out / "net_2" / "checkpoint.pt").st_mtime_ns
    ex.iterate(out, settings, progress=False)
    assert os.stat(out / "net_2" / "checkpoint.pt").st_mtime_ns == stamp  # finished steps are not redone


def test_command_line_generate_train_export(tmp_path, capsys):
    d, run, dst = tmp_path / "d", tmp_path / "run", tmp_path / "exit_4p.pt"
    assert ex.main(["generate", "--out", str(d), "--players", "4", "--deals", "2", "--agent",
                    "ismcts:iterations=10", "--seed", "8", "--no-progress"]) == 0
    assert "1 chunks written, 0 already there" in capsys.readouterr().out  # one chunk of 10 deals
    assert ex.main(["train", "--data", str(d), "--run", str(run), "--epochs", "1", "--trunk", "16",
                    "--head", "8", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "epoch=1" in out and "tensorboard --logdir" in out
    assert ex.main(["export", str(run / "checkpoint.pt"), str(dst)]) == 0
    assert make_agent(f"exit:{dst}").path == str(dst)
    deep = tmp_path / "new" / "folder" / "exit_4p.pt"  # export makes the missing folders
    assert ex.main(["export", str(run / "checkpoint.pt"), str(deep)]) == 0 and deep.is_file()
    capsys.readouterr()
    # --resume keeps the run's data and settings: giving them is refused, not ignored
    assert ex.main(["train", "--data", str(d), "--run", str(run), "--epochs", "2", "--resume", "--lr", "0.5",
                    "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "do not give --data, --lr" in err
    assert ex.main(["train", "--run", str(run), "--epochs", "2", "--no-progress"]) == 2
    assert "needs --data" in capsys.readouterr().err
    assert ex.main(["train", "--run", str(run), "--epochs", "2", "--resume", "--no-progress"]) == 0
    assert "epoch=2" in capsys.readouterr().out
    (run / "checkpoint.pt").write_bytes(b"junk")
    assert ex.main(["train", "--run", str(run), "--epochs", "3", "--resume", "--no-progress"]) == 2
    assert f"{run / 'checkpoint.pt'}" in capsys.readouterr().err


def test_settings_name_the_bad_field():
    with pytest.raises(ValueError, match="num_players must be 3 or 4"):
        ex.GenerateSettings(5).validate()
    with pytest.raises(ValueError, match="chunk_deals must be an integer >= 1"):
        ex.GenerateSettings(3, chunk_deals=0).validate()
    with pytest.raises(ValueError, match=r"holdout must be in \[0, 1\)"):
        ex.FitSettings(holdout=1.0).validate()
    with pytest.raises(ValueError, match="epochs must be an integer >= 1"):
        ex.FitSettings(epochs=True).validate()


def test_resume_keeps_the_runs_own_fit_settings(data3, tmp_path):
    run = tmp_path / "keep"
    fit([data3], run, epochs=1, batch_size=16, lr=1e-3, holdout=0.34)
    fit([data3], run, epochs=2, resume=True, batch_size=4, lr=0.5, holdout=0.0)
    cfg = load_exit_checkpoint(run / "checkpoint.pt")["config"]
    assert {k: cfg[k] for k in ex.FIXED_ON_RESUME} == {"holdout": 0.34, "seed": 1, "batch_size": 16, "lr": 1e-3,
                                                       "weight_decay": 1e-4, "value_weight": 1.0}


def test_a_cards_network_trains_resumes_as_unstopped_and_plays(data3, tmp_path):
    """``encoder="cards"``: 1 epoch + resume equals 2 epochs straight; the run plays as ``exit:RUN``."""
    cards = {"encoder": "cards", "card_width": 8, "batch_size": 16, "holdout": 0.34}
    run, straight = tmp_path / "run", tmp_path / "straight"
    fit([data3], run, epochs=1, **cards)
    fit([data3], run, epochs=2, resume=True)
    fit([data3], straight, epochs=2, **cards)
    a, b = load_exit_checkpoint(run / "checkpoint.pt"), load_exit_checkpoint(straight / "checkpoint.pt")
    assert a["net"]["encoder"] == "cards" and a["net"]["card_width"] == 8 and a["epoch"] == 2
    assert set(a["model"]) == set(b["model"]) and any(k.startswith("encoder.") for k in a["model"])
    for k, v in a["model"].items():
        assert torch.equal(v, b["model"][k]), k
    st = State.random(np.random.default_rng(5), 0, 3)
    play_deal(st, [make_agent(f"exit:{run}")] * 4, np.random.default_rng(5))
    assert st.done
    with pytest.raises(ValueError, match="encoder must be one of"):
        ex.FitSettings(encoder="tokens").validate()


def test_command_line_encoder_and_init_shape_refusal(data3, tmp_path, capsys):
    run = tmp_path / "c"
    assert ex.main(["train", "--data", str(data3), "--run", str(run), "--epochs", "1", "--trunk", "16", "--head", "8",
                    "--encoder", "cards", "--card-width", "4", "--no-progress"]) == 0
    assert load_exit_checkpoint(run / "checkpoint.pt")["net"]["card_width"] == 4
    capsys.readouterr()
    assert ex.main(["train", "--data", str(data3), "--run", str(tmp_path / "w"), "--init", str(run),
                    "--encoder", "mlp", "--no-progress"]) == 2
    assert "--init starts from that checkpoint's network" in capsys.readouterr().err
    assert ex.main(["train", "--data", str(data3), "--run", str(tmp_path / "r"), "--epochs", "2", "--resume",
                    "--encoder", "mlp", "--no-progress"]) == 2
    assert "do not give --data, --encoder" in capsys.readouterr().err


cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a usable CUDA device")


def test_device_cuda_without_a_gpu_is_a_clear_error(data3, tmp_path, capsys):
    with pytest.raises(ValueError, match="device must be 'cpu' or 'cuda'"):
        ex.FitSettings(device="gpu").validate()
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is usable here")
    with pytest.raises(ValueError, match="--device cuda asked.*no usable CUDA.*--device cpu"):
        fit([data3], tmp_path / "g", epochs=1, device="cuda")
    assert not (tmp_path / "g" / "checkpoint.pt").exists()
    assert ex.main(["train", "--data", str(data3), "--run", str(tmp_path / "g"), "--device", "cuda",
                    "--no-progress"]) == 2
    assert "no usable CUDA device" in capsys.readouterr().err


def test_resume_may_change_device_and_equals_the_unstopped_run_on_the_cpu(data3, tmp_path, capsys):
    """``--device`` is not fixed on resume (the run's checkpoint holds CPU tensors)."""
    run, straight = tmp_path / "run", tmp_path / "straight"
    fit([data3], run, epochs=1, batch_size=16, holdout=0.34, device="cpu")
    assert ex.main(["train", "--run", str(run), "--resume", "--epochs", "2", "--device", "cpu",
                    "--no-progress"]) == 0
    fit([data3], straight, epochs=2, batch_size=16, holdout=0.34)
    a, b = load_exit_checkpoint(run / "checkpoint.pt"), load_exit_checkpoint(straight / "checkpoint.pt")
    for k, v in a["model"].items():
        assert torch.equal(v, b["model"][k]), k


@cuda
def test_training_on_cuda_matches_the_cpu_and_resumes_on_the_cpu(data3, tmp_path):
    """A CUDA run's losses and weights agree with the CPU run's within float tolerance; its
    checkpoint (weights and Adam state) holds CPU tensors, so it resumes, and plays, on the CPU."""
    on_gpu, on_cpu = tmp_path / "gpu", tmp_path / "cpu"
    g = fit([data3], on_gpu, epochs=2, batch_size=16, holdout=0.34, device="cuda")
    c = fit([data3], on_cpu, epochs=2, batch_size=16, holdout=0.34, device="cpu")
    for k in ("train_policy_loss", "train_value_loss", "val_policy_loss", "val_value_loss"):
        assert g[k] == pytest.approx(c[k], rel=1e-3, abs=1e-4), k
    ck = load_exit_checkpoint(on_gpu / "checkpoint.pt")
    tensors = list(ck["model"].values()) + [t for st in ck["optimizer"]["state"].values() for t in st.values()
                                             if hasattr(t, "device")]
    assert tensors and all(t.device.type == "cpu" for t in tensors)
    ref = load_exit_checkpoint(on_cpu / "checkpoint.pt")
    for k, v in ck["model"].items():
        assert torch.allclose(v, ref["model"][k], atol=1e-3), k
    fit([data3], on_gpu, epochs=3, resume=True, device="cpu")
    assert load_exit_checkpoint(on_gpu / "checkpoint.pt")["epoch"] == 3
    st = State.random(np.random.default_rng(2), 0, 3)
    play_deal(st, [make_agent(f"exit:{on_gpu}")] * 4, np.random.default_rng(2))
    assert st.done


def test_agreement_is_the_validation_accuracy_and_cross_entropy_of_any_network(data3, tmp_path, capsys):
    """``agree`` gives, for any network, the figures ``train`` reports for the one it
    trained (validation accuracy and policy loss on the same split), and for the shipped
    network the same figures as a per-decision loop over ``forward_one``."""
    from twilight_env.agents.policy import load_network

    r = fit([data3], tmp_path / "run", epochs=1, holdout=0.34)
    got = ex.agreement([data3], [str(tmp_path / "run" / "checkpoint.pt"), "default"], holdout=0.34,
                       temperatures=(0.5, 1.0), epsilon=0.1)
    mine = got["nets"][str(tmp_path / "run" / "checkpoint.pt")]
    assert mine["agreement"] == pytest.approx(r["val_policy_accuracy"], abs=1e-6)
    assert mine["cross_entropy"] == pytest.approx(r["val_policy_loss"], rel=1e-4)
    d = load_chunks(data3)
    _, val = ex.split_holdout(d, 0.34, 1)
    net, _ = load_network("default", 3)
    hits, ce, ll = 0, 0.0, 0.0
    for i in val:
        probs, _ = net.forward_one([int(x) for x in d["rows"][i]], int(d["roles"][i]), d["legal"][i])
        move = np.argmax(d["visits"][i])
        hits += int(np.argmax(np.where(d["legal"][i], probs, -1.0)) == move)
        ce -= float(np.sum(d["visits"][i] * np.log(np.maximum(probs, 1e-12))))
        sharp = np.where(d["legal"][i], probs.astype(np.float64), 0.0) ** 2  # T = 0.5: p^2, normalised
        ll += np.log(0.9 * sharp[move] / sharp.sum() + 0.1 / d["legal"][i].sum())
    assert got["decisions"] == len(val) > 0
    assert got["nets"]["default"]["agreement"] == pytest.approx(hits / len(val))
    assert got["nets"]["default"]["cross_entropy"] == pytest.approx(ce / len(val), rel=1e-4)
    assert got["nets"]["default"]["log_likelihood"][0.5] == pytest.approx(ll / len(val), rel=1e-6)
    assert got["nets"]["default"]["log_likelihood"][1.0] != got["nets"]["default"]["log_likelihood"][0.5]
    assert ex.main(["agree", "--data", str(data3), "--net", "default", "--holdout", "0.34"]) == 0
    assert f"{len(val)} validation decisions" in capsys.readouterr().out
    with pytest.raises(ValueError, match=r"holdout must be in \(0, 1\)"):
        ex.agreement([data3], ["default"], holdout=0)
    for bad in (0, -1):
        with pytest.raises(ValueError, match=r"a temperature must be in \(0, 100\]"):
            ex.agreement([data3], ["default"], temperatures=(bad,))
    with pytest.raises(ValueError, match=r"epsilon \(the uniform share\) must be in \[0, 1\]"):
        ex.agreement([data3], ["default"], epsilon=1.5)
    from twilight_env.agents.policy import default_weights

    with pytest.raises(ValueError, match="agree --net 'policy:default': .*without the policy: prefix"):
        ex.agreement([data3], ["policy:default"])
    with pytest.raises(ValueError, match="are for 4 players, but a 3-player network is needed"):
        ex.agreement([data3], [str(default_weights(4))])


def test_a_generating_process_runs_one_blas_thread(tmp_path):
    """generate's worker set-up limits BLAS to one thread (the one-process path sets up this
    process): two generators (or pool workers) side by side on a multi-threaded BLAS
    oversubscribe the cores."""
    from threadpoolctl import threadpool_info, threadpool_limits

    from twilight_env.training.exit_data import GenerateSettings, generate

    with threadpool_limits(2):  # as a fresh process on a 2-core machine starts; the block puts the limits back
        generate(tmp_path / "d", GenerateSettings(3, deals=1, agent="ismcts:iterations=20", seed=5), progress=False)
        numpy_blas = [i for i in threadpool_info() if i["user_api"] == "blas" and "numpy" in i["filepath"]]
        assert numpy_blas and all(i["num_threads"] == 1 for i in numpy_blas)  # the search's products are NumPy's
