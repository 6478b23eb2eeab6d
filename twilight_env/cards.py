"""The card ids and codes of the public interface (R1): ``CARDS``, ``card_id``, ``card_code``.

The rules layer holds them (:mod:`twilight_env.rules.cards`); this module keeps the
documented name ``twilight_env.cards`` (docs/API.md).
"""

from twilight_env.rules.cards import *  # noqa: F401,F403
