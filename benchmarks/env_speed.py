"""Speed of the wrapped PettingZoo env against PettingZoo's ``texas_holdem_v4``.

Runs the standard AEC loop (``agent_iter``, ``last()``, a random action from the
``action_mask``, ``step``) on ``twilight_env.env()`` for 4 and 3 players and on
PettingZoo's ``texas_holdem_v4`` (``pettingzoo.make("aec", "classic/texas_holdem-v4")``,
the wrapped classic env), in the same process, and prints steps/s and the ratio. Dead
steps (``step(None)`` after the end) count as steps for every env.

Also times one observation (:func:`twilight_env.encoding.encode_observation`) against
OpenSpiel's ``oh_hell`` ``information_state_tensor()`` (when ``pyspiel`` is installed):
"cold" encodes independent random states (no history cached), "along deals" encodes
each decision of deals as they are played (as the env does).

Times are process CPU time (``time.process_time``), so other processes on a shared
machine slow every env alike rather than whichever happened to run at a busy moment;
each figure is the best of ``--repeats`` interleaved runs.

Usage::

    python benchmarks/env_speed.py            # about a minute
    python benchmarks/env_speed.py --steps 3000 --repeats 2 --obs-states 500   # quick
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


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


def observation_cost(num_states: int, repeats: int, seed: int) -> tuple[float, float, float | None]:
    """Microseconds per observation: ours cold (independent random decision points, 4p
    and 3p), ours along deals, and OpenSpiel oh_hell's ``information_state_tensor``
    (None without pyspiel)."""
    from twilight_env.encoding import OBS_SIZE, encode_observation
    from twilight_env.engine import State
    rng = np.random.default_rng(seed)
    states = []
    for k in range(num_states):
        st = State.random(rng, 0, 4 if k % 2 else 3)
        for _ in range(int(rng.integers(0, 28))):
            la = st.legal_actions()
            st.apply(la[int(rng.integers(len(la)))])
        states.append((st, st.deciding_seat))
    out = np.empty(OBS_SIZE, np.float32)
    ours, along = [], []
    for r in range(repeats):
        t0 = time.process_time()
        for st, seat in states:
            encode_observation(st, seat, out=out)
        ours.append((time.process_time() - t0) / len(states) * 1e6)
        # along deals: time only the encoding of each decision of played deals
        drng = np.random.default_rng(seed + r)
        spent, n = 0.0, 0
        for k in range(num_states // 28):
            st = State.random(drng, 0, 4 if k % 2 else 3)
            while not st.done:
                t0 = time.process_time()
                encode_observation(st, st.deciding_seat, out=out)
                spent += time.process_time() - t0
                n += 1
                la = st.legal_actions()
                st.apply(la[int(drng.integers(len(la)))])
        along.append(spent / n * 1e6)
    try:
        import pyspiel
    except ImportError:
        return min(ours), min(along), None
    game = pyspiel.load_game("oh_hell")
    sp = []
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
    theirs = []
    for _ in range(repeats):
        t0 = time.process_time()
        for s in sp:
            s.information_state_tensor(s.current_player())
        theirs.append((time.process_time() - t0) / len(sp) * 1e6)
    return min(ours), min(along), min(theirs)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=10000, help="AEC steps per measurement")
    p.add_argument("--repeats", type=int, default=5, help="measurements per env (best is reported)")
    p.add_argument("--obs-states", type=int, default=2000, help="states for the observation timing")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)

    import pettingzoo

    import twilight_env

    makers = {
        "twilight 4p": lambda: twilight_env.env(num_players=4),
        "twilight 3p": lambda: twilight_env.env(num_players=3),
        "texas_holdem_v4": lambda: pettingzoo.make("aec", "classic/texas_holdem-v4"),
    }
    best = {name: 0.0 for name in makers}
    envs = {name: make() for name, make in makers.items()}
    for r in range(a.repeats):  # interleaved, so load changes hit every env alike
        for name, e in envs.items():
            best[name] = max(best[name], aec_loop(e, a.steps, a.seed + r))
    ref = best["texas_holdem_v4"]
    print(f"AEC loop (agent_iter, last, random masked action, step), {a.steps} steps, "
          f"best of {a.repeats}, CPU time")
    print(f"{'env':<18}{'steps/s':>10}{'us/step':>10}{'x texas_holdem_v4':>20}")
    for name, sps in best.items():
        print(f"{name:<18}{sps:>10.0f}{1e6 / sps:>10.1f}{sps / ref:>20.2f}")

    ours, along, theirs = observation_cost(a.obs_states, a.repeats, a.seed)
    print()
    print(f"one observation ({a.obs_states} states, best of {a.repeats}):")
    print(f"  twilight encode_observation, cold        {ours:6.1f} us", end="")
    print("" if theirs is None else f"   oh_hell / ours = {theirs / ours:.2f}")
    print(f"  twilight encode_observation, along deals {along:6.1f} us", end="")
    print("" if theirs is None else f"   oh_hell / ours = {theirs / along:.2f}")
    if theirs is None:
        print("  (pyspiel not installed: no OpenSpiel oh_hell reference)")
    else:
        print(f"  OpenSpiel oh_hell information_state_tensor {theirs:6.1f} us")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
