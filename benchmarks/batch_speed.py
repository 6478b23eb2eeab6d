"""Batch engine speed: decisions/s of random legal play, side by side with OpenSpiel.

One run measures, on one CPU thread:

1. OpenSpiel ``oh_hell(players=4,num_suits=4,num_cards_per_suit=8,num_tricks_fixed=7)``
   (4 players, 7 tricks, 28 cards dealt: the closest OpenSpiel game in shape) random
   play, chance nodes sampled, only player decisions counted; plain, and with
   ``information_state_tensor()`` at every decision;
2. our scalar engine (``State.random`` + ``legal_actions`` + ``apply``); plain, and
   with ``encode_observation(state, deciding_seat)`` at every decision;
3. the NumPy batch engine at B = 1, 64, 1024, 8192 deals (4 players), every deal
   re-dealt as soon as it ends (and, as a bound on every float32-observation line, the
   rate of merely filling a (B, OBS_SIZE) float32 buffer with ``ndarray.fill``; and,
   with numba installed, ``vector_obs.observe`` alone, compiled against array passes):
   - "no obs": ``legal_bits`` + ``random_actions`` (uniform over the legal actions) +
     ``apply`` + re-deal of the finished rows;
   - "obs": a full :meth:`TwilightVectorEnv.step` with ``copy=False``: apply, rewards,
     auto-reset, the (B, 31) int8 action mask and the (B, OBS_SIZE) float32
     observation of every deciding player, plus ``random_actions``;
   - "packed": as "obs", but observations in the compact form of
     ``VectorEngine.observe_packed`` (bits + float32 scalars, for expansion on an
     accelerator) instead of float32 vectors;
4. the torch backend on CUDA at larger B, when a GPU is there (skipped otherwise, with a
   message), same loops with a ``torch.Generator`` on the device.

Every decision of the batch engine is a real decision of one of the B deals (all rows
always await a decision thanks to auto-reset), so decisions/s = B * steps / seconds.

Threads: the script sets ``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``,
``MKL_NUM_THREADS`` to 1 before NumPy is imported and ``torch.set_num_threads(1)``;
NumPy's element-wise kernels are single-threaded anyway, so CPU figures are one core.
Times are CPU seconds of this process (``time.process_time``) for the CPU lines, which
on a shared machine excludes time spent waiting for a core; each configuration runs
``--rounds`` times, interleaved, and the best round counts. The GPU lines use wall
time with ``torch.cuda.synchronize()``.

Memory per deal: the sum of the engine's state arrays' ``nbytes`` / B (shared lookup
tables excluded); the observation buffer (OBS_SIZE float32 per row) is printed apart.

Usage::

    python benchmarks/batch_speed.py [--decisions 300000] [--os-deals 300] [--rounds 3]
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from twilight_env.obs.encoding import OBS_SIZE, encode_observation  # noqa: E402
from twilight_env.envs.vector import TwilightVectorEnv, VectorEngine  # noqa: E402

import engine_speed  # noqa: E402  (benchmarks/ is this script's folder)

OH_HELL = "oh_hell(players=4,num_suits=4,num_cards_per_suit=8,num_tricks_fixed=7)"
BATCH_SIZES = (1, 64, 1024, 8192)
GPU_BATCH_SIZES = (8192, 65536, 262144)
_clock = time.process_time


# ------------------------------------------------------------------------------------
# references
# ------------------------------------------------------------------------------------
def openspiel_play(game, deals: int, seed: int, with_tensor: bool):
    """Random oh_hell games (``engine_speed``'s loops); returns (player decisions, CPU seconds)."""
    u = np.random.default_rng(seed).random(deals * 80).tolist()
    return (engine_speed.os_obs if with_tensor else engine_speed.os_plain)(game, deals, u)


def scalar_play(deals: int, seed: int, with_obs: bool):
    """Random deals on the scalar engine, 4 players (``engine_speed``'s loops); returns
    (decisions, CPU seconds)."""
    u = np.random.default_rng(seed).random(deals * 60).tolist()
    if with_obs:
        return engine_speed.ours_obs(deals, 4, u, seed, encode_observation)
    return engine_speed.ours_plain(deals, 4, u, seed)


# ------------------------------------------------------------------------------------
# batch engine
# ------------------------------------------------------------------------------------
def batch_play(B: int, steps: int, seed: int, mode: str, backend="numpy", device=None, clock=_clock,
               sync=lambda: None):
    """``steps`` batch steps of random play on B deals; returns (decisions, seconds).

    mode: ``"plain"`` (no observations), ``"obs"`` (env step: float32 observations and
    masks) or ``"packed"`` (env step with packed observations).
    """
    env = TwilightVectorEnv(B, 4, seed=seed, backend=backend, device=device, copy=False)
    env.reset()
    eng = env.engine
    if backend == "torch":
        import torch

        rng = torch.Generator(device=device)
        rng.manual_seed(seed)
    else:
        rng = env.rng
    sync()
    t0 = clock()
    if mode == "plain":
        for _ in range(steps):
            bits = eng.legal_bits()
            eng.apply(eng.random_actions(rng, bits))
            done = eng.done
            if bool(done.any()):
                eng.returns()
                eng.reset(done, rng=env.rng)
    elif mode == "obs":
        for _ in range(steps):
            env.step(eng.random_actions(rng))
    else:
        for _ in range(steps):
            env.step_packed(eng.random_actions(rng))
    sync()
    return B * steps, clock() - t0


def write_floor(B: int, steps: int, clock=_clock):
    """The bound on any float32-observation line: ``steps`` times filling a (B, OBS_SIZE)
    float32 buffer with zeros (``ndarray.fill``, NumPy's memset: writes only, no engine,
    no encoding); returns (rows written, seconds). At B <= 1024 the buffer (<= 4 MB) stays
    in this machine's caches, so this is the cache's write rate, not main memory's."""
    out = np.empty((B, OBS_SIZE), dtype=np.float32)
    out.fill(0.0)
    t0 = clock()
    for _ in range(steps):
        out.fill(0.0)
    return B * steps, clock() - t0


def observe_only(B: int, steps: int, seed: int, compiled: bool, clock=_clock):
    """``steps`` calls of ``vector_obs.observe`` (float32, into one buffer) on B deals 12
    actions into random play, by the compiled encoder or the array passes; returns
    (rows, seconds)."""
    from twilight_env.obs import vector_obs

    eng = VectorEngine(B, 4)
    rng = np.random.default_rng(seed)
    eng.reset(rng=rng)
    for _ in range(12):
        eng.apply(eng.random_actions(rng))
    out = np.empty((B, OBS_SIZE), dtype=np.float32)
    vector_obs.observe(eng, out=out, compiled=compiled)
    t0 = clock()
    for _ in range(steps):
        vector_obs.observe(eng, out=out, compiled=compiled)
    return B * steps, clock() - t0


def _rate(res):
    dec, sec = res
    return dec / sec if sec > 0 else float("inf")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--decisions", type=int, default=300_000,
                    help="decisions per batch configuration and round (B * steps)")
    ap.add_argument("--os-deals", type=int, default=300, help="OpenSpiel games per round")
    ap.add_argument("--scalar-deals", type=int, default=600, help="scalar-engine deals per round")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds; the best counts")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sizes", type=str, default=",".join(map(str, BATCH_SIZES)),
                    help="comma-separated batch sizes for the CPU lines")
    args = ap.parse_args(argv)
    sizes = [int(x) for x in args.sizes.split(",")]

    try:
        import pyspiel
    except ImportError:
        print("OpenSpiel (pyspiel) is not installed: pip install open_spiel")
        return 1
    game = pyspiel.load_game(OH_HELL)

    try:
        import torch

        torch.set_num_threads(1)
        has_cuda = torch.cuda.is_available()
    except ImportError:
        torch = None
        has_cuda = False

    print("threads: OMP/OPENBLAS/MKL_NUM_THREADS=1, torch.set_num_threads(1); CPU lines are one core")
    print(f"times: best of {args.rounds} interleaved rounds, CPU seconds of this process")
    print(f"observation: {OBS_SIZE} float32 per decision (twilight_env.obs.encoding)")

    from twilight_env.obs.encoding import backend as encoder_backend

    compiled_obs = encoder_backend() == "numba"
    best: dict[str, float] = {}

    def record(name, res):
        best[name] = max(best.get(name, 0.0), _rate(res))

    for r in range(args.rounds):
        seed = args.seed + r
        record("openspiel", openspiel_play(game, args.os_deals, seed, False))
        record("openspiel+tensor", openspiel_play(game, max(1, args.os_deals // 3), seed, True))
        record("scalar", scalar_play(args.scalar_deals, seed, False))
        record("scalar+obs", scalar_play(max(1, args.scalar_deals // 3), seed, True))
        for B in sizes:
            steps = max(20, args.decisions // B)
            if B < 64:
                steps = min(steps, 3_000)  # tiny batches are slow: a few thousand steps suffice
            for mode in ("plain", "obs", "packed"):
                record(f"batch{B}:{mode}", batch_play(B, steps, seed, mode))
            record(f"floor{B}", write_floor(B, max(steps, 2_000)))
            if compiled_obs:
                for comp in (True, False):
                    record(f"observe{B}:{comp}", observe_only(B, max(5, steps // 3), seed, comp))

    os_ = best["openspiel"]
    os_t = best["openspiel+tensor"]
    sc = best["scalar"]
    sc_o = best["scalar+obs"]
    print()
    print(f"{'engine':<34}{'decisions/s':>14}{'x OpenSpiel':>13}{'x OS+tensor':>13}{'x scalar':>10}")
    print(f"{'OpenSpiel oh_hell (4p, 7 tricks)':<34}{os_:>14,.0f}{1:>13.2f}{os_ / os_t:>13.2f}{os_ / sc:>10.2f}")
    print(f"{'  + information_state_tensor':<34}{os_t:>14,.0f}{os_t / os_:>13.2f}{1:>13.2f}{os_t / sc_o:>10.2f}")
    print(f"{'scalar engine (4p)':<34}{sc:>14,.0f}{sc / os_:>13.2f}{sc / os_t:>13.2f}{1:>10.2f}")
    print(f"{'  + encode_observation':<34}{sc_o:>14,.0f}{sc_o / os_:>13.2f}{sc_o / os_t:>13.2f}{1:>10.2f}")
    for B in sizes:
        for mode, label in (("plain", "no obs"), ("obs", "obs float32"), ("packed", "obs packed")):
            v = best[f"batch{B}:{mode}"]
            ref = sc if mode == "plain" else sc_o
            print(f"{f'numpy batch B={B:<5} {label}':<34}{v:>14,.0f}{v / os_:>13.2f}{v / os_t:>13.2f}{v / ref:>10.2f}")
    print("(x scalar: against the scalar engine without / with observations, like for like)")
    print()
    print("bound: writing the float32 observation buffer alone (ndarray.fill, no engine, no encoding)")
    for B in sizes:
        v = best[f"floor{B}"]
        print(f"{f'  fill (B={B}, {OBS_SIZE}) float32':<34}{v:>14,.0f}{v / os_:>13.2f}"
              f"   rows/s; {v * OBS_SIZE * 4 / 1e9:.1f} GB/s")

    print()
    if compiled_obs:
        print("observe() alone, float32 rows/s: the compiled encoder row by row (numba) and the array passes")
        for B in sizes:
            a, b = best[f"observe{B}:True"], best[f"observe{B}:False"]
            print(f"  B={B:<5} compiled {a:>12,.0f}   arrays {b:>12,.0f}   compiled/arrays {a / b:6.2f}x")
    else:
        print("observe() alone: numba is not installed (or TWILIGHT_ENV_PURE_PYTHON=1): array passes only")

    eng = VectorEngine(max(sizes), 4)
    print()
    print(f"memory per deal: {eng.nbytes_per_deal():.0f} bytes of state arrays "
          f"(+ {OBS_SIZE * 4} bytes for a float32 observation buffer, "
          f"+ 31 bytes for an int8 mask, if the caller keeps them)")
    target = 20 * os_
    v = best[f"batch{max(sizes)}:obs"]
    print(f"target: >= 20x OpenSpiel with observations = {target:,.0f} decisions/s; "
          f"best numpy float32-obs line: {max(best[f'batch{B}:obs'] for B in sizes):,.0f} "
          f"({max(best[f'batch{B}:obs'] for B in sizes) / os_:.1f}x); B={max(sizes)}: {v / os_:.1f}x")

    print()
    if not has_cuda:
        print("torch CUDA: no GPU available here, skipped")
    else:
        dev = "cuda"
        torch.cuda.synchronize()
        print(f"torch CUDA ({torch.cuda.get_device_name(0)}), wall time:")
        for B in GPU_BATCH_SIZES:
            for mode in ("plain", "obs"):
                batch_play(B, 5, args.seed, mode, "torch", dev, time.perf_counter, torch.cuda.synchronize)
                res = batch_play(B, 50, args.seed, mode, "torch", dev, time.perf_counter, torch.cuda.synchronize)
                v = _rate(res)
                print(f"  B={B:<7} {mode:<6} {v:>16,.0f} decisions/s  ({v / os_:,.0f}x OpenSpiel)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
