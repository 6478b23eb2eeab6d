"""Test-suite setup shared by every test directory.

- The repository root goes on ``sys.path``, so the tests run from a plain checkout
  (``pytest`` in the repository root) as well as from an installed package.
- Without torch (the ``train`` extra) the training tests are not collected; without
  tensorboard the ones that run a training loop skip.
- Hypothesis profiles: ``default`` (used unless told otherwise) keeps the property tests
  quick and deterministic (no deadline: the machine may be shared); ``thorough``
  (``HYPOTHESIS_PROFILE=thorough pytest tests/engine``) runs many more examples.
"""

import importlib.util
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

collect_ignore = []
if importlib.util.find_spec("torch") is None:  # the training tests need the `train` extra's torch
    collect_ignore.append("training")

try:
    from hypothesis import HealthCheck, settings
except ImportError:  # hypothesis is in the `test` extra; the property tests skip without it
    pass
else:
    settings.register_profile("default", deadline=None, max_examples=100, derandomize=True,
                              suppress_health_check=[HealthCheck.too_slow])
    settings.register_profile("thorough", deadline=None, max_examples=2000,
                              suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
