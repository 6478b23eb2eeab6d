"""NashConv of saved average policies on a reduced deck, the tree built once.

Usage::

    python -m twilight_env.training.nfsp.evaluate --players 3 --tricks 2 \\
        --out results/nfsp/nash_conv_2t3p.json RUN/avg_policy_*.npz

For each ``.npz`` (the ``nfsp`` agent's weights, :mod:`twilight_env.agents.nfsp`), the average
policy's NashConv on the ``"seats"`` model of the game
(:func:`~twilight_env.training.reduced_policy.learned_nash_conv`, deal points, R5), with the
seconds it took; the file's decisions are read from its name (``avg_policy_<decisions>.npz``)
where it has one. Writes one JSON file (atomically) after each policy.
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

from twilight_env.agents.nfsp import forward_probs, load_weights
from twilight_env.training.reduced_policy import learned_nash_conv
from twilight_env.training.reduced_solve import build_tree, make_model
from twilight_env.util.atomic import write_json


def policy_probs_fn(path: str | Path):
    """``(probs_fn, meta)`` of an average-policy file: ``probs_fn(obs, mask) -> (B, 31)``.

    Raises:
        ValueError: as :func:`twilight_env.agents.nfsp.load_weights`.
    """
    layers, meta = load_weights(path)
    return (lambda obs, mask: forward_probs(layers, obs, mask)), meta


def main(argv=None) -> int:
    """Evaluate (module docstring); returns the exit status."""
    ap = argparse.ArgumentParser(prog="python -m twilight_env.training.nfsp.evaluate", description=__doc__.splitlines()[0])
    ap.add_argument("--players", type=int, choices=(3, 4), required=True)
    ap.add_argument("--tricks", type=int, choices=range(1, 7), required=True, metavar="1..6")
    ap.add_argument("--out", required=True, help="JSON file to write")
    ap.add_argument("policies", nargs="+", help="avg_policy .npz files")
    a = ap.parse_args(argv)
    fns = []
    for p in a.policies:
        fn, meta = policy_probs_fn(p)
        if meta["num_players"] != a.players or meta.get("tricks") != a.tricks:
            raise SystemExit(f"{p} was trained for {meta['num_players']} players and {meta.get('tricks')} tricks, "
                             f"not {a.players} and {a.tricks}")
        fns.append((p, fn))
    t0 = time.perf_counter()
    tree = build_tree(a.tricks, a.players)
    model = make_model(tree, "seats")
    result = {"players": a.players, "tricks": a.tricks, "build_seconds": round(time.perf_counter() - t0, 1),
              "infosets": model.num_isets, "rows": []}
    print(f"tree: {tree.num_nodes:,} nodes, {model.num_isets:,} information sets, {result['build_seconds']} s", flush=True)
    for p, fn in fns:
        t0 = time.perf_counter()
        nc, per = learned_nash_conv(tree, model, fn)
        m = re.search(r"_(\d+)\.npz$", str(p))
        row = {"policy": str(p), "decisions": int(m.group(1)) if m else None, "nash_conv": nc,
               "per_player": [float(x) for x in per], "seconds": round(time.perf_counter() - t0, 1)}
        result["rows"].append(row)
        write_json(a.out, result, indent=1)
        print(row, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
