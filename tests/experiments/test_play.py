"""``twilight play``: the terminal game re-asks on bad input, never crashes, ends cleanly,
and shows the person only their information set (R2.5, R7.1)."""

import re
import subprocess
import sys

import numpy as np
import pytest

from twilight_env.experiments.play import ask_action, legal_inputs, parse_input, play_game, seat_specs, view
from twilight_env.rules.cards import CARDS
from twilight_env.rules.engine import State
from twilight_env.rules.infoset import InfoSet

from positions import Spec, random_points

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


def test_ctrl_c_at_the_prompt_is_an_interruption(monkeypatch, capsys):
    lines = []

    def ctrl_c(prompt):
        raise KeyboardInterrupt

    assert play_game(4, 1, "random", "random", 0, ask=ctrl_c, say=lines.append) == 130
    assert "interrupted" in lines[-1] and "end of input" not in lines[-1]
    from twilight_env.cli import main

    monkeypatch.setattr("builtins.input", ctrl_c)
    assert main(["play", "--opponents", "random", "--seed", "1"]) == 130
    out, err = capsys.readouterr()
    assert err == "" and out.rstrip().endswith("interrupted: leaving the game.")


def _random_tricks(seed, players):
    """``(before, after)`` states around every finished trick of a random deal."""
    walk = list(random_points(Spec(players, seed)))
    # the state when the trick's last decision was due (its pending pile, R4.3) and the one after
    return [(before, after) for before, after in zip(walk, walk[1:]) if after.trick != before.trick]


def test_trick_line_names_the_winning_card_and_the_pending_pile():
    from twilight_env.experiments.play import card_name, trick_result
    from twilight_env.rules.cards import codes_of
    from twilight_env.rules.engine import PURGATORY_MASK

    seen = {"taken": 0, "with pending": 0, "purgatory": 0}
    for seed in range(12):
        for players in (4, 3):
            for before, after in _random_tricks(seed, players):
                line = trick_result(before, after, human=1)
                t = before.trick
                plays = after.history[4 * t: 4 * t + 4]
                cards = [c for _, _, c in plays]
                if sum(1 << c for c in cards) & PURGATORY_MASK:
                    seen["purgatory"] += 1
                    assert "Purgatory" in line and ("(R4.3)" in line or "(R4.4)" in line)
                    continue
                seen["taken"] += 1
                named = [c for c in cards if card_name(c) in line]
                assert len(named) == 1, line
                # R4.2: the winning card's chooser takes the trick and leads the next
                assert plays[cards.index(named[0])][0] == after.leader
                assert line.startswith("  -> seat %d " % after.leader)
                if before.pending:
                    seen["with pending"] += 1
                    assert f"and the pending pile ({' '.join(codes_of(before.pending))})" in line
                    assert line.endswith("(R4.3)")
                    side = after.leader % 2
                    assert after.side_captured(side) & before.pending == before.pending
                else:
                    assert "pending" not in line and line.endswith("(R4.2)")
    assert all(seen.values()), seen


def test_a_trick_opened_by_a_request_shows_it():
    st = State.from_deal([["SP", "SC1", "S3", "SA", "MC1", "M3", "MA"],
                          ["MC2", "M4", "MT", "MP", "MC3", "M5", "MO"],
                          ["SC2", "S4", "ST", "SC3", "S5", "SO", "S6"],
                          ["SC4", "SC5", "S7", "MC4", "MC5", "M6", "M7"]], 0, 4)
    st.apply(29)  # seat 0 leads by asking its partner, seat 2, for a Sun card (R3.2)
    text = view(InfoSet(st, 2), 2, ["a", "b", "you", "d"])
    heading = text.splitlines().index("  current trick (leader seat 0):")
    assert text.splitlines()[heading + 1] == "    place 1: chooser seat 0 requested a card from seat 2"


