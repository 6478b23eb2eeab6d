"""Engine speed: random legal play of complete deals, ours side by side with OpenSpiel.

Measures, in one run:

1. plain random play: our engine (``State.random`` + ``legal_actions`` + ``apply``,
   4 players, and 3 players as an extra line; with the compiled core built, also the
   pure-Python ``PurePythonState`` as a line of its own) against OpenSpiel's
   ``oh_hell(players=4,num_suits=4,num_cards_per_suit=8,num_tricks_fixed=7)`` (the closest
   OpenSpiel game in shape: 4 players, 7 tricks, 28 cards dealt), whose chance nodes
   (the deal, the trump card) are sampled too; only player decisions are counted;
2. the same with an information-state tensor built at every decision: ours
   ``twilight_env.obs.encoding.encode_observation(state, deciding_seat)``, OpenSpiel
   ``state.information_state_tensor()``; the per-observation cost is the time per
   decision with the tensor minus the time per decision without it;
3. the cost of one ``clone()`` of a mid-deal state, ours and OpenSpiel's.

Both engines draw their choices the same way: pre-drawn uniform floats ``u`` from
``numpy.random.default_rng(seed)``, action ``legal[int(u * len(legal))]`` (for
OpenSpiel's chance nodes ``outcomes[int(u * len(outcomes))]``, which is exact because
every oh_hell chance node is uniform; checked at start-up). Each loop is written the
way each library's own examples write it (``while not state.done`` /
``while not state.is_terminal(): if state.is_chance_node(): ...``); an extra pair of
"lean" loops shows how much of the gap is loop overhead (ours: stop when
``legal_actions()`` is empty; OpenSpiel: one ``current_player()`` call per step).

The machine may be shared with other work, so times are CPU seconds of this process
(``time.process_time``; both engines run single-threaded, so on an idle machine this
equals wall time), every configuration runs ``--rounds`` times, interleaved, and the
best round is reported (as ``timeit`` does). Load still perturbs caches and shared
cores: treat absolute figures as indicative and the ratios as the result.

Usage::

    python benchmarks/engine_speed.py [--deals 2000] [--seed 0] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from twilight_env.rules.engine import PurePythonState, State, backend  # noqa: E402
from twilight_env.rules.state import _rebuild  # noqa: E402

OH_HELL = "oh_hell(players=4,num_suits=4,num_cards_per_suit=8,num_tricks_fixed=7)"
_clock = time.process_time
"""CPU time of this process, in seconds (see the module docstring)."""


# ------------------------------------------------------------------------------------
# our engine
# ------------------------------------------------------------------------------------
def ours_plain(deals: int, num_players: int, u: list, seed: int, cls=State):
    """Random play of ``deals`` deals of states of class ``cls``; returns (decisions, seconds)."""
    rng = np.random.default_rng(seed)
    k = 0
    t0 = _clock()
    for _ in range(deals):
        st = cls.random(rng, 0, num_players)
        while not st.done:
            legal = st.legal_actions()
            st.apply(legal[int(u[k] * len(legal))])
            k += 1
    return k, _clock() - t0


def ours_lean(deals: int, num_players: int, u: list, seed: int):
    """As :func:`ours_plain`, but the loop stops on an empty ``legal_actions()``."""
    rng = np.random.default_rng(seed)
    k = 0
    t0 = _clock()
    for _ in range(deals):
        st = State.random(rng, 0, num_players)
        legal = st.legal_actions()
        while legal:
            st.apply(legal[int(u[k] * len(legal))])
            k += 1
            legal = st.legal_actions()
    return k, _clock() - t0


def ours_obs(deals: int, num_players: int, u: list, seed: int, encode):
    """As :func:`ours_plain`, plus the deciding seat's observation vector at every decision."""
    rng = np.random.default_rng(seed)
    k = 0
    t0 = _clock()
    for _ in range(deals):
        st = State.random(rng, 0, num_players)
        while not st.done:
            encode(st, st.deciding_seat)
            legal = st.legal_actions()
            st.apply(legal[int(u[k] * len(legal))])
            k += 1
    return k, _clock() - t0


