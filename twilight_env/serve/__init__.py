"""``twilight serve``: play, watch and replay Twilight in a browser.

The server (:mod:`twilight_env.serve.app`, Starlette and uvicorn from the ``serve``
extra) keeps live games in a :class:`~twilight_env.serve.games.GameStore`; every game
is a PettingZoo environment (:func:`twilight_env.raw_env`) whose moves, the person's
and the agents', all go through ``env.step``. What the page receives for a person's
seat is built from that seat's :class:`~twilight_env.rules.infoset.InfoSet` only (R2.5,
R7.1), so hidden hands never leave the server. The page itself is plain HTML, CSS and
JavaScript in ``static/`` (no build step, nothing loaded from elsewhere).

Every request first passes :class:`~twilight_env.serve.guard.Guard` (trusted ``Host``,
same ``Origin``, JSON bodies only, a token beyond loopback, security headers), and agents
come only from :mod:`twilight_env.serve.specs` (names with capped options, no files).
See ``docs/SERVE.md`` for the HTTP API, the limits and what the server guards against.
"""

from twilight_env.serve.games import Game, GameError, GameStore, Limits

__all__ = ["Game", "GameError", "GameStore", "Limits"]
