"""The shipped networks with their subnormal weights as stored and set to 0: same play, time.

Training leaves some float32 weights of the shipped policy/value networks below
``np.finfo(np.float32).tiny`` (about 1.2e-38) in magnitude: subnormal numbers, which the CPU
multiplies by a slow path, so a matrix product with a few of them runs many times slower.
The forward pass sets them to 0 when it loads a network
(:func:`twilight_env.agents.nn.npz_file.flush_subnormal`). This script measures, for each
player count, in one run and side by side:

- how many weights are subnormal;
- the ``guided:default`` search (the network at every leaf batch) playing whole deals with
  each version of the network, alternating per deal, on the same deals and random streams:
  wall seconds per deal, the ratio, and whether every deal ends with the same points;
- the network alone (``policy:default``'s one-decision forward pass,
  ``NumpyPolicyValueNet.forward_one``) on the decisions of those deals: milliseconds per
  decision, the ratio, and whether the probabilities are bitwise equal;
- the leaf batches (``forward_first``, up to 32 positions) the search sent, replayed on both
  versions: milliseconds per batch, the ratio, bitwise equality.

With ``--mmd-steps N`` it also trains two MMD lines (``python -m twilight_env.training.mmd``,
3 players, the full deck, from the shipped weights, seed 0) for N updates each, one with the
CPU treating subnormal floats as 0 while it trains (as the trainer does,
``torch.set_flush_denormal``) and one without: wall seconds per update, the ratio, and the
last update's losses of both.

With ``--edge FOLDER`` it replays the first ``--edge-deals`` finished deals of a
``twilight edge`` run's progress file (``edge.checkpoint.json``, 3 plays each, with the
run's agents, seed and random streams, the networks as now loaded) and says whether each
ends with the points the run stored: for a run whose early deals were played with the
weights as stored, a check that the deals it plays now continue it.

BLAS and torch run on one thread. Usage::

    python benchmarks/subnormal_weights.py --players 3 4 --deals 4 --mmd-steps 4
    python benchmarks/subnormal_weights.py --players 3 --deals 1 --edge results/edge_guided_h2 --edge-deals 30
"""

from __future__ import annotations

import argparse
import os
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # one core: BLAS without helper threads
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402


class _Recorder:
    """A network that forwards to ``net`` and keeps every leaf batch it is asked."""

    def __init__(self, net, batches: list):
        self.net, self.batches = net, batches

    def __getattr__(self, name):
        return getattr(self.net, name)

    def forward_first(self, pre, roles, legal):
        self.batches.append((np.array(pre), np.array(roles), np.array(legal)))
        return self.net.forward_first(pre, roles, legal)


class _Recording:
    """``guided:default``'s decisions (:meth:`twilight_env.agents.guided.GuidedAgent.with_network`
    with a given network), the information sets it decided on appended to ``decisions``."""

    def __init__(self, net, players: int, decisions: list | None = None):
        from twilight_env.agents.guided import GuidedAgent

        self.agent, self.decisions = GuidedAgent.with_network(net, players), decisions

    def act(self, infoset, legal_actions, rng):
        if self.decisions is not None and len(legal_actions) > 1:
            self.decisions.append(infoset)
        return self.agent.act(infoset, legal_actions, rng)


def _subnormal(net) -> int:
    tiny = np.finfo(np.float32).tiny
    return int(sum(((np.abs(v) < tiny) & (v != 0)).sum() for v in net.params.values()))


def _play(net, players: int, deal, seed: int, decisions=None) -> tuple[list[int], float]:
    from twilight_env.agents.base import play_deal
    from twilight_env.rules.engine import State

    state = State.from_deal(deal, 0, players)
    agents = [_Recording(net, players, decisions) for _ in range(4)]
    t = time.perf_counter()
    play_deal(state, agents, np.random.default_rng(seed))
    return list(state.side_scores()), time.perf_counter() - t


def _timed(fn, items, repeats: int) -> float:
    """Seconds per item of ``fn`` over ``items``, the best of ``repeats`` passes."""
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        for item in items:
            fn(item)
        best = min(best, (time.perf_counter() - t) / max(len(items), 1))
    return best


