"""Studies: arena, edge, ladder and terminal play.

Importing this package imports the packages whose agents the studies may name
(``twilight_env.training``: ``respond``; ``twilight_env.interop``: ``openspiel``); each
makes its agents' declarations known without importing their modules.
"""

import twilight_env.interop  # noqa: F401  (agent openspiel)
import twilight_env.training  # noqa: F401  (agent respond)
