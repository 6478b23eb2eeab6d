"""Named held-out deal sets, kept for reported figures.

A deal set is the deals drawn with ``numpy.random.default_rng(seed)`` (R2.3; see
``twilight_env.records.dealsets``). The seeds below name the deal sets on which this project's
strength figures (``twilight ladder``) and study figures are reported. No training run,
evaluation during training or tuning may use them, so a figure measured on them is
measured on deals that no choice was fitted to: ``training`` refuses them as evaluation
seeds (:func:`check_not_heldout`).
"""

from __future__ import annotations

HELDOUT_SEEDS: dict[str, int] = {"heldout-1": 2_026_120_101, "heldout-2": 2_026_120_102,
                                 "heldout-3": 2_026_120_103}
"""Name -> seed of each held-out deal set."""


def heldout_seed(name: str) -> int:
    """The seed of a named held-out deal set.

    Raises:
        ValueError: an unknown name (the message lists the names).
    """
    try:
        return HELDOUT_SEEDS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown held-out deal set {name!r}; the sets are {', '.join(sorted(HELDOUT_SEEDS))}") \
            from None


def check_not_heldout(seed: int, what: str = "seed") -> int:
    """Return ``seed`` unless it is the seed of a held-out deal set.

    Raises:
        ValueError: ``seed`` is a held-out set's seed, which training, evaluation during
            training and tuning must not use.
    """
    for name, s in HELDOUT_SEEDS.items():
        if int(seed) == s:
            raise ValueError(f"{what} {seed} is the held-out deal set {name!r}, kept for reported figures; "
                             "training and tuning must use other seeds")
    return seed
