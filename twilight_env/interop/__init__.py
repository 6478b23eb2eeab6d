"""OpenSpiel: the game, and OpenSpiel bots as agents.

Importing this package makes the agent ``openspiel`` known to the registry
(:func:`twilight_env.agents.base.declare_source`: its declaration is read from
``openspiel_bots.py`` without importing it, so neither that module nor OpenSpiel is loaded
until the agent is built).
"""

from pathlib import Path

from twilight_env.agents.base import declare_source

declare_source(f"{__name__}.openspiel_bots", Path(__file__).with_name("openspiel_bots.py"))
