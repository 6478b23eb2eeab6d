"""``python -m twilight_env.training.nfsp``: see :mod:`twilight_env.training.nfsp.run`."""

import sys

from twilight_env.training.nfsp.run import main

if __name__ == "__main__":
    sys.exit(main())
