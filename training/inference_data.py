"""Records for the card-location model: information-set features and where every unseen card truly lies.

``python -m twilight_env.training.inference_data --players 3 --deals 4000 --agents neural:default --seed 11 --out d3.npz``
plays ``--deals`` deals (drawn with ``numpy.random.default_rng(seed)``, R2.3; the first
leader uniform over the four seats) with the agent spec at every seat and keeps each
decision point with probability ``--keep``: the features of the *deciding* seat's
information set (:func:`twilight_env.agents.worlds.infoset_features`, the searcher's view in
``pimc``/``ismcts``) and, as labels, the relative seat truly holding each unseen card.
Agents with ``act_batch`` (``neural``) decide for ``--batch`` deals in one forward pass.

File format (``numpy.savez_compressed``):

| key | dtype, shape | meaning |
|-----|--------------|---------|
| ``x`` | uint8 ``(N, 783)`` | features × ``x_scale`` (every feature is a multiple of 1/7, so this is exact) |
| ``y`` | int8 ``(N, 28)`` | relative seat (0..3, 0 the viewer) holding each unseen card; -1 for cards not unseen |
| ``deal`` | int32 ``(N,)`` | index of the deal the record comes from (deal ``i`` of ``seed``) |
| ``meta`` | str (JSON) | ``format`` ``"twilight-inference-data"``, ``version``, ``feature_version``, ``num_players``, ``agents``, ``seed``, ``deals``, ``keep``, ``x_scale`` |

Seeds of the held-out deal sets (``twilight_env.rules.heldout`` where present) and every seed
>= 2_026_000_000 (the range they are drawn from) are refused.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass

import numpy as np

from twilight_env.agents.base import make_agent
from twilight_env.agents.worlds import FEATURE_SIZE, FEATURE_VERSION, infoset_features, true_locations
from twilight_env.rules.engine import State
from twilight_env.rules.infoset import InfoSet

FORMAT = "twilight-inference-data"
VERSION = 1
X_SCALE = 7
"""Features are stored as ``round(feature * X_SCALE)`` in uint8."""
HELDOUT_FLOOR = 2_026_000_000
"""Seeds from here up are reserved for held-out deal sets and refused."""


def check_seed(seed: int, what: str = "--seed") -> int:
    """Return ``seed`` unless it may name a held-out deal set.

    Raises:
        ValueError: a negative seed, a seed >= ``HELDOUT_FLOOR``, or a held-out set's seed.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"{what} must be an int >= 0, got {seed!r}")
    if seed >= HELDOUT_FLOOR:
        raise ValueError(f"{what} {seed} is in the range kept for held-out deal sets (>= {HELDOUT_FLOOR}); "
                         "use a smaller seed")
    try:  # the named held-out sets, where this version of the package has them
        from twilight_env.rules.heldout import check_not_heldout  # type: ignore[import-not-found]
    except ImportError:
        return int(seed)
    return int(check_not_heldout(seed, what))


@dataclass
class DataConfig:
    """What to generate."""

    players: int = 3
    """3 or 4."""
    deals: int = 1000
    """Deals to play."""
    agents: str = "neural:default"
    """Agent spec at every seat."""
    seed: int = 1
    """Deal seed (deal i is the i-th draw of ``default_rng(seed)``); agents use a derived stream."""
    keep: float = 0.5
    """Chance that a decision point is recorded."""
    batch: int = 64
    """Deals played side by side (one forward pass for ``act_batch`` agents)."""