def measure(players: int, deals: int, seed: int, repeats: int) -> dict:
    """The figures of one player count (module docstring)."""
    from twilight_env.agents.guided import default_weights
    from twilight_env.agents.nn.features import infoset_row, role_of
    from twilight_env.agents.nn.numpy_pv import load_pv_npz
    from twilight_env.records.dealsets import deal_set

    path = default_weights(players)
    stored, _ = load_pv_npz(path, players, keep_subnormal=True)
    flushed, _ = load_pv_npz(path, players)
    deal_list, _ = deal_set(deals + 1, seed, players)
    _play(flushed, players, deal_list[0], seed)  # compiles the search's kernels, untimed
    _play(stored, players, deal_list[0], seed)
    times = {"stored": [], "flushed": []}
    same_deals, decisions, batches = True, [], []
    for d, deal in enumerate(deal_list[1:], start=1):
        order = ("stored", "flushed") if d % 2 else ("flushed", "stored")
        points = {}
        for which in order:
            net = stored if which == "stored" else _Recorder(flushed, batches)
            points[which], seconds = _play(net, players, deal, seed + d, decisions if which == "flushed" else None)
            times[which].append(seconds)
        same_deals &= points["stored"] == points["flushed"]
    inputs = [(infoset_row(i), role_of(players, i.acting_seat),
               np.isin(np.arange(31), i.legal_actions)) for i in decisions]
    one = {name: _timed(lambda x, n=net: n.forward_one(*x), inputs, repeats)
           for name, net in (("stored", stored), ("flushed", flushed))}
    same_one = all(np.array_equal(stored.forward_one(*x)[0], flushed.forward_one(*x)[0]) for x in inputs)
    leaf = {name: _timed(lambda b, n=net: n.forward_first(*b), batches[:2000], repeats)
            for name, net in (("stored", stored), ("flushed", flushed))}
    same_leaf = all(all(np.array_equal(a, b) for a, b in zip(stored.forward_first(*x), flushed.forward_first(*x)))
                    for x in batches)
    return {"players": players, "subnormal": _subnormal(stored), "weights": int(sum(v.size for v in stored.params.values())),
            "deal_s": {k: float(np.mean(v)) for k, v in times.items()}, "same_deals": same_deals, "deals": deals,
            "one_ms": {k: 1e3 * v for k, v in one.items()}, "decisions": len(inputs), "same_one": same_one,
            "leaf_ms": {k: 1e3 * v for k, v in leaf.items()}, "batches": len(batches), "same_leaf": same_leaf}


def measure_mmd(steps: int) -> dict:
    """Seconds per MMD update and the last update's losses, with and without subnormals as 0 (module docstring)."""
    import json
    import tempfile

    import torch

    from twilight_env.training.mmd.config import MMDConfig
    from twilight_env.training.mmd.run import train

    out, real = {}, torch.set_flush_denormal
    for which in ("as stored", "set to 0"):
        if which == "as stored":
            torch.set_flush_denormal = lambda on: False  # the trainer's setting, left off
        try:
            with tempfile.TemporaryDirectory() as tmp:
                cfg = MMDConfig(players=3, tricks=7, lr=1e-4, eval_every=10**6, seed=0)
                counters = train(f"{tmp}/line", cfg, steps=steps, init_weights="default", log=lambda _: None)
                last = json.loads(open(f"{tmp}/line/curve.jsonl").read().splitlines()[-1])
        finally:
            torch.set_flush_denormal = real
        out[which] = {"s_per_update": counters["seconds"] / steps,
                      "losses": {k: last[k] for k in ("policy", "kl", "entropy", "value", "grad_norm") if k in last}}
    return out


