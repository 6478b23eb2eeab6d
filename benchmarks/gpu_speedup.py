"""CUDA against CPU for the three sample-hungry parts of self-play, in one run.

One prepared script for a machine with a GPU; on a machine without one it measures the CPU
legs, says that no CUDA device is usable, and exits 0 (nothing in the project needs a GPU;
the CPU figures stay the reference). Each leg is timed on the CPU (one thread, as an actor
or the learner runs) and, when ``torch.cuda.is_available()``, on ``cuda``, in the same run,
and printed with the ratio:

1. **batch engine** (``twilight_env.envs.vector.VectorEngine``, torch backend): random legal
   play of ``B`` 4-player deals at once (``legal_bits`` + ``random_actions`` + ``apply``,
   finished deals re-dealt), decisions/s; B = ``--batch`` (default 8,192; on CUDA also 8×
   that, where a GPU pays off);
2. **self-play generation** (``twilight_env.training.vec_selfplay.VecSelfPlay``): the DMC actor on the
   NumPy batch engine with the Q-network on the device (every pending decision's legal
   actions scored in one forward pass), decisions/s, 3 players;
3. **learner**: DMC gradient updates of the default ``QNetwork`` (3 players, 4 heads) on
   batches of ``--learner-batch`` samples (default 1,024), updates/s.

Usage::

    python benchmarks/gpu_speedup.py            # about a minute on the CPU legs
    python benchmarks/gpu_speedup.py --quick    # a few seconds (a smoke test)
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402


def _sync(device) -> None:
    import torch
    if str(device).startswith("cuda"):
        torch.cuda.synchronize()


def batch_engine(device: str, batch: int, seconds: float) -> float:
    """Decisions/s of random play on the torch batch engine (4 players)."""
    import torch

    from twilight_env.envs.vector import VectorEngine

    eng = VectorEngine(batch, 4, backend="torch", device=device)
    gen = torch.Generator(device=device).manual_seed(0)
    rng = np.random.default_rng(0)
    eng.reset(rng=rng)

    def step():
        bits = eng.legal_bits()
        eng.apply(eng.random_actions(gen, bits))
        done = eng.done
        if bool(done.any()):
            eng.reset(done, rng=rng)

    for _ in range(20):  # warm-up
        step()
    _sync(device)
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for _ in range(10):
            step()
        n += 10
        _sync(device)
    return n * batch / (time.perf_counter() - t0)


def selfplay(device: str, games: int, decisions: int) -> float:
    """Decisions/s of the DMC self-play actor (3 players) with the network on ``device``."""
    import torch

    from twilight_env.agents.nn.features import num_roles
    from twilight_env.agents.nn.network import NetConfig, QNetwork
    from twilight_env.training.vec_selfplay import VecSelfPlay

    torch.manual_seed(0)
    model = QNetwork(NetConfig(num_roles=num_roles(3))).to(device).eval()
    sp = VecSelfPlay(3, model, np.random.default_rng(0), num_games=games, epsilon=0.05, pool_prob=0.0,
                     device=device)
    sp.collect(10 * games)  # warm-up: deals under way
    _sync(device)
    t0 = time.perf_counter()
    _, stats = sp.collect(decisions)
    _sync(device)
    return stats.decisions / (time.perf_counter() - t0)


def learner(device: str, batch: int, seconds: float) -> float:
    """DMC gradient updates/s of the default 3-player Q-network on random samples."""
    import torch

    from twilight_env.agents.nn.features import BITS_PER_MASK, NUM_MASKS, num_roles
    from twilight_env.agents.nn.network import NetConfig, QNetwork

    torch.manual_seed(0)
    model = QNetwork(NetConfig(num_roles=num_roles(3))).to(device).train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    n_pool = 16 * batch
    rows = torch.randint(0, 1 << BITS_PER_MASK, (n_pool, NUM_MASKS), device=device, dtype=torch.int64)
    roles = torch.randint(0, num_roles(3), (n_pool,), device=device)
    actions = torch.randint(0, 31, (n_pool,), device=device)
    targets = torch.rand(n_pool, device=device) * 2 - 1

    def update():
        idx = torch.randint(0, n_pool, (batch,), device=device)
        loss = torch.nn.functional.mse_loss(model(rows[idx], roles[idx], actions[idx]), targets[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    for _ in range(5):
        update()
    _sync(device)
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        update()
        n += 1
    _sync(device)
    return n / (time.perf_counter() - t0)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=8192, help="deals in the batch engine (default 8192)")
    ap.add_argument("--games", type=int, default=1024, help="self-play deals held at once (default 1024)")
    ap.add_argument("--learner-batch", type=int, default=1024, help="samples per update (default 1024)")
    ap.add_argument("--seconds", type=float, default=5.0, help="timing window per leg and device (default 5)")
    ap.add_argument("--quick", action="store_true", help="small sizes and windows: a smoke test")
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    if args.quick:
        args.batch, args.games, args.learner_batch, args.seconds = 256, 64, 128, 0.3
    cuda = torch.cuda.is_available()
    devices = ["cpu"] + (["cuda"] if cuda else [])
    rows = []
    for name, unit, fn in (
            (f"batch engine, B={args.batch}", "decisions/s", lambda d: batch_engine(d, args.batch, args.seconds)),
            (f"self-play, {args.games} deals", "decisions/s",
             lambda d: selfplay(d, args.games, max(2000, int(20_000 * args.seconds)))),
            (f"learner, batch {args.learner_batch}", "updates/s",
             lambda d: learner(d, args.learner_batch, args.seconds))):
        figs = {d: fn(d) for d in devices}
        rows.append((name, unit, figs))
    if cuda:
        big = 8 * args.batch
        rows.append((f"batch engine, B={big} (CUDA only)", "decisions/s",
                     {"cuda": batch_engine("cuda", big, args.seconds)}))
    print(f"{'leg':<38} {'unit':<12} {'CPU (1 thread)':>15} {'CUDA':>15} {'CUDA / CPU':>11}")
    for name, unit, figs in rows:
        cpu = figs.get("cpu")
        gpu = figs.get("cuda")
        ratio = f"{gpu / cpu:.1f}x" if cpu and gpu else "-"
        shown = [f"{v:>15,.0f}" if v is not None else f"{'-':>15}" for v in (cpu, gpu)]
        print(f"{name:<38} {unit:<12} {shown[0]} {shown[1]} {ratio:>11}")
    if cuda:
        print(f"CUDA device: {torch.cuda.get_device_name(0)}")
    else:
        print("no CUDA device is usable here: CPU figures only (the reference); run this script on a "
              "machine with a GPU for the ratios")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
