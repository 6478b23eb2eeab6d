"""CUDA against CPU for the sample-hungry parts of self-play and training, in one run.

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
   batches of ``--learner-batch`` samples (default 1,024), updates/s;
4. **expert-iteration training** (``training.exit train --device``): Adam steps of the
   shipped 3-player policy/value network (``PolicyValueNet``, cross-entropy to the root
   visits + squared value error, as ``training.exit``'s ``_losses``) on batches of 256 (the
   default ``--batch-size``) and 4,096 decisions of random rows, the data set on the device,
   updates/s;
5. **expert-iteration generation**: network-guided IS-MCTS decisions
   (``guided:default,batch=B,device=D``: 1,000 descents, the shipped 3-player network) with
   the leaves evaluated in batches of 32 (the default) and 128, by the NumPy forward pass on
   the CPU or the torch network on ``cuda`` (each batch copied there and back),
   decisions/s. The search itself runs on the CPU in both.

Usage::

    python benchmarks/gpu_speedup.py            # about a minute on the CPU legs
    python benchmarks/gpu_speedup.py --quick    # about 15 s (a smoke test)
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


def _updates_per_s(update, device: str, seconds: float) -> float:
    """Calls per second of ``update()`` over a ``seconds`` window, after 5 warm-up calls."""
    for _ in range(5):
        update()
    _sync(device)
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        update()
        n += 1
    _sync(device)
    return n / (time.perf_counter() - t0)


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

    return _updates_per_s(update, device, seconds)


def _shipped_pv(device: str):
    """The shipped 3-player policy/value network as a torch module on ``device`` (eval mode)."""
    from twilight_env.agents.exit import TorchForward
    from twilight_env.agents.guided import numpy_model

    return TorchForward.from_numpy(numpy_model("default", 3)[0], device).model


def exit_train(device: str, batch: int, seconds: float) -> float:
    """Adam updates/s of the shipped 3-player policy/value network (expert-iteration loss)."""
    import torch

    from twilight_env.agents.nn.features import BITS_PER_MASK, NUM_MASKS, num_roles
    from twilight_env.training.exit import _losses

    torch.manual_seed(0)
    model = _shipped_pv(device).train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4, weight_decay=1e-4)
    n_pool = 16 * batch
    legal = torch.rand(n_pool, 31, device=device) < 0.3
    legal[:, 0] = True
    visits = torch.rand(n_pool, 31, device=device) * legal
    data = {"rows": torch.randint(0, 1 << BITS_PER_MASK, (n_pool, NUM_MASKS), device=device, dtype=torch.int64),
            "roles": torch.randint(0, num_roles(3), (n_pool,), device=device), "legal": legal,
            "visits": visits / visits.sum(1, keepdim=True), "outcome": torch.rand(n_pool, device=device) * 2 - 1}

    def update():
        idx = torch.randint(0, n_pool, (batch,), device=device)
        pl, vl, _ = _losses(model, {k: v.index_select(0, idx) for k, v in data.items()}, torch)
        opt.zero_grad()
        (pl + vl).backward()
        opt.step()

    return _updates_per_s(update, device, seconds)


def _decisions(n: int) -> list:
    """``n`` 3-player decisions with a choice (information set, legal actions), from random play."""
    from twilight_env.rules.engine import State
    from twilight_env.rules.infoset import InfoSet

    out, rng, deal = [], np.random.default_rng(0), 0
    while len(out) < n:
        st = State.random(np.random.default_rng(deal), 0, 3)
        deal += 1
        while not st.done and len(out) < n:
            legal = st.legal_actions()
            if len(legal) > 1:
                out.append((InfoSet(st, st.deciding_seat), tuple(legal)))
            st.apply(int(rng.choice(legal)))
    return out


def guided_search(device: str, batch: int, seconds: float, iterations: int = 1000) -> float:
    """Decisions/s of ``guided:default,iterations=I,batch=B,device=D`` (3 players): its leaf
    batches evaluated by the NumPy forward pass (``cpu``) or the torch network on ``device``."""
    from twilight_env.agents.guided import GuidedAgent

    agent = GuidedAgent("default", iterations=iterations, batch=batch, device=device)
    decisions = _decisions(64)
    rng = np.random.default_rng(0)
    GuidedAgent("default", iterations=64, batch=batch, device=device).search(*decisions[0], rng)  # warm-up
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        infoset, legal = decisions[n % len(decisions)]
        agent.search(infoset, legal, rng)
        n += 1
    return n / (time.perf_counter() - t0)


def _measured(fn, device: str):
    """``fn(device)``, or None after printing why it failed (one leg's failure keeps the others)."""
    try:
        return fn(device)
    except Exception as err:  # noqa: BLE001 - reported, and the run goes on to the next leg
        print(f"  {device}: failed: {type(err).__name__}: {err}")
        return None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=8192, help="deals in the batch engine (default 8192)")
    ap.add_argument("--games", type=int, default=1024, help="self-play deals held at once (default 1024)")
    ap.add_argument("--learner-batch", type=int, default=1024, help="samples per update (default 1024)")
    ap.add_argument("--seconds", type=float, default=5.0, help="timing window per leg and device (default 5)")
    ap.add_argument("--search-iterations", type=int, default=1000,
                    help="descents per guided-search decision (default 1000, as guided:default)")
    ap.add_argument("--quick", action="store_true", help="small sizes and windows: a smoke test")
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    if args.quick:
        args.batch, args.games, args.learner_batch, args.seconds = 256, 64, 128, 0.3
        args.search_iterations = 64
    cuda = torch.cuda.is_available()
    devices = ["cpu"] + (["cuda"] if cuda else [])
    rows = []
    for name, unit, fn in (
            (f"batch engine, B={args.batch}", "decisions/s", lambda d: batch_engine(d, args.batch, args.seconds)),
            (f"self-play, {args.games} deals", "decisions/s",
             lambda d: selfplay(d, args.games, max(2000, int(20_000 * args.seconds)))),
            (f"learner, batch {args.learner_batch}", "updates/s",
             lambda d: learner(d, args.learner_batch, args.seconds)),
            ("exit training, batch 256", "updates/s", lambda d: exit_train(d, 256, args.seconds)),
            ("exit training, batch 4096", "updates/s", lambda d: exit_train(d, 4096, args.seconds)),
            ("guided search, leaf batch 32", "decisions/s",
             lambda d: guided_search(d, 32, args.seconds, args.search_iterations)),
            ("guided search, leaf batch 128", "decisions/s",
             lambda d: guided_search(d, 128, args.seconds, args.search_iterations))):
        print(f"measuring: {name}", flush=True)
        figs = {d: _measured(fn, d) for d in devices}
        rows.append((name, unit, figs))
    if cuda:
        big = 8 * args.batch
        rows.append((f"batch engine, B={big} (CUDA only)", "decisions/s",
                     {"cuda": _measured(lambda d: batch_engine(d, big, args.seconds), "cuda")}))
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