def ours_clone_us(seed: int, n_states: int = 200, reps: int = 50) -> float:
    """Microseconds per ``State.clone()`` of mid-deal states (history of ~14 cards)."""
    rng = np.random.default_rng(seed)
    states = []
    for _ in range(n_states):
        st = State.random(rng)
        while len(st.history) < 14:
            legal = st.legal_actions()
            st.apply(legal[int(rng.integers(len(legal)))])
        states.append(st)
    t0 = _clock()
    for _ in range(reps):
        for st in states:
            st.clone()
    return (_clock() - t0) / (reps * n_states) * 1e6


def frozen_step_us(seed: int, n_states: int = 200, reps: int = 50) -> tuple[float, float, float]:
    """The design question of STYLE.md: immutable frozen-dataclass states or in-place apply.

    Returns ``(frozen µs, apply µs, pure-Python apply µs)``: the bare cost of the
    allocation one step of a frozen-dataclass engine cannot avoid (``dataclasses.replace``
    of the 4 fields a card play changes, among the state's 17, plus the history tuple
    grown by one record), and the cost of a whole in-place ``apply`` of a legal action on
    a clone: :class:`State`'s (compiled core when built) and :class:`PurePythonState`'s.
    """
    import dataclasses

    from twilight_env.rules.state import _FIELDS

    fields = list(_FIELDS)
    Frozen = dataclasses.make_dataclass("Frozen", fields, frozen=True)
    rng = np.random.default_rng(seed)
    pairs = []
    for _ in range(n_states):
        st = State.random(rng)
        while len(st.history) < 14:
            legal = st.legal_actions()
            st.apply(legal[int(rng.integers(len(legal)))])
        fz = Frozen(**{f: (tuple(getattr(st, f)) if isinstance(getattr(st, f, None), list) else getattr(st, f, None))
                       for f in fields})
        pairs.append((st, fz, st.legal_actions()[0]))
    replace = dataclasses.replace
    t0 = _clock()
    for _ in range(reps):
        for _, fz, a in pairs:
            replace(fz, hands=fz.hands, place=fz.place + 1, cards=fz.cards, history=fz.history + ((0, 0, a),))
    frozen = (_clock() - t0) / (reps * n_states) * 1e6
    applied = []
    for cls in (State, PurePythonState):
        clones = [[_rebuild(cls, st.__reduce__()[1][1]) for st, _, _ in pairs] for _ in range(reps)]
        for batch in clones:
            for st in batch:  # own lists, as clone() gives
                st.hands, st.cards, st.holders = st.hands[:], st.cards[:], st.holders[:]
                st.captured, st.history = st.captured[:], st.history[:]
        t0 = _clock()
        for batch in clones:
            for st, (_, _, a) in zip(batch, pairs):
                st.apply(a)
        applied.append((_clock() - t0) / (reps * n_states) * 1e6)
    return frozen, applied[0], applied[1]


# ------------------------------------------------------------------------------------
# OpenSpiel
# ------------------------------------------------------------------------------------
def os_plain(game, deals: int, u: list):
    """Random play of ``deals`` oh_hell games; returns (player decisions, seconds)."""
    k = 0
    dec = 0
    t0 = _clock()
    for _ in range(deals):
        st = game.new_initial_state()
        while not st.is_terminal():
            if st.is_chance_node():
                outcomes = st.chance_outcomes()
                st.apply_action(outcomes[int(u[k] * len(outcomes))][0])
            else:
                legal = st.legal_actions()
                st.apply_action(legal[int(u[k] * len(legal))])
                dec += 1
            k += 1
    return dec, _clock() - t0


def os_lean(game, deals: int, u: list):
    """As :func:`os_plain` with one ``current_player()`` call per step and the chance
    outcomes taken from ``legal_actions()`` (uniform)."""
    k = 0
    dec = 0
    t0 = _clock()
    for _ in range(deals):
        st = game.new_initial_state()
        while True:
            p = st.current_player()
            if p >= 0:
                legal = st.legal_actions()
                st.apply_action(legal[int(u[k] * len(legal))])
                dec += 1
            elif p == -1:  # chance
                legal = st.legal_actions()
                st.apply_action(legal[int(u[k] * len(legal))])
            else:
                break
            k += 1
    return dec, _clock() - t0


