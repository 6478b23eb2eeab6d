"""Agent options are checked when the agent is built: every file an option names is
loaded and checked then (so a run fails before making its output folder), and no float
option takes NaN or inf."""

import math
from pathlib import Path

import pytest

from twilight_env.agents.base import _REGISTRY, check_number, make_agent
from twilight_env.cli import main

pytest.importorskip("torch")

WEIGHTS = Path(__file__).resolve().parents[2] / "agents" / "weights"
SPECS = {  # spec template, the option named in the error, a real file of the right kind
    "pimc inference": ("pimc:worlds=2,inference={}", "inference=", "inference_3p.pt"),
    "ismcts inference": ("ismcts:iterations=5,inference={}", "inference=", "inference_4p.pt"),
    "neural path": ("neural:path={}", "path=", "neural_3p.npz"),
    "exit path": ("exit:path={}", "path=", "policy_3p.npz"),
    "exit-search path": ("exit-search:path={},iterations=5", "path=", "policy_4p.npz"),
}


def _bad_file(tmp_path, kind, good):
    if kind == "missing":
        return tmp_path / "no" / "such.pt"
    other = "neural_3p.npz" if "neural" not in good else "inference_3p.pt"
    path = tmp_path / f"{kind}{Path(other if kind == 'other kind' else good).suffix}"  # the file kind's own suffix
    if kind == "text":
        path.write_text("hello, not a checkpoint\n")
    elif kind == "corrupt":  # a real weights file cut short, as by a full disk
        path.write_bytes((WEIGHTS / good).read_bytes()[:2000])
    elif kind == "other kind":  # valid weights of another agent
        path.write_bytes((WEIGHTS / other).read_bytes())
    return path


@pytest.mark.parametrize("kind", ["missing", "text", "corrupt", "other kind"])
@pytest.mark.parametrize("agent", sorted(SPECS))
def test_a_bad_file_is_refused_when_the_agent_is_built(tmp_path, agent, kind):
    template, option, good = SPECS[agent]
    path = _bad_file(tmp_path, kind, good)
    with pytest.raises(ValueError) as e:
        make_agent(template.format(path))
    message = str(e.value)
    assert option in message and str(path) in message and "\n" not in message


@pytest.mark.parametrize("agent", sorted(SPECS))
def test_a_good_file_builds(agent):
    template, _, good = SPECS[agent]
    assert make_agent(template.format(WEIGHTS / good)) is not None


def test_check_specs_names_the_flag_the_option_and_the_file(tmp_path):
    from twilight_env.experiments.common import check_specs

    bad = tmp_path / "notes.txt"
    bad.write_text("not a checkpoint")
    with pytest.raises(ValueError, match=rf"^--solo: option inference='{bad}': cannot read card-location"):
        check_specs([f"pimc:inference={bad}"], "--solo")


