"""``openspiel``: OpenSpiel's bots playing through the agent protocol.

Specs: ``openspiel:ismcts[:iterations=100,uct_c=2.0,rollouts=1,world_samples=-1]`` and
``openspiel:random`` (``openspiel`` alone is ``openspiel:ismcts``). Needs ``open-spiel``
(``pip install open-spiel``; the ``test`` and ``bench`` extras install it).

Each decision, the adapter knows only the :class:`~twilight_env.rules.infoset.InfoSet`. It
draws one world from it (:meth:`~twilight_env.rules.infoset.InfoSet.sample_hands`, uniform over
the hidden cards consistent with the counts, R2.5), builds the ``python_twilight``
OpenSpiel state of that world with the public history
(:func:`twilight_env.interop.openspiel.state_from_world`), and asks the bot. The true deal is
never reached: the same information set and generator give the same action whatever the
hidden cards are (``tests/interop/test_bots.py`` re-deals them to check).

Bots:

- ``ismcts``: OpenSpiel's information-set MCTS (Cowling, Powley & Whitehouse 2012),
  ``open_spiel.python.algorithms.ismcts.ISMCTSBot``, with random-rollout leaf values
  (``mcts.RandomRolloutEvaluator``) and the most-visited root action. It resamples a world
  at each iteration through the game's ``resample_from_infostate``. The Python bot is
  used because OpenSpiel's C++ ``pyspiel.ISMCTSBot`` does not call a Python game's
  ``resample_from_infostate`` (it crashed on this game and on OpenSpiel's own
  ``python_kuhn_poker`` in open-spiel 2.0.2).
- ``random``: ``pyspiel.make_uniform_random_bot``, a uniformly random legal action.

Every decision builds a fresh bot seeded from the ``rng`` passed to :meth:`act`, so
results are reproducible under the arena's seeded agent streams.
"""

from __future__ import annotations

import numpy as np

from twilight_env.agents.base import check_number

BOTS = ("ismcts", "random")
_GAMES: dict = {}


def _game(num_players: int):
    game = _GAMES.get(num_players)
    if game is None:
        import pyspiel

        import twilight_env.interop.openspiel  # noqa: F401  (registers python_twilight)

        game = _GAMES[num_players] = pyspiel.load_game(f"python_twilight(players={num_players})")
    return game


def _ismcts_class():
    from open_spiel.python.algorithms import ismcts

    class _Bot(ismcts.ISMCTSBot):
        """OpenSpiel's Python IS-MCTS bot, seeded resampling, usable in ``evaluate_bots``."""

        def __init__(self, game, evaluator, uct_c, max_simulations, max_world_samples, random_state):
            super().__init__(game, evaluator, uct_c, max_simulations, max_world_samples=max_world_samples,
                             random_state=random_state,
                             final_policy_type=ismcts.ISMCTSFinalPolicyType.MAX_VISIT_COUNT)
            # the bot's own generator seeds each resampling, so a seeded bot repeats itself
            self.set_resampler(lambda state, player: state.resample_from_infostate(player, random_state.uniform))

        def restart_at(self, state):
            """Nothing to keep between decisions: each search builds a fresh tree."""

        def inform_action(self, state, player_id, action):
            """Nothing to keep between decisions."""

    return _Bot


_BOT_CLASS = None


def make_ismcts_bot(game, iterations: int = 100, uct_c: float = 2.0, rollouts: int = 1,
                    world_samples: int = -1, seed: int = 0):
    """OpenSpiel's Python IS-MCTS bot for ``python_twilight`` (see the module docstring).

    Args:
        game: a loaded ``python_twilight`` game.
        iterations: simulations per decision (>= 1).
        uct_c: UCT exploration constant (>= 0); returns lie in [-1, 1].
        rollouts: random rollouts per leaf evaluation (>= 1).
        world_samples: -1 resamples a world each iteration; ``k > 0`` draws ``k`` worlds
            once per decision and reuses them.
        seed: seeds the bot's ``numpy.random.RandomState`` (worlds, rollouts, ties).

    Returns:
        a ``pyspiel.Bot`` whose ``restart_at`` and ``inform_action`` do nothing, so
        ``open_spiel.python.algorithms.evaluate_bots`` can run it.
    """
    global _BOT_CLASS
    from open_spiel.python.algorithms import mcts

    if _BOT_CLASS is None:
        _BOT_CLASS = _ismcts_class()
    rs = np.random.RandomState(seed)
    return _BOT_CLASS(game, mcts.RandomRolloutEvaluator(rollouts, rs), float(uct_c), iterations,
                      world_samples, rs)


