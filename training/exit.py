"""Expert iteration (Anthony, Tian & Barber 2017): search data, policy/value training, iterations.

``python -m twilight_env.training.exit generate --players 3 --deals 200 --out D`` plays self-play deals
in which every decision is made by a search agent (``--agent``: ``ismcts:...``,
``exit-search:PATH,...`` or the network-guided ``guided:PATH,...``) and records, per
decision with more than one legal action, what the deciding seat knows and what the
search concluded. ``train --data D [D ...] --run R`` fits a
:class:`twilight_env.agents.exit.PolicyValueNet` to them (AlphaZero targets: cross-entropy
to the normalised root visits + MSE to the outcome). ``iterate`` chains both: iteration 1 generates
with the plain search, iteration ``k`` with ``exit-search:<net k-1>`` and trains net ``k``
(warm-started from net ``k-1``). ``agree --data D --net N [N ...]`` says how closely
networks imitate the search on the validation deals (:func:`agreement`). ``export`` writes an inference-only copy; the shipped
weights are the torch-free form (``agents/weights/policy_{3,4}p.npz``, written by
:func:`twilight_env.agents.nn.numpy_pv.export_pv_npz`). Commands: ``training/README.md``.

Deals: deal ``i`` of seed ``s`` is drawn with ``numpy.random.default_rng([s, i])`` (first
leader uniform over the four seats, then the hands, R2.3); the search of deal ``i`` uses
``default_rng([s, i, 1])``. Seeds of the held-out deal sets (``twilight_env.rules.heldout``) are
refused. Deals are grouped in chunks of ``--chunk-deals``; each chunk is one file
``chunk_{k:05d}.npz`` written atomically (temporary file + ``os.replace``), so an
interrupted run, run again, plays only the missing chunks. ``meta.json`` holds the settings;
a folder is refused for other settings.

Chunk file (``numpy.savez_compressed``), N decisions:

| key | dtype, shape | meaning |
|-----|--------------|---------|
| ``rows`` | int64 ``(N, 25)`` | compact feature rows of the deciding seat (``twilight_env.agents.nn.features.infoset_row``) |
| ``roles`` | int8 ``(N,)`` | network head (``role_of``) |
| ``legal`` | bool ``(N, 31)`` | legal actions (R3.2, R3.5) |
| ``visits`` | float32 ``(N, 31)`` | root visit counts / their sum (0 on illegal actions) |
| ``side`` | int8 ``(N,)`` | side of the acting seat (0 seats 0, 2; 1 seats 1, 3) |
| ``outcome`` | float32 ``(N,)`` | (that side's deal score − the other's) / 360 at the end of the deal (R5) |
| ``deal`` | int32 ``(N,)`` | deal index |
| ``deals`` | int64 ``()`` | deals in the chunk |
"""

from __future__ import annotations

from twilight_env.util.extras import require

require("torch", "train", "twilight_env.training.exit", as_main=__name__ == "__main__")

import argparse
import json
import math
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from twilight_env.agents.exit import (ENCODERS, PolicyValueNet, PVConfig, load_exit_checkpoint,
                                      model_from_exit_checkpoint, new_checkpoint, resolve_backend)
from twilight_env.agents.nn.checkpoint import CHECKPOINT_NAME, save_checkpoint
from twilight_env.agents.nn.features import num_roles
from twilight_env.training.exit_data import DEFAULT_AGENT, GenerateSettings, check_ints, generate, load_data
from twilight_env.training.runtime import TrainingDiverged, check_device, to_cpu
# the data side of expert iteration lives in twilight_env.training.exit_data; its names stay importable here
from twilight_env.training.exit_data import (DATA_FORMAT, DATA_VERSION, KEYS, chunk_done, chunk_path,  # noqa: F401
                                             deal_state, play_recorded, search_visits, write_npz)
from twilight_env.agents.exit import most_visited  # noqa: F401


@dataclass
class FitSettings:
    """How :func:`train` fits the network (``train``'s flags). On ``--resume`` the run's
    saved ``holdout``, ``seed``, ``batch_size``, ``lr``, ``weight_decay`` and
    ``value_weight`` are used instead of these."""

    epochs: int = 20
    """Passes over the training decisions, in total (a resumed run counts those done) (epochs, >= 1)."""
    batch_size: int = 256
    """Decisions per Adam step (decisions, >= 1)."""
    lr: float = 1e-3
    """Adam learning rate (per step)."""
    weight_decay: float = 1e-4
    """Adam weight decay (L2 coefficient, per step)."""
    value_weight: float = 1.0
    """Weight of the value's squared error beside the policy's cross-entropy (ratio)."""
    holdout: float = 0.1
    """Share of the deals kept for validation, whole deals only (fraction in [0, 1))."""
    seed: int = 1
    """Seed of the split, the initial weights and the batch order (integer >= 0)."""
    trunk: tuple[int, ...] = (256, 256)
    """Hidden widths of the shared trunk of a new network (units per layer)."""
    head: tuple[int, ...] = (128,)
    """Hidden widths of each head of a new network (units per layer)."""
    encoder: str = "mlp"
    """Encoder of a new network: ``"mlp"`` or ``"cards"`` (:class:`~twilight_env.agents.exit.PVConfig`)."""
    card_width: int = 64
    """Token width of a new ``"cards"`` network (units, >= 1)."""
    threads: int = 1
    """Torch threads (threads, >= 1)."""
    device: str = "cpu"
    """Where the network trains: ``"cpu"`` or ``"cuda"`` (device name; the data set is copied
    there once). A run may change device when resumed; its checkpoint holds CPU tensors."""

    def validate(self) -> "FitSettings":
        """Check values; return self.

        Raises:
            ValueError: naming the field and what is allowed.
        """
        check_ints(self, ("epochs", "batch_size", "threads", "card_width"))
        if self.encoder not in ENCODERS:
            raise ValueError(f"encoder must be one of {ENCODERS}, got {self.encoder!r}")
        if not 0 <= self.holdout < 1:
            raise ValueError(f"holdout must be in [0, 1), got {self.holdout!r}")
        if self.device not in ("cpu", "cuda"):
            raise ValueError(f"device must be 'cpu' or 'cuda', got {self.device!r}")
        return self


