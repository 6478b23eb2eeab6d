"""The deal score of the public interface (R5): ``deal_score(captured, cult)``.

The rules layer holds it (:mod:`twilight_env.rules.scoring`); this module keeps the
documented name ``twilight_env.scoring`` (docs/API.md).
"""

from twilight_env.rules.scoring import *  # noqa: F401,F403