def os_obs(game, deals: int, u: list):
    """As :func:`os_plain`, plus ``information_state_tensor()`` at every player decision."""
    k = 0
    dec = 0
    t0 = _clock()
    for _ in range(deals):
        st = game.new_initial_state()
        while not st.is_terminal():
            if st.is_chance_node():
                outcomes = st.chance_outcomes()
                st.apply_action(outcomes[int(u[k] * len(outcomes))][0])
            else:
                st.information_state_tensor()
                legal = st.legal_actions()
                st.apply_action(legal[int(u[k] * len(legal))])
                dec += 1
            k += 1
    return dec, _clock() - t0


def os_clone_us(game, u: list, n_states: int = 200, reps: int = 50) -> float:
    """Microseconds per ``clone()`` of mid-game oh_hell states (14 cards played)."""
    states = []
    k = 0
    for _ in range(n_states):
        st = game.new_initial_state()
        played = 0
        while played < 14 + 4:  # 4 bids, then 14 cards
            if st.is_chance_node():
                outcomes = st.chance_outcomes()
                st.apply_action(outcomes[int(u[k] * len(outcomes))][0])
            else:
                legal = st.legal_actions()
                st.apply_action(legal[int(u[k] * len(legal))])
                played += 1
            k += 1
        states.append(st)
    t0 = _clock()
    for _ in range(reps):
        for st in states:
            st.clone()
    return (_clock() - t0) / (reps * n_states) * 1e6


def check_uniform_chance(game, u: list, games: int = 20) -> bool:
    """True if every chance node met in a few random games has equal probabilities."""
    k = 0
    for _ in range(games):
        st = game.new_initial_state()
        while not st.is_terminal():
            if st.is_chance_node():
                outcomes = st.chance_outcomes()
                probs = [p for _, p in outcomes]
                if max(probs) - min(probs) > 1e-12:
                    return False
                st.apply_action(outcomes[int(u[k] * len(outcomes))][0])
            else:
                legal = st.legal_actions()
                st.apply_action(legal[int(u[k] * len(legal))])
            k += 1
    return True


# ------------------------------------------------------------------------------------
def best(results):
    """The round with the highest rate: (decisions, seconds)."""
    return max(results, key=lambda r: r[0] / r[1])