FIXED_ON_RESUME = ("holdout", "seed", "batch_size", "lr", "weight_decay", "value_weight")
""":class:`FitSettings` fields a resumed training run takes from its checkpoint."""


@dataclass
class IterateSettings:
    """What :func:`iterate` runs (``iterate``'s flags)."""

    num_players: int
    """Variant: 3 or 4 players (``--players``)."""
    iterations: int = 3
    """Expert iterations: data and net pairs (iterations)."""
    deals: int = 200
    """Deals generated per iteration (deals)."""
    search_iterations: int = 1000
    """Search iterations per decision (iterations of the search)."""
    c: float = 0.7
    """UCT exploration constant of the search."""
    w: float = 1.0
    """Root prior weight of ``exit-search`` (iterations 2 and later)."""
    backend: str = "auto"
    """Search backend: ``auto``, ``numba`` or ``python``."""
    seed: int = 1
    """Deal seed of iteration 1 (iteration k uses ``seed + k - 1``); also the fit's seed."""
    workers: int = 1
    """Generating processes (processes)."""
    chunk_deals: int = 10
    """Deals per chunk file (deals)."""
    window: int = 0
    """Net k trains on the data of the last ``window`` iterations; 0: all (iterations)."""
    fit: FitSettings = field(default_factory=FitSettings)
    """How each net is fitted; its ``seed`` is replaced by :attr:`seed`."""


# ---------------------------------------------------------------------------------
# train
# ---------------------------------------------------------------------------------