def replay_edge(folder: str, deals: int) -> tuple[int, int]:
    """``(deals replayed, deals whose points differ from the stored ones)`` of an edge run's
    progress file (module docstring).

    Raises:
        ValueError: no progress file in ``folder``, or one of another kind or of more than one configuration.
    """
    from twilight_env.experiments.common import play_seeded
    from twilight_env.experiments.edge.core import rotated_deal
    from twilight_env.records.dealsets import deal_set
    from twilight_env.rules.engine import State
    from twilight_env.util.jsonfile import read_json

    ckpt = read_json(os.path.join(folder, "edge.checkpoint.json"), "edge progress file")
    if not isinstance(ckpt, dict) or ckpt.get("kind") != "twilight-edge-checkpoint" or len(ckpt["done"]) != 1:
        raise ValueError(f"{folder!r}: expected the progress file of a one-configuration twilight edge run")
    (key, done), = ckpt["done"].items()
    (solo, sun), = ckpt["settings"]["configs"]
    seed = int(ckpt["settings"]["seed"])
    deal_list, _ = deal_set(int(ckpt["num_deals"]), seed, 3)
    indices = sorted(int(d) for d in done)[:deals]
    differ = 0
    for d in indices:
        plays = [play_seeded(State.from_deal(rotated_deal(deal_list[d], r), 0, 3), [solo, sun, solo, sun], seed, d,
                             3 * int(key) + r).side_scores() for r in range(3)]
        differ += [[m for m, _ in plays], [u for _, u in plays]] != done[str(d)]
    return len(indices), differ


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--players", type=int, nargs="+", choices=(3, 4), default=[3, 4])
    ap.add_argument("--deals", type=int, default=4, help="deals played by each version (default 4)")
    ap.add_argument("--seed", type=int, default=7, help="deal seed (default 7; not a held-out set)")
    ap.add_argument("--repeats", type=int, default=3, help="passes over the recorded inputs, best kept (default 3)")
    ap.add_argument("--mmd-steps", type=int, default=0, help="MMD updates per line, with and without (default 0: none)")
    ap.add_argument("--edge", metavar="FOLDER", help="an edge run whose first finished deals to replay (default: none)")
    ap.add_argument("--edge-deals", type=int, default=8, help="deals of --edge to replay (default 8)")
    args = ap.parse_args(argv)
    if args.deals < 1 or args.repeats < 1 or args.mmd_steps < 0 or args.edge_deals < 1:
        ap.error("--deals, --repeats and --edge-deals must be at least 1, --mmd-steps at least 0")
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        rows = [measure(p, args.deals, args.seed, args.repeats) for p in args.players]
    print(f"shipped policy/value networks (policy_{{3,4}}p.npz), weights as stored vs subnormal weights set to 0; "
          f"seed {args.seed}, one BLAS thread")
    print(f"{'players':>7s} {'subnormal':>17s} {'what':>34s} {'stored':>9s} {'set to 0':>9s} {'ratio':>6s}  same play")
    for r in rows:
        sub = f"{r['subnormal']:,} of {r['weights']:,}"
        for what, key, unit, same in ((f"guided:default, s per deal ({r['deals']})", "deal_s", 1, r["same_deals"]),
                                      (f"network alone, ms per decision ({r['decisions']})", "one_ms", 1, r["same_one"]),
                                      (f"leaf batch, ms per batch ({min(r['batches'], 2000)})", "leaf_ms", 1, r["same_leaf"])):
            a, b = r[key]["stored"], r[key]["flushed"]
            print(f"{r['players']:7d} {sub:>17s} {what:>34s} {a:9.3f} {b:9.3f} {a / b:6.2f}  {'yes' if same else 'NO'}")
            sub = ""
    if args.mmd_steps:
        m = measure_mmd(args.mmd_steps)
        a, b = m["as stored"]["s_per_update"], m["set to 0"]["s_per_update"]
        print(f"MMD training, 3 players, from the shipped weights, {args.mmd_steps} updates of 256 deals: "
              f"{a:.3f} s per update as stored, {b:.3f} s with subnormals as 0, ratio {a / b:.2f}")
        for which in ("as stored", "set to 0"):
            print(f"  last update's losses, {which}: {m[which]['losses']}")
    if args.edge:
        with threadpool_limits(1):
            n, differ = replay_edge(args.edge, args.edge_deals)
        print(f"{args.edge}: the first {n} finished deals replayed (3 plays each): {differ} end with other points "
              f"than the run stored")


if __name__ == "__main__":
    main()