@pytest.mark.parametrize("command", [
    ["arena", "random", "pimc:worlds=2,inference={}", "--deals", "2"],
    ["edge", "--solo", "ismcts:iterations=5,inference={}", "--deals", "2"],
    ["edge", "neural:path={}", "--deals", "2"],
    ["ladder", "random", "policy:path={}", "--deals", "2"],
])
@pytest.mark.parametrize("kind", ["missing", "text", "corrupt"])
def test_a_run_with_a_bad_file_fails_before_making_its_folder(tmp_path, capsys, command, kind):
    path = _bad_file(tmp_path, kind, "inference_3p.pt" if "inference" in " ".join(command) else
                     "neural_3p.npz" if "neural" in " ".join(command) else "policy_3p.npz")
    out = tmp_path / "out"
    argv = [a.format(path) for a in command] + ["--out", str(out), "--workers", "1", "--quiet"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err and "Traceback" not in err
    assert not out.exists()


@pytest.mark.parametrize("command", [
    ["arena", "random", "policy:{p4}", "--players", "3", "--deals", "2"],
    ["arena", "random", "neural:{n3}", "--players", "4", "--deals", "2"],
    ["edge", "--solo", "policy:{p4}", "--deals", "2"],
    ["edge", "--sun", "respond:target=policy:{p4},exact_tricks=1", "--deals", "2"],
    ["ladder", "random", "policy:{p4}", "--players", "3", "--deals", "2"],
])
def test_a_network_of_the_other_player_count_is_refused_before_the_folder_is_made(tmp_path, capsys, command):
    """A weights file holds the network of one player count (R7: 3 players, R2: 4); a run of
    the other count refuses it in one line before it makes its folder, as it refuses a bad file."""
    out = tmp_path / "out"
    argv = [a.format(p4=WEIGHTS / "policy_4p.npz", n3=WEIGHTS / "neural_3p.npz") for a in command]
    assert main(argv + ["--out", str(out), "--workers", "1", "--quiet"]) == 2
    err = capsys.readouterr().err
    want = 3 if "4p" in " ".join(argv) else 4
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert f"trained for {7 - want} players, and this run plays {want}-player deals" in err, err
    assert not out.exists()


@pytest.mark.parametrize("spec", [
    "exit:path={p4}", "exit-search:path={p4},iterations=5", "guided:path={p4}", "policy:path={p4}",
    "pimc:worlds=2,inference={i4}", "ismcts:iterations=5,inference={i4}", "neural:path={n4}",
])
def test_every_agent_reading_a_one_count_file_names_its_player_count(spec):
    """Each agent whose option names a file of one player count (a network, a card-location
    model) says that count, so check_specs refuses it for a 3-player run (R7) before any deal."""
    from twilight_env.agents.base import check_specs, network_players

    spec = spec.format(p4=WEIGHTS / "policy_4p.npz", i4=WEIGHTS / "inference_4p.pt", n4=WEIGHTS / "neural_4p.npz")
    assert network_players(make_agent(spec)) == 4
    with pytest.raises(ValueError, match="trained for 4 players, and this run plays 3-player deals"):
        check_specs([spec], num_players=3)
    assert check_specs([spec], num_players=4) == [spec]


# ---------------------------------------------------------------------------------
# NaN and inf
# ---------------------------------------------------------------------------------

@pytest.mark.parametrize("spec,option", [
    ("ismcts:c=nan", "c"), ("ismcts:c=inf", "c"), ("ismcts:c=-inf", "c"),
    ("exit-search:c=nan", "c"), ("exit-search:w=inf", "w"), ("exit-search:w=nan", "w"),
    ("pimc:epsilon=nan", "epsilon"), ("pimc:epsilon=inf", "epsilon"),
    ("ismcts:epsilon=nan", "epsilon"),
    ("openspiel:ismcts:uct_c=nan", "uct_c"), ("openspiel:ismcts:uct_c=inf", "uct_c"),
])
def test_nan_and_inf_are_refused_naming_the_option_and_the_range(spec, option):
    with pytest.raises(ValueError, match=rf"\b{option} must be a finite number (>= 0|in \[0, 1\]), got -?(nan|inf)"):
        make_agent(spec)


def test_the_search_agents_refuse_nan_when_built_directly():
    from twilight_env.agents.ismcts import ISMCTSAgent

    with pytest.raises(ValueError, match="c must be a finite number >= 0, got nan"):
        ISMCTSAgent(c=math.nan)


def test_every_agent_refuses_a_non_finite_option_it_leaves_unchecked(monkeypatch):
    """The last guard in ``make_agent``: an agent that checks nothing still gets no NaN."""
    class Loose:
        name = "loose"

        def __init__(self, scale: float = 1.0):
            self.scale = scale

        def act(self, infoset, legal_actions, rng):
            return legal_actions[0]

    monkeypatch.setitem(_REGISTRY, "loose", Loose)
    assert make_agent("loose:scale=2.5").scale == 2.5
    for v in ("nan", "inf", "-inf"):
        with pytest.raises(ValueError, match=r"agent 'loose' option 'scale' must be a finite number, got -?(nan|inf)"):
            make_agent(f"loose:scale={v}")


def test_check_number():
    assert check_number("x", 3, 0, 5) == 3.0
    for bad in (math.nan, math.inf, -1, 6, True, "1"):
        with pytest.raises(ValueError, match=r"x must be a finite number in \[0, 5\]"):
            check_number("x", bad, 0, 5)