def split_holdout(data: dict, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the training and validation decisions; whole deals go to one side."""
    key = data["group"].astype(np.int64) * (1 << 32) + data["deal"].astype(np.int64)
    deals = np.unique(key)
    rng = np.random.default_rng(seed)
    n_val = int(round(fraction * len(deals)))
    if fraction > 0 and len(deals) > 1:
        n_val = min(max(n_val, 1), len(deals) - 1)
    val_deals = rng.permutation(deals)[:n_val]
    is_val = np.isin(key, val_deals)
    return np.nonzero(~is_val)[0], np.nonzero(is_val)[0]


def _losses(model, batch, torch):
    logits, value = model(batch["rows"], batch["roles"], batch["legal"])
    logp = torch.log_softmax(logits, dim=1)
    policy = -(batch["visits"] * logp).sum(1).mean()
    value_loss = torch.nn.functional.mse_loss(value, batch["outcome"])
    acc = (logits.argmax(1) == batch["visits"].argmax(1)).float().mean()
    return policy, value_loss, acc


def train(data_folders, run, settings: FitSettings | None = None, init: str | None = None, resume: bool = False,
          progress: bool = True) -> dict:
    """Train a :class:`~twilight_env.agents.exit.PolicyValueNet` on generated data.

    Loss per decision: cross-entropy of the policy to the normalised root visits +
    ``value_weight`` × squared error of the value to the outcome (AlphaZero). Whole deals
    go to the validation part (``holdout``). Every epoch writes ``RUN/checkpoint.pt``
    atomically (weights, Adam state, epoch, RNG states) and TensorBoard scalars
    ``train/policy_loss``, ``train/value_loss``, ``val/policy_loss``, ``val/value_loss``,
    ``val/policy_accuracy`` (argmax of the policy = most visited action), x-axis = epoch.

    Args:
        data_folders: folders written by :func:`generate` (same number of players).
        run: run directory (created); with ``resume`` its checkpoint is continued up to
            ``settings.epochs`` (same data, split and the settings of :data:`FIXED_ON_RESUME`),
            otherwise it must hold no checkpoint.
        settings: :class:`FitSettings` (default: its defaults).
        init: an exit checkpoint to start from (warm start; its network shape is used).
        progress: show a tqdm bar (epochs).

    Returns:
        ``{"epoch", "train_policy_loss", "train_value_loss", "val_policy_loss", "val_value_loss",
        "val_policy_accuracy"}`` of the last epoch.

    Raises:
        ValueError: bad options, unreadable data or checkpoints (naming the file), or a
            run directory that already holds a checkpoint without ``resume``.
    """
    import torch
    from tqdm import tqdm

    s = (settings or FitSettings()).validate()
    dev = check_device(s.device)
    torch.set_num_threads(s.threads)
    run = Path(run)
    ckpt_path = run / CHECKPOINT_NAME
    ckpt, data_folders, s = _resumed(ckpt_path, data_folders, s) if resume else (None, data_folders, s)
    if ckpt is None and ckpt_path.exists():
        raise ValueError(f"{str(ckpt_path)!r} exists; continue it with --resume or give a new run directory")
    npl, tr_idx, val_idx, tensors = _fit_data(data_folders, s, dev)
    config = _fit_config(data_folders, s, init)
    model = _start_model(ckpt, ckpt_path, init, npl, s).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=s.lr, weight_decay=s.weight_decay)
    epoch, rng = _restore_fit(ckpt, opt, s)
    writer = _fit_writer(run, epoch, {**config, "net": model.cfg.to_dict(), "num_players": npl,
                                      "train_decisions": len(tr_idx), "val_decisions": len(val_idx)})
    last: dict = {}
    bar = tqdm(total=s.epochs, initial=min(epoch, s.epochs), unit="epoch", disable=not progress)
    while epoch < s.epochs:
        epoch += 1
        last = {"epoch": epoch, **_fit_epoch(model, opt, tensors, rng.permutation(tr_idx), s),
                **_validate(model, tensors, val_idx)}
        _log_epoch(writer, last, epoch)
        _check_finite_epoch(model, last, epoch, s.lr)
        _save_epoch(ckpt_path, model, npl, opt, rng, epoch, config, last)
        bar.update(1)
        bar.set_postfix({k: f"{v:.4f}" for k, v in last.items() if k != "epoch"})
    bar.close()
    writer.close()
    return last


def _fit_data(data_folders, s: FitSettings, dev) -> tuple[int, np.ndarray, np.ndarray, dict]:
    """The number of players of ``data_folders``, the training and validation indices
    (:func:`split_holdout`) and the decisions' tensors on ``dev`` (roles as int64)."""
    import torch

    data, npl = load_data(data_folders)
    tr_idx, val_idx = split_holdout(data, s.holdout, s.seed)
    tensors = {k: torch.from_numpy(data[k].astype(np.int64) if k == "roles" else data[k]).to(dev)
               for k in ("rows", "roles", "legal", "visits", "outcome")}
    return npl, tr_idx, val_idx, tensors


def _restore_fit(ckpt: dict | None, opt, s: FitSettings) -> tuple[int, np.random.Generator]:
    """The epochs done and the shuffling generator: fresh (``ckpt`` None), or the
    checkpoint's, whose optimizer state ``opt`` then takes."""
    epoch = 0
    rng = np.random.default_rng([s.seed, 7])
    if ckpt is not None:
        opt.load_state_dict(ckpt["optimizer"])  # Adam's moments follow the parameters' device
        epoch = int(ckpt["epoch"])
        rng.bit_generator.state = json.loads(ckpt["rng"])
    return epoch, rng


def _fit_config(data_folders, s: FitSettings, init: str | None) -> dict:
    """The settings a fit's checkpoint keeps (``config``): data folders, split, Adam, warm start."""
    return {"data": [str(f) for f in data_folders], "holdout": s.holdout, "seed": s.seed,
            "batch_size": s.batch_size, "lr": s.lr, "weight_decay": s.weight_decay,
            "value_weight": s.value_weight, "init": init}


def _fit_writer(run: Path, epoch: int, described: dict):
    """The run's TensorBoard writer (``run`` created); a resumed run (``epoch`` > 0) drops
    the events logged after its checkpoint, a new one logs ``described`` and the git
    commit as its ``config`` text."""
    from torch.utils.tensorboard import SummaryWriter

    from twilight_env.util.report import git_hash
    run.mkdir(parents=True, exist_ok=True)
    writer = SummaryWriter(str(run), purge_step=epoch + 1 if epoch else None)
    if not epoch:
        writer.add_text("config", json.dumps({**described, "git": git_hash()}, indent=1))
    return writer


def _save_epoch(ckpt_path: Path, model, npl: int, opt, rng: np.random.Generator, epoch: int, config: dict,
                last: dict) -> None:
    """Write the fit's checkpoint after ``epoch`` atomically (weights, Adam state, the
    shuffling generator's state, the last figures, the git commit)."""
    from twilight_env.util.report import git_hash
    save_checkpoint(new_checkpoint(model, npl, optimizer=to_cpu(opt.state_dict()), epoch=epoch, config=config,
                                   rng=json.dumps(rng.bit_generator.state), last=last, git=git_hash()),
                    ckpt_path)


def _log_epoch(writer, last: dict, epoch: int) -> None:
    """An epoch's figures as TensorBoard scalars (``train_x`` as ``train/x``, ``val_x`` as ``val/x``)."""
    for k, v in last.items():
        if k != "epoch":
            writer.add_scalar(k.replace("train_", "train/").replace("val_", "val/"), v, epoch)
    writer.flush()


def _resumed(ckpt_path: Path, data_folders, s: FitSettings) -> tuple[dict, list, FitSettings]:
    """The checkpoint of a run to continue, its data folders, and ``s`` with the run's
    own :data:`FIXED_ON_RESUME` settings.

    Raises:
        ValueError: a missing or unreadable checkpoint (naming the file).
    """
    from twilight_env.training.checkpoint import load_resume_checkpoint
    ckpt = load_resume_checkpoint(ckpt_path, check_exit_checkpoint, load_exit_checkpoint)  # digest, every entry
    return ckpt, ckpt["config"]["data"], replace(s, **{k: ckpt["config"][k] for k in FIXED_ON_RESUME})


def check_exit_checkpoint(ckpt: dict, path: str) -> None:
    """Check an expert-iteration training checkpoint (``python -m twilight_env.training.exit
    train``) in full before a resumed run trains: keys, players, network shape and finite
    weights, the Adam state, ``epoch`` (0..10^6), the saved settings (the
    :class:`~twilight_env.training.exit.FitSettings` a resumed run keeps, and the data folders),
    the RNG state and the last epoch's figures.

    Raises:
        ValueError: naming the file, the entry and what is allowed.
    """
    from twilight_env.training.checkpoint import (check_bitgen_state, check_count, check_entries, check_finite,
                                                   check_layers, check_number, check_optimizer, fail)
    check_entries(ckpt, path, "the checkpoint",
                  ("format", "version", "num_players", "net", "model", "optimizer", "epoch", "config", "rng"),
                  ("last", "git"))
    if ckpt["num_players"] not in (3, 4) or isinstance(ckpt["num_players"], bool):
        fail(path, f"'num_players' must be 3 or 4, got {ckpt['num_players']!r}")
    if not isinstance(ckpt["net"], dict):
        fail(path, "'net' must be a dict")
    check_layers(ckpt["net"], path, "'net'")
    try:
        model = PolicyValueNet(PVConfig.from_dict(ckpt["net"]))
        model.load_state_dict(ckpt["model"])
    except (KeyError, TypeError, RuntimeError, AttributeError, ValueError) as e:
        fail(path, f"its weights do not fit its network ({type(e).__name__}: {str(e)[:200]})")
    if model.cfg.num_roles != num_roles(ckpt["num_players"]):
        fail(path, f"{model.cfg.num_roles} heads for {ckpt['num_players']} players")
    check_finite(ckpt["model"], path, "'model'")
    check_optimizer(ckpt["optimizer"], model, path)
    check_count(ckpt["epoch"], path, "'epoch'", 10 ** 6)
    config = check_entries(ckpt["config"], path, "'config'", ("data",) + FIXED_ON_RESUME, ("init",))
    data = config["data"]
    if not isinstance(data, list) or not data or not all(isinstance(x, str) for x in data):
        fail(path, f"'config' 'data' must be a non-empty list of data folders, got {data!r}")
    try:
        s = FitSettings(**{k: config[k] for k in FIXED_ON_RESUME}).validate()
        check_count(s.seed, path, "'config' 'seed'", 2 ** 63 - 1)
        check_number(s.lr, path, "'config' 'lr'", 0.0)
        check_number(s.weight_decay, path, "'config' 'weight_decay'", 0.0)
        check_number(s.value_weight, path, "'config' 'value_weight'", 0.0)
        check_count(s.batch_size, path, "'config' 'batch_size'", 1_000_000)
    except (TypeError, ValueError) as e:
        fail(path, f"'config': {e}")
    if not isinstance(ckpt["rng"], str):
        fail(path, "'rng' must be a JSON string of a NumPy bit-generator state")
    try:
        state = json.loads(ckpt["rng"])
    except ValueError:
        fail(path, "'rng' is not JSON")
    check_bitgen_state(state, path, "'rng'")
    last = ckpt.get("last", {})
    if not isinstance(last, dict):
        fail(path, "'last' must be a dict")
    for k, v in last.items():
        if k == "epoch":
            check_count(v, path, "'last' 'epoch'", ckpt["epoch"])
        else:
            check_number(v, path, f"'last' {k!r}")


def _start_model(ckpt: dict | None, ckpt_path: Path, init: str | None, npl: int, s: FitSettings):
    """The network to train, in training mode: the checkpoint's (resume), ``init``'s
    (warm start) or a new one seeded by ``s.seed``.

    Raises:
        ValueError: a checkpoint for another number of players than the data's.
    """
    import torch
    if ckpt is not None:
        model = PolicyValueNet(PVConfig.from_dict(ckpt["net"]))
        model.load_state_dict(ckpt["model"])
    elif init is not None:
        start = load_exit_checkpoint(init, npl)
        model = model_from_exit_checkpoint(start, str(init))
        for p in model.parameters():
            p.requires_grad_(True)
    else:
        torch.manual_seed(s.seed)
        model = PolicyValueNet(PVConfig(num_roles=num_roles(npl), trunk=tuple(s.trunk), head=tuple(s.head),
                                        encoder=s.encoder, card_width=s.card_width))
    if ckpt is not None and ckpt["num_players"] != npl:
        raise ValueError(f"{str(ckpt_path)!r} is for {ckpt['num_players']} players, the data for {npl}")
    model.train()
    return model


def _check_finite_epoch(model, figures: dict, epoch: int, lr: float) -> None:
    """Stop a diverged run before its checkpoint is written: every loss of the epoch and
    every weight must be finite.

    Raises:
        TrainingDiverged: naming the epoch, the losses and the learning rate.
    """
    import torch

    bad = {k: v for k, v in figures.items() if k != "epoch" and not math.isfinite(v)}
    if bad or not all(bool(torch.isfinite(p).all()) for p in model.parameters()):
        what = ", ".join(f"{k} {v}" for k, v in bad.items()) or "NaN or inf weights"
        raise TrainingDiverged(f"training diverged at epoch {epoch} ({what}; learning rate {lr:g}): the run stops "
                               "without saving this epoch (the last checkpoint, if any, is kept); restart it with a "
                               "lower --lr")


def _batch(tensors: dict, idx: np.ndarray) -> dict:
    import torch
    dev = next(iter(tensors.values())).device
    i = torch.from_numpy(idx).to(dev)
    return {k: v.index_select(0, i) for k, v in tensors.items()}


def _fit_epoch(model, opt, tensors: dict, order: np.ndarray, s: FitSettings) -> dict:
    """One pass over the training decisions in ``order``, ``s.batch_size`` per Adam step;
    the mean ``train_policy_loss`` and ``train_value_loss`` per decision."""
    import torch
    # summed on the device in float64 (no host sync per step; the same sums as float64 on the host)
    sums = torch.zeros(2, dtype=torch.float64, device=next(iter(tensors.values())).device)
    for start in range(0, len(order), s.batch_size):
        b = _batch(tensors, order[start:start + s.batch_size])
        pl, vl, _ = _losses(model, b, torch)
        loss = pl + s.value_weight * vl
        opt.zero_grad()
        loss.backward()
        opt.step()
        sums += torch.stack([pl.detach(), vl.detach()]).double() * len(b["rows"])
    sums = sums.cpu().numpy()
    return {"train_policy_loss": float(sums[0] / max(len(order), 1)),
            "train_value_loss": float(sums[1] / max(len(order), 1))}


def _validate(model, tensors: dict, val_idx: np.ndarray) -> dict:
    """``val_policy_loss``, ``val_value_loss`` and ``val_policy_accuracy`` per validation
    decision (empty without validation decisions); the model is left in training mode."""
    import torch
    if not len(val_idx):
        return {}
    model.eval()
    with torch.no_grad():
        vs = np.zeros(3)
        for start in range(0, len(val_idx), 4096):
            idx = val_idx[start:start + 4096]
            pl, vl, acc = _losses(model, _batch(tensors, idx), torch)
            vs += np.array([pl.item(), vl.item(), acc.item()]) * len(idx)
    model.train()
    vs /= len(val_idx)
    return {"val_policy_loss": float(vs[0]), "val_value_loss": float(vs[1]), "val_policy_accuracy": float(vs[2])}


def export(src, dst) -> dict:
    """Write an inference-only copy of an exit checkpoint (``format``, ``version``,
    ``num_players``, ``net``, ``model``, ``epoch``, ``config``, ``git``).

    Raises:
        ValueError: as :func:`twilight_env.agents.exit.load_exit_checkpoint`.
    """
    ckpt = load_exit_checkpoint(src)
    model_from_exit_checkpoint(ckpt, str(src))
    small = {k: ckpt[k] for k in ("format", "version", "num_players", "net", "model", "epoch", "config", "git")
             if k in ckpt}
    Path(dst).parent.mkdir(parents=True, exist_ok=True)
    save_checkpoint(small, dst)
    return small


def agreement(data_folders, nets, holdout: float = 0.1, seed: int = 1, temperatures=(), epsilon: float = 0.05) -> dict:
    """How closely networks imitate the search that labelled the data: on the validation
    deals of :func:`train`'s split (whole deals, ``holdout`` and ``seed`` as ``train``'s), the
    share of decisions where the network's most probable legal action is the search's most
    visited one (the move the search played, ties to the lowest id), and the cross-entropy
    of the network's policy to the root visits (``train``'s ``val_policy_accuracy`` and
    ``val_policy_loss``, here for any network, e.g. the one a run started from). Used to
    judge a model of a search agent for the modelled responder (``respond:...,model=``;
    ISMCTS-BR, Timbers et al. 2022). With ``temperatures``, also the mean log-likelihood
    of the played move under the network's policy at each temperature, mixed with the
    uniform distribution as the responder weighs worlds
    (:func:`twilight_env.training.target_model.mix_uniform`): the temperature of highest
    likelihood is the model's ``temperature`` fitted to the search's play.

    Args:
        data_folders: folders written by ``generate``.
        nets: ``policy`` paths (``"default"``, a ``.npz`` or an exit checkpoint,
            :func:`twilight_env.agents.policy.load_network`).
        holdout: fraction of deals held out, in ``(0, 1)``; seed: the split's seed. The split
            depends on the folders and their order too: give a trained network's own
            ``--data`` folders, in its order, to score it on deals it was not trained on.
        temperatures: temperatures ``T > 0`` of ``p^(1/T)`` (:mod:`twilight_env.agents.sampling`).
        epsilon: the uniform share of the mixture, in ``[0, 1]`` (``respond``'s default 0.05).

    Returns:
        ``{"decisions": int, "nets": {path: {"agreement": float in [0, 1],
        "cross_entropy": float >= 0 (nats per decision), "log_likelihood": {T: float <= 0
        (nats per decision)}}}}``.

    Raises:
        ValueError: unreadable data, a network of another number of players, a
            ``holdout`` that leaves no validation deal, a temperature not in ``(0, 100]``
            or an ``epsilon`` outside ``[0, 1]``.
    """
    temps = _agree_options(holdout, temperatures, epsilon)
    data, npl = load_data(data_folders)
    _, val = split_holdout(data, holdout, seed)
    if not len(val):
        raise ValueError(f"the data holds {len(np.unique(data['deal']))} deal(s): none left for validation")
    return {"decisions": int(len(val)), "nets": {path: _net_scores(path, npl, data, val, temps, epsilon)
                                                 for path in nets}}


def _net_scores(path: str, npl: int, data: dict, val, temps, epsilon: float) -> dict:
    """:func:`agreement`'s figures of one network on the decisions ``val`` of ``data``."""
    from twilight_env.agents.policy import load_network
    from twilight_env.agents.sampling import tempered_probs
    from twilight_env.training.target_model import mix_uniform

    try:
        net, _ = load_network(path, npl)
    except ValueError as e:
        raise ValueError(f"agree --net {path!r}: {e} (a --net is 'default', a .npz or an exit checkpoint or "
                         f"run folder, written without the policy: prefix)") from None
    visits, legal = data["visits"][val], data["legal"][val]
    probs, _ = net.forward(data["rows"][val].astype(np.int64), data["roles"][val].astype(np.int64), legal)
    played = np.where(legal, probs, -1.0).argmax(1)
    moves = visits.argmax(1)
    lik = {t: mix_uniform(tempered_probs(probs.astype(np.float64), legal, t), legal, epsilon)[np.arange(len(val)), moves]
           for t in temps}
    return {"agreement": float(np.mean(played == moves)),
            "cross_entropy": float(-(visits * np.log(np.maximum(probs, 1e-12))).sum(1).mean()),
            "log_likelihood": {t: float(np.mean(np.log(np.maximum(q, 1e-300)))) for t, q in lik.items()}}


def _agree_options(holdout, temperatures, epsilon) -> list[float]:
    """:func:`agreement`'s checked temperatures; raises ``ValueError`` on a bad option."""
    from twilight_env.agents.sampling import check_temperature

    if not 0 < holdout < 1:
        raise ValueError(f"holdout must be in (0, 1) (the validation share of deals), got {holdout!r}")
    for t in temperatures:
        if isinstance(t, (int, float)) and not isinstance(t, bool) and t <= 0:
            raise ValueError(f"agree: a temperature must be in (0, 100] (the greedy policy gives no likelihood), got {t!r}")
    temps = [check_temperature(t, "agree") for t in temperatures]
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not 0 <= epsilon <= 1:
        raise ValueError(f"epsilon (the uniform share) must be in [0, 1], got {epsilon!r}")
    return temps


# ---------------------------------------------------------------------------------
# iterate
# ---------------------------------------------------------------------------------

def iterate(out, settings: IterateSettings, progress: bool = True) -> list[Path]:
    """Expert iteration: for k = 1..iterations, generate ``OUT/data_k`` and train ``OUT/net_k``.

    Iteration 1 searches with plain IS-MCTS (``ismcts:iterations=search_iterations,c=c``),
    iteration k > 1 with ``exit-search:OUT/net_{k-1}/checkpoint.pt`` (root prior weight
    ``w``); net k trains on the data of the last ``window`` iterations (0: all) and starts
    from net k-1's weights. Deals of iteration k use seed ``seed + k - 1``. Each step is
    resumable, so running the same command again finishes an interrupted run.

    Returns:
        the run directories of the nets.
    """
    s = settings
    out = Path(out)
    fit = replace(s.fit, seed=s.seed)
    nets = []
    for k in range(1, s.iterations + 1):
        prev = out / f"net_{k - 1}" / CHECKPOINT_NAME
        if k == 1:
            spec = f"ismcts:iterations={s.search_iterations},c={s.c},backend={resolve_backend(s.backend)}"
        else:
            spec = f"exit-search:{prev},iterations={s.search_iterations},c={s.c},w={s.w},backend={s.backend}"
        data = out / f"data_{k}"
        generate(data, GenerateSettings(s.num_players, s.deals, spec, s.seed + k - 1, s.workers, s.chunk_deals),
                 progress)
        first = 1 if s.window <= 0 else max(1, k - s.window + 1)
        run = out / f"net_{k}"
        resume = (run / CHECKPOINT_NAME).exists()
        train([out / f"data_{j}" for j in range(first, k + 1)], run, fit, resume=resume,
              init=str(prev) if k > 1 and not resume else None, progress=progress)
        nets.append(run)
    return nets


# ---------------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------------

def _add_fit_arguments(q: argparse.ArgumentParser) -> None:
    from twilight_env.util.argtypes import positive_float, positive_int

    d = FitSettings()
    q.add_argument("--epochs", type=positive_int, default=d.epochs,
                   help="passes over the training decisions, in total (default %(default)s)")
    q.add_argument("--batch-size", type=positive_int, default=d.batch_size,
                   help="decisions per Adam step (default %(default)s)")
    q.add_argument("--lr", type=positive_float, default=d.lr, help="Adam learning rate (default %(default)s)")
    q.add_argument("--weight-decay", type=float, default=d.weight_decay,
                   help="Adam weight decay (default %(default)s)")
    q.add_argument("--value-weight", type=float, default=d.value_weight,
                   help="weight of the value's squared error beside the policy's cross-entropy (default %(default)s)")
    q.add_argument("--holdout", type=float, default=d.holdout,
                   help="fraction of deals for validation, in [0, 1) (default %(default)s)")
    q.add_argument("--trunk", type=positive_int, nargs="+", default=list(d.trunk), metavar="UNITS",
                   help=f"hidden widths of a new network's shared trunk (default {' '.join(map(str, d.trunk))})")
    q.add_argument("--head", type=positive_int, nargs="+", default=list(d.head), metavar="UNITS",
                   help=f"hidden widths of each head of a new network (default {' '.join(map(str, d.head))})")
    q.add_argument("--encoder", choices=ENCODERS, default=d.encoder,
                   help="a new network's encoder: mlp (700 bits) or cards (per-card tokens, pooled; default "
                        "%(default)s)")
    q.add_argument("--card-width", type=positive_int, default=d.card_width,
                   help="token width of --encoder cards (default %(default)s)")
    q.add_argument("--threads", type=positive_int, default=d.threads, help="torch threads (default %(default)s)")
    q.add_argument("--device", choices=("cpu", "cuda"), default=d.device,
                   help="where the network trains (default cpu; cuda needs a usable CUDA device)")


def build_parser() -> argparse.ArgumentParser:
    """The command line: ``generate``, ``train``, ``iterate``, ``agree`` and ``export`` (``training/README.md``)."""
    from twilight_env.util.argtypes import non_negative_int, positive_int

    p = argparse.ArgumentParser(prog="python -m twilight_env.training.exit", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate", help="self-play deals decided by a search agent; records for training")
    g.add_argument("--out", required=True, help="data folder (resumable: finished chunks are skipped)")
    g.add_argument("--players", type=int, choices=(3, 4), required=True, help="3 or 4 players (required)")
    g.add_argument("--deals", type=positive_int, default=200, help="deals to play (default %(default)s)")
    g.add_argument("--agent", default=DEFAULT_AGENT,
                   help=f"search agent spec: ismcts:..., exit-search:... or guided:... (default {DEFAULT_AGENT!r})")
    g.add_argument("--seed", type=non_negative_int, default=1,
                   help="deal seed (held-out seeds are refused; default %(default)s)")
    _add_run_arguments(g)
    t = sub.add_parser("train", help="train the policy/value network on data folders")
    t.add_argument("--data", nargs="+", help="data folders written by generate (not with --resume)")
    t.add_argument("--run", required=True, help="run directory: checkpoint.pt and TensorBoard logs")
    t.add_argument("--seed", type=non_negative_int, default=1,
                   help="seed of the split, the initial weights and the batch order (default %(default)s)")
    t.add_argument("--init", help="exit checkpoint to start from (warm start)")
    t.add_argument("--resume", action="store_true",
                   help="continue RUN/checkpoint.pt up to --epochs with its saved data and settings (only --epochs, "
                        "--threads, --device and --no-progress may be given with it)")
    t.add_argument("--no-progress", "--quiet", action="store_true", help="no progress bar (--quiet, as in twilight arena/edge)")
    _add_fit_arguments(t)
    it = sub.add_parser("iterate", help="expert iteration: generate with the last net's search, train the next")
    _add_iterate_arguments(it)
    _add_fit_arguments(it)
    ag = sub.add_parser("agree", help="how closely networks imitate the data's search (validation deals)")
    ag.add_argument("--data", nargs="+", required=True, help="data folders written by generate")
    ag.add_argument("--net", nargs="+", required=True, help="policy paths: default, a .npz or an exit checkpoint")
    ag.add_argument("--holdout", type=float, default=0.1, help="validation share of deals, as train's (default %(default)s)")
    ag.add_argument("--seed", type=non_negative_int, default=1, help="the split's seed, as train's (default %(default)s)")
    ag.add_argument("--temperatures", type=float, nargs="+", default=[],
                    help="also the log-likelihood of the played move at these temperatures (mixed with --epsilon)")
    ag.add_argument("--epsilon", type=float, default=0.05,
                    help="uniform share of that mixture, as respond's (default %(default)s)")
    e = sub.add_parser("export", help="inference-only copy of a checkpoint (shipped weights)")
    e.add_argument("src", help="an exit checkpoint (checkpoint.pt)")
    e.add_argument("dst", help="the inference-only copy to write")
    return p


def _add_run_arguments(q: argparse.ArgumentParser) -> None:
    """``--workers``, ``--chunk-deals`` and ``--no-progress`` of ``generate`` and ``iterate``."""
    from twilight_env.util.argtypes import positive_int

    q.add_argument("--workers", type=positive_int, default=1, help="worker processes (default %(default)s)")
    q.add_argument("--chunk-deals", type=positive_int, default=10,
                   help="deals per saved chunk, the unit a resumed run skips (default %(default)s)")
    q.add_argument("--no-progress", "--quiet", action="store_true", help="no progress bar (--quiet, as in twilight arena/edge)")


def _add_iterate_arguments(q: argparse.ArgumentParser) -> None:
    """The flags of ``iterate`` beside the fit's (:func:`iterate`)."""
    from twilight_env.util.argtypes import non_negative_int, positive_int

    q.add_argument("--out", required=True, help="output folder: data_K and net_K per iteration (resumable)")
    q.add_argument("--players", type=int, choices=(3, 4), required=True, help="3 or 4 players (required)")
    q.add_argument("--iterations", type=positive_int, default=3, help="expert iterations (default %(default)s)")
    q.add_argument("--deals", type=positive_int, default=200, help="deals per iteration (default %(default)s)")
    q.add_argument("--search-iterations", type=positive_int, default=1000,
                   help="the search's iterations per decision (default %(default)s)")
    q.add_argument("--c", type=float, default=0.7, help="the search's exploration constant (default %(default)s)")
    q.add_argument("--w", type=float, default=1.0,
                   help="root prior weight of the network in the search of iteration 2 on (default %(default)s)")
    q.add_argument("--backend", choices=("auto", "numba", "python"), default="auto",
                   help="the search's backend (default %(default)s)")
    q.add_argument("--seed", type=non_negative_int, default=1,
                   help="deal seed of iteration 1 (iteration K plays seed + K - 1; default %(default)s)")
    _add_run_arguments(q)
    q.add_argument("--window", type=non_negative_int, default=0,
                   help="train on the last N iterations' data (0: all; default %(default)s)")


def _fit_settings(a: argparse.Namespace) -> FitSettings:
    return FitSettings(epochs=a.epochs, batch_size=a.batch_size, lr=a.lr, weight_decay=a.weight_decay,
                       value_weight=a.value_weight, holdout=a.holdout, seed=a.seed, trunk=tuple(a.trunk),
                       head=tuple(a.head), encoder=a.encoder, card_width=a.card_width, threads=a.threads,
                       device=a.device)


def _train_refusal(a: argparse.Namespace, tokens: list[str]) -> str | None:
    """Why ``train`` cannot run with these arguments, or None."""
    if a.resume:
        fixed = ("--data", "--seed", "--init", "--batch-size", "--lr", "--weight-decay", "--value-weight",
                 "--holdout", "--trunk", "--head", "--encoder", "--card-width")
        given = [f for f in fixed if any(t == f or t.startswith(f + "=") for t in tokens)]
        if given:
            return (f"--resume keeps the run's data and settings; do not give {', '.join(given)} with it "
                    "(only --epochs, --threads, --device and --no-progress)")
    elif not a.data:
        return "train needs --data FOLDER [FOLDER ...] (or --resume to continue RUN)"
    elif a.init:
        shape = ("--trunk", "--head", "--encoder", "--card-width")
        given = [f for f in shape if any(t == f or t.startswith(f + "=") for t in tokens)]
        if given:
            return (f"--init starts from that checkpoint's network, whose shape is fixed; do not give "
                    f"{', '.join(given)} with it")
    return None


def main(argv=None) -> int:
    """Command line entry point; returns the exit status (2 on bad input)."""
    tokens = list(sys.argv[1:] if argv is None else argv)
    a = build_parser().parse_args(tokens)
    refusal = _train_refusal(a, tokens) if a.cmd == "train" else None
    if refusal:
        print(f"error: {refusal}", file=sys.stderr)
        return 2
    try:
        if a.cmd == "generate":
            r = generate(a.out, GenerateSettings(a.players, a.deals, a.agent, a.seed, a.workers, a.chunk_deals),
                         not a.no_progress)
            print(f"{r['chunks']} chunks written, {r['skipped']} already there, {r['decisions']} decisions "
                  f"in {r['seconds']:.1f} s -> {a.out}")
        elif a.cmd == "train":
            r = train(a.data, a.run, _fit_settings(a), a.init, a.resume, not a.no_progress)
            print(" ".join(f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items()))
            print(f"checkpoint: {Path(a.run) / CHECKPOINT_NAME}   (tensorboard --logdir {a.run})")
        elif a.cmd == "iterate":
            nets = iterate(a.out, IterateSettings(a.players, a.iterations, a.deals, a.search_iterations, a.c, a.w,
                                                  a.backend, a.seed, a.workers, a.chunk_deals, a.window,
                                                  _fit_settings(a)), not a.no_progress)
            print(f"last net: {nets[-1] / CHECKPOINT_NAME}   (tensorboard --logdir {a.out})")
        elif a.cmd == "agree":
            r = agreement(a.data, a.net, a.holdout, a.seed, a.temperatures, a.epsilon)
            print(f"{r['decisions']} validation decisions (most visited action = the move the search played)")
            for path, v in r["nets"].items():
                print(f"{path}: agreement {v['agreement']:.3f}, cross-entropy to the visits {v['cross_entropy']:.4f}")
                for t, ll in v["log_likelihood"].items():
                    print(f"  T={t:g}: log-likelihood of the played move {ll:.4f} per decision (epsilon {a.epsilon:g})")
        else:
            export(a.src, a.dst)
            print(f"wrote {a.dst}")
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
