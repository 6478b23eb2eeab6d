"""``twilight play``: the terminal game re-asks on bad input, never crashes, ends cleanly,
and shows the person only their information set (R2.5, R7.1)."""

import re
import subprocess
import sys

import numpy as np
import pytest

from experiments.play import legal_inputs, parse_input, play_game, view
from twilight_env.cards import CARDS
from twilight_env.engine import State
from twilight_env.infoset import InfoSet

ROOT = __file__.rsplit("/tests/", 1)[0]


class Scripted:
    """Answers prompts: a few bad inputs, then the first legal input shown in the prompt."""

    def __init__(self, bad=("", "hello", "ZZ9", "ask 9", "request +7", "help")):
        self.bad = list(bad)
        self.prompts = 0

    def __call__(self, prompt):
        self.prompts += 1
        if self.bad:
            return self.bad.pop(0)
        words = prompt[prompt.index("[") + 1: prompt.rindex("]")].split(" | ")
        return words[0]


@pytest.mark.parametrize("players,seat", [(4, 0), (4, 3), (3, 0), (3, 1), (3, 3)])
def test_scripted_person_finishes_a_deal(players, seat):
    lines = []
    ask = Scripted()
    assert play_game(players, seat, "random", "random", seed=seat + players, ask=ask, say=lines.append) == 0
    text = "\n".join(lines)
    assert "Deal over (R5)" in text and ("Your side" in text or "The deal is a tie." in text)
    assert "'hello' is not a legal input here. Legal inputs:" in text
    assert ask.prompts >= 7  # the person chose at least once per trick
    if players == 3:
        assert "new moon's open hand (seat 2)" in text
    assert "Inputs at a prompt (case does not matter):\n  a card code, e.g. SC1" in text  # the help
    assert "``" not in text  # plain text, no reStructuredText markup


def test_play_help_lists_the_inputs(capsys):
    from twilight_env.cli import main

    with pytest.raises(SystemExit):
        main(["play", "--help"])
    out = capsys.readouterr().out
    assert "ask N  or  N" in out and "request +1 / +2 / +3" in out


def test_eof_and_quit_leave_cleanly():
    lines = []

    def eof(prompt):
        raise EOFError

    assert play_game(4, 1, "random", "random", 0, ask=eof, say=lines.append) == 0
    assert "leaving the game" in lines[-1]
    lines.clear()
    assert play_game(3, 0, "random", "random", 0, ask=lambda p: "quit", say=lines.append) == 0
    assert lines[-1] == "leaving the game."


def test_inputs_accepted_for_requests_and_cards():
    st = State.from_deal([["SP", "SC1", "S3", "SA", "MC1", "M3", "MA"],
                          ["MC2", "M4", "MT", "MP", "MC3", "M5", "MO"],
                          ["SC2", "S4", "ST", "SC3", "S5", "SO", "S6"],
                          ["SC4", "SC5", "S7", "MC4", "MC5", "M6", "M7"]], 0, 4)
    info = InfoSet(st, 0)
    assert legal_inputs(info) == {"SP": 0, "SC1": 1, "S3": 6, "SA": 11, "ask 2": 29, "ask 3": 30}
    assert parse_input("sc1", info) == 1
    assert parse_input("  ask   3 ", info) == 30
    assert parse_input("3", info) == 30
    assert parse_input("request +2", info) == 29
    assert parse_input("request +1", info) is None  # seat 1 holds no Sun card (R3.5)
    for bad in ("MC1", "ask 0", "ask", "4", "+9", "", "ask x"):
        assert parse_input(bad, info) is None


def test_view_shows_only_the_information_set():
    rng = np.random.default_rng(1)
    for players in (4, 3):
        st = State.random(rng, 0, players)
        for _ in range(int(rng.integers(0, 12))):
            legal = st.legal_actions()
            st.apply(legal[int(rng.integers(len(legal)))])
        seat = 1
        text = view(InfoSet(st, seat), seat, ["a", "b", "c", "d"])
        shown = set(re.findall(r"\b[SM](?:P|C[1-5]|[3-7]|A|T|O)\b", text))
        visible = st.hands[seat] | (st.hands[2] if players == 3 else 0)
        hidden = {CARDS[i] for i in range(28)
                  if any(st.hands[s] >> i & 1 for s in range(4)) and not visible >> i & 1}
        assert not shown & hidden
        assert {CARDS[i] for i in range(28) if st.hands[seat] >> i & 1} <= shown


def test_bad_seat_is_a_clear_error(capsys):
    from twilight_env.cli import main
    assert main(["play", "--players", "3", "--seat", "2", "--opponents", "random"]) == 2
    assert "new moon" in capsys.readouterr().err


def test_subprocess_with_stdin(tmp_path):
    """A real terminal session: junk, then every possible input cycled until the deal ends."""
    words = list(CARDS) + ["ask 0", "ask 1", "ask 2", "ask 3"]
    stdin = "nonsense\n\n" + "\n".join(words * 40) + "\n"
    r = subprocess.run([sys.executable, "-m", "twilight_env.cli", "play", "--players", "4", "--seat", "2",
                        "--opponents", "random", "--seed", "3"], input=stdin, capture_output=True, text=True,
                       cwd=ROOT, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "Deal over (R5)" in r.stdout and "'nonsense' is not a legal input" in r.stdout
    assert "Traceback" not in r.stderr
    r = subprocess.run([sys.executable, "-m", "twilight_env.cli", "play", "--players", "3", "--seat", "0",
                        "--opponents", "random"], input="MC9\n", capture_output=True, text=True,
                       cwd=ROOT, timeout=60)
    assert r.returncode == 0 and "leaving the game (end of input)" in r.stdout
