"""``twilight edge``: rotation of the solo hand (R7.4), seating (R7.1-R7.3), outputs,
reproducibility, and the notebook that presents the result."""

import json
import os

import numpy as np
import pytest

import twilight_env.experiments.edge.solo_edge as edge
from twilight_env.experiments.common import play_seeded
from twilight_env.records.dealsets import generate_deals
from twilight_env.cli import main
from twilight_env.rules.engine import hands_to_codes


def _run(tmp_path, *extra, name="out"):
    """Run ``twilight edge`` in-process with small simulation sizes; returns (folder, JSON)."""
    out = tmp_path / name
    workers = [] if "--workers" in extra else ["--workers", "1"]
    assert main(["edge", *extra, *workers, "--boot", "20", "--matches", "50", "--out", str(out), "--quiet"]) == 0
    return out, json.loads((out / "edge.json").read_text())


def test_r7_4_rotation_gives_each_hand_the_solo_chair_once():
    deal = generate_deals(1, seed=3)[0]
    plays = [edge.rotated_deal(deal, r) for r in range(3)]
    assert all(p[2] == deal[2] for p in plays)  # new-moon hand fixed
    assert sorted(tuple(p[0]) for p in plays) == sorted(tuple(deal[s]) for s in (0, 1, 3))
    for seat in (1, 3):
        assert sorted(tuple(p[seat]) for p in plays) == sorted(tuple(deal[s]) for s in (0, 1, 3))
    # R7.4 order: after p0 (hand 0) the solo passes to the player on the solo's right (hand of seat 3)
    assert [p[0] for p in plays] == [deal[0], deal[3], deal[1]]
    assert plays[1][1] == deal[0] and plays[1][3] == deal[1]


def test_plays_use_rotated_deals_and_mixed_seating(monkeypatch):
    calls = []

    def spy(state, specs, seed, deal_index, play):
        calls.append((hands_to_codes(state.initial_hands), list(specs), state.num_players, state.leader))
        return play_seeded(state, specs, seed, deal_index, play)

    monkeypatch.setattr(edge, "play_seeded", spy)
    deal = generate_deals(1, seed=1)[0]
    _, moon, sun = edge._play_edge_deal((0, deal, "random", "random:", 5, 0))
    assert len(calls) == 3 and len(moon) == len(sun) == 3
    for r, (hands, specs, n, leader) in enumerate(calls):
        assert hands == edge.rotated_deal(deal, r)
        assert specs == ["random", "random:", "random", "random:"]  # solo (and new moon) / Sun seats
        assert n == 3 and leader == 0  # R7.2: the solo leads