def _positive_int(name, v):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
        raise ValueError(f"{name} must be a positive int, got {v!r}")


class OpenSpielAgent:
    """An OpenSpiel bot deciding from a world sampled from the information set.

    Args:
        bot: ``"ismcts"`` or ``"random"``.
        iterations, uct_c, rollouts, world_samples: ``ismcts`` options (see
            :func:`make_ismcts_bot`); refused for ``random``.

    Raises:
        ValueError: on an unknown bot (listing them), an option the bot does not take, or
            a bad value; ImportError (with the install command) without ``open-spiel``.
    """

    stateless = True
    """Decisions depend only on (information set, legal actions, rng)."""

    def __init__(self, bot: str = "ismcts", iterations: int | None = None, uct_c: float | None = None,
                 rollouts: int | None = None, world_samples: int | None = None):
        if bot not in BOTS:
            raise ValueError(f"unknown OpenSpiel bot {bot!r}; valid: {', '.join(BOTS)} "
                             f"(spec openspiel:BOT[:key=value,...])")
        opts = {"iterations": iterations, "uct_c": uct_c, "rollouts": rollouts, "world_samples": world_samples}
        if bot == "random":
            given = [k for k, v in opts.items() if v is not None]
            if given:
                raise ValueError(f"openspiel:random takes no options, got {given}")
        else:
            iterations = 100 if iterations is None else iterations
            uct_c = 2.0 if uct_c is None else uct_c
            rollouts = 1 if rollouts is None else rollouts
            world_samples = -1 if world_samples is None else world_samples
            _positive_int("iterations", iterations)
            _positive_int("rollouts", rollouts)
            check_number("uct_c", uct_c, 0, agent="openspiel:ismcts")
            if isinstance(world_samples, bool) or not isinstance(world_samples, int) or (
                    world_samples != -1 and world_samples < 1):
                raise ValueError(f"world_samples must be -1 (a new world each iteration) or a positive int, "
                                 f"got {world_samples!r}")
        try:
            import pyspiel  # noqa: F401
        except ImportError:
            raise ImportError("the openspiel agents need OpenSpiel: pip install open-spiel") from None
        self.bot = bot
        self.iterations, self.uct_c, self.rollouts, self.world_samples = iterations, uct_c, rollouts, world_samples
        self.name = "openspiel:random" if bot == "random" else f"openspiel:ismcts:iterations={iterations}"

    def reset(self) -> None:
        """Nothing to reset: each decision builds a fresh bot."""

    def state_for(self, infoset, rng: np.random.Generator):
        """The OpenSpiel state the bot searches from: one world drawn from ``infoset``."""
        from twilight_env.interop.openspiel import state_from_world

        return state_from_world(_game(infoset.num_players), infoset, infoset.sample_hands(rng))

    def act(self, infoset, legal_actions, rng: np.random.Generator) -> int:
        if not legal_actions:
            raise ValueError("openspiel.act needs at least one legal action (the deal may be over)")
        import pyspiel

        state = self.state_for(infoset, rng)
        seed = int(rng.integers(2 ** 31 - 1))
        if self.bot == "random":
            bot = pyspiel.make_uniform_random_bot(state.current_player(), seed)
        else:
            if len(legal_actions) == 1:
                return legal_actions[0]
            bot = make_ismcts_bot(state.get_game(), self.iterations, self.uct_c, self.rollouts,
                                  self.world_samples, seed)
        action = int(bot.step(state))
        if action not in legal_actions:
            raise ValueError(f"OpenSpiel bot {self.bot!r} chose {action}, not legal here: {list(legal_actions)}")
        return action


__all__ = ["OpenSpielAgent", "make_ismcts_bot", "BOTS"]


# The declaration (twilight_env.agents.declaration): read from this source without importing it.
from twilight_env.agents.base import AgentDecl, Option, declare  # noqa: E402

declare(AgentDecl(
    name="openspiel", factory=OpenSpielAgent, summary="an OpenSpiel bot on a world sampled from the information set",
    searches=True, leading_option="bot",
    options=(
        Option("bot", str, "ismcts", doc="'ismcts' or 'random' (written first: openspiel:BOT:k=v)"),
        Option("iterations", int, None, low=1, doc="search iterations (ismcts; 100)"),
        Option("uct_c", float, None, low=0, doc="exploration constant (ismcts; 2.0)"),
        Option("rollouts", int, None, low=1, doc="rollouts per leaf (ismcts; 1)"),
        Option("world_samples", int, None, low=-1, doc="-1: a new world each iteration, or a positive count"),
    )))
