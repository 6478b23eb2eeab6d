"""``python -m twilight_env.training.mmd``: :func:`twilight_env.training.mmd.run.main`."""

import sys

from twilight_env.training.mmd.run import main

sys.exit(main())
