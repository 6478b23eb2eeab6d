"""Speed of the wrapped PettingZoo env against PettingZoo's ``texas_holdem_v4``.

Runs the standard AEC loop (``agent_iter``, ``last()``, a random action from the
``action_mask``, ``step``) on ``twilight_env.env()`` for 4 and 3 players and on
PettingZoo's ``texas_holdem_v4`` (``pettingzoo.make("aec", "classic/texas_holdem-v4")``,
the wrapped classic env), in the same process, and prints steps/s and the ratio. Dead
steps (``step(None)`` after the end) count as steps for every env.

Also times one observation (:func:`twilight_env.obs.encoding.encode_observation`) against
OpenSpiel's ``oh_hell`` ``information_state_tensor()`` (when ``pyspiel`` is installed), in
the configuration ``engine_speed.py`` uses (4 players, 4 suits of 8 cards, 7 tricks: the
closest to Twilight in shape):
"cold" encodes independent random states (no history cached), "along deals" encodes
each decision of deals as they are played (as the env does).

Times are process CPU time (``time.process_time``), so other processes on a shared
machine slow every env alike rather than whichever happened to run at a busy moment;
the envs take turns in ``--rounds`` rounds; the table gives each env's best and median
round and the ratio to texas_holdem_v4, both of the bests and as the median over rounds
of the ratio within a round (the steadiest figure on a busy machine).

Usage::

    python benchmarks/env_speed.py            # 15-60 s, with the machine's load
    python benchmarks/env_speed.py --steps 1000 --rounds 3 --obs-states 300   # quick
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from engine_speed import OH_HELL  # noqa: E402  (the same OpenSpiel configuration)


def aec_loop(env, steps: int, seed: int) -> float:
    """Steps per second of the AEC loop over ``steps`` steps (episodes restart as needed)."""
    rng = np.random.default_rng(seed)
    done = 0
    env.reset(seed=seed)
    t0 = time.process_time()
    while done < steps:
        for agent in env.agent_iter():
            obs, reward, term, trunc, info = env.last()
            if term or trunc:
                action = None
            else:
                legal = np.flatnonzero(obs["action_mask"])
                action = int(legal[rng.integers(len(legal))])
            env.step(action)
            done += 1
        env.reset()
    return done / (time.process_time() - t0)


def observation_rounds(num_states: int, rounds: int, seed: int) -> dict[str, list[float]]:
    """Microseconds per observation in each round: ``"cold"`` (ours, independent random
    decision points, 4p and 3p, no history cached), ``"along"`` (ours, each decision of
    deals as they are played) and ``"oh_hell"`` (OpenSpiel's ``information_state_tensor``;
    missing without pyspiel)."""
    from twilight_env.obs.encoding import OBS_SIZE, encode_observation
    from twilight_env.rules.engine import State
    rng = np.random.default_rng(seed)
    states = []
    for k in range(num_states):
        st = State.random(rng, 0, 4 if k % 2 else 3)
        for _ in range(int(rng.integers(0, 28))):
            la = st.legal_actions()
            st.apply(la[int(rng.integers(len(la)))])
        states.append((st, st.deciding_seat))
    try:
        import pyspiel
    except ImportError:
        pyspiel = None
    sp = []
    if pyspiel is not None:
        game = pyspiel.load_game(OH_HELL)
        while len(sp) < num_states:
            s = game.new_initial_state()
            for _ in range(int(rng.integers(0, 60))):
                if s.is_terminal():
                    break
                if s.is_chance_node():
                    outcomes = s.chance_outcomes()
                    s.apply_action(outcomes[int(rng.integers(len(outcomes)))][0])
                else:
                    la = s.legal_actions()
                    s.apply_action(la[int(rng.integers(len(la)))])
            if not s.is_chance_node() and not s.is_terminal():
                sp.append(s)
    out = np.empty(OBS_SIZE, np.float32)
    res: dict[str, list[float]] = {"cold": [], "along": []}
    for r in range(rounds):  # interleaved rounds: a busy moment hits all three alike
        t0 = time.process_time()
        for st, seat in states:
            encode_observation(st, seat, out=out)
        res["cold"].append((time.process_time() - t0) / len(states) * 1e6)
        drng = np.random.default_rng(seed + r)
        spent, n = 0.0, 0
        for k in range(max(1, num_states // 28)):
            st = State.random(drng, 0, 4 if k % 2 else 3)
            while not st.done:
                t0 = time.process_time()
                encode_observation(st, st.deciding_seat, out=out)
                spent += time.process_time() - t0
                n += 1
                la = st.legal_actions()
                st.apply(la[int(drng.integers(len(la)))])
        res["along"].append(spent / n * 1e6)
        if sp:
            t0 = time.process_time()
            for s in sp:
                s.information_state_tensor(s.current_player())
            res.setdefault("oh_hell", []).append((time.process_time() - t0) / len(sp) * 1e6)
    return res


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=3000, help="AEC steps per env per round")
    p.add_argument("--rounds", type=int, default=12, help="interleaved measurement rounds")
    p.add_argument("--obs-states", type=int, default=1000, help="states for the observation timing")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)

    import pettingzoo

    import twilight_env

    makers = {
        "twilight 4p": lambda: twilight_env.env(num_players=4),
        "twilight 3p": lambda: twilight_env.env(num_players=3),
        "texas_holdem_v4": lambda: pettingzoo.make("aec", "classic/texas_holdem-v4"),
    }
    envs = {name: make() for name, make in makers.items()}
    us: dict[str, list[float]] = {name: [] for name in makers}
    for r in range(a.rounds):  # interleaved rounds, so load changes hit every env alike
        for name, e in envs.items():
            us[name].append(1e6 / aec_loop(e, a.steps, a.seed + r))
    ref = us["texas_holdem_v4"]
    from twilight_env.obs.encoding import backend

    print(f"observation encoder: {backend()} (TWILIGHT_ENV_PURE_PYTHON=1 selects the pure-Python one)")
    print(f"AEC loop (agent_iter, last, random masked action, step): {a.rounds} rounds of {a.steps} steps "
          f"per env, CPU time")
    print(f"{'env':<18}{'best us/step':>13}{'steps/s':>10}{'median us/step':>16}"
          f"{'x texas (best)':>16}{'x texas (median of rounds)':>28}")
    for name, v in us.items():
        paired = statistics.median(t / o for t, o in zip(ref, v))
        print(f"{name:<18}{min(v):>13.1f}{1e6 / min(v):>10.0f}{statistics.median(v):>16.1f}"
              f"{min(ref) / min(v):>16.2f}{paired:>28.2f}")

    res = observation_rounds(a.obs_states, a.rounds, a.seed)
    print()
    print(f"one observation: {a.obs_states} states, {a.rounds} rounds, CPU time")
    theirs = res.get("oh_hell")
    for key, label in (("cold", "twilight encode_observation, cold"),
                       ("along", "twilight encode_observation, along deals")):
        v = res[key]
        line = f"  {label:<44}best {min(v):6.1f} us  median {statistics.median(v):6.1f} us"
        if theirs:
            paired = statistics.median(t / o for t, o in zip(theirs, v))
            line += f"   oh_hell/ours: best {min(theirs) / min(v):.2f}, median of rounds {paired:.2f}"
        print(line)
    if theirs:
        print(f"  {'OpenSpiel oh_hell information_state_tensor':<44}best {min(theirs):6.1f} us  "
              f"median {statistics.median(theirs):6.1f} us")
    else:
        print("  (pyspiel not installed: no OpenSpiel oh_hell reference)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