def row(name: str, decisions: int, seconds: float, deals: int) -> str:
    return (f"  {name:<44} {decisions / seconds:>12,.0f} {deals / seconds:>10,.0f} "
            f"{decisions / deals:>10.1f}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=2000, help="deals (games) per timed run (default 2000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deals and the uniform floats (default 0)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved runs per configuration; best is shown")
    args = parser.parse_args(argv)
    if args.deals < 1 or args.rounds < 1:
        parser.error("--deals and --rounds must be positive")

    deals = args.deals
    u = np.random.default_rng(args.seed).random(deals * 80 + 1000).tolist()  # ≥ steps of either engine

    try:
        import pyspiel
        game = pyspiel.load_game(OH_HELL)
    except ImportError:
        game = None
    try:
        from twilight_env.obs.encoding import encode_observation
    except ImportError as e:  # the encoder is optional here
        encode_observation = None
        enc_error = str(e)

    if game is not None and not check_uniform_chance(game, u):
        print("warning: an oh_hell chance node is not uniform; the chance sampling below is approximate")

    runs: dict[str, list] = {}

    def add(name, result):
        runs.setdefault(name, []).append(result)

    # warm-up (imports, caches), not timed
    ours_plain(20, 4, u, args.seed)
    if game is not None:
        os_plain(game, 20, u)
    for _ in range(args.rounds):
        add("ours4", ours_plain(deals, 4, u, args.seed))
        add("ours3", ours_plain(deals, 3, u, args.seed))
        add("ours4_lean", ours_lean(deals, 4, u, args.seed))
        if State is not PurePythonState:
            add("ours4_py", ours_plain(deals, 4, u, args.seed, PurePythonState))
        if encode_observation is not None:
            add("ours4_obs", ours_obs(deals, 4, u, args.seed, encode_observation))
        if game is not None:
            add("os", os_plain(game, deals, u))
            add("os_lean", os_lean(game, deals, u))
            add("os_obs", os_obs(game, deals, u))

    print(f"engine_speed: {deals} deals per run, best of {args.rounds} interleaved runs, seed {args.seed}")
    print("(CPU time of this process; on a shared machine absolute figures vary with load, the ratios less)")
    from twilight_env.obs.encoding import backend as encoder_backend

    print(f"engine: {backend()}; observation encoder: {encoder_backend()} "
          "(TWILIGHT_ENV_PURE_PYTHON=1 selects the pure-Python ones)")
    print(f"  {'':<44} {'decisions/s':>12} {'deals/s':>10} {'dec/deal':>10}")
    o4, o3 = best(runs["ours4"]), best(runs["ours3"])
    print(row("twilight engine, 4 players", *o4, deals))
    print(row("twilight engine, 3 players", *o3, deals))
    if "ours4_py" in runs:
        print(row("twilight engine, 4 players, pure Python", *best(runs["ours4_py"]), deals))
    if game is not None:
        g = best(runs["os"])
        print(row("OpenSpiel oh_hell (4 players, 7 tricks)", *g, deals))
        ratio = (o4[0] / o4[1]) / (g[0] / g[1])
        print(f"  ratio ours/OpenSpiel, decisions/s (4 players): {ratio:.2f}x  (target >= 3x: "
              f"{'met' if ratio >= 3 else 'not met'})")
        if "ours4_py" in runs:
            p = best(runs["ours4_py"])
            print(f"  ratio pure-Python engine/OpenSpiel, decisions/s (4 players): "
                  f"{(p[0] / p[1]) / (g[0] / g[1]):.2f}x")
        print(f"  ratio ours/OpenSpiel, deals/s (4 players):     {g[1] / o4[1]:.2f}x")
        print("  lean loops (ours: stop on empty legal_actions(); OpenSpiel: current_player()):")
        ol, gl = best(runs["ours4_lean"]), best(runs["os_lean"])
        print(row("  twilight engine, 4 players, lean loop", *ol, deals))
        print(row("  OpenSpiel oh_hell, lean loop", *gl, deals))
        print(f"  ratio ours/OpenSpiel, decisions/s, lean loops: {(ol[0] / ol[1]) / (gl[0] / gl[1]):.2f}x")
    else:
        print("  OpenSpiel (pyspiel) is not installed: install the `bench` extra for the comparison")

    print()
    print("With an information-state tensor at every decision")
    if encode_observation is None:
        print(f"  skipped: twilight_env.obs.encoding cannot be imported ({enc_error})")
    else:
        ob = best(runs["ours4_obs"])
        print(row("twilight + encode_observation, 4 players", *ob, deals))
        ours_obs_us = (ob[1] / ob[0] - o4[1] / o4[0]) * 1e6
        if game is not None:
            go = best(runs["os_obs"])
            print(row("OpenSpiel + information_state_tensor()", *go, deals))
            print(f"  ratio ours/OpenSpiel, decisions/s: {(ob[0] / ob[1]) / (go[0] / go[1]):.2f}x")
            os_obs_us = (go[1] / go[0] - g[1] / g[0]) * 1e6
            print(f"  per observation: ours {ours_obs_us:.2f} µs, OpenSpiel {os_obs_us:.2f} µs "
                  f"(OpenSpiel µs / ours µs = {os_obs_us / ours_obs_us:.2f}x)")
        else:
            print(f"  per observation: ours {ours_obs_us:.2f} µs")

    print()
    clone_ours = min(ours_clone_us(args.seed) for _ in range(args.rounds))
    line = f"clone of a mid-deal state: ours {clone_ours:.2f} µs"
    if game is not None:
        clone_os = min(os_clone_us(game, u) for _ in range(args.rounds))
        line += f", OpenSpiel {clone_os:.2f} µs"
    print(line)
    frozen, applied, applied_py = min(frozen_step_us(args.seed) for _ in range(args.rounds))
    print(f"state design: one frozen-dataclass step allocation (dataclasses.replace) {frozen:.2f} µs "
          f"vs our whole in-place apply {applied:.2f} µs ({frozen / applied:.1f}x; "
          f"pure-Python apply {applied_py:.2f} µs, {frozen / applied_py:.1f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
