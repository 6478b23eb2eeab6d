"""A run that resumes plays the networks it started with: ``arena`` and ``edge`` checkpoints
keep a digest of the shipped weights their agents may read, and ``--resume`` refuses a
folder whose shipped weights changed since (a new release's ``policy:default``)."""

import json
import shutil

import pytest

import twilight_env.experiments.arena as arena
from twilight_env.agents import policy
from twilight_env.agents.base import reads_shipped_weights
from twilight_env.cli import main
from twilight_env.experiments.common import shipped_weights_digest
from twilight_env.experiments.edge import solo_edge


@pytest.mark.parametrize("spec,reads", [
    ("policy", True), ("policy:default", True), ("guided:default,iterations=20", True), ("neural:default", True),
    ("exit-search:default,iterations=10", True), ("ismcts:inference=model", True), ("respond:target=policy", True),
    ("policy:runs/net.npz", False), ("guided:path=runs/x.npz", False), ("heuristic", False),
    ("ismcts:backend=numba,iterations=6000", False), ("random", False)])
def test_which_specs_read_shipped_weights(spec, reads):
    assert reads_shipped_weights(spec) is reads


def test_the_digest_names_every_shipped_file_only_when_a_spec_reads_one():
    assert shipped_weights_digest(["heuristic", "random"]) == {}
    d = shipped_weights_digest(["heuristic", "policy"])
    assert "policy_3p.npz" in d and "neural_4p.npz" in d and all(len(v) == 64 for v in d.values())


def _new_release(tmp_path, monkeypatch):
    """Shipped weights as a later release would have them: policy_3p.npz changed."""
    new = tmp_path / "weights"
    shutil.copytree(policy.WEIGHTS_DIR, new)
    (new / "policy_3p.npz").write_bytes((new / "policy_3p.npz").read_bytes() + b"\0")
    monkeypatch.setattr(policy, "WEIGHTS_DIR", new)


def _interrupt_on_call(monkeypatch, module, name, k):
    """Make ``module.name`` (a deal worker) raise KeyboardInterrupt on its call number ``k``."""
    real = getattr(module, name)
    calls = []

    def worker(task):
        calls.append(1)
        if len(calls) == k:
            raise KeyboardInterrupt
        return real(task)

    monkeypatch.setattr(module, name, worker)


def _interrupted_arena(folder, monkeypatch, specs):
    with monkeypatch.context() as m:
        _interrupt_on_call(m, arena, "_play_pair", 3)
        assert main(["arena", *specs, "--players", "3", "--deals", "4", "--seed", "1", "--workers", "1", "--quiet",
                     "--no-lockstep", "--out", str(folder)]) == 130


def test_arena_resume_refuses_changed_shipped_weights(tmp_path, monkeypatch, capsys):
    run = tmp_path / "run"
    _interrupted_arena(run, monkeypatch, ["policy", "heuristic"])
    saved = json.loads((run / arena.ArenaCheckpoint.NAME).read_text())["weights"]
    assert saved == shipped_weights_digest(["policy"])
    capsys.readouterr()
    with monkeypatch.context() as m:
        _new_release(tmp_path, m)
        assert main(["arena", "--resume", str(run), "--workers", "1", "--quiet"]) == 2
        err = capsys.readouterr().err
        assert "policy_3p.npz changed since the run started" in err and "Traceback" not in err
    assert (run / arena.ArenaCheckpoint.NAME).exists()  # nothing lost
    assert main(["arena", "--resume", str(run), "--workers", "1", "--quiet"]) == 0  # same weights: it finishes
    assert (run / "arena.json").exists()


def test_arena_of_agents_without_shipped_weights_resumes_after_a_release(tmp_path, monkeypatch):
    run = tmp_path / "run"
    _interrupted_arena(run, monkeypatch, ["random", "heuristic"])
    assert json.loads((run / arena.ArenaCheckpoint.NAME).read_text())["weights"] == {}
    _new_release(tmp_path, monkeypatch)
    assert main(["arena", "--resume", str(run), "--workers", "1", "--quiet"]) == 0