def generate(cfg: DataConfig) -> dict:
    """Play the deals and return the arrays of the file format (module table).

    Raises:
        ValueError: on a bad option (names it and what is allowed).
    """
    if cfg.players not in (3, 4):
        raise ValueError(f"--players must be 3 or 4, got {cfg.players!r}")
    if cfg.deals < 1:
        raise ValueError(f"--deals must be >= 1, got {cfg.deals!r}")
    if not 0.0 < cfg.keep <= 1.0:
        raise ValueError(f"--keep must be in (0, 1], got {cfg.keep!r}")
    if cfg.batch < 1:
        raise ValueError(f"--batch must be >= 1, got {cfg.batch!r}")
    check_seed(cfg.seed)
    agent = make_agent(cfg.agents)
    deal_rng = np.random.default_rng(cfg.seed)
    agent_rng = np.random.default_rng(np.random.SeedSequence((cfg.seed, 0x1F3C)))
    xs, ys, ds = [], [], []
    batched = hasattr(agent, "act_batch")
    for start in range(0, cfg.deals, cfg.batch):
        states = []
        for d in range(start, min(start + cfg.batch, cfg.deals)):
            leader = int(deal_rng.integers(4))
            states.append((d, State.random(deal_rng, leader, cfg.players)))
        for _, st in states:
            reset = getattr(agent, "reset", None)
            if reset is not None and not batched:
                reset()
        while True:
            active = [(d, st) for d, st in states if not st.done]
            if not active:
                break
            infos = [InfoSet(st, st.deciding_seat) for _, st in active]
            for (d, st), info in zip(active, infos):
                if agent_rng.random() < cfg.keep:
                    xs.append(np.rint(infoset_features(info) * X_SCALE).astype(np.uint8))
                    ys.append(true_locations(st, info))
                    ds.append(d)
            if batched:
                actions = agent.act_batch(infos, [i.legal_actions for i in infos])
            else:
                actions = [agent.act(i, i.legal_actions, agent_rng) for i in infos]
            for (_, st), info, a in zip(active, infos, actions):
                if a not in info.legal_actions:
                    raise ValueError(f"agent {cfg.agents!r} chose illegal action {a!r}")
                st.apply(int(a))
    meta = {"format": FORMAT, "version": VERSION, "feature_version": FEATURE_VERSION,
            "num_players": cfg.players, "agents": cfg.agents, "seed": cfg.seed, "deals": cfg.deals,
            "keep": cfg.keep, "x_scale": X_SCALE}
    x = np.stack(xs) if xs else np.zeros((0, FEATURE_SIZE), np.uint8)
    y = np.stack(ys) if ys else np.zeros((0, 28), np.int8)
    return {"x": x, "y": y, "deal": np.asarray(ds, dtype=np.int32), "meta": json.dumps(meta)}


def save(arrays: dict, path: str) -> None:
    """Write the arrays with ``numpy.savez_compressed`` to a temporary file, then rename it onto ``path``."""
    tmp = f"{path}.tmp{os.getpid()}.npz"
    np.savez_compressed(tmp, **arrays)
    os.replace(tmp, path)


def load(path: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict]:
    """Read a record file: ``(x float32 (N, 783), y int8 (N, 28), deal int32 (N,), meta dict)``.

    Raises:
        ValueError: if the file is missing, corrupt, not a record file, or has another
            feature version.
    """
    if not os.path.isfile(path):
        raise ValueError(f"record file not found: {path!r} (write one with `python -m twilight_env.training.inference_data`)")
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            x, y, deal = z["x"], z["y"], z["deal"]
    except Exception as e:  # numpy / zipfile raise many kinds on a damaged file
        raise ValueError(f"cannot read record file {path!r}: corrupt or not written by twilight_env.training.inference_data "
                         f"({type(e).__name__})") from None
    if meta.get("format") != FORMAT or meta.get("version") != VERSION:
        raise ValueError(f"{path!r} is not a {FORMAT} version {VERSION} file")
    if meta.get("feature_version") != FEATURE_VERSION:
        raise ValueError(f"{path!r} has feature version {meta.get('feature_version')}; this code uses {FEATURE_VERSION}")
    if x.shape[1:] != (FEATURE_SIZE,) or y.shape[1:] != (28,) or len(x) != len(y) or len(deal) != len(x):
        raise ValueError(f"{path!r} has arrays of unexpected shapes x{x.shape} y{y.shape} deal{deal.shape}")
    return x.astype(np.float32) / meta["x_scale"], y, deal, meta


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m twilight_env.training.inference_data", description=__doc__.split("\n")[0])
    p.add_argument("--players", type=int, choices=(3, 4), required=True, help="3 or 4 players (required)")
    p.add_argument("--deals", type=int, required=True, help="deals to play (required)")
    p.add_argument("--agents", default="neural:default", help="agent spec at every seat (default neural:default)")
    p.add_argument("--seed", type=int, default=1, help="seed of the deals and the agents (default %(default)s)")
    p.add_argument("--keep", type=float, default=0.5, help="chance a decision point is recorded (default 0.5)")
    p.add_argument("--batch", type=int, default=64, help="deals played side by side (default %(default)s)")
    p.add_argument("--out", required=True, help="the data file to write (required)")
    a = p.parse_args(argv)
    try:
        arrays = generate(DataConfig(a.players, a.deals, a.agents, a.seed, a.keep, a.batch))
    except ValueError as e:
        p.error(str(e))
    save(arrays, a.out)
    print(f"wrote {len(arrays['x'])} records from {a.deals} deals to {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