def test_edge_cli_writes_files_with_sane_contents(tmp_path, capsys):
    out, doc = _run(tmp_path, "random", "--deals", "4", "--seed", "2")
    text = capsys.readouterr().out
    assert "Moon − Sun" in text and str(out / "edge.md") in text and "95% CI" in text
    assert doc["deals"] == 4 and doc["seed"] == 2 and doc["configs"] == [{"solo": "random", "sun": "random"}]
    (r,) = doc["results"]
    moon, sun = np.array(r["moon_points"]), np.array(r["sun_points"])
    assert moon.shape == sun.shape == (4, 3)
    assert ((0 <= moon) & (moon <= 360) & (0 <= sun) & (sun <= 360)).all()  # R5.3
    f = r["figures"]
    assert f["diff"]["mean"] == pytest.approx((moon - sun).mean())
    assert f["diff"]["ci_low"] <= f["diff"]["mean"] <= f["diff"]["ci_high"]
    assert f["p_moon_outscores"]["plays"] == 12
    fx = f["matches"]["fixed_solo"]
    assert 0 <= fx["ci_low"] <= fx["ci_high"] <= 1 and 0 <= fx["p_solo_wins"] <= 1
    assert sum(f["matches"]["rotating"]["p_win"]) == pytest.approx(1.0)
    md = (out / "edge.md").read_text()
    assert "| random | 4 |" in md and r["answer"] in md
    assert (out / "edge.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_edge_reproducible_by_seed_and_worker_count(tmp_path):
    def figures(doc):
        return [{k: v for k, v in r.items() if not k.startswith("play_seconds")} for r in doc["results"]]

    # same seed, another run and another worker count: identical figures
    _, a = _run(tmp_path, "random", "--deals", "4", "--seed", "6", name="a")
    _, c = _run(tmp_path, "random", "--deals", "4", "--seed", "6", "--workers", "2", name="c")
    assert figures(a) == figures(c)
    _, d = _run(tmp_path, "random", "--deals", "4", "--seed", "7", name="d")
    assert figures(d) != figures(a)


def test_edge_mixed_strengths_and_deals_file(tmp_path):
    saved = tmp_path / "d.json"
    _, a = _run(tmp_path, "--solo", "random", "--sun", "random:", "--deals", "3", "--save-deals", str(saved),
                name="a")
    assert a["configs"] == [{"solo": "random", "sun": "random:"}]
    assert a["results"][0]["label"] == "random / random:"
    _, b = _run(tmp_path, "--solo", "random", "--sun", "random:", "--deals-file", str(saved), name="b")
    assert b["results"][0]["moon_points"] == a["results"][0]["moon_points"]
    assert "the agents keep their roles: random plays every player's solo deals" in (tmp_path / "a" / "edge.md").read_text()


def test_edge_deals_file_without_seed_uses_the_files_seed(tmp_path):
    saved = tmp_path / "d.json"
    _, a = _run(tmp_path, "random", "--deals", "3", "--seed", "5", "--save-deals", str(saved), name="a")
    _, b = _run(tmp_path, "random", "--deals-file", str(saved), name="b")
    assert b["seed"] == 5 and b["results"][0]["moon_points"] == a["results"][0]["moon_points"]
    assert "bootstrap match interval is not reliable" in a["results"][0]["answer"]  # N = 3 < 30
    _, c = _run(tmp_path, "random", "--deals-file", str(saved), "--seed", "6", name="c")
    assert c["seed"] == 6 and c["results"][0]["moon_points"] != a["results"][0]["moon_points"]


def test_edge_bad_input_exit_2(tmp_path, capsys):
    assert main(["edge", "bogus", "--deals", "3", "--workers", "1", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "valid agents: " in err and "random" in err and "Traceback" not in err
    assert main(["edge", "random", "--deals", "1", "--workers", "1", "--out", str(tmp_path / "o")]) == 2
    assert "at least 2" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:  # argparse: the flag named, the subcommand's usage
        main(["edge", "random", "--deals", "3", "--workers", "0", "--out", str(tmp_path / "o")])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "argument --workers: must be a positive integer" in err and "usage: twilight edge" in err


def test_configurations():
    assert edge.configurations([], None, None) == [(edge.DEFAULT_SPEC, edge.DEFAULT_SPEC)]
    assert edge.configurations(["a", "b"], None, None) == [("a", "a"), ("b", "b")]
    assert edge.configurations([], "pimc", "heuristic") == [("pimc", "heuristic")]
    assert edge.configurations(["x"], "pimc", None) == [("x", "x"), ("pimc", "x")]


def test_notebook_executes_on_an_edge_output(tmp_path, monkeypatch):
    """The notebook runs top to bottom on a tiny edge output (as `pytest --nbmake` would)."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    out, _ = _run(tmp_path, "random", "--deals", "3", name="edge")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.path.join(root, "notebooks", "solo_edge.ipynb")
    nb = nbformat.read(path, as_version=4)
    monkeypatch.setenv("TWILIGHT_EDGE_DIR", str(out))
    ind_out = _individual_run(tmp_path)
    monkeypatch.setenv("TWILIGHT_EDGE_INDIVIDUAL_DIRS", str(ind_out))
    # no TWILIGHT_EDGE_LADDER_DIR: the notebook shows the committed study in results/edge_vs_strength,
    # whose table has agents off the ladder (--off-ladder)
    monkeypatch.delenv("TWILIGHT_EDGE_LADDER_DIR", raising=False)
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": os.path.dirname(path)}}).execute()
    printed = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert str(out) in printed and "N = 3 deals" in printed
    shown = "".join(o.get("data", {}).get("text/markdown", "") for c in nb.cells if c.cell_type == "code"
                    for o in c.outputs)
    assert "P(solo wins), fixed_solo, goals_333" in shown  # the run's goals_333 figure
    assert "| exit:default | 6000 |" in shown  # the off-the-ladder table of results/edge_vs_strength
    assert "Top two rungs" in shown
    assert "solo − Sun player" in shown and "individual scoring (R8), 3 deals" in printed


def _individual_run(tmp_path):
    from twilight_env.experiments.edge.individual_edge import run_study

    return run_study(["random"], deals=3, seed=2, out=str(tmp_path / "ind"), workers=1, boot=5, matches=5,
                     progress=False, verbose=False)


def test_configuration_results_do_not_depend_on_the_other_configurations():
    """A configuration's agents and bootstrap use streams keyed by its specs, not its list position."""
    deals = generate_deals(3, seed=8)
    alone = edge.study([("random", "random")], deals, seed=4, workers=1, boot=20, matches=20, progress=False)
    listed = edge.study([("random:", "random:"), ("random", "random")], deals, seed=4, workers=1, boot=20,
                        matches=20, progress=False)
    assert alone[0]["moon_points"] == listed[1]["moon_points"]
    assert alone[0]["figures"]["matches"] == listed[1]["figures"]["matches"]
    assert edge.config_key("random", "heuristic") != edge.config_key("heuristic", "random")


def test_verdict_warns_only_below_the_bootstrap_minimum():
    from twilight_env.experiments.edge.solo_edge import MIN_BOOTSTRAP_DEALS, verdict

    fig = {"diff": {"mean": 1.0, "ci_low": 0.5, "ci_high": 1.5},
           "matches": {"target": 1000, "fixed_solo": {"p_solo_wins": 0.6, "ci_low": 0.5, "ci_high": 0.7}}}
    assert "not reliable" in verdict(fig, "x", MIN_BOOTSTRAP_DEALS - 1)
    assert "not reliable" not in verdict(fig, "x", MIN_BOOTSTRAP_DEALS)


def test_edge_figure_has_a_title_and_integer_deal_counts(tmp_path):
    """At small N a histogram's automatic ticks are fractional (0.25 deals); the figure
    says which agents, seed and N it shows."""
    import matplotlib.pyplot as plt

    out = edge.run_study(["random", "heuristic"], deals=3, seed=6, out=str(tmp_path / "e"), workers=1,
                         boot=5, matches=5, progress=False, verbose=False)
    results = edge.load_result(out)["results"]
    fig = edge.edge_figure(results, seed=6)
    try:
        title = fig._suptitle.get_text()
        assert "random; heuristic" in title and "seed 6" in title and "N = 3 deals" in title
        hist = fig.axes[0]
        ticks = [t for t in hist.get_yticks() if hist.get_ylim()[0] <= t <= hist.get_ylim()[1]]
        assert len(ticks) >= 2 and all(float(t).is_integer() for t in ticks), ticks
    finally:
        plt.close(fig)
    assert os.path.getsize(os.path.join(out, "edge.png")) > 0


def _execute(name, env, monkeypatch, tmp_path):
    """Run a notebook with ``env`` set; its temporary folders go under ``tmp_path/tmp``
    (``TMPDIR``), which must be empty again when it ends: a notebook cleans up after itself."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.path.join(root, "notebooks", name)
    nb = nbformat.read(path, as_version=4)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": os.path.dirname(path)}}).execute()
    assert not [p.name for p in scratch.iterdir() if p.name.startswith("twilight_")], "temporary folders left"
    return "".join(o.get("text", "") + o.get("data", {}).get("text/markdown", "")
                   for c in nb.cells if c.cell_type == "code" for o in c.outputs)


def test_the_training_notebook_trains_plots_and_plays(tmp_path, monkeypatch):
    """notebooks/train_agent.ipynb on a tiny run: a run directory, its curve read back, an arena."""
    pytest.importorskip("torch")
    pytest.importorskip("tensorboard")
    shown = _execute("train_agent.ipynb", {"TWILIGHT_TRAIN_DECISIONS": "12000", "TWILIGHT_TRAIN_DIR": str(tmp_path)},
                     monkeypatch, tmp_path)
    assert "gradient updates" in shown and "evaluations: [(0," in shown
    assert "Duplicate arena, 4 players, 50 deals" in shown
    assert list(tmp_path.glob("notebook__*/checkpoint.pt"))


def test_the_ladder_notebook_puts_a_new_agent_on_the_ladder(monkeypatch, tmp_path):
    """notebooks/my_agent_on_ladder.ipynb: a registered agent plays a ladder between random and heuristic."""
    shown = _execute("my_agent_on_ladder.ipynb", {"TWILIGHT_LADDER_DEALS": "8"}, monkeypatch, tmp_path)
    assert "| 1 | mine |" in shown and "| 2 | heuristic |" in shown and "8 deals (heldout-1)" in shown


@pytest.mark.parametrize("workers", [1, 2])
def test_batched_agents_play_in_blocks_with_the_same_results_and_records(monkeypatch, workers):
    """A batched agent (``policy``) plays blocks of deals side by side; points and records equal
    one deal at a time, and deals already done are not played again."""
    deals = generate_deals(edge.LOCKSTEP_BLOCK + 5, 11)  # one full block and a partial one
    seen = []
    recs_block, recs_one = [], []
    done = {0: ([1, 2, 3], [4, 5, 6])}
    blocks = edge.play_config(deals, "policy", "heuristic", 4, 2, workers, progress=False, done=done,
                              on_result=lambda r: seen.append(r[0]), records=recs_block.append)
    monkeypatch.setattr(edge, "lockstep_ok", lambda specs: False)
    one = edge.play_config(deals, "policy", "heuristic", 4, 2, 1, progress=False, done=done,
                           records=recs_one.append)
    assert np.array_equal(blocks[0], one[0]) and np.array_equal(blocks[1], one[1])
    assert blocks[0][0].tolist() == [1, 2, 3]  # the finished deal was kept, not replayed
    assert sorted(seen) == list(range(1, len(deals)))
    key = lambda r: (r["meta"]["deal"], r["meta"]["play"])  # noqa: E731
    strip = lambda rs: [{k: v for k, v in r.items() if k != "created"} for r in sorted(rs, key=key)]  # noqa: E731
    assert len(recs_block) == 3 * (len(deals) - 1) and strip(recs_block) == strip(recs_one)


def test_notebooks_are_those_make_notebook_writes():
    """The committed notebooks hold the cells of experiments/make_notebook.py (edit them there),
    with the outputs of one whole run (``make_notebook --execute``) or none: no error, no path
    of the checkout or home folder of the machine that ran them (the training notebook's run
    folder is a temporary one, removed by its last cell)."""
    nbformat = pytest.importorskip("nbformat")
    from twilight_env.experiments import make_notebook

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for name, cells in make_notebook.NOTEBOOKS.items():
        path = os.path.join(root, "notebooks", name)
        nb = nbformat.read(path, as_version=4)
        assert [(c.cell_type, c.source) for c in nb.cells] == \
            [("markdown" if kind == "md" else "code", src) for kind, src in cells], name
        code = [c for c in nb.cells if c.cell_type == "code"]
        runs = [c.execution_count for c in code]
        assert runs == list(range(1, len(code) + 1)) or runs == [None] * len(code), (name, runs)
        assert not [o for c in code for o in c.outputs if o.output_type == "error"], name
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for machine_path in (root, os.path.expanduser("~") + "/"):
            assert machine_path not in text, (name, machine_path)