def test_edge_resume_refuses_changed_shipped_weights(tmp_path, monkeypatch):
    run = tmp_path / "edge"
    specs = ["random", "guided:default,iterations=8,batch=4"]
    with monkeypatch.context() as m, pytest.raises(KeyboardInterrupt):
        _interrupt_on_call(m, solo_edge, "_play_edge_deal", 5)
        solo_edge.run_study(specs, deals=4, seed=3, out=str(run), boot=20, matches=50, workers=1, progress=False,
                            verbose=False)
    assert solo_edge.Checkpoint.load(str(run)).weights == shipped_weights_digest(specs)
    with monkeypatch.context() as m:
        _new_release(tmp_path, m)
        with pytest.raises(ValueError, match="policy_3p.npz changed since the run started"):
            solo_edge.run_study(resume=str(run), workers=1, progress=False, verbose=False)
    solo_edge.run_study(resume=str(run), workers=1, progress=False, verbose=False)
    assert (run / "edge.json").exists()


def test_growing_a_finished_edge_run_refuses_changed_shipped_weights(tmp_path, monkeypatch, capsys):
    """``edge --resume FOLDER --deals N`` grows a finished run from its ``edge.json``, which
    keeps the digest too."""
    run = tmp_path / "edge"
    specs = ["random", "guided:default,iterations=8,batch=4"]
    solo_edge.run_study(specs, deals=3, seed=3, out=str(run), boot=20, matches=50, workers=1, progress=False,
                        verbose=False)
    assert json.loads((run / "edge.json").read_text())["weights"] == shipped_weights_digest(specs)
    grow = ["edge", "--resume", str(run), "--deals", "4", "--quiet", "--workers", "1"]
    capsys.readouterr()
    with monkeypatch.context() as m:
        _new_release(tmp_path, m)
        assert main(grow) == 2
        assert "policy_3p.npz changed since the run started" in capsys.readouterr().err
    assert json.loads((run / "edge.json").read_text())["deals"] == 3  # nothing lost
    assert main(grow) == 0
    assert json.loads((run / "edge.json").read_text())["deals"] == 4


@pytest.mark.parametrize("specs,grows", [(["random", "policy"], False), (["random", "heuristic"], True)])
def test_a_run_saved_without_a_digest_grows_only_without_shipped_weights(tmp_path, capsys, specs, grows):
    """A finished run saved before runs kept the digest (no ``weights`` in ``edge.json``):
    if its agents read shipped weights, nothing shows which release played it, so growing
    it is refused; agents that read none grow it as before."""
    run = tmp_path / "edge"
    solo_edge.run_study(specs, deals=3, seed=3, out=str(run), boot=20, matches=50, workers=1, progress=False,
                        verbose=False)
    doc = json.loads((run / "edge.json").read_text())
    del doc["weights"]
    (run / "edge.json").write_text(json.dumps(doc))
    capsys.readouterr()
    rc = main(["edge", "--resume", str(run), "--deals", "4", "--quiet", "--workers", "1"])
    err = capsys.readouterr().err
    if grows:
        assert rc == 0 and json.loads((run / "edge.json").read_text())["deals"] == 4
    else:
        assert rc == 2 and "keeps no digest of the shipped weights" in err and "its agent policy reads them" in err
        assert err.count("policy") == 1, err  # the spec plays the solo and the Sun seats: named once
        assert json.loads((run / "edge.json").read_text())["deals"] == 3  # nothing lost


def _saved_before_the_files_left():
    """The digest a run saved while ``neural_{3,4}p.pt`` and ``exit_{3,4}p.pt`` were shipped:
    today's files plus those four as they were when they left (results/README.md)."""
    from twilight_env.experiments.common import RETIRED_WEIGHTS

    saved = shipped_weights_digest(["policy"])
    saved.update({name: sha for name, (sha, _, _) in RETIRED_WEIGHTS.items()})
    return saved


@pytest.mark.parametrize("specs", [["guided:default,iterations=20"], ["policy"], ["neural:default", "heuristic"],
                                   ["pimc:inference=model", "policy:default"]])
