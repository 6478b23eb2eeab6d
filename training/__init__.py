"""Training: self-play learners, expert iteration, best responses and their checks.

Importing this package makes the agent ``respond`` (the search responder) known to the
registry (:func:`twilight_env.agents.base.declare_source`: its declaration is read from
``search_response.py`` without importing it, so neither that module nor torch is loaded
until the agent is built).
"""

from pathlib import Path

from twilight_env.agents.base import declare_source

declare_source(f"{__name__}.search_response", Path(__file__).with_name("search_response.py"))
