"""The shipped networks load by name in every command: ``policy`` (the network alone) and
``guided:default`` (the network-guided search), 3 and 4 players, in ``arena``, ``edge``
(3 players, R7), ``ladder``, ``play`` and ``serve``. Each command plays a real (tiny) game
with them; a missing or damaged weights file, or a command that builds agents its own way,
fails here."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from twilight_env.cli import main
from twilight_env.rules.cards import CARDS

SPECS = ["policy", "guided:default,iterations=20,batch=8"]


def _needs(spec: str) -> None:
    if spec.startswith("guided"):
        pytest.importorskip("numba")


@pytest.mark.parametrize("players", [3, 4])
@pytest.mark.parametrize("spec", SPECS)
def test_arena_and_ladder(spec, players, tmp_path):
    _needs(spec)
    assert main(["arena", spec, "heuristic", "--players", str(players), "--deals", "2", "--workers", "1",
                 "--quiet", "--out", str(tmp_path / "a")]) == 0
    pairs = json.loads((tmp_path / "a" / "arena.json").read_text())["results"]["pairings"]
    assert {(p["a"], p["b"]) for p in pairs} == {(spec, "heuristic")}
    assert main(["ladder", "heuristic", spec, "--players", str(players), "--deals", "2", "--workers", "1",
                 "--boot", "20", "--quiet", "--out", str(tmp_path / "l")]) == 0
    assert json.loads((tmp_path / "l" / "ladder.json").read_text())["rungs"] == ["heuristic", spec]


@pytest.mark.parametrize("spec", SPECS)
def test_edge(spec, tmp_path):
    _needs(spec)
    assert main(["edge", spec, "--deals", "2", "--workers", "1", "--quiet", "--out", str(tmp_path / "e")]) == 0
    assert json.loads((tmp_path / "e" / "edge.json").read_text())["configs"] == [{"solo": spec, "sun": spec}]


@pytest.mark.parametrize("players", [3, 4])
@pytest.mark.parametrize("spec", SPECS)
def test_play_in_the_terminal(spec, players):
    """A person at seat 0 against the network on every other seat, to the end of the deal
    (every input cycled, R3.2; the illegal ones are refused and asked again)."""
    _needs(spec)
    words = itertools.cycle(list(CARDS) + ["ask 1", "ask 2", "ask 3"])
    lines: list[str] = []
    from twilight_env.experiments.play import play_game

    assert play_game(players, 0, spec, spec, 4, ask=lambda prompt: next(words), say=lines.append) == 0
    assert any("Deal over (R5)" in line for line in lines)


@pytest.mark.parametrize("players", [3, 4])
@pytest.mark.parametrize("spec", SPECS)
def test_serve(spec, players):
    pytest.importorskip("starlette")
    pytest.importorskip("httpx")
    _needs(spec)
    from starlette.testclient import TestClient

    from twilight_env.serve.app import create_app

    from tests.serve.test_api import new_game, play_to_end

    with TestClient(create_app(), base_url="http://127.0.0.1") as client:
        view = new_game(client, players=players, seat=0, opponents=spec, partner=spec, seed=3)
        agents = [w for w in view["who"] if w != "you" and not w.startswith("new moon")]
        assert agents == [spec] * (players - 1), view["who"]
        end = play_to_end(client, view, np.random.default_rng(0))
        assert len(end["tricks"]) == 7  # 28 cards, 4 per trick: played to the last trick
        assert sum(side["souls"] for side in end["sides"]) <= 60  # R5.1: 60 souls in a deal (R4.4: a neutral last pile counts for neither side)
