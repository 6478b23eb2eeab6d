"""An OpenSpiel IS-MCTS match on ``python_twilight``, checked against the env's scoring.

Player 0 (the solo in 3 players) is OpenSpiel's Python ``ISMCTSBot``; the others are
OpenSpiel's uniform random bots. ``open_spiel.python.algorithms.evaluate_bots`` plays each
deal, dealing the cards at the game's chance nodes. Each finished deal is then replayed
action by action in the PettingZoo env with the same cards, and the script compares
OpenSpiel's returns with the env's rewards::

    python examples/openspiel_ismcts.py --deals 4 --iterations 100

Needs ``open-spiel`` (the ``test`` or ``examples`` extra).
"""

from __future__ import annotations

import argparse

import numpy as np


def main(deals: int = 4, iterations: int = 100, num_players: int = 3, seed: int = 0, verbose: bool = True) -> dict:
    """Play ``deals`` deals; return OpenSpiel's returns and the env's rewards per deal.

    Returns:
        dict with ``openspiel`` and ``env``: float arrays ``(deals, players)``.
    """
    import pyspiel
    from open_spiel.python.algorithms import evaluate_bots

    import twilight_env
    import twilight_env.interop.openspiel  # noqa: F401  (registers python_twilight)
    from twilight_env.interop.openspiel_bots import make_ismcts_bot
    from twilight_env.rules.cards import CARDS

    game = pyspiel.load_game(f"python_twilight(players={num_players})")
    rng = np.random.RandomState(seed)
    ours, theirs = [], []
    for d in range(deals):
        bots = [make_ismcts_bot(game, iterations=iterations, seed=seed * 1000 + d)]
        bots += [pyspiel.make_uniform_random_bot(p, seed * 1000 + d) for p in range(1, num_players)]
        state = game.new_initial_state()
        returns = evaluate_bots.evaluate_bots(state, bots, rng)
        # the same deal and actions in the PettingZoo env
        eng = state.engine_state
        deal = [[CARDS[c] for c in range(28) if h >> c & 1] for h in eng.initial_hands]
        env = twilight_env.env(num_players=num_players)
        opts = {"deal": deal, "solo": 0} if num_players == 3 else {"deal": deal, "dealer": (eng.first_leader - 1) % 4}
        env.reset(seed=d, options=opts)
        n_chance = 28 if num_players == 3 else 29
        for a in state.history()[n_chance:]:
            env.step(a)
        ours.append(returns)
        theirs.append([env.rewards[a] for a in env.possible_agents])
    out = {"openspiel": np.asarray(ours, dtype=float), "env": np.asarray(theirs, dtype=float)}
    if verbose:
        print(f"{deals} deals, {num_players} players, IS-MCTS ({iterations} iterations) as player 0 against random")
        print(f"player 0 mean return {out['openspiel'][:, 0].mean():+.3f}; "
              f"largest |OpenSpiel - env| {np.abs(out['openspiel'] - out['env']).max():.2e}")
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--deals", type=int, default=4)
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--players", type=int, choices=(3, 4), default=3)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    main(a.deals, a.iterations, a.players, a.seed)