@pytest.mark.parametrize("players,seat", [(4, 1), (3, 1), (3, 0)])
def test_deal_over_gives_the_breakdown_of_twilight_deal(players, seat):
    from twilight_env.records.deal_log import result_lines

    lines = []
    assert play_game(players, seat, "random", "random", seed=5, ask=Scripted(bad=()), say=lines.append) == 0
    end = lines[lines.index("Deal over (R5):") + 1:]
    text = "\n".join(end)
    assert len(re.findall(r"souls +\d+ x multiplier \d = deal score +\d+", text)) == 2
    assert "neutral pile" in text and re.search(r"Deal score: (Sun|Moon) \d+, (Sun|Moon) \d+", text)
    credited = [x for x in end if x.startswith("Credited (R7.5): ")]
    if players == 3:
        # the solo p0 on seat 0; Sun seats 1 and 3 are p1 and p2 (R7.4), credited as R7.5 says
        m = re.fullmatch(r"Credited \(R7\.5\): p0 on seat 0 \([^)]*\) (\d+), p1 on seat 1 \([^)]*\) (\d+), "
                         r"p2 on seat 3 \([^)]*\) (\d+)", credited[0])
        moon, sun = (int(x) for x in re.search(r"Deal score: Moon (\d+), Sun (\d+)", text).groups())
        assert [int(x) for x in m.groups()] == [moon, sun, sun]
    else:
        assert credited == []
    assert result_lines.__module__ == "twilight_env.records.deal_log"


@pytest.mark.parametrize("spec", ["exit:{root}/agents/weights/policy_4p.npz", "neural:{root}/agents/weights/neural_4p.npz"])
def test_a_network_of_the_other_variant_is_refused_before_the_first_move(spec, capsys):
    """A 4-player checkpoint against a 3-player game: one clear error at start-up, and no
    prompt was shown (nothing was asked of the person)."""
    pytest.importorskip("torch")
    from pathlib import Path

    from twilight_env.cli import main
    root = Path(__file__).resolve().parents[2]
    asked = []
    import builtins
    real_input = builtins.input
    builtins.input = lambda prompt="": asked.append(prompt) or "quit"
    try:
        assert main(["play", "--players", "3", "--opponents", spec.format(root=root)]) == 2
    finally:
        builtins.input = real_input
    err = capsys.readouterr().err
    assert "--opponents" in err and "trained for 4 players" in err
    assert asked == []


def test_without_seed_each_game_deals_afresh_and_prints_its_seed(monkeypatch, capsys):
    """``twilight play`` without ``--seed`` deals a new deal each time and prints the seed
    that plays it again."""
    import re

    from twilight_env.cli import main

    def leave(prompt):
        raise EOFError
    monkeypatch.setattr("builtins.input", leave)
    seeds = []
    for _ in range(3):
        assert main(["play", "--opponents", "random"]) == 0
        seeds.append(int(re.search(r"seed (\d+)", capsys.readouterr().out).group(1)))
    assert len(set(seeds)) == 3
    assert main(["play", "--opponents", "random", "--seed", str(seeds[0])]) == 0
    assert f"seed {seeds[0]}" in capsys.readouterr().out


def test_seat_specs_give_the_partner_and_the_new_moon_their_deciders():
    # 4 players: the partner sits across (R2.1)
    assert seat_specs(4, 1, "opp", "mate") == ["opp", "you", "opp", "mate"]
    # 3 players, the person solo: they decide for the new moon too (R7.3); no partner agent
    assert seat_specs(3, 0, "opp", "mate") == ["you", "opp", "you", "opp"]
    # 3 players, the person on a Sun seat: the other Sun seat is the partner, the solo agent decides seat 2
    assert seat_specs(3, 1, "opp", "mate") == ["opp", "you", "opp", "mate"]


def test_ask_action_reasks_until_a_legal_input_and_reports_leaving():
    st = State.random(np.random.default_rng(3), 0, 4)
    info = InfoSet(st, st.deciding_seat)
    names = ["you", "a", "b", "c"]
    lines = []
    action, leave = ask_action(info, info.seat, names, Scripted(bad=("ZZ9", "help")), lines.append)
    assert leave is None and action in info.legal_actions
    assert sum("is not a legal input here" in line for line in lines) == 1
    assert ask_action(info, info.seat, names, lambda p: "quit", lines.append) == (None, 0)

    def eof(prompt):
        raise EOFError

    assert ask_action(info, info.seat, names, eof, lines.append) == (None, 0)