def test_a_run_saved_before_weights_left_resumes_when_it_did_not_read_them(specs):
    """``neural_{3,4}p.pt`` left for the same weights in ``.npz``, and ``exit_{3,4}p.pt`` left
    (``exit:default`` reads ``policy:default``'s network since): a run of other agents that was
    saved while they were shipped resumes (e.g. the ``guided:default`` edge study)."""
    from twilight_env.experiments.common import check_shipped_weights

    saved = _saved_before_the_files_left()
    assert check_shipped_weights(saved, specs, "the checkpoint") == saved


@pytest.mark.parametrize("specs", [["exit:default"], ["exit-search:default,iterations=10", "policy"],
                                   ["respond:target=policy", "policy"]])
def test_a_run_that_read_the_retired_exit_networks_is_refused(specs):
    from twilight_env.experiments.common import check_shipped_weights

    with pytest.raises(ValueError, match=r"the shipped weights exit_3p\.pt, exit_4p\.pt changed since the run started"):
        check_shipped_weights(_saved_before_the_files_left(), specs, "the checkpoint")


def test_a_retired_file_of_another_content_or_a_changed_successor_is_refused():
    from twilight_env.experiments.common import check_shipped_weights

    saved = _saved_before_the_files_left()
    with pytest.raises(ValueError, match=r"exit_3p\.pt changed"):
        check_shipped_weights({**saved, "exit_3p.pt": "0" * 64}, ["policy"], "the checkpoint")
    with pytest.raises(ValueError, match=r"neural_4p\.npz, neural_4p\.pt changed"):
        check_shipped_weights({**saved, "neural_4p.npz": "0" * 64}, ["neural"], "the checkpoint")


def test_the_agents_that_read_the_weights_are_named_once_each():
    from twilight_env.experiments.checkpoint_checks import check_shipped_weights

    with pytest.raises(ValueError, match=r"but its agents policy, neural:default read them, so ") as e:
        check_shipped_weights(None, ["policy", "heuristic", "policy", "neural:default", "policy"], "edge.json")
    assert str(e.value).count("policy") == 1
    with pytest.raises(ValueError, match=r"but its agent policy reads them, so "):
        check_shipped_weights(None, ["policy", "policy"], "edge.json")


def test_weights_files_named_by_path_are_kept_and_checked(tmp_path):
    """A run's digest holds the weights files its agents name by path (``policy:FILE``; a run
    folder's ``policy.npz`` for ``mmd:RUN``, through a responder's target too), so a resume
    after the file changed (a training line exported again) is refused, naming it."""
    from twilight_env.experiments.checkpoint_checks import check_shipped_weights, named_weight_files

    run = tmp_path / "line"
    run.mkdir()
    (run / "policy.npz").write_bytes(b"first export")
    net = tmp_path / "net.npz"
    net.write_bytes(b"a network")
    target = f"respond:target=mmd:{run},exact_tricks=2"
    assert named_weight_files(target) == [str(run / "policy.npz")]
    assert named_weight_files(f"policy:{net}") == [str(net)] and named_weight_files("policy:default") == []
    specs = [f"mmd:{run}", target, f"policy:{net}"]
    saved = shipped_weights_digest(specs)
    assert {k for k in saved if k.startswith("file:")} == {f"file:{run / 'policy.npz'}", f"file:{net}"}
    assert check_shipped_weights(saved, specs, "progress file") == saved
    (run / "policy.npz").write_bytes(b"second export")
    with pytest.raises(ValueError, match=r"policy\.npz changed since the run started.*export them again"):
        check_shipped_weights(saved, specs, "progress file")
    old = {k: v for k, v in saved.items() if not k.startswith("file:")}  # a run saved before files were kept
    assert check_shipped_weights(old, specs, "progress file") == old
    # any option declared to hold a path counts (a search's inference checkpoint), not the words
    assert named_weight_files(f"ismcts:inference={net}") == [str(net)]
    assert named_weight_files("ismcts:inference=model") == named_weight_files("ismcts:rollout=heuristic") == []
    assert named_weight_files(f"respond:target=policy:default,model=policy:{net}") == [str(net)]
